set -euo pipefail
rows=$(printf 'north,3\nsouth,x\n')
while IFS=, read -r region amount; do
  case "$amount" in
    ''|*[!0-9]*) echo "error: amount for $region is not a number: $amount" >&2; exit 1 ;;
  esac
done <<< "$rows"
