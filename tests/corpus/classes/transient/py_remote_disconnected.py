import socket, threading, http.client
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
def hang_up():
    conn, _ = listener.accept()
    conn.recv(1024)
    conn.close()  # closes without an answer
threading.Thread(target=hang_up, daemon=True).start()
client = http.client.HTTPConnection("127.0.0.1", listener.getsockname()[1], timeout=5)
client.request("GET", "/v1/rates")
print(client.getresponse().read())
