set -euo pipefail
python3 -c 'import sqlite3; sqlite3.connect("app.db").execute("CREATE TABLE IF NOT EXISTS t (x)")'
python3 -c '
import sqlite3, time
c = sqlite3.connect("app.db", isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open("held", "w").close()
time.sleep(5)' &
holder=$!
trap 'kill $holder 2>/dev/null' EXIT
while [ ! -e held ]; do sleep 0.02; done
python3 -c 'import sqlite3; c = sqlite3.connect("app.db", timeout=0.2); c.execute("INSERT INTO t VALUES (1)"); c.commit()'
