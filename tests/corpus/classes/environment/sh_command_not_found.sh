set -euo pipefail
pdftotext-healer-corpus invoice.pdf invoice.txt
