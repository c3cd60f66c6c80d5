set -euo pipefail
cat /etc/shadow | wc -l
