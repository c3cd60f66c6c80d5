set -euo pipefail
log() { echo "$(date '+%Y-%m-%dT%H:%M:%S%z') $1 $2" >&2; }
log INFO "job started (pid $$)"
log WARN "rate limit close: 98 of 100 calls used"
python3 - <<'PY'
amounts = ["12", "7", "4,5"]
print(sum(int(a) for a in amounts))
PY
