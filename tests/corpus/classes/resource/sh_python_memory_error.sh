set -euo pipefail
python3 -c 'history = bytearray(10**14)'
