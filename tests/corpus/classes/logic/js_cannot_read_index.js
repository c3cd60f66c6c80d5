const rows = [];
// The first row was always the header.
console.log(rows[0].split(","));
