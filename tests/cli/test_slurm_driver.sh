#!/usr/bin/env bash
# zrec-slurm-build and its job scripts without a live cluster: a fake sbatch, scontrol and
# squeue on PATH, and the job scripts run by hand in the order Slurm would run them.
# - A controller that cannot be reached (issue 34, problem 7): sbatch is present,
#   `scontrol show config` fails. The driver used to exit 1 with no output (the failing
#   scontrol under pipefail); it must say why in one line, exit 1, and submit nothing (no
#   sbatch call, no work directory).
# - Options zrec refuses (issue 45, 17a): `npy --dtype bogus` used to submit 4 jobs that
#   each failed on their node; zrec itself checks the parts' create options first (exit
#   2, one line in zrec's words, nothing submitted).
# - stream builds over files that end in NUL (issue 45, 7): the "ends in a newline?" test
#   lost the NUL in a command substitution, so the file's last line and the next file's
#   first became one record; every line must stay a record.
# - A DEST that appears while the publish job runs (issue 45, 8): the job renamed over an
#   empty directory, or failed after writing the digest, and `--resume` then said "built
#   already" (exit 0) while a requeued publish removed the parts. Now the job fails
#   naming where the result is kept, writes no digest, keeps the result and the parts;
#   `--resume` refuses that DEST and, once it is moved away, publishes the kept result;
#   a publish stopped after the rename is finished by a publish job alone.
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_slurm_driver.sh (CTest sets ZREC).
set -u

