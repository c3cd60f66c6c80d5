const fs = require("fs");

fs.mkdirSync("feeds", { recursive: true });
for (const month of ["2026-10", "2026-11"]) {
  fs.writeFileSync(`feeds/orders-${month}.json`, "[]");
}
console.log("available feeds:", fs.readdirSync("feeds"));
const month = "2026_11";
const orders = JSON.parse(fs.readFileSync(`feeds/orders_${month}.json`, "utf8"));
console.log(orders.length);
