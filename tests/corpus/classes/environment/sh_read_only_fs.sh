set -euo pipefail
echo 1 > /proc/version
