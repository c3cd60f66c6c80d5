set -euo pipefail
node -e 'require("xlsx-healer-corpus")'
