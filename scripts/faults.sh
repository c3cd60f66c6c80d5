#!/usr/bin/env bash
# The reliability suite (tests/engine/faults/), with what each test printed: its figures
# ("faults: …") and why a case was skipped on this machine ("skipped: …"), then the totals.
# `make test` runs it after the other tests (which leave it out); it fails when a test fails.
set -uo pipefail
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test -p healer --test engine faults:: -- --nocapture >"$log" 2>&1
status=$?
grep -E '^(faults|skipped|tasklist): ' "$log" | sort
grep -E '^test result: ' "$log"
awk '/^faults: / {
    for (i = 1; i <= NF; i++) {
      if ($(i + 1) == "injected,") f += $i
      if ($(i + 1) == "runs" && $(i + 2) == "lost,") r += $i
      if ($(i + 1) == "processes" && $(i + 2) == "left,") p += $i
      if ($(i + 1) == "secrets" && $(i + 2) == "leaked") s += $i
    }
  }
  END { printf "faults: total: %d injected, %d runs lost, %d processes left, %d secrets leaked\n", f, r, p, s }' "$log"
if [ "$status" -ne 0 ]; then
  grep -vE '^(faults|skipped|tasklist): ' "$log" | tail -n 80
  echo "faults: the reliability suite failed" >&2
fi
exit "$status"
