#!/usr/bin/env bash
# scripts/slurm/ on a live Slurm cluster: starts a private single-node cluster on
# localhost (tests/cli/slurm_cluster.sh), builds stores with zrec-slurm-build and checks
# that each equals the one-machine build of the same input (zrec digest):
#   files      newline list, codec zstd, 4 parts
#   zstd_dict  NUL list, one train-dict job, 3 parts, 3 placement tasks place every record
#   tar, lmdb  WebDataset shards into named streams (the tar build published to a bucket,
#              moto's S3 server, with --publish and digested there); LMDB key prefixes
#   h5         row ranges of a gzip-chunked HDF5 dataset, two in one task
#   npy        a tokenized corpus: .npy streams of <u2 documents into a Ragged store
#   stream     JSON lines files (some ending without a newline) into a store of lines
#   requeue    a tar part task requeued (scontrol requeue) after it committed samples:
#              the rerun continues the part (--from-length), DEST equals the one-machine build
#   failure    a task fails (a missing file): the join jobs are cancelled, no DEST, the
#              other parts stay; --resume rebuilds that part alone and finishes
# and that --dry-run submits and writes nothing. The cluster is stopped and its directory
# removed at exit, also when the test fails.
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_slurm.sh  (CTest sets ZREC). Needs root and
# the Debian packages slurmd slurmctld slurm-client munge (scripts/setup.sh).
set -u

source "$(dirname "$0")/testlib.sh"
source "$here/slurm_cluster.sh"
slurm_test_begin

# The man page keeps up with --help: every long option the help lists is in it.
if "$build" --help >"$tmp/help.out" 2>&1; then ok; else fail "zrec-slurm-build --help failed"; fi
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$root/man/zrec-slurm-build.1" >"$tmp/man.txt"
for opt in $(grep -oE '^ +(-[a-z0-9], )?--[a-z-]+' "$tmp/help.out" | grep -oE -- '--[a-z-]+' | sort -u); do
  check "man/zrec-slurm-build.1 mentions $opt" grep -q -- "$opt" "$tmp/man.txt"
done

if ! cluster_start "$cluster_root"; then
  fail "could not start the Slurm cluster (see above)"
  finish
fi
echo "figure: cluster up in $((SECONDS - t_start)) s"

# Inputs: 300 JSON-like files of 100..3000 bytes with shared vocabulary, so a dictionary helps.
cd "$tmp"
mkdir in
/usr/bin/python3 - <<'PY'
import random
rng = random.Random(14)
words = ["sensor", "temperature", "pressure", "reading", "status", "ok", "warn", "device", "site", "value"]
for i in range(300):
    n = rng.randint(3, 90)
    body = ",".join('{"%s": %d, "%s": "%s"}' % (rng.choice(words), rng.randint(0, 999), rng.choice(words),
                                                 rng.choice(words)) for _ in range(n))
    open("in/f-%03d.json" % i, "w").write("[" + body + "]\n")
PY
ls in/f-*.json >list.txt
tr '\n' '\0' <list.txt >list.nul

jobs_run=0
# run_build NAME ARGS...: submits, waits for every job, sets job_ids/role ids (train_id,
# parts_id, plan_id, place_id, publish_id) and slurm_s (submit to finish).
run_build() {
  local name=$1 t0
  shift
  train_id="" parts_id="" plan_id="" place_id="" publish_id=""
  t0=$(date +%s.%N)
  if ! "$build" --zrec "$zrec" "$@" >"$tmp/$name.submit" 2>"$tmp/$name.submit.err"; then
    fail "$name: zrec-slurm-build failed: $(cat "$tmp/$name.submit.err")"
    return 1
  fi
  train_id=$(awk '$1 == "job" && $2 == "train-dict" { print $3 }' "$tmp/$name.submit")
  parts_id=$(awk '$1 == "job" && $2 == "parts" { print $3 }' "$tmp/$name.submit")
  plan_id=$(awk '$1 == "job" && $2 == "plan" { print $3 }' "$tmp/$name.submit")
  place_id=$(awk '$1 == "job" && $2 == "place" { print $3 }' "$tmp/$name.submit")
  publish_id=$(awk '$1 == "job" && $2 == "publish" { print $3 }' "$tmp/$name.submit")
  [ -n "$publish_id" ] || { fail "$name: no publish job in: $(cat "$tmp/$name.submit")"; return 1; }
  # shellcheck disable=SC2086
  # 120 s: a loaded CI machine, and the tar build's publish job also syncs to a bucket.
  if ! cluster_wait_jobs 120 $train_id $parts_id $plan_id $place_id $publish_id; then
    fail "$name: jobs still queued after 120 s: $(squeue 2>&1)"
    return 1
  fi
  slurm_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}
