const net = require("net");
const server = net.createServer((socket) => {
  socket.once("data", () => socket.destroy());
});
server.listen(0, "127.0.0.1", async () => {
  const { port } = server.address();
  const res = await fetch(`http://127.0.0.1:${port}/v1/stock`);
  console.log(res.status);
});
