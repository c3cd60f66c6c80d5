import socket, sys
for page in range(1, 201):
    print(f"> GET /v1/orders?page={page} HTTP/1.1", file=sys.stderr)
    print(f"< HTTP/1.1 200 OK", file=sys.stderr)
    print(f"< X-Request-Id: req-{page:06d}", file=sys.stderr)
    print(f"< Content-Length: {1000 + page}", file=sys.stderr)
    print(f"< Cache-Control: no-store", file=sys.stderr)
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
socket.create_connection(("127.0.0.1", port), timeout=2)
