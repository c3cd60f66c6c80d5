import http.server, threading, urllib.request
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": {"message": "Invalid API key provided", "code": "invalid_api_key"}}')
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{server.server_port}"

import json, urllib.error
try:
    urllib.request.urlopen(BASE + "/v1/chat", timeout=5)
except urllib.error.HTTPError as e:
    detail = json.loads(e.read())["error"]["message"]
    raise RuntimeError(f"the model API refused the key: {detail}") from None
