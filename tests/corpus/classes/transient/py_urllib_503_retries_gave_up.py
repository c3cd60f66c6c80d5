import http.server, threading, time, urllib.request, urllib.error

class Busy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(503)
        self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(b"upstream is restarting")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Busy)
threading.Thread(target=server.serve_forever, daemon=True).start()

class SyncError(Exception):
    pass

def fetch_orders(attempts=3):
    last = None
    for attempt in range(1, attempts + 1):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/v1/orders", timeout=3) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            last = e
            time.sleep(0.05 * attempt)
    raise SyncError(f"gave up on /v1/orders after {attempts} attempts: {last}") from None

fetch_orders()
