#!/usr/bin/env bash
# The CLI benchmark (issue 12): each path as a user meets it, whole processes from the
# shell, beside the tool they would otherwise reach for, in the same run. Every row is
# measured as medians of --reps interleaved repetitions after one warm-up, page cache
# warm, and printed as a ratio to its baseline.
#
#   digest     zrec --threads 1 digest RAW           vs  cat data_*.zr | openssl dgst -sha256
#              (and --threads 2, for lanes scaling)
#   append     zrec append-stream, raw, JSON lines   vs  cat F > out; sync out
#   zstd       zrec --threads 1 append-stream, zstd  vs  ZSTD_compressCCtx level 3 per line, from memory
#              (and the same loop on each Ragged logical record: 8-byte length prefix + line)
#   cat        zrec cat --indices-from IDS --format raw -o /dev/null, 2 lanes, of 1,000, 12,000 and
#              100,000 random ids, from the raw store and from a zstd store of the same images
#                                                    vs  C pread loop (RecordLoc, then record into its
#                                                        slot of a reused 256-record batch buffer; zstd:
#                                                        frame into scratch, ZSTD_decompressDCtx into the
#                                                        slot), 2 lanes; both timed as whole processes
#   reshard    zrec recompress SRC DST --shards 8     vs  cp -r SRC DST; sync
#              (and the same of a zstd store of the images, and of one of the JSON lines:
#              every copied zstd frame is decoded in full to check it)
#   concat     zrec concat A B DST                    vs  cp -r A D1; cp -r B D2; sync
#   start      20 x zrec info of an empty store        vs  20 x zstd -l of a small .zst file
#              (a process's fixed cost: loading its libraries, parsing arguments)
#
# Sizes at --scale 1 are the issue's: 8000 records of 147 KiB (1.15 GiB, raw, 4 shards),
# 256 MiB of ~88-byte JSON lines (issue 46 measured ~110-byte ones, an easier case),
# 1,000 / 12,000 / 100,000 random ids. The two C baselines are built from
# scripts/bench_cli/*.c into the scratch directory.
#
# Usage: scripts/bench_cli.sh [--zrec PATH] [--zrec-before PATH] [--scale F] [--reps N]
#                             [--rows digest,append,zstd,cat,reshard,concat,start] [--dir DIR]
#   --zrec-before PATH  also time another build's zrec in the same rounds (ratios for both)
# The last column, CPU seconds (user + system, children included) over the baseline's,
# is steadier than wall time when other processes share the CPUs.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
zrec="$here/../build/zrec"
zrec_before=""
scale=1
reps=3
rows="digest,append,zstd,cat,reshard,concat,start"
base_dir="${TMPDIR:-/tmp}"
while [ $# -gt 0 ]; do
  case "$1" in
    --zrec) zrec="$2"; shift 2 ;;
    --zrec-before) zrec_before="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --rows) rows="$2"; shift 2 ;;
    --dir) base_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "bench_cli.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
zrec="$(realpath "$zrec")"
[ -x "$zrec" ] || { echo "bench_cli.sh: no zrec binary at $zrec (scripts/build.sh build)" >&2; exit 2; }
[ -z "$zrec_before" ] || zrec_before="$(realpath "$zrec_before")"
for tool in openssl cc zstd; do
  command -v "$tool" >/dev/null || { echo "bench_cli.sh: needs $tool" >&2; exit 2; }
done

work="$(mktemp -d "$base_dir/zrec-bench-cli.XXXXXX")"
trap 'rm -rf -- "$work"' EXIT
cc -O2 -pthread "$here/bench_cli/pread_gather.c" -lzstd -o "$work/pread_gather"
cc -O2 "$here/bench_cli/zstd_lines.c" -lzstd -o "$work/zstd_lines"

images=$(python3 -c "print(max(300, int(8000 * $scale)))")
lines_mib=$(python3 -c "print(max(8, int(256 * $scale)))")
# The gathers' sizes: 1,000 to 100,000 ids (at --scale 1), at least 1,000.
cat_sizes=$(python3 -c "print(' '.join(map(str, sorted({max(1000, int(n * $scale)) for n in (1000, 12000, 100000)}))))")
record_bytes=$((3 * 224 * 224))
has_row() { [[ ",$rows," == *",$1,"* ]]; }

