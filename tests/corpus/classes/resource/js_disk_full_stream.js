const fs = require("fs");
const out = fs.createWriteStream("/dev/full");
out.on("error", (e) => { throw e; });
out.write("report\n".repeat(100000));
