import socket, threading, http.client
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
def short():
    conn, _ = listener.accept()
    conn.recv(1024)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"rates\": [")
    conn.close()
threading.Thread(target=short, daemon=True).start()
client = http.client.HTTPConnection("127.0.0.1", listener.getsockname()[1], timeout=5)
client.request("GET", "/v1/rates")
print(client.getresponse().read())
