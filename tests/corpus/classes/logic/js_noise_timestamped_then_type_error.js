const ts = () => new Date().toISOString();
for (let i = 1; i <= 3; i++) {
  console.error(`${ts()} warn upstream returned 502, retry ${i}/5 in 100ms`);
}
console.error(`${ts()} info upstream recovered`);
const order = { lines: [{ qty: 1, price: 2 }], discount: undefined };
console.log(order.discount.percent);