# states ID: the job's final states, space-separated (an array job: one per task).
states() { cluster_job_state "$1" | sort | uniq -c | awk '{ printf "%s%sx%s", (NR > 1 ? " " : ""), $1, $2 }'; }
digest_of() { "$zrec" digest "$1" 2>&1 | cut -d' ' -f1; }
# placed WORK: the records the placement tasks placed, summed over their logs.
placed() { cat "$1"/logs/zrec-place-"${place_id}"_*.out | sed -n 's/^zrec concat: placed part .*: \([0-9]*\) records, .*/\1/p' | awk '{ s += $1 } END { print s + 0 }'; }
one_machine() {   # one_machine DEST LIST [create options]: the reference build, timed
  local dest=$1 list=$2 t0
  shift 2
  t0=$(date +%s.%N)
  "$zrec" create --ragged --dtype '|u1' --ndim 1 "$@" "$dest" &&
    "$zrec" -q append-files --files-from "$list" "$dest" || fail "one-machine build of $dest"
  one_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}

# --- --dry-run: prints the five sbatch lines, creates nothing ----------------------------
if "$build" files --zrec "$zrec" --dry-run -n 4 --codec zstd_dict --tier small list.txt "$tmp/dry" >dry.out 2>&1 &&
  [ "$(grep -c '^[A-Z]*=\$(sbatch ' dry.out)" = 5 ] && grep -q -- '--array=0-3 --dependency=afterok:\$TRAIN' dry.out &&
  grep -q -- '--array=0-3 --dependency=afterok:\$PLAN .*join-place.sbatch' dry.out &&
  [ ! -e "$tmp/dry.zrec-build" ] && [ -z "$(squeue -h 2>&1)" ]; then ok; else
  fail "--dry-run: $(cat dry.out)"
fi
# Usage errors: exit 2, one line naming the problem.
"$build" files -n 0 list.txt "$tmp/x" >usage.out 2>&1
if [ $? -eq 2 ] && grep -q "^zrec-slurm-build: --parts must be 1..99999, not '0'$" usage.out; then ok; else
  fail "--parts 0: $(cat usage.out)"
fi
"$build" files --zrec "$zrec" -n 301 list.txt "$tmp/x" >usage.out 2>&1
if [ $? -eq 1 ] && grep -q "more than the 300 files" usage.out && [ ! -e "$tmp/x.zrec-build" ]; then ok; else
  fail "--parts 301 of 300 files: $(cat usage.out)"
fi

# The cluster's MaxArraySize (100 here) caps N, before anything is written.
"$build" files --zrec "$zrec" -n 101 list.txt "$tmp/x" >usage.out 2>&1
if [ $? -eq 1 ] && grep -q "MaxArraySize is 100: use at most 100 parts" usage.out && [ ! -e "$tmp/x.zrec-build" ]; then ok; else
  fail "--parts 101 with MaxArraySize=100: $(cat usage.out)"
fi

# --- files: codec zstd, 4 parts --------------------------------------------------------------
if run_build files files -n 4 --shards 2 list.txt "$tmp/files"; then
  check "files: parts job 4x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "4xCOMPLETED" ]
  check "files: place job 4x COMPLETED (got '$(states "$place_id")')" [ "$(states "$place_id")" = "4xCOMPLETED" ]
  check "files: publish job COMPLETED (got '$(states "$publish_id")')" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
  one_machine "$tmp/files-one" list.txt --shards 2
  d=$(digest_of "$tmp/files")
  check "files: digest $d equals the one-machine build's" same "$d" "$(digest_of "$tmp/files-one")"
  check "files: work/digest records it" grep -q "^$d  $tmp/files\$" "$tmp/files.zrec-build/digest"
  check "files: parts removed after success" [ ! -e "$tmp/files.zrec-build/parts" ]
  check "files: 300 records" "$zrec" verify -q "$tmp/files"
  echo "figure: files (300 files, 4 parts): slurm build ${slurm_s} s, one-machine build ${one_s} s"
fi

