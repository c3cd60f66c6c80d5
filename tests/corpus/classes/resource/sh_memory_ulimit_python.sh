set -euo pipefail
ulimit -v 200000
python3 -c 'rows = bytearray(500 * 2**20); print(len(rows))'
