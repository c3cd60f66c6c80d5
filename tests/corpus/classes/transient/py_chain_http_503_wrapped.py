import http.server, threading, urllib.request, urllib.error

class Busy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(503)
        self.end_headers()
        self.wfile.write(b"upstream busy")
    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Busy)
threading.Thread(target=server.serve_forever, daemon=True).start()

class ReportError(Exception):
    pass

def download():
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/export.csv", timeout=3)
    except urllib.error.HTTPError as e:
        raise ReportError("the upstream rejected the export request") from e

download()
