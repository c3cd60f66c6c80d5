const fs = require("fs");
for (const name of fs.readdirSync("inbox")) console.log(name);
