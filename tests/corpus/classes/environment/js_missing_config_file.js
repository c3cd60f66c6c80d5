const fs = require("fs");
const settings = JSON.parse(fs.readFileSync("settings.json", "utf8"));
console.log(settings.endpoint);
