#!/usr/bin/env bash
# Sets up a fresh machine, builds zrec and runs its tests. Two sizes:
#
#   scripts/test.sh fast   the Release build (gcc, -Werror) and the "unit" and "cli" tiers:
#                          what a contributor runs before pushing (README.md, "Tests")
#   scripts/test.sh        everything (what CI runs, .ci/run): the Release build and all
#                          four tiers (unit, cli, process, slow); then one clang tree with
#                          AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
#                          coverage, which runs the tests again (all but those labelled
#                          release-only, cmake/tests.cmake), the core test binary under
#                          ThreadSanitizer, and each fuzz target for ZREC_FUZZ_SECONDS
#                          (default 10). Each build after the first compiles in the
#                          background while the tests before it run.
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
# Tests spend most of their time waiting (for a server's timeout, a lock, a Slurm job, a
# process to reach a state), so twice as many run at once as there are cores: on two
# cores, with other builds beside them, the Release tiers took 411 s instead of 541 s.
test_jobs=$((jobs * 2))
# The Release build treats a compiler warning as an error (-Wall -Wextra -Werror); the
# sanitizer build reports warnings without failing on them, since its instrumentation
# makes flow warnings come and go.
echo "== Release build" >&2
scripts/build.sh build -DZREC_WERROR=ON
phase_done "Release build"

if [ "$tier" = fast ]; then
  echo "== Release tests: unit and cli tiers" >&2
  ctest --test-dir build --output-on-failure -j "$test_jobs" -L '^(unit|cli)$'
  phase_done "Release tests (unit, cli)"
  echo "figure: scripts/test.sh fast took $((SECONDS - run_start)) s" >&2
  exit 0
fi

# The tests leave much of the machine idle (they wait for processes, locks, a Slurm
# cluster, a browser): each test phase of the full run has the next build compiling
# beside it at a lower priority, in the background, and waits for it afterwards. The
# process and slow tiers are written to pass with a build beside them (README.md,
# "Tests"): they wait for states, never for fixed sleeps.
background_build() {  # background_build NAME LOG ARGS...: scripts/build.sh ARGS at nice 10
  local name=$1 log=$2
  shift 2
  echo "== $name, in the background (log: $log)" >&2
  nice -n 10 scripts/build.sh "$@" >"$log" 2>&1 &
  build_pid=$!
}
wait_build() {  # wait_build NAME LOG: the background build's end; its log on failure
  local start=$SECONDS
  if ! wait "$build_pid"; then
    echo "FAIL: $1 (log: $2):" >&2
    tail -n 40 "$2" >&2
    exit 1
  fi
  echo "figure: $1 finished $((SECONDS - start)) s after the tests beside it" >&2
}
# The library without libcurl's headers (-DZREC_REMOTE=OFF, docs/architecture.md) must
# keep building: io/curl_api.h stops the compile if a file beyond the three that use
# libcurl includes it.
echo "== Library build with ZREC_REMOTE=OFF" >&2
scripts/build.sh build-noremote --target zrec_core -DZREC_REMOTE=OFF -DZREC_BUILD_CLI=OFF -DZREC_BUILD_TESTS=OFF \
  -DZREC_WERROR=ON
phase_done "library build with ZREC_REMOTE=OFF"

sanitized=1
[ "${ZREC_SKIP_SANITIZERS:-0}" != 1 ] || sanitized=0
# One clang tree for the sanitized tests and the fuzzers alike (scripts/build.sh
# --sanitized): every object is compiled once with ASan, UBSan and libFuzzer's
# coverage, and the fuzz targets link from it (fuzz/CMakeLists.txt).
if [ "$sanitized" = 1 ]; then
  background_build "ASan + UBSan build" build/asan-build.log build-asan --sanitized
fi

echo "== Release tests: every tier" >&2
ctest --test-dir build --output-on-failure -j "$test_jobs"
phase_done "Release tests (unit, cli, process, slow)"

if [ "$sanitized" = 1 ]; then
  wait_build "ASan + UBSan build" build/asan-build.log
  phase_done "ASan + UBSan build (the rest)"
  # The executor's concurrency under ThreadSanitizer: the core test binary, which holds
  # every test of the lanes and of what runs on them (append, gather, verify, transfer,
  # digest, join, the record window), built without the CLI.
  background_build "TSan build" build/tsan-build.log build-tsan --target zrec_core_tests \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DZREC_TSAN=ON \
    -DZREC_BUILD_CLI=OFF
  echo "== ASan + UBSan tests" >&2
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$test_jobs" --label-exclude release-only
  phase_done "ASan + UBSan tests"
  wait_build "TSan build" build/tsan-build.log
  phase_done "TSan build (the rest)"
  echo "== TSan: the core tests" >&2
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/zrec_core_tests
  phase_done "TSan tests"

  # libFuzzer targets, a bounded run each on the committed seeds (docs/verify.md), from
  # the sanitized tree.
  echo "== Fuzzing" >&2
  scripts/fuzz.sh "${ZREC_FUZZ_SECONDS:-10}"
  phase_done "fuzzing"
fi
echo "figure: scripts/test.sh took $((SECONDS - run_start)) s" >&2
