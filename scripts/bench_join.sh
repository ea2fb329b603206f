#!/usr/bin/env bash
# The join of 4 same-layout parts, in one run: REPS interleaved repetitions (after a
# warm-up) of
#   cp:     cp -r P0 P1 P2 P3 DIR; sync                 (the bytes copied once, as files)
#   frame:  zrec concat --frame-copy P0 P1 P2 P3 DST    (frame by frame: today's way)
#   place:  zrec concat P0 P1 P2 P3 DST                 (each part's data files as runs)
#   steps:  zrec concat --plan, 4 x --place at once, --publish   (the Slurm join, locally)
# for codecs raw and zstd (Ragged |u1 records of 1..16 KiB of text-like bytes), printing
# each median and its ratios to cp's and to frame copy's medians. Every result's digest
# is checked equal. Then, for the model in docs/scale-out.md, this node's rates: the
# frame check alone (`zrec verify` of the parts: every frame decoded), `zrec digest` and
# `zrec verify --quick` of the result (its table), as medians of REPS.
#
#   scripts/bench_join.sh [MB] [REPS] [ZREC]      defaults: 256 3 build/zrec
set -euo pipefail
mb=${1:-256}
reps=${2:-3}
zrec=$(readlink -f "${3:-build/zrec}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zrec-bench-join-XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
/usr/bin/python3 - "$tmp" "$mb" <<'PY'
import random, struct, sys
tmp, mb = sys.argv[1], int(sys.argv[2])
rng = random.Random(25)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(2, 9))) for _ in range(4000)]
for p in range(4):
    with open("%s/in-%d.bin" % (tmp, p), "wb") as f:
        left = mb * 1024 * 1024 // 4
        while left > 0:
            body = b" ".join(rng.choice(words) for _ in range(rng.randrange(200, 3000)))[: rng.randrange(1024, 16384)]
            f.write(struct.pack("<I", len(body)) + body)
            left -= len(body)
PY
for codec in raw zstd; do
  parts=()
  for p in 0 1 2 3; do
    "$zrec" create --ragged --ndim 1 --dtype '|u1' --codec "$codec" --shards 4 "$tmp/$codec-p$p"
    "$zrec" -q append-stream --framing u32le -i "$tmp/in-$p.bin" "$tmp/$codec-p$p"
    parts+=("$tmp/$codec-p$p")
  done
  bytes=$(du -scb "${parts[@]}" | tail -1 | cut -f1)
  records=$(for p in "${parts[@]}"; do "$zrec" info --json "$p"; done | sed -n 's/.*"length": *\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s }')
  : >"$tmp/times"
  want=""
  for rep in $(seq 0 "$reps"); do  # rep 0 is the warm-up
    for case in cp frame place steps; do
      rm -rf "$tmp/dst" "$tmp/dst.plan"
      sync
      t0=$(now)
      case $case in
        cp) mkdir "$tmp/dst" && cp -r "${parts[@]}" "$tmp/dst/" && sync ;;
        frame) "$zrec" -q concat --frame-copy "${parts[@]}" "$tmp/dst" ;;
        place) "$zrec" -q concat "${parts[@]}" "$tmp/dst" ;;
        steps)
          "$zrec" -q concat --plan "$tmp/dst.plan" "${parts[@]}" "$tmp/dst"
          pids=()
          for k in 0 1 2 3; do "$zrec" -q --threads 1 concat --place "$k" "$tmp/dst.plan" & pids+=($!); done
          for pid in "${pids[@]}"; do wait "$pid"; done
          "$zrec" -q concat --publish "$tmp/dst.plan"
          ;;
      esac
      t1=$(now)
      if [ "$case" != cp ]; then
        d=$("$zrec" digest "$tmp/dst" | cut -d' ' -f1)
        [ -z "$want" ] && want=$d
        [ "$d" = "$want" ] || { echo "bench_join: $case gave digest $d, not $want" >&2; exit 1; }
      fi
      ((rep > 0)) && echo "$case $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" >>"$tmp/times"
    done
  done
  # The model's rates on this node, from the parts and the last result.
  logical=$("$zrec" info --json "$tmp/dst" | grep -o '"logical_bytes": *[0-9]*' | head -n 1 | grep -o '[0-9]*$')
  for rep in $(seq 1 "$reps"); do
    t0=$(now); for p in "${parts[@]}"; do "$zrec" -q verify "$p" >/dev/null; done; t1=$(now)
    echo "check $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" >>"$tmp/times"
    t0=$(now); "$zrec" digest "$tmp/dst" >/dev/null; t1=$(now)
    echo "digest $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" >>"$tmp/times"
  done
  cp_s=$(awk '$1 == "cp" { print $2 }' "$tmp/times" | median)
  frame_s=$(awk '$1 == "frame" { print $2 }' "$tmp/times" | median)
  printf 'join of 4 parts, %s, %d records, %.0f MB stored, median of %d (load %s):\n' "$codec" "$records" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "$reps" "$(cut -d' ' -f1-3 /proc/loadavg)"
  for case in cp frame place steps; do
    s=$(awk -v c="$case" '$1 == c { print $2 }' "$tmp/times" | median)
    printf '  %-6s %7.3f s  %5.2fx cp -r + sync  %5.2fx frame copy  %7.1f MB/s\n' "$case" "$s" \
      "$(awk -v a="$s" -v b="$cp_s" 'BEGIN { print a / b }')" "$(awk -v a="$s" -v b="$frame_s" 'BEGIN { print a / b }')" \
      "$(awk -v b="$bytes" -v s="$s" 'BEGIN { print b / 1e6 / s }')"
  done
  s=$(awk '$1 == "check" { print $2 }' "$tmp/times" | median)
  printf '  check (verify of the parts) %7.3f s  %7.1f MB/s stored\n' "$s" "$(awk -v b="$bytes" -v s="$s" 'BEGIN { print b / 1e6 / s }')"
  s=$(awk '$1 == "digest" { print $2 }' "$tmp/times" | median)
  printf '  digest of the result        %7.3f s  %7.1f MB/s logical\n' "$s" "$(awk -v b="$logical" -v s="$s" 'BEGIN { print b / 1e6 / s }')"
  rm -rf "${parts[@]}"
done
# verify --quick reads the table and checks every location: its rate per record, on a
# store of 4 million 8-byte records (a 64 MB table).
/usr/bin/python3 -c 'import numpy, sys; numpy.save(sys.argv[1], numpy.zeros((4000000, 8), numpy.uint8))' "$tmp/rows.npy"
"$zrec" create --dense --dtype '|u1' --shape 8 --codec raw "$tmp/many"
"$zrec" -q append-npy "$tmp/many" "$tmp/rows.npy"
: >"$tmp/quick"
for rep in $(seq 1 "$reps"); do
  t0=$(now); "$zrec" -q verify --quick "$tmp/many" >/dev/null; t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >>"$tmp/quick"
done
s=$(median <"$tmp/quick")
printf 'verify --quick of 4000000 records: %.3f s, %.1f M records/s\n' "$s" "$(awk -v s="$s" 'BEGIN { print 4 / s }')"