# --- zstd_dict: one dictionary for every part, frames copied ---------------------------------
if run_build dict files -0 -n 3 --codec zstd_dict --tier small --dict-samples 150 list.nul "$tmp/dict"; then
  check "dict: train-dict job COMPLETED (got '$(states "$train_id")')" [ "$(states "$train_id")" = "1xCOMPLETED" ]
  check "dict: parts job 3x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "3xCOMPLETED" ]
  check "dict: publish job COMPLETED" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
  copied=$(placed "$tmp/dict.zrec-build")
  check "dict: 3 placement tasks placed all 300 records (got '$copied')" [ "$copied" = 300 ]
  echo "figure: zstd_dict join: $copied records placed by 3 tasks"
  check "dict: training used 150 of 300 files" grep -q "training on 150 of 300 items" \
    "$tmp/dict.zrec-build/logs/zrec-dict-$train_id.out"
  one_machine "$tmp/dict-one" list.txt --codec zstd_dict --dict "$tmp/dict/dict.zr"
  d=$(digest_of "$tmp/dict")
  check "dict: digest equals the one-machine build's" same "$d" "$(digest_of "$tmp/dict-one")"
  check "dict: the store is zstd_dict" grep -q '"codec": "zstd_dict"' <("$zrec" verify --quick --json "$tmp/dict")
  echo "figure: zstd_dict (300 files, 3 parts, train-dict job): slurm build ${slurm_s} s, one-machine build ${one_s} s"
fi

# --- a given dictionary, an explicit level, frame checksums: no training job, frames copied ----
if run_build given files -n 2 --dict "$tmp/dict/dict.zr" --level 12 --checksum --no-digest list.txt "$tmp/given"; then
  check "given: no train-dict job" [ -z "$train_id" ]
  check "given: parts job 2x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "2xCOMPLETED" ]
  check "given: publish COMPLETED" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
  check "given: the placement tasks placed all 300 records" [ "$(placed "$tmp/given.zrec-build")" = 300 ]
  check "given: the store has the given dictionary" cmp -s "$tmp/given/dict.zr" "$tmp/dict/dict.zr"
  check "given: every frame carries a checksum" grep -q "300 of 300 frames carry a content checksum" \
    <("$zrec" verify "$tmp/given")
  check "given: digest equals the one-machine build's" [ "$(digest_of "$tmp/given")" = "$(digest_of "$tmp/dict-one")" ]
  check "given: --no-digest: work/digest lists '-' for DEST ($(cat "$tmp/given.zrec-build/digest"))" \
    grep -qx -- "-  $tmp/given" "$tmp/given.zrec-build/digest"
fi

# --- tar: WebDataset shards into named streams, joined stream by stream -----------------------
/usr/bin/python3 - <<'PY'
import io, random, tarfile
rng = random.Random(13)
for shard in range(6):
    with tarfile.open("shard-%02d.tar" % shard, "w") as tar:
        for i in range(20):
            key = "s%02d/%04d" % (shard, i)
            for ext, data in (("txt", ("sample %d of shard %d " % (i, shard) * rng.randint(1, 40)).encode()),
                              ("cls", str(rng.randint(0, 9)).encode())):
                info = tarfile.TarInfo("%s.%s" % (key, ext))
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
PY
ls shard-*.tar >tars.txt
# The tar build is published to a bucket (--publish): moto's server with its signature
# checks on (tests/cli/s3_server.py), served until this script's end closes its stdin.
mkfifo "$tmp/s3.in"
/usr/bin/python3 "$here/s3_server.py" serve "$tmp/s3.env" zbuild <"$tmp/s3.in" >"$tmp/s3.log" 2>&1 &
exec {s3_in}>"$tmp/s3.in"
for ((i = 0; i < 600; i++)); do [ ! -f "$tmp/s3.env" ] || break; sleep 0.1; done
if [ -f "$tmp/s3.env" ]; then
  # shellcheck disable=SC1091
  source "$tmp/s3.env"   # AWS_*: sbatch hands the jobs this environment
else
  fail "could not start the S3 server for --publish: $(tail -n 3 "$tmp/s3.log")"
