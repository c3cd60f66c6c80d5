import logging, socket, sys
logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s %(message)s")
log = logging.getLogger("nightly")
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
try:
    socket.create_connection(("127.0.0.1", port), timeout=2)
except Exception:
    log.exception("sync failed")
    sys.exit(1)
