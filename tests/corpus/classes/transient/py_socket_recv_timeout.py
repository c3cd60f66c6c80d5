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

conn = socket.create_connection(("127.0.0.1", PORT), timeout=0.3)
conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(conn.recv(100))
