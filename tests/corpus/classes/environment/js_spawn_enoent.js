const { execFileSync } = require("child_process");
execFileSync("wkhtmltopdf-healer-corpus", ["report.html", "report.pdf"]);
