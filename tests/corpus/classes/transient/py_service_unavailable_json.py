import http.server, threading, urllib.request
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": "service temporarily unavailable, retry in 30 s"}')
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{server.server_port}"

import json, urllib.error
try:
    urllib.request.urlopen(BASE + "/v1/orders", timeout=5)
except urllib.error.HTTPError as e:
    raise RuntimeError(json.loads(e.read())["error"]) from None
