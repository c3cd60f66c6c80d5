function check(rows) {
  for (const row of rows) {
    if (typeof row.amount !== "number") throw new Error(`order ${row.id}: amount is not a number`);
  }
}
check([{ id: 1, amount: 3 }, { id: 2, amount: "3" }]);
