import socket
print(socket.getaddrinfo("db.healer-corpus.invalid", 5432))
