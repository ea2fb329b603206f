#!/usr/bin/env bash
# Builds the libFuzzer targets (clang++, ASan + UBSan, fuzz/CMakeLists.txt) in the
# sanitized tree (build-asan/, the one scripts/test.sh builds; scripts/build.sh
# --sanitized) and runs each for a bounded time on its committed seed corpus, as CI does.
#
# Usage: scripts/fuzz.sh [SECONDS]   seconds per target (default: $ZREC_FUZZ_SECONDS or 10)
#        scripts/fuzz.sh SECONDS TARGET...   only these targets
#
# New inputs the fuzzer finds go to a scratch corpus (build-asan/fuzz-work/corpus/<target>/), not
# into fuzz/corpus/, so a run never changes the tree. A crash, leak, sanitizer report,
# timeout (10 s per input) or RSS over 2.5 GiB (512 MiB for the import targets) fails
# the run; its input is saved as
# build-asan/fuzz-work/crash-<target>-*. To keep it as a regression test (replayed by CTest in
# every build): copy it into fuzz/regressions/<target>/ with a name saying what it found.
# Prints one "figure:" line per target with the executions and the corpus size.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-${ZREC_FUZZ_SECONDS:-10}}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(fuzz_store fuzz_npy fuzz_schema fuzz_selection fuzz_record_format fuzz_tar_import fuzz_lmdb_import)
tree=build-asan
build_args=()
for t in "${targets[@]}"; do build_args+=(--target "$t"); done
scripts/build.sh "$tree" --sanitized "${build_args[@]}"
dir=$tree/fuzz-work  # scratch corpora, logs and crash inputs
mkdir -p "$dir"

# One target per core at a time: each fuzzer is a single process, and on CI's two cores
# running them in pairs halves the wall time for the same seconds per target.
run_target() {
  local t=$1
  local work="$dir/corpus/$t"
  mkdir -p "$work"
  local log="$dir/$t.log"
  local corpora=("$work" "fuzz/corpus/$t")
  [ -d "fuzz/regressions/$t" ] && corpora+=("fuzz/regressions/$t")
  # The import targets read inputs that claim sizes (tar members, LMDB values) or expand
  # (compressed tars, parsed text) with a 1 MiB window: an input whose memory is not
  # bounded by that fails them at 512 MiB. A single allocation may still reserve up to a
  # record's 2 GiB of address space (a member's claimed size, never touched unless read).
  local limits=(-rss_limit_mb=2560)
  case $t in fuzz_tar_import | fuzz_lmdb_import) limits=(-rss_limit_mb=512 -malloc_limit_mb=2560) ;; esac
  # detect_leaks: a fuzz input must not leak either. -timeout: a hang is a bug.
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$tree/fuzz/$t" -max_total_time="$secs" -timeout=10 "${limits[@]}" -print_final_stats=1 \
       -artifact_prefix="$dir/crash-$t-" "${corpora[@]}" >"$log" 2>&1; then
    local runs size
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    size=$(find "$work" -type f | wc -l)
    echo "figure: $t: ${runs:-?} executions in ${secs} s, no crash; corpus $(find "fuzz/corpus/$t" -type f | wc -l) seeds + $size found"
  else
    : >"$dir/$t.failed"
    { echo "FAIL: $t stopped on a crash, sanitizer report, leak, timeout or OOM (log: $log):"
      grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$log" | head -20 || tail -40 "$log"; } >&2
  fi
}

parallel=${ZREC_FUZZ_JOBS:-$(nproc)}
rm -f "$dir"/*.failed
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_target "$t" &
done
wait
status=0
for t in "${targets[@]}"; do [ -e "$dir/$t.failed" ] && status=1; done
exit $status
