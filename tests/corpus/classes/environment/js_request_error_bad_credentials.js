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
  res.writeHead(401, { "Content-Type": "application/json" });
  res.end('{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}');
});
server.listen(0, "127.0.0.1", async () => {
  const url = `http://127.0.0.1:${server.address().port}/user/repos`;
  const res = await fetch(url, { headers: { authorization: "token ghp_expired" } });
  const body = await res.json();
  server.close();
  throw new RequestError(body.message, res.status, {
    request: { method: "GET", url },
    response: { url, status: res.status, data: body },
  });
});
