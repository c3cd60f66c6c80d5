import http.server, threading, urllib.request

# The office proxy wants credentials the job does not have.
class Proxy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(407)
        self.send_header("Proxy-Authenticate", 'Basic realm="corp-proxy"')
        self.end_headers()
    def log_message(self, *args):
        pass
proxy = http.server.HTTPServer(("127.0.0.1", 0), Proxy)
threading.Thread(target=proxy.serve_forever, daemon=True).start()

opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{proxy.server_port}"})
)
with opener.open("http://reports.example.internal/v1/daily.csv", timeout=5) as r:
    print(r.read()[:100])
