set -euo pipefail

python3 - <<'SERVER' &
import http.server, os
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(403)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"Permission to acme/reports.git denied to deploy-bot.")
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

export GIT_TERMINAL_PROMPT=0
git clone --quiet "http://127.0.0.1:$(cat port)/acme/reports.git" reports
