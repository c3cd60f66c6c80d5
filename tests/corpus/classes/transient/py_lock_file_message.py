import os, sys
with open("report.lock", "w") as f:
    f.write("4242")  # left by the run that is still going
if os.path.exists("report.lock"):
    sys.exit("report.lock is held by another run (pid 4242); try again later")
