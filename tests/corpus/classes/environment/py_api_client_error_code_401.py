import http.server, json, threading, urllib.request, urllib.error

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({"error": {"message": "Incorrect API key provided: sk-proj-****abcd.", "type": "invalid_request_error", "code": "invalid_api_key"}}).encode())
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()

class APIStatusError(Exception):
    pass

class Client:
    """The script's thin client, shaped after the vendor SDK's errors."""
    def __init__(self, base):
        self.base = base
    def post(self, path, payload):
        req = urllib.request.Request(self.base + path, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            raise APIStatusError(f"Error code: {e.code} - {json.loads(e.read())}") from None

Client(f"http://127.0.0.1:{server.server_port}").post("/v1/chat/completions", {"model": "m", "messages": []})
