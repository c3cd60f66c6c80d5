const fs = require("fs");
fs.appendFileSync("/dev/full", "one more line\n");
