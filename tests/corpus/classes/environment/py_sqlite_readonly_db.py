import os, sqlite3
db = sqlite3.connect("metrics.db")
db.execute("CREATE TABLE IF NOT EXISTS points (at TEXT, value REAL)")
db.commit()
db.close()
os.chmod("metrics.db", 0o444)  # the backup job left it read-only

db = sqlite3.connect("metrics.db")
db.execute("INSERT INTO points VALUES (datetime('now'), 1.5)")
db.commit()
