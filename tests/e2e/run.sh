#!/usr/bin/env bash
# End-to-end stories for the Healer desktop app.
#
#   bash tests/e2e/run.sh [extra node --test args, e.g. --test-name-pattern=Settings]
#
# Builds nothing: it expects the binaries to exist (`make build`). Provides a display
# (its own Xvfb when DISPLAY is unset) and a private session bus (dbus-run-session),
# then runs the stories with Node's built-in test runner and exits with its code
# (HEALER_E2E_FILES="tray.test.mjs" runs only those files).
# Screenshots and the tauri-driver log go to tests/e2e/artifacts/.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${CARGO_TARGET_DIR:-$HOME/.cache/healer/target}"
export HEALER_DESKTOP_BIN="${HEALER_DESKTOP_BIN:-$target/debug/healer-desktop}"
export HEALER_CLI_BIN="${HEALER_CLI_BIN:-$target/debug/healer}"
if [[ -z "${TAURI_DRIVER:-}" ]]; then
  if [[ -x "$HOME/.cargo/bin/tauri-driver" ]]; then
    TAURI_DRIVER="$HOME/.cargo/bin/tauri-driver"
  else
    TAURI_DRIVER="$(command -v tauri-driver || true)"
  fi
fi
export TAURI_DRIVER

missing=0
need() { # need <path-or-empty> <what> <how to get it>
  if [[ -z "$1" || ! -x "$1" ]]; then
    echo "run.sh: missing $2${1:+ at $1}. $3" >&2
    missing=1
  fi
}
need "$HEALER_DESKTOP_BIN" "the desktop app (healer-desktop)" "Build it with \`make build\` (or set HEALER_DESKTOP_BIN)."
need "$HEALER_CLI_BIN" "the CLI (healer)" "Build it with \`make build\` (or set HEALER_CLI_BIN)."
need "$TAURI_DRIVER" "tauri-driver" "Install it with \`cargo install tauri-driver --locked\` (or set TAURI_DRIVER)."
need "${HEALER_NATIVE_DRIVER:-/usr/bin/WebKitWebDriver}" "WebKitWebDriver" "Install it with \`apt-get install webkit2gtk-driver\`."
need "$(command -v node || true)" "node" "Install Node.js 20 or newer."
need "$(command -v dbus-run-session || true)" "dbus-run-session" "Install it with \`apt-get install dbus-x11\` (or dbus)."
if [[ -z "${DISPLAY:-}" ]]; then
  need "$(command -v Xvfb || true)" "Xvfb (there is no DISPLAY)" "Install it with \`apt-get install xvfb\`, or run from a desktop session."
fi
[[ $missing -eq 0 ]] || exit 2

mkdir -p "$here/artifacts"
rm -rf "$here/artifacts/data-dir" "$here"/artifacts/*.png # this run's artifacts only
xvfb_pid=""
cleanup() {
  if [[ -n "$xvfb_pid" ]]; then
    sleep 0.5 # let bus-activated helpers (portals) leave the display first
    kill "$xvfb_pid" 2>/dev/null
    wait "$xvfb_pid" 2>/dev/null
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z "${DISPLAY:-}" ]]; then
  n=99
  while [[ -e "/tmp/.X$n-lock" || -e "/tmp/.X11-unix/X$n" ]]; do n=$((n + 1)); done
  Xvfb ":$n" -screen 0 1920x1080x24 -nolisten tcp >"$here/artifacts/xvfb.log" 2>&1 &
  xvfb_pid=$!
  for _ in $(seq 1 100); do
    [[ -S "/tmp/.X11-unix/X$n" ]] && break
    kill -0 "$xvfb_pid" 2>/dev/null || { echo "run.sh: Xvfb :$n did not start, see $here/artifacts/xvfb.log" >&2; exit 1; }
    sleep 0.1
  done
  [[ -S "/tmp/.X11-unix/X$n" ]] || { echo "run.sh: Xvfb :$n did not come up within 10 s" >&2; exit 1; }
  export DISPLAY=":$n"
  echo "run.sh: started Xvfb on $DISPLAY"
fi

export NO_AT_BRIDGE=1 # no accessibility bus under test
cd "$here"
# A hard ceiling on top of the per-test timeouts, so a run can never hang.
timeout --kill-after=15 1200 \
  dbus-run-session -- node --test --test-reporter=spec --test-concurrency=1 "$@" ${HEALER_E2E_FILES:-healer.test.mjs startup.test.mjs workflows.test.mjs autofix.test.mjs checkpoint.test.mjs people.test.mjs secrets.test.mjs projects.test.mjs approvals.test.mjs finishing.test.mjs comments.test.mjs healerService.test.mjs steering.test.mjs sessions.test.mjs cluster.test.mjs looks.test.mjs tray.test.mjs}
code=$?
[[ $code -eq 124 ]] && echo "run.sh: the test run hit the 20-minute ceiling and was stopped" >&2
echo "run.sh: artifacts (screenshots, tauri-driver.log) in $here/artifacts"
exit $code