fi
if run_build tar tar -n 3 --ext txt,cls --keys "$tmp/tar.keys" --publish s3://zbuild/tarroot tars.txt "$tmp/tarroot"; then
  check "tar: parts job 3x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "3xCOMPLETED" ]
  check "tar: publish COMPLETED" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
  check "tar: 3 placement tasks placed 120 records of each of 2 streams" [ "$(placed "$tmp/tarroot.zrec-build")" = 240 ]
  t0=$(date +%s.%N)
  "$zrec" -q append-tar --ext txt,cls --keys "$tmp/tar-one.keys" "$tmp/tar-one" shard-*.tar || fail "tar: one-machine append-tar"
  one_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  for stream in txt cls; do
    d=$(digest_of "$tmp/tarroot/$stream")
    check "tar: stream $stream digest equals the one-machine build's" same "$d" "$(digest_of "$tmp/tar-one/$stream")"
  done
  for stream in txt cls; do
    d=$(digest_of "$tmp/tar-one/$stream")
    check "tar: published stream $stream digests in the bucket as the one-machine build's" \
      same "$("$zrec" digest "s3://zbuild/tarroot/$stream" | cut -d' ' -f1)" "$d"
    check "tar: work/published records s3://zbuild/tarroot/$stream" \
      grep -q "^$d  s3://zbuild/tarroot/$stream\$" "$tmp/tarroot.zrec-build/published"
  done
  check "tar: the bucket holds a root of 120 committed samples" \
    grep -q "2 streams, 120 samples committed" <("$zrec" info s3://zbuild/tarroot)
  check "tar: keys equal the one-machine build's" cmp -s "$tmp/tar.keys" "$tmp/tar-one.keys"
  check "tar: 120 keys" [ "$(wc -l <"$tmp/tar.keys")" = 120 ]
  check "tar: the root verifies (streams of equal length)" "$zrec" verify -q "$tmp/tarroot"
  # The joined root is marked and committed as append-tar's own roots are, so the next
  # append-tar into it goes on from its 120 samples without --adopt.
  check "tar: the joined root is marked (zrec-root)" present "$tmp/tarroot/zrec-root"
  check "tar: zrec info reads it as a root of 120 committed samples" \
    grep -q "2 streams, 120 samples committed" <("$zrec" info "$tmp/tarroot")
  check "tar: append-tar goes on in it without --adopt" \
    "$zrec" -q append-tar --from-length 0 --keys "$tmp/tar.keys" "$tmp/tarroot" shard-*.tar
  echo "figure: tar (6 shards, 120 samples, 2 streams, 3 parts): slurm build ${slurm_s} s, one-machine build ${one_s} s"
fi
# zstd_dict without --dict: the training job trains a dictionary per stream of bytes.
if run_build tardict tar -n 3 --codec zstd_dict --tier small --ext txt,cls --parse cls=int tars.txt "$tmp/tardict"; then
  check "tardict: train-dict COMPLETED (got '$(states "$train_id")')" [ "$(states "$train_id")" = "1xCOMPLETED" ]
  check "tardict: parts job 3x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "3xCOMPLETED" ]
  check "tardict: stream txt is zstd_dict with a dictionary of its own" \
    grep -q '"codec": "zstd_dict"' <("$zrec" info --json "$tmp/tardict/txt")
  check "tardict: stream cls (numbers) has none" grep -q '"codec": "raw"' <("$zrec" info --json "$tmp/tardict/cls")
  "$zrec" -q append-tar --stream-dict "txt=$tmp/tardict/txt/dict.zr" --ext txt,cls --parse cls=int \
    "$tmp/tardict-one" shard-*.tar || fail "tardict: one-machine append-tar"
  for stream in txt cls; do
    check "tardict: stream $stream digest equals the one-machine build's" \
      same "$(digest_of "$tmp/tardict/$stream")" "$(digest_of "$tmp/tardict-one/$stream")"
  done
  check "tardict: txt's data files equal the one-machine build's (same dictionary, same frames)" \
    cmp -s "$tmp/tardict/txt/data_0.zr" "$tmp/tardict-one/txt/data_0.zr"
  check "tardict: the root verifies" "$zrec" verify -q "$tmp/tardict"
fi

# --- tar with streams of numbers (--parse) and a zstd_dict stream: the publish step adopts
# the joined root without the build's --parse (issue 36: it used to refuse the <i8 stream,
# so DEST never appeared); each equals the one-machine append-tar with the same options.
for variant in "int" "ints-dict"; do
  case $variant in
    int) opts=(--parse cls=int) ;;
    ints-dict) opts=(--parse cls=ints --codec zstd_dict --dict "$tmp/dict/dict.zr") ;;
  esac
  if run_build "tar-$variant" tar -n 3 --ext txt,cls "${opts[@]}" --keys "$tmp/tar-$variant.keys" tars.txt \
       "$tmp/tar-$variant"; then
    check "tar --parse $variant: publish COMPLETED (got '$(states "$publish_id")')" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
    check "tar --parse $variant: DEST published" present "$tmp/tar-$variant/zrec-root"
    "$zrec" -q append-tar --ext txt,cls "${opts[@]}" --keys "$tmp/tar-$variant-one.keys" "$tmp/tar-$variant-one" \
      shard-*.tar || fail "tar --parse $variant: one-machine append-tar"
    for stream in txt cls; do
      check "tar --parse $variant: stream $stream digest equals the one-machine build's" \
        same "$(digest_of "$tmp/tar-$variant/$stream")" "$(digest_of "$tmp/tar-$variant-one/$stream")"
    done
    check "tar --parse $variant: keys equal the one-machine build's" cmp -s "$tmp/tar-$variant.keys" \
      "$tmp/tar-$variant-one.keys"
    check "tar --parse $variant: the root verifies" "$zrec" verify -q "$tmp/tar-$variant"
  fi
