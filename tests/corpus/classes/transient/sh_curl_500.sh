set -euo pipefail

python3 - <<'SERVER' &
import http.server, os
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(500)
        self.end_headers()
        self.wfile.write(b'{"error": "try later"}')
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

curl -fsS "$BASE/v1/rates" -o rates.json
