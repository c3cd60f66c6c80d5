const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(422, { "Content-Type": "application/json" });
  res.end('{"error": "date is invalid"}');
});
server.listen(0, "127.0.0.1", () => main(`http://127.0.0.1:${server.address().port}`));

async function main(base) {
  const res = await fetch(`${base}/v1/orders?date=yesterday`);
  if (!res.ok) throw new Error(`the orders API refused the request: ${res.status} ${await res.text()}`);
}
