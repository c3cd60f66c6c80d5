const fs = require("fs");
fs.writeFileSync("/usr/local/share/daily-report.json", "{}");
