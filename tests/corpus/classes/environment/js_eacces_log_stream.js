const fs = require("fs");
const log = fs.createWriteStream("/var/log/inventory-sync.log", { flags: "a" });
log.write("sync started\n");
