import http.server, threading, urllib.request
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(502)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'bad gateway')
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{server.server_port}"

with urllib.request.urlopen(BASE + "/v1/rates", timeout=5) as response:
    print(response.read())
