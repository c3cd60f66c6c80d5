const net = require("net");

function connect(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("connect", () => resolve(socket));
    socket.on("error", reject);
  });
}

async function sync() {
  const probe = net.createServer().listen(0, "127.0.0.1");
  await new Promise((r) => probe.on("listening", r));
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  try {
    await connect(port);
  } catch (err) {
    throw new Error("sync with the inventory service failed", { cause: err });
  }
}

sync();
