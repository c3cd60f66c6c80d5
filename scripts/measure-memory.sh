#!/usr/bin/env bash
# Memory of the Healer desktop app at rest: figures, not a test (exits 0 once measured, even
# over target).
#
#   bash scripts/measure-memory.sh          # the app as shipped: window open, then closed
#   bash scripts/measure-memory.sh --each   # also without any WebKit knob, and each knob alone
#   MEASURE_SETS="none no-dmabuf,arenas" bash scripts/measure-memory.sh --each   # chosen sets
#
# Launches healer-desktop (HEALER_DESKTOP_BIN, default: the release build) on a fresh temp
# HEALER_DATA_DIR with the example workflows loaded, under its own Xvfb when there is no DISPLAY
# and its own session bus. Once the app has been idle for SETTLE_SECONDS (default 10: its
# processes together used under 5% of a core in each of those seconds, so a busy machine
# delays the figure instead of catching the page half drawn) on the Workflows page, it sums PSS
# (/proc/PID/smaps_rollup) over the app and all its processes (WebKitWebProcess,
# WebKitNetworkProcess, ...): "window open". Then it closes the window the way its close
# button does (through the app's test hook, as the tray's e2e test does), waits as long again
# and measures "window closed". Then it quits the app with SIGTERM and cleans up.
# HEALER_WEBKIT_TUNING picks the WebKit knobs (src-tauri/src/webkit.rs); MEASURE_SCREENSHOT=
# file.png saves the screen at the first measurement.
set -uo pipefail

OPEN_TARGET_MB=250
CLOSED_TARGET_MB=120
settle="${SETTLE_SECONDS:-10}"
target_dir="${CARGO_TARGET_DIR:-$HOME/.cache/healer/target}"
bin="${HEALER_DESKTOP_BIN:-$target_dir/release/healer-desktop}"
cli="${HEALER_CLI_BIN:-$(dirname "$bin")/healer}"
each=0
[[ "${1:-}" == "--each" ]] && each=1

for b in "$bin" "$cli"; do
  if [[ ! -x "$b" ]]; then
    echo "measure-memory: missing $b. Build it with \`cargo build --release -p healer -p healer-desktop\` (or set HEALER_DESKTOP_BIN / HEALER_CLI_BIN)." >&2
    exit 2
  fi
done

# A private session bus, as a desktop session would have (single instance, notifications).
if [[ -z "${HEALER_MEASURE_IN_BUS:-}" ]] && command -v dbus-run-session >/dev/null; then
  export HEALER_MEASURE_IN_BUS=1
  exec dbus-run-session -- bash "$0" "$@"
fi

xvfb_pid=""
app_pid=""
data_dir=""

# Processes of the app: it, its descendants, and anything carrying its temp data dir.
our_pids() {
  {
    [[ -n "$app_pid" ]] && ps -e -o pid=,ppid= | awk -v root="$app_pid" '
      { parent[$1] = $2; pids[NR] = $1 }
      END {
        keep[root] = 1; changed = 1
        while (changed) {
          changed = 0
          for (i in pids) { p = pids[i]; if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 } }
        }
        for (p in keep) print p
      }'
    [[ -n "$data_dir" ]] && grep -lzs -- "^HEALER_DATA_DIR=$data_dir\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
  } | sort -nu | while read -r p; do [[ -d /proc/$p ]] && echo "$p"; done
}

stop_app() {
  if [[ -n "$app_pid" ]] && kill -0 "$app_pid" 2>/dev/null; then
    kill -TERM "$app_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$app_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  local left
  left="$(our_pids)"
  [[ -n "$left" ]] && kill -KILL $left 2>/dev/null
  [[ -n "$app_pid" ]] && wait "$app_pid" 2>/dev/null
  app_pid=""
  [[ -n "$data_dir" ]] && rm -rf "$data_dir" "$data_dir.app.log"
  data_dir=""
}

