set -euo pipefail
cd /srv/exports-healer-corpus
ls
