import socket, warnings

def legacy_connect(port):
    warnings.warn("legacy_connect is deprecated; it will read the key file from ~/.config in 3.0", DeprecationWarning, stacklevel=2)
    return socket.create_connection(("127.0.0.1", port), timeout=2)

probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
legacy_connect(port)