cleanup() {
  stop_app
  if [[ -n "$xvfb_pid" ]]; then
    kill "$xvfb_pid" 2>/dev/null
    wait "$xvfb_pid" 2>/dev/null
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  command -v Xvfb >/dev/null || { echo "measure-memory: no DISPLAY and no Xvfb (apt-get install xvfb)" >&2; exit 2; }
  n=99
  while [[ -e "/tmp/.X$n-lock" || -e "/tmp/.X11-unix/X$n" ]]; do n=$((n + 1)); done
  Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  for _ in $(seq 1 100); do [[ -S "/tmp/.X11-unix/X$n" ]] && break; sleep 0.1; done
  [[ -S "/tmp/.X11-unix/X$n" ]] || { echo "measure-memory: Xvfb :$n did not start" >&2; exit 1; }
  export DISPLAY=":$n"
fi
export NO_AT_BRIDGE=1

# CPU time (clock ticks) the app's processes have used so far.
cpu_ticks() {
  local total=0 t
  for pid in $(our_pids); do
    t="$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null)" || continue
    total=$((total + ${t:-0}))
  done
  echo "$total"
}

# Wait until the app has been idle for $settle seconds in a row (at most IDLE_LIMIT seconds).
wait_idle() {
  local idle=0 waited=0 before after limit="${IDLE_LIMIT:-120}" hz
  hz="$(getconf CLK_TCK)"
  before="$(cpu_ticks)"
  while (( idle < settle && waited < limit )); do
    sleep 1
    waited=$((waited + 1))
    if [[ -n "$app_pid" ]] && ! kill -0 "$app_pid" 2>/dev/null; then return 1; fi
    after="$(cpu_ticks)"
    if (( (after - before) * 20 <= hz )); then idle=$((idle + 1)); else idle=0; fi
    before="$after"
  done
  (( idle >= settle )) || echo "measure-memory: the app never rested ${settle} s in a row within ${limit} s; measuring anyway" >&2
  return 0
}

# kB from a smaps_rollup field (0 if unreadable).
field_kb() { awk -v f="$2:" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
mb() { printf '%.1f' "$(echo "$1 / 1024" | bc -l)"; }

# Processes not ours that map WebKit's libraries: PSS splits those pages with them, so while
# they run (another Healer, a test of one, any WebKitGTK app) the figures come out lower.
foreign_webkit() {
  local ours
  ours=" $(our_pids | tr '\n' ' ') "
  grep -ls "libwebkit2gtk-4.1" /proc/[0-9]*/maps 2>/dev/null | cut -d/ -f3 |
    while read -r p; do [[ "$ours" == *" $p "* ]] || echo "$p"; done | wc -l
}

# Sum PSS over the app's processes; prints a table when $2 is "table". Sets total_pss (kB)
# and shared_with (how many other processes map WebKit's libraries meanwhile).
measure() {
  local label="$1" table="${2:-}" waited=0
  shared_with="$(foreign_webkit)"
  # On a shared machine, wait a while for the others to finish.
  while (( shared_with > 0 && waited < ${FOREIGN_WAIT:-180} )); do
    sleep 2
    waited=$((waited + 2))
    shared_with="$(foreign_webkit)"
  done
  total_pss=0
  local total_rss=0 count=0 names=()
  [[ "$table" == table ]] && printf '\n%s\n%-8s %-24s %9s %9s %13s %13s\n' "$label" PID PROCESS "RSS MB" "PSS MB" "(PSS anon MB" "PSS file MB)"
  for pid in $(our_pids); do
    local name rss pss anon file
    name="$(cat "/proc/$pid/comm" 2>/dev/null)" || continue
    rss="$(field_kb "$pid" Rss)"; pss="$(field_kb "$pid" Pss)"
    anon="$(field_kb "$pid" Pss_Anon)"; file="$(field_kb "$pid" Pss_File)"
    total_rss=$((total_rss + rss)); total_pss=$((total_pss + pss)); count=$((count + 1))
    names+=("$name")
    [[ "$table" == table ]] && printf '%-8s %-24s %9s %9s %13s %13s\n' "$pid" "$name" "$(mb "$rss")" "$(mb "$pss")" "$(mb "$anon")" "$(mb "$file")"
  done
  [[ "$table" == table ]] && printf '%-8s %-24s %9s %9s\n' "" "TOTAL ($count processes)" "$(mb "$total_rss")" "$(mb "$total_pss")"
  if [[ "$table" == table ]] && (( shared_with > 0 )); then
    echo "(while $shared_with other processes on this machine mapped WebKit's libraries: this figure is lower than when Healer runs alone)"
  fi
}

verdict() { # verdict <kB> <target MB>
  if (( $1 <= $2 * 1024 )); then echo "within ≤ $2 MB"; else echo "OVER ≤ $2 MB by $(printf '%.1f' "$(echo "$1 / 1024 - $2" | bc -l)") MB"; fi
}

# One launch: open (measured), closed (measured). Sets open_kb and closed_kb.
one_launch() { # one_launch <tuning or "default"> <table|quiet>
  local tuning="$1" table="$2"
  data_dir="$(mktemp -d "${TMPDIR:-/tmp}/healer-memory-XXXXXX")"
  HEALER_DATA_DIR="$data_dir" "$cli" examples >/dev/null 2>&1 || { echo "measure-memory: could not load the examples" >&2; return 1; }
  (
    export HEALER_DATA_DIR="$data_dir" HEALER_TEST_HOOKS=1
    [[ "$tuning" != default ]] && export HEALER_WEBKIT_TUNING="$tuning"
    exec "$bin"
  ) >"$data_dir.app.log" 2>&1 &
  app_pid=$!
  if ! wait_idle; then
    echo "measure-memory: the app exited before it could be measured. Its output:" >&2
    cat "$data_dir.app.log" >&2
    app_pid=""
    return 1
  fi
  if [[ -n "${MEASURE_SCREENSHOT:-}" && "$table" == table ]] && command -v import >/dev/null; then
    import -window root "$MEASURE_SCREENSHOT" 2>/dev/null && echo "measure-memory: screenshot $MEASURE_SCREENSHOT"
  fi
  measure "Window open on Workflows, after ${settle} s at rest:" "$table"
  open_kb=$total_pss
  foreign=$shared_with
  HEALER_DATA_DIR="$data_dir" HEALER_TEST_HOOKS=1 timeout 20 "$bin" --tray-menu close-window >/dev/null 2>&1
  wait_idle
  measure "Window closed, after ${settle} s at rest:" "$table"
  closed_kb=$total_pss
  foreign=$((foreign + shared_with))
  stop_app
}

echo "measure-memory: $bin on DISPLAY=${DISPLAY:-}, ${settle} s at rest before each figure"
one_launch default table || exit 1
printf '\nWindow open on Workflows: %s MB PSS (%s)\n' "$(mb "$open_kb")" "$(verdict "$open_kb" "$OPEN_TARGET_MB")"
printf 'Window closed:            %s MB PSS (%s)\n' "$(mb "$closed_kb")" "$(verdict "$closed_kb" "$CLOSED_TARGET_MB")"
echo "(PSS splits shared pages between the processes that map them, so the sum is honest; RSS would count them once per process.)"

if (( each )); then
  printf '\nWebKit knobs (HEALER_WEBKIT_TUNING), PSS MB (* = other WebKit processes ran meanwhile):\n%-36s %8s %8s\n' knobs open closed
  sets="${MEASURE_SETS:-none cache-model spell-check webgl acceleration page-cache cpu-rendering no-dmabuf shm paint-threads small-heap no-compositing no-jit arenas pressure trim default}"
  for tuning in $sets; do
    if one_launch "$tuning" quiet; then
      mark=""
      (( foreign > 0 )) && mark=" *"
      printf '%-36s %8s %8s%s\n' "$tuning" "$(mb "$open_kb")" "$(mb "$closed_kb")" "$mark"
    else
      printf '%-36s %8s\n' "$tuning" "failed"
    fi
  done
fi
exit 0
