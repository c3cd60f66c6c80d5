set -euo pipefail
amount="12.5"
echo $(( amount * 2 ))
