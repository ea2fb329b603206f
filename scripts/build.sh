#!/usr/bin/env bash
# Configures and builds zrec.
# Usage: scripts/build.sh [BUILD_DIR] [--sanitized] [--target TARGET]... [extra cmake args...]
# Default BUILD_DIR is build/ (Release, -O2). --sanitized configures the one clang tree
# that holds the sanitized tests and the fuzzers (ASan + UBSan + libFuzzer's coverage at
# -O1 -g1: line tables are all a report needs, and full -g made each file a third slower
# to compile); --target builds that target instead of all.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --sanitized)
      export CXX=${ZREC_CLANG_CXX:-clang++}
      set -- "$@" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
        -DZREC_SANITIZE=ON -DZREC_FUZZ=ON
      shift ;;
    --target) targets+=("$2"); shift 2 ;;
    *) break ;;
  esac
done
# ccache makes a second build on the same machine (CI again, another git worktree)
# compile little. scripts/setup.sh installs it; its cache is the user's (~/.cache/ccache).
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Paths under the checkout are hashed relative to it, so a clone in another folder (CI's
# fresh clone, a git worktree) hits what an earlier build compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
# The precompiled headers' objects are cached too (ccache's manual, "Precompiled headers").
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
ninja -C "$dir" "${targets[@]}"
