const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(503, { "Content-Type": "application/json" });
  res.end('{"error": "temporarily unavailable"}');
});
server.listen(0, "127.0.0.1", () => main(`http://127.0.0.1:${server.address().port}`));

async function main(base) {
  const res = await fetch(`${base}/v1/rates`);
  const body = await res.json();
  if (!res.ok) throw new Error(`rates API: ${body.error}`);
}
