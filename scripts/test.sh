#!/usr/bin/env bash
# Sets up a fresh machine, builds zrec and runs its tests. Two sizes:
#
#   scripts/test.sh fast   the Release build (gcc, -Werror) and the "unit" and "cli" tiers:
#                          what a contributor runs before pushing (README.md, "Tests")
#   scripts/test.sh        everything (what CI runs, .ci/run): the Release build and all
#                          four tiers (unit, cli, process, slow); then one clang tree with
#                          AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
#                          coverage, which runs the tests again (all but those labelled
#                          release-only, cmake/tests.cmake) and each fuzz target for
#                          ZREC_FUZZ_SECONDS (default 20); and the core test binary under
#                          ThreadSanitizer.
#
# ZREC_SKIP_SANITIZERS=1 stops the full run after the Release pass. Builds go through
# ccache (scripts/setup.sh installs it; its cache is under ~/.cache/ccache), so a second
# run on the same machine compiles little.
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:-all}
case $tier in
  fast | all) ;;
  *) echo "usage: scripts/test.sh [fast]" >&2; exit 2 ;;
esac
# Each phase ends with a "figure:" line giving its wall time, so CI's log shows where its
# time goes (README.md, "Tests", says what each phase takes on two cores).
run_start=$SECONDS
phase_start=$SECONDS
phase_done() {
  echo "figure: $1 took $((SECONDS - phase_start)) s" >&2
  phase_start=$SECONDS
}
scripts/setup.sh
phase_done "setup"

jobs=$(nproc)
# The Release build treats a compiler warning as an error (-Wall -Wextra -Werror); the
# sanitizer build reports warnings without failing on them, since its instrumentation
# makes flow warnings come and go.
echo "== Release build" >&2
scripts/build.sh build -DZREC_WERROR=ON
phase_done "Release build"

if [ "$tier" = fast ]; then
  echo "== Release tests: unit and cli tiers" >&2
  ctest --test-dir build --output-on-failure -j "$jobs" -L '^(unit|cli)$'
  phase_done "Release tests (unit, cli)"
  echo "figure: scripts/test.sh fast took $((SECONDS - run_start)) s" >&2
  exit 0
fi

echo "== Release tests: every tier" >&2
ctest --test-dir build --output-on-failure -j "$jobs"
phase_done "Release tests (unit, cli, process, slow)"

if [ "${ZREC_SKIP_SANITIZERS:-0}" != 1 ]; then
  # One clang tree for the sanitized tests and the fuzzers alike (scripts/build.sh
  # --sanitized): every object is compiled once with ASan, UBSan and libFuzzer's
  # coverage, and the fuzz targets link from it (fuzz/CMakeLists.txt).
  echo "== ASan + UBSan build (with the fuzz targets) and tests" >&2
  scripts/build.sh build-asan --sanitized
  phase_done "ASan + UBSan build"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" --label-exclude release-only
  phase_done "ASan + UBSan tests"

  # libFuzzer targets, a bounded run each on the committed seeds (docs/verify.md), from
  # the tree just built.
  echo "== Fuzzing" >&2
  scripts/fuzz.sh "${ZREC_FUZZ_SECONDS:-20}"
  phase_done "fuzzing"

  # The executor's concurrency under ThreadSanitizer: the core test binary, which holds
  # every test of the lanes and of what runs on them (append, gather, verify, transfer,
  # digest, join, the record window), built without the CLI.
  echo "== TSan build and core tests" >&2
  scripts/build.sh build-tsan --target zrec_core_tests -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DZREC_TSAN=ON -DZREC_BUILD_CLI=OFF
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/zrec_core_tests
  phase_done "TSan build and tests"
fi
echo "figure: scripts/test.sh took $((SECONDS - run_start)) s" >&2
