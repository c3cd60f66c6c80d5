import socket
_probe = socket.socket()
_probe.bind(("127.0.0.1", 0))
PORT = _probe.getsockname()[1]
_probe.close()  # nothing listens there any more

import http.client
conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
conn.request("GET", "/health")
print(conn.getresponse().status)
