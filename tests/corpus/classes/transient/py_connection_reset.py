import socket, struct, threading, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
def reset():
    conn, _ = listener.accept()
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()  # an abortive close: the peer gets a reset
threading.Thread(target=reset, daemon=True).start()
client = socket.create_connection(listener.getsockname(), timeout=5)
time.sleep(0.2)
client.sendall(b"hello")
print(client.recv(10))
