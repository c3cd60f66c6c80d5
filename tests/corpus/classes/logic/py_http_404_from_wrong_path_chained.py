import http.server, threading, urllib.request, urllib.error

class Api(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/v2/customers":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"[]")
        else:
            self.send_response(404)
            self.end_headers()
    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Api)
threading.Thread(target=server.serve_forever, daemon=True).start()

class SyncError(Exception):
    pass

try:
    urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/v2/customer", timeout=3)
except urllib.error.HTTPError as e:
    raise SyncError("listing customers failed") from e
