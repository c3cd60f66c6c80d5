import socket

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()  # accepts, never answers

class ReportFailed(Exception):
    pass

client = socket.create_connection(listener.getsockname(), timeout=0.3)
try:
    client.sendall(b"GET /report\n")
    answer = client.recv(100)
except socket.timeout:
    raise ReportFailed("the report server did not answer")
