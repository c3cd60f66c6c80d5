const http = require("http");

const server = http.createServer((req, res) => {
  res.writeHead(503, { "Content-Type": "text/plain" });
  res.end("maintenance");
});

server.listen(0, "127.0.0.1", async () => {
  const { port } = server.address();
  const res = await fetch(`http://127.0.0.1:${port}/v1/orders`);
  server.close();
  if (!res.ok) {
    const cause = new Error(`Request failed with status code ${res.status}`);
    throw new Error("could not load today's orders", { cause });
  }
});
