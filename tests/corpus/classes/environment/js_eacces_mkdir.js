const fs = require("fs");
fs.mkdirSync("/var/lib/daily-report-healer-corpus", { recursive: true });
