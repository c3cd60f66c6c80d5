const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(404, { "Content-Type": "application/json" });
  res.end('{"error": "not found"}');
});
server.listen(0, "127.0.0.1", () => main(`http://127.0.0.1:${server.address().port}`));

async function main(base) {
  const res = await fetch(`${base}/v1/reports/daily`);
  if (!res.ok) throw new Error(`GET /v1/reports/daily failed: ${res.status} ${res.statusText}`);
}
