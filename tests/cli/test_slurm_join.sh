#!/usr/bin/env bash
# The parallel join of zrec-slurm-build on a live single-node cluster
# (tests/cli/slurm_cluster.sh): a 4-part build is joined by 4 placement tasks; task 2 is
# killed in the middle of its placement (strace holds its second copy_file_range while
# the test sends SIGKILL), so the publish job is cancelled and DEST is absent, with the
# other three parts placed; `--resume` places part 2 alone and publishes a store whose
# digest equals the one-machine build's.
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_slurm_join.sh  (CTest sets ZREC). Needs root,
# strace and the Debian packages slurmd slurmctld slurm-client munge (scripts/setup.sh).
set -u

source "$(dirname "$0")/testlib.sh"
source "$here/slurm_cluster.sh"
cluster_root=$(mktemp -d)
trap 'cluster_stop; rm -rf "$cluster_root"; chmod -R u+rwX "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
require_zrec
zrec=$(readlink -f "$zrec")
build=$root/scripts/slurm/zrec-slurm-build
t_start=$SECONDS
command -v strace >/dev/null || { fail "strace not found (scripts/setup.sh installs it)"; finish; }

if ! cluster_start "$cluster_root"; then
  fail "could not start the Slurm cluster (see above)"
  finish
fi
cd "$tmp"
# 400 files of 1..40 KiB: parts of a few MiB, so a placement copies several runs.
/usr/bin/python3 - <<'PY'
import os, random
rng = random.Random(25)
os.mkdir("in")
for i in range(400):
    open("in/f-%03d" % i, "wb").write(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 40)) ) * 1024)
PY
ls in/f-* >list.txt

# The zrec every job runs: the real one, except that while $tmp/hold exists, the
# placement of part 2 runs under strace, which holds its second copy_file_range for a
# minute: the task is then in the middle of placing its part when the test kills it.
printf '#!/bin/bash\nreal=%q\nhold=%q\n' "$zrec" "$tmp/hold" >zrec-shim
cat >>zrec-shim <<'SH'
if [ -e "$hold" ] && [ "$1" = concat ] && [ "$2" = --place ] && [ "$3" = 2 ]; then
  : >"$hold.started"
  exec strace -f -o /dev/null -e trace=copy_file_range -e inject=copy_file_range:delay_enter=60s:when=2 "$real" "$@"
fi
exec "$real" "$@"
SH
chmod +x zrec-shim
touch hold

"$build" files --zrec "$tmp/zrec-shim" -n 4 --shards 3 list.txt "$tmp/dest" >submit.out 2>submit.err ||
  fail "zrec-slurm-build: $(cat submit.err)"
ids() { awk -v r="$1" '$1 == "job" && $2 == r { print $3 }' submit.out; }
parts_id=$(ids parts) plan_id=$(ids plan) place_id=$(ids place) publish_id=$(ids publish)
check "four jobs submitted: parts, plan, place, publish ($(tr '\n' ' ' <submit.out))" \
  [ -n "$parts_id" ] && [ -n "$plan_id" ] && [ -n "$place_id" ] && [ -n "$publish_id" ]
work=$tmp/dest.zrec-build
# Task 2 is inside its placement: wait until the other three have placed theirs.
placed3() { [ -e hold.started ] && [ "$(ls "$work/join/placed" 2>/dev/null | grep -c '^part-0000[013]$')" = 3 ]; }
if cluster_until 60 placed3; then ok; else fail "three parts placed while task 2 is held: $(squeue 2>&1)"; fi
sleep 1   # task 2 reaches its held copy_file_range
temp=$(ls -d "$work"/.result.zrec-join-* 2>/dev/null)
check "DEST and the result are absent while parts are being placed" [ ! -e "$tmp/dest" ] && [ ! -e "$work/result" ]
check "the join's temporary exists ($temp)" [ -d "$temp" ]
check "part 2 is not marked placed" [ ! -e "$temp/.zrec-placed-2" ] && [ ! -e "$work/join/placed/part-00002" ]
scancel --full --signal=KILL "${place_id}_2"
rm -f hold
cluster_wait_jobs 60 "$parts_id" "$plan_id" "$place_id" "$publish_id" || fail "jobs still queued: $(squeue 2>&1)"
states() { cluster_job_state "$1" | sort | uniq -c | awk '{ printf "%s%sx%s", (NR > 1 ? " " : ""), $1, $2 }'; }
got=$(states "$place_id")
check "placement: three tasks COMPLETED, task 2 killed (got '$got')" \
  [ "$(cluster_job_state "$place_id" | grep -c COMPLETED)" = 3 ] && [ "$(cluster_job_state "$place_id" | wc -l)" = 4 ]
