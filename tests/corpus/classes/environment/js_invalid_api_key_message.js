const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(401, { "Content-Type": "application/json" });
  res.end('{"error": {"message": "Incorrect API key provided: sk-xx****", "code": "invalid_api_key"}}');
});
server.listen(0, "127.0.0.1", () => main(`http://127.0.0.1:${server.address().port}`));

async function main(base) {
  const res = await fetch(`${base}/v1/chat/completions`, { method: "POST" });
  const body = await res.json();
  if (!res.ok) throw new Error(`model call failed: ${body.error.message}`);
}
