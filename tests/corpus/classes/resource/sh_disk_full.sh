set -euo pipefail
seq 1 100000 > /dev/full