source "$(dirname "$0")/testlib.sh"
require_zrec
cd "$tmp" || exit 1
mkdir bin files
cat >bin/sbatch <<'SH'
#!/bin/sh
echo called >>"$(dirname "$0")/../sbatch.calls"
echo 1
SH
cat >bin/scontrol <<'SH'
#!/bin/sh
echo "slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)" >&2
exit 1
SH
chmod +x bin/sbatch bin/scontrol
for i in 1 2 3; do printf 'file %d\n' "$i" >"files/$i"; done
ls -d "$PWD"/files/* >list.txt
PATH=$PWD/bin:$PATH "$root/scripts/slurm/zrec-slurm-build" --zrec "$zrec" files -n 2 list.txt "$PWD/dest" >out 2>err
rc=$?
check "no controller: exit 1 (got $rc)" test "$rc" = 1
check "no controller: one line naming the cause ($(cat err))" grep -qx "zrec-slurm-build: cannot reach the Slurm controller: scontrol show config says 'slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)' (is slurmctld running, and does SLURM_CONF name its slurm.conf?); nothing was submitted" err
check "no controller: nothing submitted" test ! -e sbatch.calls
check "no controller: no DEST and no work directory" bash -c '! ls -d dest* 2>/dev/null | grep -q .'

# --- a fake cluster: sbatch prints job IDs (and logs its arguments), the controller answers ---
zrec=$(readlink -f "$zrec")
build=$root/scripts/slurm/zrec-slurm-build
slurm=$root/scripts/slurm
mkdir fake
cat >fake/sbatch <<'SH'
#!/bin/bash
d=$(dirname "$0")
n=$(($(cat "$d/next" 2>/dev/null || echo 100) + 1))
echo "$n" >"$d/next"
printf '%s\n' "$*" >>"$d/sbatch.log"
echo "$n"
SH
printf '#!/bin/sh\necho "MaxArraySize            = 1001"\n' >fake/scontrol
printf '#!/bin/sh\nexit 0\n' >fake/squeue
chmod +x fake/sbatch fake/scontrol fake/squeue
fakepath=$PWD/fake:$PATH
drive() { PATH=$fakepath "$build" "$@"; }
# run_job SCRIPT WORK [TASK]: one job (array task TASK) as Slurm would run it; its log in WORK/logs.
run_job() {
  local name=${1%.sbatch}
  SLURM_JOB_NAME=zrec-$name SLURM_ARRAY_TASK_ID=${3:-} bash "$slurm/$1" "$2" >>"$2/logs/$name${3:+_$3}.out" 2>&1
}
# run_build WORK N: the jobs a build submitted, in order (parts, plan, place, publish);
# stops at the first that fails.
run_build() {
  local i
  for ((i = 0; i < $2; i++)); do run_job part-files.sbatch "$1" "$i" || return 1; done
  run_job join-plan.sbatch "$1" || return 1
  for ((i = 0; i < $2; i++)); do run_job join-place.sbatch "$1" "$i" || return 1; done
  run_job join-publish.sbatch "$1"
}
digest_of() { "$zrec" digest "$1" | cut -d' ' -f1; }
jobs_of() { awk '$1 == "job" { printf "%s ", $2 }' "$1"; }

# --- options zrec refuses: nothing submitted ---------------------------------------------
mkdir tok
/usr/bin/python3 - <<'PY'
import struct
for i in range(4):  # .npy files of <u2 tokens, written by hand (no NumPy needed)
    n = 3 + i
    header = "{'descr': '<u2', 'fortran_order': False, 'shape': (%d,), }" % n
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open("tok/doc-%d.npy" % i, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dH" % n, *range(i, i + n)))
PY
ls "$PWD"/tok/*.npy >npy.txt
drive npy --zrec "$zrec" -n 4 --dtype bogus npy.txt "$PWD/npystore" >out 2>err
rc=$?
check "npy --dtype bogus: exit 2 (got $rc)" same "$rc" 2
check "npy --dtype bogus: zrec's reason, nothing submitted ($(head -n 1 err))" \
  grep -qx "zrec-slurm-build: the options make no store: zrec create: .*'bogus'.*; nothing was submitted" err
check "npy --dtype bogus: no sbatch call, no work directory" absent fake/sbatch.log npystore.zrec-build
drive npy --zrec "$zrec" -n 2 --dense --dtype '<u2' --shape 0x3 npy.txt "$PWD/npystore" >out 2>err
rc=$?
check "npy --dense --shape 0x3: exit 2 (got $rc: $(head -n 1 err))" same "$rc" 2
check "npy --dense --shape 0x3: nothing submitted" absent fake/sbatch.log npystore.zrec-build
: >bad.dict   # empty: no dictionary
drive files --zrec "$zrec" -n 2 --dict bad.dict list.txt "$PWD/dictstore" >out 2>err
rc=$?
check "files --dict (an empty file): exit 2 (got $rc: $(head -n 1 err))" same "$rc" 2
check "files --dict (an empty file): nothing submitted" absent fake/sbatch.log dictstore.zrec-build
drive npy --zrec "$zrec" -n 2 --dtype '<u2' npy.txt "$PWD/npystore" >out 2>err
check "npy --dtype '<u2': submitted ($(cat err))" same "$(jobs_of out)" "parts plan place publish "

# --- stream: a file that ends in NUL keeps its last line --------------------------------
mkdir lines
printf '{"a": 1}\n{"b": 2}\0' >lines/0.jsonl   # ends in NUL: its last line has no newline
printf '{"c": 3}\n' >lines/1.jsonl
printf '{"d": 4}' >lines/2.jsonl                # ends without a newline
printf '{"e": 5}\n\0' >lines/3.jsonl            # its last line is a NUL alone
ls "$PWD"/lines/*.jsonl >lines.txt
work=$PWD/linestore.zrec-build
drive stream --zrec "$zrec" -n 2 --codec raw lines.txt "$PWD/linestore" >out 2>err || fail "stream: submit: $(cat err)"
check "stream: the build succeeds" run_build "$work" 2
"$zrec" -q create --ragged --dtype '|u1' --ndim 1 --codec raw line-one &&
  printf '{"a": 1}\n{"b": 2}\0\n{"c": 3}\n{"d": 4}\n{"e": 5}\n\0\n' | "$zrec" -q append-stream line-one ||
  fail "stream: the one-machine build"
check "stream: 6 records, none merged ($("$zrec" info linestore 2>&1 | head -n 1))" \
  grep -q '"length": 6' <("$zrec" info --json linestore)
check "stream: digest equals the one-machine build's" same "$(digest_of linestore)" "$(digest_of line-one)"

# --- publish: a DEST that appears while the publish job runs ------------------------------
# The zrec the jobs run: the real one, except that `zrec digest` (the publish job's, after
# its check that DEST is absent) first makes DEST appear, as another user's or another
# build's would: a directory holding a file, or an empty one (which rename(2) replaces).
mkdir in
for i in $(seq 0 11); do printf 'record %d %*s\n' "$i" $((i * 7)) x >"in/f-$i"; done
ls "$PWD"/in/f-* >in.txt
"$zrec" -q create --ragged --dtype '|u1' --ndim 1 --shards 2 one && "$zrec" -q append-files --files-from in.txt one ||
  fail "publish: the one-machine build"
for variant in nonempty empty; do
  dest=$PWD/pub-$variant
  work=$dest.zrec-build
  if [ "$variant" = nonempty ]; then
    printf '#!/bin/bash\nif [ "$1" = digest ]; then mkdir -p %q && echo foreign >%q; fi\nexec %q "$@"\n' \
      "$dest" "$dest/foreign" "$zrec" >zrec-shim
  else
    printf '#!/bin/bash\nif [ "$1" = digest ]; then mkdir -p %q; fi\nexec %q "$@"\n' "$dest" "$zrec" >zrec-shim
  fi
  chmod +x zrec-shim
  drive files --zrec "$PWD/zrec-shim" -n 3 --shards 2 in.txt "$dest" >out 2>err || fail "publish $variant: submit: $(cat err)"
  run_build "$work" 3
  rc=$?
  says="zrec-slurm zrec-join-publish: '$dest' exists and is not the store this build published; not overwriting it; the verified result is kept in '$work/result' and the parts in '$work/parts': move '$dest' away and run zrec-slurm-build again with --resume"
  check "publish $variant: the publish job fails (got $rc)" same "$rc" 1
  check "publish $variant: one line naming DEST and where the result is ($(tail -n 1 "$work/logs/join-publish.out"))" \
    same "$(grep -v '^zrec concat: published \|^publish: ' "$work/logs/join-publish.out")" "$says"
  check "publish $variant: no digest (the build did not succeed)" absent "$work/digest"
  check "publish $variant: the result and the parts are kept" present "$work/result/meta.zr" "$work/parts/part-00002.done"
  if [ "$variant" = empty ]; then
    check "publish empty: DEST is still the empty directory" same "$(ls -A "$dest" | wc -l)" 0
  else
    check "publish nonempty: DEST is untouched" same "$(ls -A "$dest")" foreign
  fi
  check "publish $variant: the result is the one-machine build" same "$(digest_of "$work/result")" "$(digest_of one)"
  # --resume refuses the foreign DEST (it used to say "built already" and exit 0).
  rm -f fake/sbatch.log
  drive files --zrec "$PWD/zrec-shim" --resume -n 3 --shards 2 in.txt "$dest" >out 2>err
  rc=$?
  check "publish $variant: --resume exits 1 (got $rc)" same "$rc" 1
  check "publish $variant: --resume says why ($(cat err))" same "$(cat err)" "${says/zrec-slurm zrec-join-publish/zrec-slurm-build}"
  check "publish $variant: --resume submits nothing" absent fake/sbatch.log
  # A requeued publish job fails the same way and removes nothing (it removed the parts).
  run_job join-publish.sbatch "$work"
  check "publish $variant: a requeued publish fails too ($(tail -n 1 "$work/logs/join-publish.out"))" \
    same "$(tail -n 1 "$work/logs/join-publish.out")" "$says"
  check "publish $variant: ... keeping the parts and the result" present "$work/parts/part-00000.done" "$work/result/meta.zr"
done
# DEST moved away: --resume publishes the kept result (a plan and a publish job).
dest=$PWD/pub-nonempty
work=$dest.zrec-build
mv "$dest" "$PWD/moved-away"
printf '#!/bin/bash\nexec %q "$@"\n' "$zrec" >zrec-shim
drive files --zrec "$PWD/zrec-shim" --resume -n 3 --shards 2 in.txt "$dest" >out 2>err
check "resume after moving DEST away: a plan and a publish job ($(jobs_of out) $(cat err))" same "$(jobs_of out)" "plan publish "
run_job join-plan.sbatch "$work" && run_job join-publish.sbatch "$work" || fail "resume: $(tail -n 3 "$work"/logs/join-p*.out)"
check "resume: DEST is the one-machine build" same "$(digest_of "$dest")" "$(digest_of one)"
check "resume: the digest records it" same "$(cat "$work/digest" 2>/dev/null)" "$(digest_of one)  $dest"
check "resume: the result and the parts are gone" absent "$work/result" "$work/parts"
drive files --zrec "$PWD/zrec-shim" --resume -n 3 --shards 2 in.txt "$dest" >out 2>err
rc=$?
check "built: --resume says so ($(cat err))" grep -q "^zrec-slurm-build: '$dest' was built already: " err
check "built: --resume exits 0 (got $rc)" same "$rc" 0
# A publish that stopped after the rename (its digest not in place yet): --resume submits
# a publish job alone, which finishes the build.
mv "$work/digest" "$work/digest.tmp"
drive files --zrec "$PWD/zrec-shim" --resume -n 3 --shards 2 in.txt "$dest" >out 2>err
check "stopped after the rename: --resume submits the publish job alone ($(jobs_of out) $(cat err))" \
  same "$(jobs_of out)" "publish "
run_job join-publish.sbatch "$work" || fail "publish after the rename: $(tail -n 2 "$work/logs/join-publish.out")"
check "stopped after the rename: the publish job finishes it" same "$(cat "$work/digest" 2>/dev/null)" "$(digest_of one)  $dest"
check "stopped after the rename: DEST unchanged" same "$(digest_of "$dest")" "$(digest_of one)"
finish