# --- inputs ------------------------------------------------------------------------
echo "bench_cli: $images records of 147 KiB, $lines_mib MiB of JSON lines, gathers of $cat_sizes ids, $reps reps; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 - "$work" "$images" "$lines_mib" $cat_sizes <<'PY'
import numpy as np, sys, random
work, images, lines_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(1)
with open(f"{work}/images.npy", "wb") as f:
    np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False, "shape": (images, 3, 224, 224)})
    for first in range(0, images, 256):
        f.write(rng.integers(0, 256, (min(256, images - first), 3, 224, 224), dtype=np.uint8).tobytes())
random.seed(1)
words = "the of and to in is was for on that with as by at from his her an were are which this be or has".split()
target = lines_mib << 20
with open(f"{work}/lines.jsonl", "w") as f:
    written, i = 0, 0
    while written < target:
        text = " ".join(random.choices(words, k=random.randint(6, 12)))
        line = '{"id":%d,"user":"u%05d","score":%.3f,"text":"%s"}\n' % (i, random.randrange(100000), random.random(), text)
        f.write(line)
        written += len(line)
        i += 1
for count in map(int, sys.argv[4:]):
    with open(f"{work}/ids_{count}.txt", "w") as f:
        f.write("".join(f"{random.randrange(images)}\n" for _ in range(count)))
PY
"$zrec" create --dense --dtype '|u1' --shape 3,224,224 --codec raw --shards 4 "$work/img"
"$zrec" append-npy "$work/img" "$work/images.npy"
rm -f "$work/images.npy"
cp -r "$work/img" "$work/img_b"
"$zrec" create --ragged --dtype '|u1' --ndim 1 "$work/empty"
if has_row reshard || has_row cat; then
  "$zrec" recompress "$work/img" "$work/img_z" --codec zstd
fi
if has_row reshard; then
  "$zrec" create --ragged --dtype '|u1' --ndim 1 --codec zstd --shards 4 "$work/lines_z"
  "$zrec" append-stream "$work/lines_z" -i "$work/lines.jsonl"
fi
head -c 4096 "$work/lines.jsonl" | zstd -q -o "$work/small.zst"
line_count=$(wc -l < "$work/lines.jsonl")

# --- timing ------------------------------------------------------------------------
declare -A samples cpu  # name -> space-separated wall seconds, CPU seconds (user + system)
now() { date +%s%N; }
# time_cmd NAME CMD...: runs CMD; adds its wall seconds and its CPU seconds (user + system,
# children included) to NAME's samples, unless this is the warm-up round.
time_cmd() {
  local name="$1"; shift
  local t0 t1
  t0=$(now)
  if ! /usr/bin/time -f "%U %S" -o "$work/cpu" "$@" >/dev/null 2>"$work/stderr"; then
    cat "$work/stderr" >&2
    return 1
  fi
  t1=$(now)
  [ "$warm" = 1 ] && return 0
  samples[$name]+="$(python3 -c "print(($t1 - $t0) / 1e9)") "
  cpu[$name]+="$(python3 -c "u, s = open('$work/cpu').read().split()[-2:]; print(float(u) + float(s))") "
}
# time_self NAME CMD...: a baseline that times its own loop (the first word it prints).
time_self() {
  local name="$1"; shift
  local out
  out=$(/usr/bin/time -f "%U %S" -o "$work/cpu" "$@")
  [ "$warm" = 1 ] && return 0
  samples[$name]+="${out%% *} "
  cpu[$name]+="$(python3 -c "u, s = open('$work/cpu').read().split()[-2:]; print(float(u) + float(s))") "
}
median() { python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1].split())))" "${samples[$1]}"; }
cpu_median() { python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1].split())))" "${cpu[$1]}"; }

scratch() { rm -rf -- "$work/out" && mkdir -p "$work/out"; }
binaries=("$zrec")
[ -z "$zrec_before" ] || binaries+=("$zrec_before")
label() { [ "$1" = "$zrec" ] && echo zrec || echo before; }

# Row NAME of a command that writes a whole store into $work/out, each run (the copy
# baseline, then each binary) in a fresh scratch and ending in sync:
#   time_copy_row NAME 'BASELINE SHELL COMMAND' 'ZREC ARGUMENTS (shell-quoted)'
time_copy_row() {
  local name=$1 base=$2 args=$3 z
  scratch
  time_cmd "${name}_base" bash -c "$base && sync"
  for z in "${binaries[@]}"; do
    scratch
    time_cmd "${name}_$(label "$z")" bash -c "'$z' $args && sync"
  done
}

