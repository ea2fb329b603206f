#!/usr/bin/env bash
# Sets up a fresh machine, builds zrec and runs every test: first the Release build,
# then the suite again under AddressSanitizer + UndefinedBehaviorSanitizer (all but the
# process-behaviour tests, see CMakeLists.txt), the
# concurrency tests under ThreadSanitizer, and each libFuzzer target for
# ZREC_FUZZ_SECONDS (default 20). This is what CI runs (.ci/run). Set
# ZREC_SKIP_SANITIZERS=1 to run the Release pass only.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase ends with a "figure:" line giving its wall time, so CI's log shows where its
# time goes (the whole run must stay under 45 minutes on two cores).
phase_start=$SECONDS
phase_done() {
  echo "figure: $1 took $((SECONDS - phase_start)) s" >&2
  phase_start=$SECONDS
}
scripts/setup.sh
phase_done "setup"

jobs=$(nproc)
# The Release build treats a compiler warning as an error (-Wall -Wextra -Werror); the
# sanitizer and fuzz builds report warnings without failing on them, since their
# instrumentation makes gcc's flow warnings (-Wmaybe-uninitialized) come and go.
echo "== Release build and tests" >&2
scripts/build.sh build -DZREC_WERROR=ON
phase_done "Release build"
ctest --test-dir build --output-on-failure -j "$jobs"
phase_done "Release tests"

if [ "${ZREC_SKIP_SANITIZERS:-0}" != 1 ]; then
  # Built with clang at -O1 -g1 (line tables: reports still name file and line): gcc's
  # UBSan instrumentation at -O2 -g compiled the CLI about 3x slower, the largest part
  # of CI's time. Tests labelled "process" (CMakeLists.txt) ran in the Release pass.
  echo "== ASan + UBSan build and tests" >&2
  CXX=clang++ scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DZREC_SANITIZE=ON
  phase_done "ASan + UBSan build"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" --label-exclude process
  phase_done "ASan + UBSan tests"

  # The executor's concurrency under ThreadSanitizer: the lanes and everything that
  # runs lanes (append, gather, verify, transfer, digest), built without the CLI.
  echo "== TSan build and concurrency tests" >&2
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DZREC_TSAN=ON >/dev/null
  ninja -C build-tsan zrec_tsan_tests
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/zrec_tsan_tests
  phase_done "TSan build and tests"

  # libFuzzer targets (clang), a bounded run each on the committed seeds (docs/verify.md).
  echo "== Fuzzing" >&2
  scripts/fuzz.sh "${ZREC_FUZZ_SECONDS:-20}"
  phase_done "fuzzing"
fi
