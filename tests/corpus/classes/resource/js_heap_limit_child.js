const { execFileSync } = require("child_process");
execFileSync(process.execPath, ["--max-old-space-size=16", "-e", "const a = []; while (true) a.push(new Array(1e5).fill('row'))"], { stdio: "inherit" });
