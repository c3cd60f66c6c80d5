import socket, urllib.request

class ExportFailed(Exception):
    pass

probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()

def fetch_rates():
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/rates", timeout=3) as r:
            return r.read()
    except Exception as e:
        raise ExportFailed("daily export could not fetch the rates") from e

fetch_rates()
