#!/usr/bin/env bash
# The parallel join of zrec-slurm-build on a live single-node cluster
# (tests/cli/slurm_cluster.sh): a 4-part build is joined by 4 placement tasks; the zrec
# process of task 2 is killed (SIGKILL, with the strace that holds it in its second
# copy_file_range) in the middle of its placement, so the task fails, the publish job is
# cancelled and DEST is absent, with the other three parts placed (task 0 requeued
# meanwhile, placing part 0 a second time); `--resume` places
# part 2 alone and publishes a store whose digest equals the one-machine build's. DEST's
# name is hostile: '%' patterns, quotes, $(...), backquotes, '|', '&', ';', '*' and a
# newline, which no job may put into a program, a pattern or a log path (a backslash is
# refused: sbatch cannot take one in a log name).
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_slurm_join.sh  (CTest sets ZREC). Needs root,
# strace and the Debian packages slurmd slurmctld slurm-client munge (scripts/setup.sh).
set -u

source "$(dirname "$0")/testlib.sh"
source "$here/slurm_cluster.sh"
slurm_test_begin
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
# strace is exec'd, so the PID the shim writes is strace's; zrec is its child.
printf '#!/bin/bash\nreal=%q\nhold=%q\n' "$zrec" "$tmp/hold" >zrec-shim
cat >>zrec-shim <<'SH'
if [ -e "$hold" ] && [ "$1" = concat ] && [ "$2" = --place ] && [ "$3" = 2 ]; then
  echo $$ >"$hold.pid"
  exec strace -f -o /dev/null -e trace=copy_file_range -e inject=copy_file_range:delay_enter=60s:when=2 "$real" "$@"
fi
exec "$real" "$@"
SH
chmod +x zrec-shim
touch hold

# DEST: every character a careless script would expand, quote or split on.
dest=$tmp/'d %x%j%% '\''q"$(touch PWNED)`touch PWNED2`|&;*x
y'
# sbatch cannot take a backslash in a log name (it drops it and expands nothing there).
"$build" files --zrec "$zrec" -n 4 list.txt "$tmp/back\slash" >bs.out 2>&1
rc=$?
check "a DEST with a backslash: exit 2 (got $rc: $(cat bs.out))" same "$rc" 2
check "... naming the rule" grep -qF "holds a '\', which sbatch drops from log file paths" bs.out
check "... and no work directory" absent "$tmp/back\slash.zrec-build"
work=$dest.zrec-build
"$build" files --zrec "$tmp/zrec-shim" -n 4 --shards 3 list.txt "$dest" >submit.out 2>submit.err ||
  fail "zrec-slurm-build: $(cat submit.err)"
ids() { awk -v r="$1" '$1 == "job" && $2 == r { print $3 }' submit.out; }
parts_id=$(ids parts) plan_id=$(ids plan) place_id=$(ids place) publish_id=$(ids publish)
check "four jobs submitted: parts, plan, place, publish ($(tr '\n' ' ' <submit.out))" \
  same "${parts_id:+p}${plan_id:+p}${place_id:+p}${publish_id:+p}" pppp
# Task 2 is inside its placement: wait until the other three have placed theirs.
placed3() { [ -s hold.pid ] && [ "$(ls "$work/join/placed" 2>/dev/null | grep -c '^part-0000[013]$')" = 3 ]; }
if cluster_until 60 placed3; then ok; else fail "three parts placed while task 2 is held: $(squeue 2>&1)"; fi
# strace's child is the placing zrec; it is held in its second copy_file_range.
tracer=$(cat hold.pid)
placing=""
has_placing() { placing=$(pgrep -P "$tracer" | head -n 1) && [ -n "$placing" ]; }
cluster_until 10 has_placing || fail "no zrec under strace (PID $tracer)"
temps=("$work"/.result.zrec-join-*)
temp=${temps[0]}
check "DEST and the result are absent while parts are being placed" absent "$dest" "$work/result"
check "the join's temporary exists ($temp)" [ -d "$temp" ]
check "part 2 is not marked placed" absent "$temp/.zrec-placed-2" "$work/join/placed/part-00002"
# A requeue (a node failure, `scontrol requeue`) of a finished placement task runs it
# again: it places its part a second time, the same bytes, while others are placing.
marker0=$work/join/placed/part-00000
before0=$(stat -c %y "$marker0" 2>/dev/null)
# (Slurm delays a requeued job's start; the test lifts the delay, all but two seconds: slurmd
# refuses a launch whose credential dates from the second the job was last ended.)
{ scontrol requeue "${place_id}_0" && scontrol update JobId="${place_id}_0" StartTime=now+2; } >requeue.out 2>&1 ||
  fail "scontrol requeue: $(cat requeue.out)"
