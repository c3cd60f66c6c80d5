// A count beside words of failure is not an HTTP status.
const rows = Array.from({ length: 6036 }, (_, i) => ({ id: i, amount: i % 12 === 0 ? "n/a" : i }));
const rejected = rows.filter((r) => typeof r.amount !== "number");
if (rejected.length > 0) {
  throw new Error(`import failed: ${rejected.length} rows rejected (amount is not a number)`);
}
