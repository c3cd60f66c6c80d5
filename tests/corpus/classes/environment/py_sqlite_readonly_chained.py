import os, sqlite3

class StoreError(Exception):
    pass

db = sqlite3.connect("cache.db")
db.execute("CREATE TABLE IF NOT EXISTS pages (url TEXT, body TEXT)")
db.commit()
db.close()
os.chmod("cache.db", 0o444)

def remember(url, body):
    db = sqlite3.connect("cache.db")
    try:
        db.execute("INSERT INTO pages VALUES (?, ?)", (url, body))
        db.commit()
    except sqlite3.Error as e:
        raise StoreError("the page cache refused the write") from e

remember("https://example.org/a", "<html>")
