// A client library's error, as Octokit's RequestError prints: its message, then its
// properties (the status among them) under the stack.
const http = require("http");

class RequestError extends Error {
  constructor(message, status, options) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.request = options.request;
    this.response = options.response;
  }
}

const server = http.createServer((req, res) => {
  res.writeHead(502, { "Content-Type": "text/html" });
  res.end("<html>Bad gateway</html>");
});
server.listen(0, "127.0.0.1", async () => {
  const url = `http://127.0.0.1:${server.address().port}/repos/acme/site/deployments`;
  const res = await fetch(url, { method: "POST" });
  const body = await res.text();
  server.close();
  throw new RequestError(body.replace(/<[^>]+>/g, ""), res.status, {
    request: { method: "POST", url },
    response: { url, status: res.status, headers: Object.fromEntries(res.headers) },
  });
});
