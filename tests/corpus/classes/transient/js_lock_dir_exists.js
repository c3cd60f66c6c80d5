const fs = require("fs");
fs.mkdirSync("export.lock"); // the run that is still going made it
try {
  fs.mkdirSync("export.lock");
} catch (e) {
  if (e.code === "EEXIST") throw new Error("export.lock exists: another run is still exporting; try again later");
  throw e;
}
