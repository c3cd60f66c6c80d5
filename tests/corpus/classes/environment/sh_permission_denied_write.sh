set -euo pipefail
echo '{}' > /usr/local/share/daily-report.json
