const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(403, { "Content-Type": "application/json" });
  res.end('{"error": "forbidden"}');
});
server.listen(0, "127.0.0.1", () => main(`http://127.0.0.1:${server.address().port}`));

async function main(base) {
  const res = await fetch(`${base}/v1/invoices`);
  if (!res.ok) throw new Error(`the invoices API answered ${res.status} ${res.statusText}`);
}
