set -euo pipefail
node --max-old-space-size=16 -e 'const rows = []; while (true) rows.push(new Array(1e5).fill("row"))'