check "publish job CANCELLED (got '$(states "$publish_id")')" [ "$(states "$publish_id")" = 1xCANCELLED ]
check "no DEST after the killed placement" [ ! -e "$tmp/dest" ] && [ ! -e "$work/result" ]
check "parts 0, 1, 3 placed, part 2 not" [ -e "$temp/.zrec-placed-0" ] && [ -e "$temp/.zrec-placed-3" ] &&
  [ ! -e "$temp/.zrec-placed-2" ]

# --resume: the parts are kept, part 2 alone is placed again, then the publish.
"$build" files --zrec "$tmp/zrec-shim" --resume --dry-run -n 4 --shards 3 list.txt "$tmp/dest" >dry.out 2>&1
check "--resume --dry-run: no part to build, part 2 to place ($(head -2 dry.out | tr '\n' ' '))" \
  grep -q -- "--array=2 .*join-place.sbatch" dry.out && ! grep -q "part-files.sbatch" dry.out
"$build" files --zrec "$tmp/zrec-shim" --resume -n 4 --shards 3 list.txt "$tmp/dest" >resume.out 2>resume.err ||
  fail "--resume: $(cat resume.err)"
parts_id=$(awk '$2 == "parts" { print $3 }' resume.out)
plan_id=$(awk '$2 == "plan" { print $3 }' resume.out)
place_id=$(awk '$2 == "place" { print $3 }' resume.out)
publish_id=$(awk '$2 == "publish" { print $3 }' resume.out)
check "resume submits no part job" [ -z "$parts_id" ]
cluster_wait_jobs 60 "$plan_id" "$place_id" "$publish_id" || fail "resume jobs still queued: $(squeue 2>&1)"
check "resume: one placement task, COMPLETED (got '$(states "$place_id")')" [ "$(states "$place_id")" = 1xCOMPLETED ]
check "resume: it was task 2" [ -f "$work/logs/zrec-place-${place_id}_2.out" ]
check "resume: the plan was kept (reused)" grep -q "exists already for these parts: 3 of 4 placed" \
  "$work/logs/zrec-plan-$plan_id.out"
check "resume: publish COMPLETED (got '$(states "$publish_id")')" [ "$(states "$publish_id")" = 1xCOMPLETED ]

"$zrec" create --ragged --dtype '|u1' --ndim 1 --shards 3 one && "$zrec" -q append-files --files-from list.txt one ||
  fail "one-machine build"
d=$("$zrec" digest "$tmp/dest" 2>&1 | cut -d' ' -f1)
check "digest $d equals the one-machine build's" [ -n "$d" ] && [ "$d" = "$("$zrec" digest one | cut -d' ' -f1)" ]
check "the joined store verifies" "$zrec" verify -q "$tmp/dest"
check "work/digest records it" grep -q "^$d  $tmp/dest\$" "$work/digest"
check "parts and join state removed after success" [ ! -e "$work/parts" ] && [ ! -e "$work/join" ] && [ -z "$(ls -A "$work" | grep zrec-join)" ]
echo "figure: 4 parts joined by 4 placement tasks, task 2 killed mid-placement and resumed, in $((SECONDS - t_start)) s"
cluster_stop
finish
