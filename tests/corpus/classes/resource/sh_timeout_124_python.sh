set -eo pipefail
echo "recomputing the index"
timeout 0.5 python3 -c 'while True: pass'
