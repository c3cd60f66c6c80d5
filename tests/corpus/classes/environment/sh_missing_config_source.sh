set -euo pipefail
source ./report.env
echo "$ENDPOINT"