done

# --- requeue: a tar part task requeued (scontrol requeue) in the middle of its run --------------
# Its first run goes through a wrapper that checkpoints every 2 samples and makes each
# fsync 0.1 s slower (strace), so the test sees the part root commit samples and requeues
# the task then; the requeued run (SLURM_RESTART_COUNT 1) is plain zrec, continues the
# part with --from-length 0, and the joined root must equal the one-machine build.
cat >"$tmp/zrec-requeue" <<WRAPPER
#!/usr/bin/env bash
if [ "\${SLURM_RESTART_COUNT:-0}" = 0 ] && [ "\${SLURM_ARRAY_TASK_ID:-}" = 1 ] && [ "\$2" = append-tar ]; then
  exec strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_exit=100000 "$zrec" "\$1" "\$2" --checkpoint-every 2 "\${@:3}"
fi
exec "$zrec" "\$@"
WRAPPER
chmod +x "$tmp/zrec-requeue"
requeue_part=$tmp/requeue.zrec-build/parts/part-00001
if "$build" tar --zrec "$tmp/zrec-requeue" -n 3 --shards 1 --ext txt,cls --keys "$tmp/requeue.keys" tars.txt \
  "$tmp/requeue" >requeue.submit 2>&1; then
  parts_id=$(awk '$2 == "parts" { print $3 }' requeue.submit)
  plan_id=$(awk '$2 == "plan" { print $3 }' requeue.submit)
  place_id=$(awk '$2 == "place" { print $3 }' requeue.submit)
  publish_id=$(awk '$2 == "publish" { print $3 }' requeue.submit)
  committed=""
  for _ in $(seq 600); do   # at most 60 s for part 1 to commit 4 samples
    committed=$(sed -n 's/^length //p' "$requeue_part/zrec-root" 2>/dev/null)
    [ "${committed:-0}" -ge 4 ] && break
    sleep 0.1
  done
  if [ "${committed:-0}" -ge 4 ] && [ "${committed:-0}" -lt 40 ]; then ok; else
    fail "requeue: part 1 committed '${committed}' samples before the requeue (want 4..39): $(squeue 2>&1)"
  fi
  if scontrol requeue "${parts_id}_1" >requeue.out 2>&1; then ok; else fail "scontrol requeue: $(cat requeue.out)"; fi
  # Slurm holds a requeued job back for two minutes (BeginTime); once its first run has
  # ended and it is pending again, let it start soon. Not at once: slurmd refuses to launch
  # a job whose credential was issued in the same second as its kill ("Job N already
  # killed, do not launch batch job"), and the rerun would fail with an empty log.
  for _ in $(seq 300); do
    scontrol show job "${parts_id}_1" 2>/dev/null | grep -q "JobState=PENDING Reason=BeginTime" && break
    sleep 0.1
  done
  scontrol update JobId="${parts_id}_1" StartTime=now+2 >>requeue.out 2>&1 || fail "scontrol update: $(cat requeue.out)"
  if cluster_wait_jobs 120 "$parts_id" "$plan_id" "$place_id" "$publish_id"; then
    check "requeue: publish COMPLETED (got '$(states "$publish_id")'; parts '$(states "$parts_id")', plan '$(states "$plan_id")', place '$(states "$place_id")')" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
    if [ "$(states "$publish_id")" != "1xCOMPLETED" ]; then
      grep -hE "JobId=($parts_id|$plan_id|$place_id|$publish_id)|ArrayJobId=($parts_id|$place_id) " "$cluster_root/log/jobcomp.log" >&2
      tail -n 5 "$tmp"/requeue.zrec-build/logs/*.out >&2
      grep -h "already killed" "$cluster_root/log/slurmd.log" >&2
    fi
    log=$tmp/requeue.zrec-build/logs/zrec-part-${parts_id}_1.out
    present=$(sed -n 's/.* after skipping \([0-9]*\) already present.*/\1/p' "$log")
    skipped_right() { [ -n "$present" ] && [ "$present" -ge "$committed" ] && [ "$present" -lt 40 ]; }
    check "requeue: the requeued run skipped the ${present:-no} samples already present (committed ${committed} at the requeue)" \
      skipped_right
    for stream in txt cls; do
      d=$(digest_of "$tmp/requeue/$stream")
      check "requeue: stream $stream digest equals the one-machine build's" same "$d" "$(digest_of "$tmp/tar-one/$stream")"
    done
    check "requeue: keys equal the one-machine build's" cmp -s "$tmp/requeue.keys" "$tmp/tar-one.keys"
    echo "figure: requeue: part 1 requeued after committing $committed of 40 samples; its rerun skipped $present, the join equals the one-machine build"
  else
    fail "requeue: jobs still queued after 120 s: $(squeue 2>&1)"
  fi
