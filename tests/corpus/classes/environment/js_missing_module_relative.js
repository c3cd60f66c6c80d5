const helpers = require("./lib/helpers");
console.log(helpers.format(1));
