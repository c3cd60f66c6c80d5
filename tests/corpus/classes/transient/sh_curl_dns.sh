set -euo pipefail
curl -fsS "http://rates.healer-corpus.invalid/v1/today" -o rates.json
