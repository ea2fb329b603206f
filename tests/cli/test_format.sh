#!/usr/bin/env bash
# Every C++ source of the project is laid out as .clang-format says (Google's style at 120
# columns, include groups): the layout was applied once, and this keeps it applied, so a
# change's diff holds only what it changes. Fix a failure with
#   clang-format -i $(git ls-files '*.cc' '*.h')
# Usage: bash tests/cli/test_format.sh   (CTest runs it; needs clang-format, scripts/setup.sh)
set -u

source "$(dirname "$0")/testlib.sh"
cd "$root" || exit 1

if ! command -v clang-format >/dev/null; then
  fail "clang-format is not installed (scripts/setup.sh installs it)"
  finish
fi
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' | grep -v '^scripts/bench_cli/')
if [ ${#files[@]} -eq 0 ]; then
  fail "no C++ sources found under $root (not a git checkout?)"
  finish
fi
present=()
for f in "${files[@]}"; do [ -f "$f" ] && present+=("$f"); done
# One clang-format for every file (a process per file took half a minute of CI): each
# file out of layout is named by its "FILE:LINE:COL: error:" lines.
mapfile -t unformatted < <(clang-format --dry-run --Werror "${present[@]}" 2>&1 >/dev/null |
  sed -nE 's/^(.+):[0-9]+:[0-9]+: error: .*/\1/p' | sort -u)
for f in "${unformatted[@]}"; do fail "$f is not laid out as .clang-format says (clang-format -i $f)"; done
[ ${#unformatted[@]} -eq 0 ] && ok
echo "figure: format: ${#files[@]} C++ files checked with $(clang-format --version | grep -oE '[0-9]+\.[0-9.]+' | head -1), ${#unformatted[@]} not laid out"
finish
