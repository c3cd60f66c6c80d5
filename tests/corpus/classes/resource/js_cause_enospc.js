const fs = require("fs");

function save(report) {
  try {
    fs.writeFileSync("/dev/full", report);
  } catch (err) {
    throw new Error("saving the weekly report failed", { cause: err });
  }
}

save("x".repeat(100000));
