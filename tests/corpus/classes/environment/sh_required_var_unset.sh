set -euo pipefail
: "${SHOP_API_TOKEN:?SHOP_API_TOKEN is not set}"
echo "calling the shop"
