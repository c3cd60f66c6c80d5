#!/usr/bin/env bash
# Healer installs like any desktop app: build the .deb (from the debug build, which `make build`
# made already; a release build takes far longer on 2 cores and bundles the same way), install
# it with apt-get, start the installed app from its desktop entry under Xvfb until its window
# shows, run the installed `healer --version`, and remove the package again.
#
#   bash tests/package/install.sh
#
# Needs root (apt-get). The machine is shared (several checkouts may run `make test` at once),
# so the install-to-remove stretch holds a machine-wide lock, and a package left behind by an
# interrupted run of this test (its marker file says so) is removed before going on. A healer
# package installed any other way is the person's: the test refuses to replace it.
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"

fail() { echo "package test: $*" >&2; exit 1; }
[[ "$(id -u)" -eq 0 ]] || fail "needs root to install the package (run it as root, as CI does)"
lock=/var/lock/healer-package-test.lock
marker=/var/tmp/healer-package-test.installed
exec 9>"$lock"
flock -w 600 9 || fail "another package test held $lock for 10 minutes; is one stuck?"
installed_now() { dpkg-query -W -f='${Status}' healer 2>/dev/null | grep -q "install ok installed"; }
if installed_now && [[ -e "$marker" ]]; then
  echo "package test: removing the healer package an interrupted run of this test left" >&2
  DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq -o DPkg::Lock::Timeout=120 healer >/dev/null ||
    fail "could not remove the healer package a previous run left; run apt-get remove healer"
fi
rm -f "$marker"
if installed_now; then
  fail "a package named healer is installed on this machine already; remove it first (apt-get remove healer)"
fi
for tool in Xvfb xwininfo dbus-run-session; do
  command -v "$tool" >/dev/null || fail "$tool is missing (bash scripts/setup.sh test installs it)"
done

deb="$(bash "$here/scripts/package.sh" debug)" || fail "the .deb could not be built"
echo "package test: built $deb"

data_dir="$(mktemp -d "${TMPDIR:-/tmp}/healer-package-XXXXXX")"
# The processes of this test's app: WebKit's carry the data folder in their environment; the
# app's own initial environment is wiped at its start (healer::secrets), so it is known by
# the files of the data folder it holds open.
ours() {
  grep -lzs -- "^HEALER_DATA_DIR=$data_dir\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
  for fd in /proc/[0-9]*/fd/*; do
    [[ "$(readlink "$fd" 2>/dev/null)" == "$data_dir"/* ]] && echo "${fd#/proc/}" | cut -d/ -f1
  done
}
xvfb_pid=""
app_pid=""
installed=0
cleanup() {
  [[ -n "$app_pid" ]] && kill -KILL "$app_pid" 2>/dev/null
  for p in $(ours); do kill -KILL "$p" 2>/dev/null; done
  [[ -n "$xvfb_pid" ]] && kill "$xvfb_pid" 2>/dev/null
  if (( installed )); then
    if DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq -o DPkg::Lock::Timeout=120 healer >/dev/null 2>&1; then
      rm -f "$marker"
    else
      echo "package test: could not remove the package; run apt-get remove healer" >&2
    fi
  fi
  rm -rf "$data_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

contents="$(dpkg-deb -c "$deb")"
for path in usr/bin/healer usr/bin/healer-desktop usr/share/applications/Healer.desktop \
  usr/share/icons/hicolor/128x128/apps/healer-desktop.png; do
  grep -qE " (\./)?$path\$" <<<"$contents" || fail "/$path is not in the package"
done

touch "$marker"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=120 "$deb" >/dev/null ||
  fail "apt-get install $deb failed"
echo "package test: installed"

# The CLI is on PATH.
healer_bin="$(command -v healer)" || fail "healer is not on PATH after installing"
[[ "$healer_bin" == /usr/bin/healer ]] || fail "healer on PATH is $healer_bin, not the installed /usr/bin/healer"
want="$(dpkg-deb -f "$deb" Version)"
got="$(/usr/bin/healer --version)" || fail "healer --version failed"
[[ "$got" == *"$want"* ]] || fail "healer --version says \"$got\", the package is $want"
echo "package test: $got"

# The app starts the way a launcher starts it: the desktop entry's Exec line.
exec_line="$(sed -n 's/^Exec=//p' /usr/share/applications/Healer.desktop)"
[[ -n "$exec_line" ]] || fail "the desktop entry has no Exec line"
n=120
while [[ -e "/tmp/.X$n-lock" || -e "/tmp/.X11-unix/X$n" ]]; do n=$((n + 1)); done
Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 9>&- &
xvfb_pid=$!
for _ in $(seq 1 100); do [[ -S "/tmp/.X11-unix/X$n" ]] && break; sleep 0.1; done
export DISPLAY=":$n" NO_AT_BRIDGE=1
log="$data_dir.log"
HEALER_DATA_DIR="$data_dir" dbus-run-session -- $exec_line >"$log" 2>&1 9>&- &
app_pid=$!
shown=0
for _ in $(seq 1 300); do
  if xwininfo -root -tree 2>/dev/null | grep -q '"Healer"'; then shown=1; break; fi
  kill -0 "$app_pid" 2>/dev/null || break
  sleep 0.2
done
(( shown )) || { cat "$log" >&2; fail "the installed app's window did not show within 60 s"; }
echo "package test: the installed app's window is up"
# Its engine started on the data folder, from the installed binary.
HEALER_DATA_DIR="$data_dir" /usr/bin/healer events --json --limit 5 | grep -q '"engine_started"' ||
  fail "the installed app did not start its engine"

app=$(ours | sort -u | while read -r p; do [[ "$(readlink "/proc/$p/exe")" == /usr/bin/healer-desktop ]] && echo "$p"; done | head -1)
[[ -n "$app" ]] || fail "no running /usr/bin/healer-desktop found"
kill -TERM "$app"
for _ in $(seq 1 100); do kill -0 "$app" 2>/dev/null || break; sleep 0.1; done
kill -0 "$app" 2>/dev/null && fail "the installed app did not quit on SIGTERM"
wait "$app_pid" 2>/dev/null
app_pid=""

DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq -o DPkg::Lock::Timeout=120 healer >/dev/null || fail "apt-get remove healer failed"
installed=0
rm -f "$marker"
[[ ! -e /usr/bin/healer && ! -e /usr/bin/healer-desktop ]] || fail "the binaries are still there after removing the package"
rm -f "$log"
echo "package test: removed; all good"