else
  fail "requeue: zrec-slurm-build failed: $(cat requeue.submit)"
fi

# --- lmdb: key prefixes, several per task, in key order -----------------------------------------
/usr/bin/python3 - <<'PY'
import lmdb, random
rng = random.Random(12)
env = lmdb.open("db.lmdb", map_size=1 << 26)
with env.begin(write=True) as txn:
    for i in range(300):
        txn.put(b"k%04d" % i, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 400))))
env.close()
PY
printf 'k00\nk01\nk02\n' >prefixes.txt
printf 'k01\nk00\n' >unsorted.txt
"$build" lmdb --zrec "$zrec" -n 2 db.lmdb unsorted.txt "$tmp/x" >usage.out 2>&1
if [ $? -eq 1 ] && grep -q "the prefixes are not in bytewise order: 'k01' before 'k00'" usage.out; then ok; else
  fail "lmdb: unsorted prefixes: $(cat usage.out)"
fi
if run_build lmdb lmdb -n 2 --keys "$tmp/lmdb.keys" db.lmdb prefixes.txt "$tmp/lmdbstore"; then
  check "lmdb: parts job 2x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "2xCOMPLETED" ]
  check "lmdb: publish COMPLETED" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
  check "lmdb: task 0 read two prefixes" grep -q "built from 2 key prefixes, 200 records" \
    "$tmp/lmdbstore.zrec-build/logs/zrec-part-${parts_id}_0.out"
  t0=$(date +%s.%N)
  "$zrec" create --ragged --dtype '|u1' --ndim 1 "$tmp/lmdb-one" &&
    "$zrec" -q append-lmdb --keys "$tmp/lmdb-one.keys" "$tmp/lmdb-one" db.lmdb || fail "lmdb: one-machine build"
  one_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  d=$(digest_of "$tmp/lmdbstore")
  check "lmdb: digest equals the one-machine build's" same "$d" "$(digest_of "$tmp/lmdb-one")"
  check "lmdb: keys equal the one-machine build's (300)" cmp -s "$tmp/lmdb.keys" "$tmp/lmdb-one.keys"
  echo "figure: lmdb (300 keys, 3 prefixes, 2 parts): slurm build ${slurm_s} s, one-machine build ${one_s} s"
fi

# --- lmdb --dense: fixed-width values as Dense records --------------------------------------------
/usr/bin/python3 - <<'PY'
import lmdb, struct
env = lmdb.open("dense.lmdb", map_size=1 << 24)
with env.begin(write=True) as txn:
    for i in range(200):
        txn.put(b"d%03d" % i, struct.pack("<4f", i, i / 2, -i, 1.5))
