import socket, threading
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
held = []
def accept():
    while True:
        conn, _ = listener.accept()
        held.append(conn)  # accepted, never answered
threading.Thread(target=accept, daemon=True).start()
PORT = listener.getsockname()[1]

import urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/v1/rates", timeout=0.3) as r:
    print(r.read())
