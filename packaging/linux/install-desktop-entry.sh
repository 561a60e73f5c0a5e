#!/usr/bin/env bash
# Install the .desktop entry and icon for the current user (after `pip install` or a PyInstaller build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
install -Dm644 "$here/memviz.desktop" "${XDG_DATA_HOME:-$HOME/.local/share}/applications/memviz.desktop"
install -Dm644 "$here/../../resources/memviz.svg" "${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/scalable/apps/memviz.svg"
echo "installed memviz.desktop and icon"
