import socket, struct, threading, time

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()

def reset():
    conn, _ = listener.accept()
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()

threading.Thread(target=reset, daemon=True).start()

class TransportError(Exception):
    pass

class ClientError(Exception):
    pass

def read_frame(sock):
    try:
        time.sleep(0.2)
        sock.sendall(b"ping")
        return sock.recv(10)
    except OSError as e:
        raise TransportError("transport closed while reading a frame") from e

def call():
    sock = socket.create_connection(listener.getsockname(), timeout=3)
    try:
        return read_frame(sock)
    except TransportError as e:
        raise ClientError("the call to the queue failed") from e

call()
