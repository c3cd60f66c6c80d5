const net = require("net");
function closedPort() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

closedPort().then(async (port) => {
  const res = await fetch(`http://127.0.0.1:${port}/v1/events`, { method: "POST", body: "{}" });
  console.log(res.status);
});
