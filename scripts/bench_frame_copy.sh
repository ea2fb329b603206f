#!/usr/bin/env bash
# Frame copy against `cp -r SRC DST; sync` (issue 12's frame-copy row), in one run:
# for each codec (raw, zstd --checksum) a Ragged |u1 source of 147 KiB records
# (text-like, so zstd has real work), then REPS interleaved repetitions of
#   cp:      cp -r SRC DST; sync
#   reshard: zrec recompress --shards 3 SRC DST   (frames copied, 4 -> 3 data files)
#   same:    zrec recompress SRC DST              (frames copied, same shard count)
#   concat:  zrec concat --frame-copy SRC SRC DST (twice the bytes; compared with 2x cp;
#            --frame-copy where the binary has it: same-layout sources are placed
#            otherwise, docs/scale-out.md, and scripts/bench_join.sh measures that)
# after a warm-up rep (page cache warm), for each zrec binary given (interleaved too, so
# a before/after comparison shares the machine's state), printing each median and its
# ratio to cp's median.
#
#   scripts/bench_frame_copy.sh [MB] [REPS] [LABEL=ZREC ...]
#       defaults: 256 3 zrec=build/zrec; e.g. 256 5 main=/tmp/zrec-main new=build/zrec
# From another script: `source scripts/bench_frame_copy.sh --functions` defines
# bench_frame_copy MB REPS LABEL=ZREC..., which prints the same table.

bench_frame_copy() {
  local mb=$1 reps=$2
  shift 2
  local variants=("$@") zrec
  zrec=${variants[0]#*=}
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/zrec-bench-copy-XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" RETURN
  local records=$((mb * 1024 * 1024 / (147 * 1024)))
  /usr/bin/python3 - "$tmp/records.bin" "$records" <<'EOF'
import random, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(2, 9))) for _ in range(4000)]
with open(path, "wb") as f:
    for i in range(n):
        body = b" ".join(rng.choice(words) for _ in range(30000))[: 147 * 1024]
        f.write(struct.pack("<I", len(body)) + body)
EOF
  now() { date +%s.%N; }
  median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  local codec
  for codec in raw zstd; do
    local src=$tmp/src_$codec
    local extra=()
    [[ $codec == zstd ]] && extra=(--checksum)
    "$zrec" create --ragged --ndim 1 --dtype '|u1' --codec "$codec" --shards 4 "${extra[@]}" "$src" || return 1
    "$zrec" -q append-stream --framing u32le -i "$tmp/records.bin" "$src" || return 1
    local bytes
    bytes=$(du -sb "$src" | cut -f1)
    local case
    : >"$tmp/times"
    local cases=(cp) v
    for v in "${variants[@]}"; do cases+=("reshard/${v%%=*}" "same/${v%%=*}" "concat/${v%%=*}"); done
    for rep in $(seq 0 "$reps"); do  # rep 0 is the warm-up
      for case in "${cases[@]}"; do
        local dst=$tmp/dst bin=""
        for v in "${variants[@]}"; do [[ ${case#*/} == "${v%%=*}" ]] && bin=${v#*=}; done
        rm -rf "$dst"
        sync
        local t0 t1 fc=()
        [[ -n $bin ]] && "$bin" concat --help 2>/dev/null | grep -q -- --frame-copy && fc=(--frame-copy)
        t0=$(now)
        case ${case%%/*} in
          cp) cp -r "$src" "$dst" && sync ;;
          reshard) "$bin" -q recompress --shards 3 "$src" "$dst" ;;
          same) "$bin" -q recompress "$src" "$dst" ;;
          concat) "$bin" -q concat "${fc[@]}" "$src" "$src" "$dst" ;;
        esac || { echo "bench_frame_copy: $case failed" >&2; return 1; }
        t1=$(now)
        ((rep > 0)) && echo "$case $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" >>"$tmp/times"
      done
    done
    rm -rf "$tmp/dst"
    local cp_s
    cp_s=$(awk '$1 == "cp" { print $2 }' "$tmp/times" | median)
    printf 'frame copy, %s store of %d records (%.0f MB), median of %d:\n' "$codec" "$records" \
      "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "$reps"
    for case in "${cases[@]}"; do
      local s base=$cp_s
      s=$(awk -v c="$case" '$1 == c { print $2 }' "$tmp/times" | median)
      [[ $case == concat/* ]] && base=$(awk -v c="$cp_s" 'BEGIN { print 2 * c }')
      printf '  %-16s %7.3f s  %5.2fx %s\n' "$case" "$s" "$(awk -v a="$s" -v b="$base" 'BEGIN { print a / b }')" \
        "$([[ $case == concat/* ]] && echo "2x cp" || echo "cp")"
    done
    rm -rf "$src"
  done
}

if [[ ${1:-} != --functions ]]; then
  set -uo pipefail
  here=$(cd "$(dirname "$0")" && pwd)
  mb=${1:-256}
  reps=${2:-3}
  shift 2 2>/dev/null || shift $#
  (($# > 0)) || set -- "zrec=$here/../build/zrec"
  bench_frame_copy "$mb" "$reps" "$@"
fi
