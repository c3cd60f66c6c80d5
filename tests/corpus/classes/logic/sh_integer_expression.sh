set -euo pipefail
count="twelve"
test "$count" -gt 10
echo "big batch"
