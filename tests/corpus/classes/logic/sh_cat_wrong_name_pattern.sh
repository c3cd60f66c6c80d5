set -euo pipefail
mkdir -p reports
touch reports/report-2026-11-26.txt reports/report-2026-11-27.txt
echo "reports on disk:"
ls reports
cat "reports/report_2026-11-27.txt" | wc -l
