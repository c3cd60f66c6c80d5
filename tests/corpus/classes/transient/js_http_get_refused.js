const net = require("net");
function closedPort() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const http = require("http");
closedPort().then((port) => {
  http.get(`http://127.0.0.1:${port}/health`, (res) => console.log(res.statusCode));
});
