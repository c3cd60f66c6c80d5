ulimit -f 4
trap '' XFSZ
node -e '
process.on("SIGXFSZ", () => {});
const fs = require("fs");
const fd = fs.openSync("export.bin", "w");
const buf = Buffer.alloc(10240, 120);
const n = fs.writeSync(fd, buf);
if (n < buf.length) { console.error(`short write: wrote ${n} of ${buf.length} bytes`); process.exit(1); }
'
