set -euo pipefail
echo "report" > /dev/full
