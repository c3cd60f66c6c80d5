let yaml;
try {
  yaml = require("js-yaml");
} catch (first) {
  yaml = require("yaml");
}
console.log(yaml.parse("a: 1"));
