set -uo pipefail

python3 - <<'SERVER' &
import http.server, os
class Handler(http.server.BaseHTTPRequestHandler):
    def do_PUT(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(502)
        self.end_headers()
        self.wfile.write(b"<html>502 Bad Gateway</html>")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open("port.tmp", "w") as f:
    f.write(str(server.server_port))
os.rename("port.tmp", "port")
server.serve_forever()
SERVER
server=$!
trap 'kill $server 2>/dev/null' EXIT
while [ ! -s port ]; do sleep 0.05; done
BASE="http://127.0.0.1:$(cat port)"

echo "date,total" > report.csv
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary @report.csv "$BASE/uploads/report.csv")
if [ "$code" != "200" ]; then
  echo "upload of report.csv failed: HTTP $code" >&2
  exit 1
fi
