set -euo pipefail
wc -l < exports/orders-today.csv
