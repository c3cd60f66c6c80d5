const http = require("http");
const server = http.createServer((req, res) => {
  res.writeHead(429, { "Retry-After": "30", "Content-Type": "application/json" });
  res.end('{"errors":[{"code":"throttled"}]}');
});

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`Request to ${url} failed, statusCode=${res.statusCode}`));
        return;
      }
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

server.listen(0, "127.0.0.1", async () => {
  try {
    await get(`http://127.0.0.1:${server.address().port}/v2/shipments`);
  } finally {
    server.close();
  }
});
