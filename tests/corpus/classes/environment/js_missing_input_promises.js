const fs = require("fs/promises");
(async () => {
  const text = await fs.readFile("exports/orders-today.csv", "utf8");
  console.log(text.split("\n").length);
})();
