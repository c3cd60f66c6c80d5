import logging, sys
logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", level=logging.INFO)
logging.info("run started")
logging.error("step 3 failed")
sys.exit(2)
