// The file was cut short by the exporter.
const text = '{"orders": [1, 2, 3';
console.log(JSON.parse(text).orders.length);
