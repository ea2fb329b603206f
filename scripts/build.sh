#!/usr/bin/env bash
# Configures and builds zrec. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR is build/ (Release, -O2).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
ninja -C "$dir"
