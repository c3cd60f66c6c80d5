const http = require("http");
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(403, { "Content-Type": "application/xml" });
    res.end("<Error><Code>AccessDenied</Code></Error>");
  });
});
server.listen(0, "127.0.0.1", async () => {
  const url = `http://127.0.0.1:${server.address().port}/backups/db-nightly.sql.gz`;
  const res = await fetch(url, { method: "PUT", body: "dump" });
  server.close();
  if (!res.ok) throw new Error(`upload of db-nightly.sql.gz failed with ${res.status}`);
});
