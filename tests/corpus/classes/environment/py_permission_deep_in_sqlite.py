import os, sqlite3
os.makedirs("state", exist_ok=True)
sqlite3.connect("state/queue.db").close()
os.chmod("state", 0o555)  # the folder became read-only; SQLite needs it for its journal

db = sqlite3.connect("state/queue.db")
db.execute("CREATE TABLE jobs (id INTEGER)")
db.commit()
