import socket
_probe = socket.socket()
_probe.bind(("127.0.0.1", 0))
PORT = _probe.getsockname()[1]
_probe.close()  # nothing listens there any more

connection = socket.create_connection(("127.0.0.1", PORT), timeout=5)
connection.sendall(b"PING\r\n")
