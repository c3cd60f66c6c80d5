import fcntl, subprocess, sys, time
holder = subprocess.Popen([sys.executable, "-c", (
    "import fcntl, time\n"
    "f = open('report.lock', 'w')\n"
    "fcntl.flock(f, fcntl.LOCK_EX)\n"
    "open('held', 'w').close()\n"
    "time.sleep(5)\n")])
while True:
    try:
        open("held").close()
        break
    except FileNotFoundError:
        time.sleep(0.02)
try:
    lock = open("report.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("got the lock")
finally:
    holder.kill()
