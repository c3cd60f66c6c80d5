import http.server, threading, urllib.request
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"message": "Bad credentials"}')
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{server.server_port}"

import urllib.error, json
try:
    urllib.request.urlopen(BASE + "/user/repos", timeout=5)
except urllib.error.HTTPError as e:
    raise SystemExit(f"GitHub said {e.code} {e.reason}: {json.loads(e.read())['message']}")
