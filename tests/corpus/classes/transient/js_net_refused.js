const net = require("net");
function closedPort() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

closedPort().then((port) => {
  const socket = net.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
});
