import logging, sys
logging.basicConfig(stream=sys.stderr, format="[%(asctime)s] %(levelname)s %(message)s", level=logging.DEBUG)
logging.debug("retry policy: 3 attempts, backoff 2s, rate limit 10/s")
logging.info("loading plugins")
import pandas