round() {
  if has_row digest; then
    time_cmd digest_base bash -c "cat '$work'/img/data_*.zr | openssl dgst -sha256"
    for z in "${binaries[@]}"; do
      time_cmd "digest1_$(label "$z")" "$z" --threads 1 digest "$work/img"
      time_cmd "digest2_$(label "$z")" "$z" --threads 2 digest "$work/img"
    done
  fi
  if has_row append; then
    scratch
    time_cmd append_base bash -c "cat '$work/lines.jsonl' > '$work/out/copy' && sync '$work/out/copy'"
    for z in "${binaries[@]}"; do
      scratch
      "$z" create --ragged --dtype '|u1' --ndim 1 --codec raw --shards 1 "$work/out/s"
      time_cmd "append_$(label "$z")" "$z" append-stream "$work/out/s" -i "$work/lines.jsonl"
    done
  fi
  if has_row zstd; then
    time_self zstd_base "$work/zstd_lines" "$work/lines.jsonl" 3
    time_self zstd_ragged "$work/zstd_lines" "$work/lines.jsonl" 3 ragged
    for z in "${binaries[@]}"; do
      scratch
      "$z" create --ragged --dtype '|u1' --ndim 1 --codec zstd --shards 1 "$work/out/s"
      time_cmd "zstd_$(label "$z")" "$z" --threads 1 append-stream "$work/out/s" -i "$work/lines.jsonl"
    done
  fi
  if has_row cat; then
    # The page cache holds both stores (the warm-up round read them): this is CPU, not disk.
    local count codec
    for count in $cat_sizes; do
      for codec in raw zstd; do
        local store="$work/img" mode=""
        [ "$codec" = zstd ] && store="$work/img_z" mode=zstd
        time_cmd "cat_${codec}_${count}_base" "$work/pread_gather" "$store" "$work/ids_$count.txt" 2 "$record_bytes" $mode
        for z in "${binaries[@]}"; do
          time_cmd "cat_${codec}_${count}_$(label "$z")" "$z" --threads 2 cat "$store" --indices-from "$work/ids_$count.txt" \
            --format raw -o /dev/null
        done
      done
    done
  fi
  if has_row reshard; then
    time_copy_row reshard "cp -r '$work/img' '$work/out/d'" "recompress '$work/img' '$work/out/d' --shards 8"
    time_copy_row reshard_z "cp -r '$work/img_z' '$work/out/d'" "recompress '$work/img_z' '$work/out/d' --shards 8"
    time_copy_row reshard_lines "cp -r '$work/lines_z' '$work/out/d'" \
      "recompress '$work/lines_z' '$work/out/d' --shards 8"
  fi
  if has_row concat; then
    time_copy_row concat "cp -r '$work/img' '$work/out/d1' && cp -r '$work/img_b' '$work/out/d2'" \
      "concat '$work/img' '$work/img_b' '$work/out/d'"
  fi
  if has_row start; then
    time_cmd start_base bash -c "for i in {1..20}; do zstd -l '$work/small.zst'; done"
    for z in "${binaries[@]}"; do
      time_cmd "start_$(label "$z")" bash -c "for i in {1..20}; do '$z' info '$work/empty'; done"
    done
  fi
  scratch
}

warm=1
round
warm=0
for ((r = 0; r < reps; ++r)); do round; done

