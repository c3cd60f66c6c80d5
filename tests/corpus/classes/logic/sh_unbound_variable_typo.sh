set -euo pipefail
report_dir="$PWD"
echo "writing to $reprot_dir"
