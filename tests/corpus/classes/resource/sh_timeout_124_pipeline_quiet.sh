set -o pipefail
timeout 0.3 bash -c 'while :; do :; done' | tail -1
status=$?
exit $status