# --- report --------------------------------------------------------------------------
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
# CPU seconds of a over b (user + system, children included): steadier than wall on a loaded machine.
cr() { python3 -c "print(f'{$(cpu_median "$1") / $(cpu_median "$2"):.2f}x')"; }
fmt() { python3 -c "print(f'{$1:.3f} s')"; }
echo
echo "zrec CLI benchmark: medians of $reps interleaved repetitions, warm page cache; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| path | zrec | baseline (same run) | ratio | target | CPU ratio |"
echo "|---|---:|---:|---:|---|---:|"
for z in "${binaries[@]}"; do
  l=$(label "$z")
  tag=""; [ "$l" = before ] && tag=" (before)"
  if has_row digest; then
    b=$(median digest_base); d1=$(median "digest1_$l"); d2=$(median "digest2_$l")
    echo "| \`zrec --threads 1 digest\`$tag, $images x 147 KiB raw | $(fmt "$d1") | cat \\| openssl dgst -sha256: $(fmt "$b") | $(ratio "$d1" "$b")x | <= 1.25x | $(cr "digest1_$l" digest_base) |"
    echo "| \`zrec --threads 2 digest\`$tag | $(fmt "$d2") | 1 lane: $(fmt "$d1") | $(ratio "$d1" "$d2")x faster | ~2x | $(cr "digest2_$l" "digest1_$l") |"
  fi
  if has_row append; then
    b=$(median append_base); a=$(median "append_$l")
    echo "| \`zrec append-stream\` raw$tag, $lines_mib MiB of $line_count JSON lines | $(fmt "$a") | cat F > out; sync out: $(fmt "$b") | $(ratio "$a" "$b")x | <= 1.3x, CPU <= 2x | $(cr "append_$l" append_base) |"
  fi
  if has_row zstd; then
    b=$(median zstd_base); a=$(median "zstd_$l")
    us_z=$(python3 -c "print(f'{$a / $line_count * 1e6:.2f}')"); us_b=$(python3 -c "print(f'{$b / $line_count * 1e6:.2f}')")
    echo "| \`zrec --threads 1 append-stream\` zstd$tag, same lines | $us_z us/record | ZSTD_compressCCtx level 3 per line: $us_b us/record | $(python3 -c "print(f'{100 * $b / $a:.0f}%')") of in-memory | >= 90% | $(cr "zstd_$l" zstd_base) |"
    b=$(median zstd_ragged); us_b=$(python3 -c "print(f'{$b / $line_count * 1e6:.2f}')")
    echo "| same, against the same logical records | $us_z us/record | the same loop on 8-byte length prefix + line: $us_b us/record | $(python3 -c "print(f'{100 * $b / $a:.0f}%')") of in-memory | | $(cr "zstd_$l" zstd_ragged) |"
  fi
  if has_row cat; then
    for count in $cat_sizes; do
      for codec in raw zstd; do
        b=$(median "cat_${codec}_${count}_base"); a=$(median "cat_${codec}_${count}_$l")
        echo "| \`zrec cat --indices-from IDS --format raw\`$tag, $codec store, $count random x 147 KiB, 2 lanes | $(fmt "$a") | C pread loop ($codec), 2 lanes: $(fmt "$b") | $(ratio "$b" "$a") of limit | >= 0.95 | $(cr "cat_${codec}_${count}_$l" "cat_${codec}_${count}_base") |"
      done
    done
  fi
  if has_row reshard; then
    b=$(median reshard_base); a=$(median "reshard_$l")
    echo "| \`zrec recompress --shards 8\` (frame copy)$tag + sync | $(fmt "$a") | cp -r + sync: $(fmt "$b") | $(ratio "$a" "$b")x | <= 1.3x | $(cr "reshard_$l" reshard_base) |"
    b=$(median reshard_z_base); a=$(median "reshard_z_$l")
    echo "| same, a zstd store of the images$tag | $(fmt "$a") | cp -r + sync: $(fmt "$b") | $(ratio "$a" "$b")x | <= 1.3x | $(cr "reshard_z_$l" reshard_z_base) |"
    b=$(median reshard_lines_base); a=$(median "reshard_lines_$l")
    echo "| same, a zstd store of the JSON lines$tag | $(fmt "$a") | cp -r + sync: $(fmt "$b") | $(ratio "$a" "$b")x | <= 1.3x | $(cr "reshard_lines_$l" reshard_lines_base) |"
  fi
  if has_row concat; then
    b=$(median concat_base); a=$(median "concat_$l")
    echo "| \`zrec concat A B DST\` (one layout: placed; frame copy before issue 25)$tag + sync | $(fmt "$a") | cp -r A, B + sync: $(fmt "$b") | $(ratio "$a" "$b")x | <= 1.3x | $(cr "concat_$l" concat_base) |"
  fi
  if has_row start; then
    b=$(median start_base); a=$(median "start_$l")
    ms() { python3 -c "print(f'{$1 / 20 * 1e3:.1f} ms')"; }
    echo "| process start$tag: \`zrec info\` of an empty store | $(ms "$a") | \`zstd -l\` of a small file: $(ms "$b") | $(ratio "$a" "$b")x | | $(cr "start_$l" start_base) |"
  fi
done
