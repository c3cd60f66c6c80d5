const assert = require("assert");
const totals = { north: 3, south: 4 };
assert.strictEqual(Object.keys(totals).length, 3, "expected three regions");
