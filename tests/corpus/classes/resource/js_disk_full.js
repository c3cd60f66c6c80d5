const fs = require("fs");
fs.writeFileSync("/dev/full", "report\n".repeat(1000));