replaced0() { [ "$(stat -c %y "$marker0" 2>/dev/null)" != "$before0" ] && [ -z "$(squeue -h -j "${place_id}_0" 2>/dev/null)" ]; }
check "the requeued task 0 placed part 0 again ($(cat requeue.out))" cluster_until 60 replaced0
# Both: strace would hold a killed tracee until its delay ends; killing strace too ends
# the task at once, as a node's OOM killer or a crash would.
[ -n "$placing" ] && kill -KILL "$placing" "$tracer"
rm -f hold
cluster_wait_jobs 60 "$parts_id" "$plan_id" "$place_id" "$publish_id" || fail "jobs still queued: $(squeue 2>&1)"
states() { cluster_job_state "$1" | sort | uniq -c | awk '{ printf "%s%sx%s", (NR > 1 ? " " : ""), $1, $2 }'; }
# The job completion log: tasks 1 and 3 COMPLETED, task 2 FAILED, and task 0 COMPLETED,
# requeued (recorded as PENDING) and COMPLETED again.
check "placement: tasks 0, 1, 3 COMPLETED, task 0 again after its requeue, task 2 FAILED (got '$(states "$place_id")')" \
  same "$(states "$place_id")" "4xCOMPLETED 1xFAILED 1xPENDING"
check "publish job CANCELLED (got '$(states "$publish_id")')" same "$(states "$publish_id")" 1xCANCELLED
check "no DEST after the killed placement" absent "$dest" "$work/result"
check "parts 0, 1, 3 placed" present "$temp/.zrec-placed-"{0,1,3}
check "part 2 not placed" absent "$temp/.zrec-placed-2"
check "the killed task did not say it placed its part" not grep -q "placed" "$work/logs/zrec-place-${place_id}_2.out"

# --resume: the parts are kept, part 2 alone is placed again, then the publish.
"$build" files --zrec "$tmp/zrec-shim" --resume --dry-run -n 4 --shards 3 list.txt "$dest" >dry.out 2>&1
check "--resume --dry-run: part 2 to place ($(head -2 dry.out | tr '\n' ' '))" grep -q -- "--array=2 .*join-place.sbatch" dry.out
check "--resume --dry-run: no part to build" not grep -q "part-files.sbatch" dry.out
"$build" files --zrec "$tmp/zrec-shim" --resume -n 4 --shards 3 list.txt "$dest" >resume.out 2>resume.err ||
  fail "--resume: $(cat resume.err)"
parts_id=$(awk '$2 == "parts" { print $3 }' resume.out)
plan_id=$(awk '$2 == "plan" { print $3 }' resume.out)
place_id=$(awk '$2 == "place" { print $3 }' resume.out)
publish_id=$(awk '$2 == "publish" { print $3 }' resume.out)
check "resume submits no part job" [ -z "$parts_id" ]
cluster_wait_jobs 60 "$plan_id" "$place_id" "$publish_id" || fail "resume jobs still queued: $(squeue 2>&1)"
check "resume: one placement task, COMPLETED (got '$(states "$place_id")')" same "$(states "$place_id")" 1xCOMPLETED
check "resume: it was task 2" [ -f "$work/logs/zrec-place-${place_id}_2.out" ]
check "resume: the plan was kept (reused)" grep -q "exists already for these parts: 3 of 4 placed" \
  "$work/logs/zrec-plan-$plan_id.out"
check "resume: publish COMPLETED (got '$(states "$publish_id")')" same "$(states "$publish_id")" 1xCOMPLETED

"$zrec" create --ragged --dtype '|u1' --ndim 1 --shards 3 one && "$zrec" -q append-files --files-from list.txt one ||
  fail "one-machine build"
d=$("$zrec" digest "$dest" | cut -d' ' -f1 | head -n 1)
check "digest $d equals the one-machine build's" same "$d" "$("$zrec" digest one | cut -d' ' -f1)"
check "the joined store verifies" "$zrec" verify -q "$dest"
check "work/digest records it: '$d  DEST'" same "$(cat "$work/digest")" "$d  $dest"
check "parts and join state removed after success" absent "$work/parts" "$work/join" "${temps[@]}"
check "every job wrote its log under WORK/logs (got: $(ls "$work/logs" | tr '\n' ' '))" \
  same "$(ls "$work/logs" | grep -c '^zrec-\(part\|plan\|place\|publish\)-[0-9_]*\.out$')" 12
check "nothing ran DEST's \$(...) or backquotes" absent "$tmp/PWNED" "$tmp/PWNED2" "$work/logs/PWNED" "$work/logs/PWNED2"
echo "figure: 4 parts joined by 4 placement tasks, task 0 requeued, task 2 killed mid-placement and resumed, in $((SECONDS - t_start)) s"
cluster_stop
finish
