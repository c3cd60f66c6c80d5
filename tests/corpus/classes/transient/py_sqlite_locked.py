import sqlite3, subprocess, sys, time
sqlite3.connect("app.db").execute("CREATE TABLE IF NOT EXISTS runs (id INTEGER)")
# Another job holds the database while this one wants to write.
holder = subprocess.Popen([sys.executable, "-c", (
    "import sqlite3, time\n"
    "c = sqlite3.connect('app.db', isolation_level=None)\n"
    "c.execute('BEGIN EXCLUSIVE')\n"
    "open('held', 'w').close()\n"
    "time.sleep(5)\n")])
while True:
    try:
        open("held").close()
        break
    except FileNotFoundError:
        time.sleep(0.02)
try:
    db = sqlite3.connect("app.db", timeout=0.2)
    db.execute("INSERT INTO runs VALUES (1)")
    db.commit()
finally:
    holder.kill()
