const net = require("net");
const held = [];
const hanging = net.createServer((socket) => held.push(socket)); // accepted, never answered

hanging.listen(0, "127.0.0.1", async () => {
  const { port } = hanging.address();
  const res = await fetch(`http://127.0.0.1:${port}/v1/rates`, { signal: AbortSignal.timeout(300) });
  console.log(await res.text());
});
