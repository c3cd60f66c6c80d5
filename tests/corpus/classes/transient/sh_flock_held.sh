set -euo pipefail
( flock 9; touch held; sleep 5 ) 9>export.lock &
holder=$!
trap 'kill $holder 2>/dev/null' EXIT
while [ ! -e held ]; do sleep 0.02; done
exec 9>export.lock
if ! flock -n 9; then
  echo "export.lock is held by another run; try again later" >&2
  exit 1
fi
