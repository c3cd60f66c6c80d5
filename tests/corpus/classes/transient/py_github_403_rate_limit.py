import http.server, json, threading, urllib.request, urllib.error

# GitHub refuses a client over its rate limit with 403 (not 429) and says so in the body.
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-RateLimit-Remaining", "0")
        self.end_headers()
        self.wfile.write(json.dumps({
            "message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)",
            "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
        }).encode())
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{server.server_port}"

try:
    urllib.request.urlopen(BASE + "/repos/acme/reports/releases/latest", timeout=5)
except urllib.error.HTTPError as e:
    raise SystemExit(f"GitHub said {e.code} {e.reason}: {json.loads(e.read())['message']}")
