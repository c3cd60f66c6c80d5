const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(500, { "Content-Type": "application/json" });
  res.end('{"error": "internal server error"}');
});
server.listen(0, "127.0.0.1", () => main(`http://127.0.0.1:${server.address().port}`));

async function main(base) {
  const res = await fetch(`${base}/v1/rates`);
  if (!res.ok) throw new Error(`GET /v1/rates failed: ${res.status} ${res.statusText}`);
}