env.close()
PY
printf 'd0\nd1\n' >dense-prefixes.txt
if run_build dense lmdb -n 2 --dense --dtype '<f4' --shape 4 dense.lmdb dense-prefixes.txt "$tmp/densestore"; then
  check "dense: publish COMPLETED" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
  "$zrec" create --dense --dtype '<f4' --shape 4 "$tmp/dense-one" &&
    "$zrec" -q append-lmdb --dense "$tmp/dense-one" dense.lmdb || fail "dense: one-machine build"
  d=$(digest_of "$tmp/densestore")
  check "dense: digest equals the one-machine build's" same "$d" "$(digest_of "$tmp/dense-one")"
  check "dense: a Dense <f4 (4,) store" grep -q '"kind": "dense", "dtype": "<f4"' <("$zrec" verify --quick --json "$tmp/densestore")
fi

# --- h5: row ranges of an HDF5 dataset, several per task, in order -------------------------------
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
a = np.random.default_rng(11).integers(0, 1000, (300, 3, 4)).astype(">i4")
with h5py.File("rows.h5", "w") as f:
    f.create_dataset("x", data=a, chunks=(16, 3, 4), compression="gzip", shuffle=True)
PY
printf '0:100\n100:200\n200:1000\n' >ranges.txt
printf '0:100\n50:200\n' >overlap.txt
"$build" h5 --zrec "$zrec" -n 2 rows.h5 x overlap.txt "$tmp/x" >usage.out 2>&1
if [ $? -eq 1 ] && grep -q "the row ranges are not ascending and apart: '0:100' before '50:200'" usage.out; then ok; else
  fail "h5: overlapping ranges: $(cat usage.out)"
fi
if run_build h5 h5 -n 2 --shards 2 rows.h5 x ranges.txt "$tmp/h5store"; then
  check "h5: parts job 2x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "2xCOMPLETED" ]
  check "h5: publish COMPLETED" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
  check "h5: task 0 converted two row ranges" grep -q "built from 2 row ranges, 200 records" \
    "$tmp/h5store.zrec-build/logs/zrec-part-${parts_id}_0.out"
  t0=$(date +%s.%N)
  "$zrec" -q append-h5 --create --shards 2 "$tmp/h5-one" rows.h5 x || fail "h5: one-machine build"
  one_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  d=$(digest_of "$tmp/h5store")
  check "h5: digest equals the one-machine build's" same "$d" "$(digest_of "$tmp/h5-one")"
  check "h5: a Dense >i4 (3, 4) store of 300 records" \
    grep -q '"kind": "dense", "dtype": ">i4", "ndim": 2, "item_shape": \[3, 4\]' <("$zrec" info --json "$tmp/h5store")
  echo "figure: h5 (300 rows, 3 ranges, 2 parts): slurm build ${slurm_s} s, one-machine build ${one_s} s"
fi

# --- npy and stream: tokenized corpora (.npy files) and JSON lines, in order -------------------
/usr/bin/python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng(7)
os.makedirs("tok", exist_ok=True)
with open("npy.txt", "w") as names:
    for i in range(12):
        # Each file: a stream of 3 documents (a tokenizer's shards), token IDs <u2.
        with open("tok/doc-%02d.npy" % i, "wb") as f:
            for d in range(3):
                np.save(f, rng.integers(0, 50000, size=int(rng.integers(1, 200)), dtype=np.uint16))
        names.write("tok/doc-%02d.npy\n" % i)
with open("jsonl.txt", "w") as names:
    for i in range(9):
        with open("tok/part-%d.jsonl" % i, "w") as f:
            lines = ['{"id": %d, "text": "%s"}' % (i * 100 + k, "w" * k) for k in range(1, 8)]
            f.write("\n".join(lines) + ("\n" if i % 2 else ""))  # every other file ends without a newline
        names.write("tok/part-%d.jsonl\n" % i)
PY
if run_build npy npy -n 3 --dtype '<u2' --ndim 1 npy.txt "$tmp/npystore"; then
  check "npy: parts job 3x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "3xCOMPLETED" ]
  "$zrec" -q create --ragged --dtype '<u2' --ndim 1 "$tmp/npy-one" && xargs cat <npy.txt | "$zrec" -q append-npy "$tmp/npy-one" - ||
    fail "npy: one-machine build"
  check "npy: digest equals the one-machine build's (36 documents)" same "$(digest_of "$tmp/npystore")" "$(digest_of "$tmp/npy-one")"
  check "npy: 36 records" grep -q '"length": 36' <("$zrec" info --json "$tmp/npystore")
