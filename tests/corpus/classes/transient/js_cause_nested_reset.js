const net = require("net");

const server = net.createServer((socket) => socket.resetAndDestroy());
server.listen(0, "127.0.0.1", async () => {
  const { port } = server.address();
  const read = () =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.write("hello"));
      socket.on("data", resolve);
      socket.on("error", reject);
    });
  const withTransport = async () => {
    try {
      return await read();
    } catch (err) {
      throw new Error("transport failed", { cause: err });
    }
  };
  try {
    await withTransport();
  } catch (err) {
    throw new Error("the nightly pull did not complete", { cause: err });
  }
});
