set -euo pipefail
orders=0
echo $(( 1200 / orders ))
