const fs = require("fs");

function loadTemplate(name) {
  try {
    return fs.readFileSync(`templates/${name}.html`, "utf8");
  } catch (err) {
    throw new Error(`could not load the ${name} template`, { cause: err });
  }
}

console.log(loadTemplate("weekly").length);
