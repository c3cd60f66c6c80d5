const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(503, { "Content-Type": "text/html" });
  res.end("<html><body><h1>503</h1></body></html>");
});
server.listen(0, "127.0.0.1", async () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const res = await fetch(`${base}/v1/rates?base=EUR`);
  server.close();
  if (!res.ok) {
    throw new Error(`Fetching exchange rates failed: ${res.status}`);
  }
});
