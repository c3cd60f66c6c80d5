import logging, socket, sys, time

logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(levelname)-8s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("sync")

probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
for attempt in (1, 2):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1)
    except ConnectionRefusedError as e:
        log.warning("connection refused (%s), retrying in 0.1s (attempt %d/3)", e, attempt)
        time.sleep(0.1)
log.info("connected on attempt 3")

record = {"id": 7, "customer_name": "Ana"}
print(record["customer"])
