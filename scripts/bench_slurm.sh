#!/usr/bin/env bash
# Measurements behind docs/scale-out.md, on a private single-node Slurm cluster on this
# machine (tests/cli/slurm_cluster.sh; root, ports 6817/6818 free):
#   - one-machine build (create + append-files) with 1 lane and with every lane;
#   - zrec-slurm-build with 1 part (1 task, 1 CPU) and 2 parts (2 concurrent tasks, 1 CPU
#     each), submit to finished store, scheduling included: the speed-up from 1 to 2 tasks;
#   - the join (placement) in MiB/s against `cp -r` + sync of the same store.
# Every input is the same generated set of JSON-like files, codec zstd_dict with one
# dictionary trained up front (level 15: CPU-bound, as real dictionary builds are).
#
# Usage: ZREC=build/zrec scripts/bench_slurm.sh [FILES]   (default 2000 files, about 8 MiB)
# Prints 'figure:' lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
zrec=$(readlink -f "${ZREC:-$root/build/zrec}")
files=${1:-2000}
build=$root/scripts/slurm/zrec-slurm-build
source "$root/tests/cli/slurm_cluster.sh"

work=$(mktemp -d)
cluster_root=$(mktemp -d)
trap 'cluster_stop; rm -rf "$cluster_root" "$work"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
cluster_start "$cluster_root"

cd "$work"
mkdir in
/usr/bin/python3 - "$files" <<'PY'
import random, sys
rng = random.Random(14)
words = ["sensor", "temperature", "pressure", "reading", "status", "ok", "warn", "device", "site", "value",
         "north", "south", "pump", "valve", "flow", "level", "alarm", "reset", "unit", "batch"]
for i in range(int(sys.argv[1])):
    n = rng.randint(20, 250)
    body = ",".join('{"%s": %d, "%s": "%s-%d"}' % (rng.choice(words), rng.randint(0, 99999), rng.choice(words),
                                                    rng.choice(words), rng.randint(0, 999)) for _ in range(n))
    open("in/f-%06d.json" % i, "w").write("[" + body + "]\n")
PY
find in -type f | sort >list.txt
mib=$(du -sk in | awk '{ printf "%.1f", $1 / 1024 }')
"$zrec" create --ragged --dtype '|u1' --ndim 1 --shards 1 sample
"$zrec" -q append-files --files-from list.txt sample
"$zrec" train-dict --tier small sample -o dict.zr 2>/dev/null
echo "figure: input $files files, $mib MiB; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

one_machine() {   # one_machine LANES
  rm -rf one
  local t0
  t0=$(now)
  "$zrec" create --ragged --dtype '|u1' --ndim 1 --codec zstd_dict --dict dict.zr one
  "$zrec" -q --threads "$1" append-files --files-from list.txt one
  since "$t0"
}
slurm_build() {   # slurm_build PARTS: submit to the end of the publish job
  rm -rf "slurm-$1" "slurm-$1.zrec-build"
  local t0 ids
  t0=$(now)
  ids=$("$build" files --zrec "$zrec" -n "$1" --cpus-per-task 1 --dict dict.zr list.txt "$work/slurm-$1" |
    awk '$1 == "job" { print $3 }')
  # shellcheck disable=SC2086
  cluster_wait_jobs 600 $ids
  [ -f "slurm-$1.zrec-build/digest" ] || { echo "the $1-part build failed:" >&2; cat "slurm-$1.zrec-build"/logs/* >&2; exit 1; }
  since "$t0"
}

t_one1=$(one_machine 1)
t_oneall=$(one_machine "$(nproc)")
d_one=$("$zrec" digest one | cut -d' ' -f1)
t_s1=$(slurm_build 1)
t_s2=$(slurm_build 2)
for n in 1 2; do
  [ "$(cut -d' ' -f1 "slurm-$n.zrec-build/digest")" = "$d_one" ] || { echo "slurm-$n: digest differs" >&2; exit 1; }
done
echo "figure: one-machine build: ${t_one1} s with 1 lane, ${t_oneall} s with $(nproc) lanes"
echo "figure: slurm build, 1 task x 1 CPU: ${t_s1} s; 2 tasks x 1 CPU: ${t_s2} s; speed-up 1 -> 2 tasks $(awk -v a="$t_s1" -v b="$t_s2" 'BEGIN { printf "%.2fx", a / b }')"
echo "figure: slurm build (2 tasks) against the one-machine build ($(nproc) lanes): $(awk -v a="$t_s2" -v b="$t_oneall" 'BEGIN { printf "%.2fx", a / b }') its time"

# What the join costs, at a size where process start-up does not dominate: four parts of
# the input repeated 8 times, joined by `zrec concat` (placement: same codec, dictionary
# and shard count), against cp -r + sync of the same four parts, in the same run. (Codec
# zstd at level 3, to build them quickly: a join neither encodes nor, for this, cares
# about the level.) scripts/bench_join.sh compares placement with frame copy.
echo "figure: the 2-part build's join: $(sed -n 's/^zrec concat: placed part \([0-9]*\) of [0-9]* .*: \([0-9]*\) records, .*; \(.*\)$/part \1: \2 records in \3/p' slurm-2.zrec-build/logs/zrec-place-*.out | paste -sd ';' | sed 's/;/; /g'); publish $(sed -n 's/^publish: //p' slurm-2.zrec-build/logs/zrec-publish-*.out)"
for i in 1 2 3 4 5 6 7 8; do cat list.txt; done >list8.txt
"$zrec" create --ragged --dtype '|u1' --ndim 1 --codec zstd big-0
"$zrec" -q append-files --files-from list8.txt big-0
for p in 1 2 3; do cp -r big-0 "big-$p"; done
sync
kib=$(du -sk big-0 big-1 big-2 big-3 | awk '{ k += $1 } END { print k }')
t0=$(now)
"$zrec" concat big-0 big-1 big-2 big-3 big-all 2>concat.err
sync -f big-all
t_concat=$(since "$t0")
t0=$(now)
mkdir cp-copy
cp -r big-0 big-1 big-2 big-3 cp-copy/
sync -f cp-copy
t_cp=$(since "$t0")
echo "figure: concat of 4 parts ($(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }') MiB stored, $(sed -n 's/.* \([0-9]*\) frames copied.*/\1/p' concat.err) frames copied): $(awk -v s="$t_concat" -v k="$kib" 'BEGIN { printf "%.0f MiB/s (%.2f s)", k / 1024 / s, s }'); cp -r + sync of the parts: $(awk -v s="$t_cp" -v k="$kib" 'BEGIN { printf "%.0f MiB/s (%.2f s)", k / 1024 / s, s }'); concat takes $(awk -v a="$t_concat" -v b="$t_cp" 'BEGIN { printf "%.1fx", a / b }') the time of the copy"
