const http = require("http");
const net = require("net");
const server = net.createServer((socket) => socket.destroy()); // hangs up at once
server.listen(0, "127.0.0.1", () => {
  http.get(`http://127.0.0.1:${server.address().port}/v1/rates`, (res) => console.log(res.statusCode));
});
