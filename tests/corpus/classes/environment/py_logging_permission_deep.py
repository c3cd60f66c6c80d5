import logging, logging.handlers

def setup():
    handler = logging.handlers.RotatingFileHandler("/var/log/nightly-sync.log", maxBytes=1_000_000)
    logging.getLogger().addHandler(handler)

setup()
logging.getLogger().warning("sync started")