fi
if run_build stream stream -n 2 --codec raw jsonl.txt "$tmp/linestore"; then
  check "stream: parts job 2x COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "2xCOMPLETED" ]
  "$zrec" -q create --ragged --dtype '|u1' --ndim 1 --codec raw "$tmp/line-one" &&
    for f in $(cat jsonl.txt); do cat "$f"; [ -z "$(tail -c 1 "$f")" ] || echo; done | "$zrec" -q append-stream "$tmp/line-one" ||
    fail "stream: one-machine build"
  check "stream: digest equals the one-machine build's (63 lines, no two merged)" \
    same "$(digest_of "$tmp/linestore")" "$(digest_of "$tmp/line-one")"
  check "stream: 63 records" grep -q '"length": 63' <("$zrec" info --json "$tmp/linestore")
fi
"$build" npy --zrec "$zrec" -n 2 npy.txt "$tmp/x" >usage.out 2>&1
check "npy without --dtype: a usage error (exit 2)" grep -q "npy needs --dtype" usage.out

# --- failure: a task fails, the join must not run; --resume finishes --------------------
# Task 2 of 4 gets items 150..224; item 160 is missing until the resume.
mv in/f-160.json in/f-160.saved
if run_build fail files -n 4 list.txt "$tmp/fail"; then
  check "fail: task 2 FAILED, the others COMPLETED (got '$(states "$parts_id")')" \
    [ "$(states "$parts_id")" = "3xCOMPLETED 1xFAILED" ]
  check "fail: plan, place and publish jobs CANCELLED (got '$(states "$plan_id") / $(states "$place_id") / $(states "$publish_id")')" \
    same "$(states "$plan_id") $(states "$publish_id")" "1xCANCELLED 1xCANCELLED"
  check "fail: no store at DEST" [ ! -e "$tmp/fail" ]
  check "fail: parts 0, 1, 3 done and kept" present "$tmp/fail.zrec-build/parts/part-0000"{0,1,3}.done
  check "fail: part 2 not done" absent "$tmp/fail.zrec-build/parts/part-00002.done"
  check "fail: the task's log names the missing file" grep -q "in/f-160.json" \
    "$tmp/fail.zrec-build/logs/zrec-part-${parts_id}_2.out"
  "$build" files --zrec "$zrec" -n 4 list.txt "$tmp/fail" >again.out 2>&1
  check "fail: a rerun without --resume is refused" grep -q "continue it with --resume" again.out
  mv in/f-160.saved in/f-160.json
  "$build" files --zrec "$zrec" --resume --dry-run -n 4 list.txt "$tmp/fail" >resume-dry.out 2>&1
  check "fail: --resume --dry-run plans part 2 alone ($(head -3 resume-dry.out | tr '\n' ' '))" \
    grep -q -- "--array=2 " resume-dry.out
  if run_build resume files --resume -n 4 list.txt "$tmp/fail"; then
    check "resume: one task ran, COMPLETED (got '$(states "$parts_id")')" [ "$(states "$parts_id")" = "1xCOMPLETED" ]
    check "resume: publish COMPLETED" [ "$(states "$publish_id")" = "1xCOMPLETED" ]
    check "resume: part 2 was rebuilt, so all 4 parts were placed again" [ "$(states "$place_id")" = "4xCOMPLETED" ]
    one_machine "$tmp/fail-one" list.txt
    d=$(digest_of "$tmp/fail")
    check "resume: digest equals the one-machine build's" same "$d" "$(digest_of "$tmp/fail-one")"
    check "resume: parts removed" [ ! -e "$tmp/fail.zrec-build/parts" ]
    check "resume: one part task ran again" [ "$(ls "$tmp/fail.zrec-build/logs" | grep -c "^zrec-part-${parts_id}_")" = 1 ]
    check "resume: it was task 2" present "$tmp/fail.zrec-build/logs/zrec-part-${parts_id}_2.out"
  fi
fi

jobs_run=$(wc -l <"$cluster_root/log/jobcomp.log")
cluster_stop
left=$(ps -o pid=,args= -p "$( (pgrep -f "$cluster_root"; cluster_job_pids) | paste -sd,)" 2>/dev/null)
check "no daemon or job step left running (got '$left')" [ -z "$left" ]
echo "figure: $jobs_run jobs (array tasks counted singly) run in $((SECONDS - t_start)) s end to end"
finish
