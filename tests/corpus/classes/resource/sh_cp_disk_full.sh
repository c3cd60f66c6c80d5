set -euo pipefail
seq 1 10000 > report.csv
cp report.csv /dev/full
