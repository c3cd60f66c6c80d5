import sqlite3

holder = sqlite3.connect("jobs.db", isolation_level=None)
holder.execute("CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, status TEXT)")
holder.execute("BEGIN EXCLUSIVE")  # another job is in the middle of a write

def record(status):
    db = sqlite3.connect("jobs.db", timeout=0.2)
    try:
        db.execute("INSERT INTO runs (status) VALUES (?)", (status,))
        db.commit()
    except sqlite3.OperationalError as e:
        raise RuntimeError(f"could not record the run as {status!r}") from e

record("done")
