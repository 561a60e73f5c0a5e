#!/usr/bin/env bash
# Install the .desktop entry and icon for the current user, pointing at the memviz window launcher:
# the one given, else `memviz-app` on PATH (pip install), else the frozen build in dist/memviz/.
# Usage: packaging/linux/install-desktop-entry.sh [/path/to/memviz-app]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exe="${1:-$(command -v memviz-app || true)}"
if [ -z "$exe" ] && [ -x "$here/../../dist/memviz/memviz-app" ]; then
  exe="$here/../../dist/memviz/memviz-app"
fi
if [ -z "$exe" ] || [ ! -x "$exe" ]; then
  echo "no memviz-app found: pip install memviz, build dist/memviz, or give its path" >&2
  exit 2
fi
exe="$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications"
sed "s|^Exec=.*|Exec=\"$exe\"|" "$here/memviz.desktop" > "$data/applications/memviz.desktop"
install -Dm644 "$here/../../memviz/data/memviz.svg" "$data/icons/hicolor/scalable/apps/memviz.svg"
echo "installed $data/applications/memviz.desktop -> $exe"
