function total(rows) {
  const sum = rows.reduce((a, b) => a + b, 0);
  return summ;
}
console.log(total([1, 2, 3]));
