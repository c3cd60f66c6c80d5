import sqlite3
db = sqlite3.connect("/srv/reports/state/reports.db")
db.execute("SELECT 1")
