import socket
_probe = socket.socket()
_probe.bind(("127.0.0.1", 0))
PORT = _probe.getsockname()[1]
_probe.close()  # nothing listens there any more

import urllib.request
with urllib.request.urlopen(f"https://127.0.0.1:{PORT}/api", timeout=5) as r:
    print(r.read())
