set -euo pipefail
# Amounts come with decimals now; the report formats them as whole numbers.
amount="12.50"
printf 'total: %d\n' "$amount"
