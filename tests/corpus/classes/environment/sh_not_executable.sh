set -euo pipefail
printf '#!/bin/sh\necho hi\n' > helper.sh
./helper.sh
