const net = require("net");
const held = [];
const hanging = net.createServer((socket) => held.push(socket)); // accepted, never answered

const http = require("http");
hanging.listen(0, "127.0.0.1", () => {
  const req = http.get(`http://127.0.0.1:${hanging.address().port}/v1/rates`, { timeout: 300 }, (res) => console.log(res.statusCode));
  req.on("timeout", () => req.destroy(Object.assign(new Error("request to the rates API timed out"), { code: "ETIMEDOUT" })));
});
