#!/usr/bin/env bash
# Builds Healer's .deb with Tauri's bundler (the Tauri CLI from ui/node_modules): the desktop
# app with its icons and desktop entry, and the `healer` CLI in /usr/bin. The binaries must be
# built already (the Makefile does it).
#
#   bash scripts/package.sh release   # dist/healer_<version>_amd64.deb, what `make package` makes
#   bash scripts/package.sh debug     # the same from the debug build (quick; for the install test)
#
# Prints the path of the package it made.
set -euo pipefail
profile="${1:-release}"
here="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$HOME/.cache/healer/target}"
export CARGO_TARGET_DIR="$target"

for bin in healer healer-desktop; do
  if [[ ! -x "$target/$profile/$bin" ]]; then
    echo "package: $target/$profile/$bin is missing; build it first (make package does)" >&2
    exit 2
  fi
done
tauri="$here/ui/node_modules/.bin/tauri"
[[ -x "$tauri" ]] || { echo "package: the Tauri CLI is missing; run \`bash scripts/setup.sh run\` (npm ci in ui/)" >&2; exit 2; }

# The CLI goes in beside the app (tauri.conf.json: bundle.linux.deb.files).
mkdir -p "$here/src-tauri/package"
cp "$target/$profile/healer" "$here/src-tauri/package/healer"

flags=(--bundles deb)
[[ "$profile" == debug ]] && flags+=(--debug)
out="$target/$profile/bundle/deb"
rm -rf "$out"
(cd "$here" && "$tauri" bundle "${flags[@]}" >&2)

made=("$out"/*.deb)
[[ -f "${made[0]}" ]] || { echo "package: the bundler made no .deb in $out" >&2; exit 1; }
version="$(dpkg-deb -f "${made[0]}" Version)"
arch="$(dpkg-deb -f "${made[0]}" Architecture)"
mkdir -p "$here/dist"
deb="$here/dist/healer_${version}_${arch}.deb"
[[ "$profile" == debug ]] && deb="$here/dist/healer_${version}_${arch}-debug.deb"
cp "${made[0]}" "$deb"
echo "$deb"
