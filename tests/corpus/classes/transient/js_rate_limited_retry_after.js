const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(429, { "Content-Type": "application/json" });
  res.end('{"error": "slow down"}');
});
server.listen(0, "127.0.0.1", () => main(`http://127.0.0.1:${server.address().port}`));

async function main(base) {
  const res = await fetch(`${base}/v1/rates`);
  if (res.status === 429) throw new Error("rate limited by the rates API, retry after 30 seconds");
}
