import http.server, threading, http.client

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(504)
        self.end_headers()
        self.wfile.write(b"upstream timed out")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()

conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=5)
conn.request("GET", "/v1/health")
resp = conn.getresponse()
assert resp.status == 200, f"health check: expected 200, got {resp.status}"
