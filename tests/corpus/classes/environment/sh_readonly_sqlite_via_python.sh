set -euo pipefail
python3 - <<'PY'
import sqlite3
sqlite3.connect("ledger.db").execute("create table if not exists t (x)").connection.commit()
PY
chmod 444 ledger.db
echo "appending today's ledger"
python3 -c 'import sqlite3; c = sqlite3.connect("ledger.db"); c.execute("insert into t values (1)"); c.commit()'
