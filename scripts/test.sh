#!/usr/bin/env bash
# Sets up a fresh machine, builds zrec and runs every test: first the Release build,
# then the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
# This is what CI runs (.ci/run). Set ZREC_SKIP_SANITIZERS=1 to run the Release pass only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

jobs=$(nproc)
echo "== Release build and tests" >&2
scripts/build.sh build
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${ZREC_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== ASan + UBSan build and tests" >&2
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZREC_SANITIZE=ON
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
