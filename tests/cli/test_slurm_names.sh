#!/usr/bin/env bash
# scripts/slurm/ with hostile names, on a live Slurm cluster (tests/cli/slurm_cluster.sh):
# no user string may reach a program, a pattern, an sbatch filename pattern or --wrap
# (docs/scale-out.md, "Names are data, never code"). Builds DEST names that broke the
# join job's sed program or the log paths:
#   pi|pe    a newline inside    & (sed: the match)
#   x;cd ..;touch PWNED|e + a trailing newline (GNU sed's e flag ran it)
#   %j, %x, %A (sbatch filename patterns: the job could not open its log)    a space and quotes
# in files mode (2 parts each, one build per name) and tar mode (a root of 2 streams),
# and checks, whatever job script joins the parts: the build completes; DEST exists by
# exactly its name (no other entry appears beside it) and its digest equals the
# one-machine build's; the work directory's digest file says HASH, two spaces and
# exactly DEST; the logs are logs/zrec-part-<job>_<task>.out, zrec-plan-<job>.out,
# zrec-place-<job>_<task>.out and zrec-publish-<job>.out; no file PWNED appeared; --resume says it was built. A DEST
# with a '\' (sed: an escape; sbatch drops it from log paths and has no escape for it) is
# refused before anything is written. Also, statically: no script submits with --wrap.
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_slurm_names.sh (CTest sets ZREC). Needs root
# and the Debian packages slurmd slurmctld slurm-client munge (scripts/setup.sh). Uses
# TCP ports 6817/6818 (CTest runs it apart from test_slurm: RESOURCE_LOCK).
set -u

source "$(dirname "$0")/testlib.sh"
source "$here/slurm_cluster.sh"
slurm_test_begin

# --- static: no --wrap, no variable in an sbatch filename pattern ------------------------------
check "no script under scripts/slurm submits with --wrap" \
  bash -c '! grep -rn -- "--wrap" "$1"' _ "$root/scripts/slurm"

if ! cluster_start "$cluster_root"; then
  fail "could not start the Slurm cluster (see above)"
  finish
fi
echo "figure: cluster up in $((SECONDS - t_start)) s"

cd "$tmp" || exit 1
mkdir in out
for i in $(seq 0 39); do printf 'record %d %s\n' "$i" "$(printf 'x%.0s' $(seq 0 "$i"))" >"in/f-$(printf %02d "$i")"; done
ls in/f-* >list.txt
"$zrec" create --ragged --dtype '|u1' --ndim 1 one && "$zrec" -q append-files --files-from list.txt one ||
  fail "one-machine build"
want=$("$zrec" digest one | cut -d' ' -f1)
/usr/bin/python3 - <<'PY'
import io, tarfile
with tarfile.open("shard.tar", "w") as tar:
    for i in range(12):
        for ext, data in (("jpg", b"img %d" % i * (i + 1)), ("cls", b"%d" % (i % 3))):
            info = tarfile.TarInfo("s%02d.%s" % (i, ext))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
PY
cp shard.tar shard2.tar
printf 'shard.tar\nshard2.tar\n' >tars.txt
"$zrec" -q append-tar tar-one shard.tar shard2.tar || fail "one-machine append-tar"

# The hostile names, in out/ (each DEST's directory holds nothing else).
names=(
  'pi|pe'
  $'a\nb'
  'amp&x'
  $'x;cd ..;touch PWNED|e\n'
  'pct%j%x%A%%'
  "sp ace 'q\"uo"
)
# sbatch has no escape for '\' in a log path: refused before anything is written.
"$build" files --zrec "$zrec" -n 2 "$tmp/list.txt" "$tmp/out/back\slash" >usage.out 2>&1
rc=$?
check "a DEST with '\\' is refused, exit 2 (rc $rc: $(head -c 300 usage.out))" [ "$rc" = 2 ]
check "the refusal says why" grep -q "holds a '\\\\', which sbatch drops from log file paths" usage.out
check "nothing was written for it" [ -z "$(ls out)" ]

# submit NAME-INDEX MODE LIST DEST: runs the driver; sets ids (its job IDs).
declare -A plan_of place_of publish_of parts_of
submit() {
  local i=$1 mode=$2 list=$3 dest=$4
  if ! "$build" "$mode" --zrec "$zrec" -n 2 "$list" "$dest" >"submit.$i" 2>"submit.$i.err"; then
    fail "build $i: zrec-slurm-build failed: $(cat "submit.$i.err")"
    return 1
  fi
  local role
  for role in parts plan place publish; do
    local -n of=${role}_of
    of[$i]=$(awk -v r="$role" '$1 == "job" && $2 == r { print $3 }' "submit.$i")
  done
}
# Every build at once: the cluster runs them as CPUs free up.
for i in "${!names[@]}"; do submit "$i" files "$tmp/list.txt" "$tmp/out/${names[$i]}"; done
tar_dest=$tmp/out/$'t|&;touch PWNED|e\n'
submit tar tar "$tmp/tars.txt" "$tar_dest"
# shellcheck disable=SC2046
cluster_wait_jobs 120 $(printf '%s ' "${publish_of[@]}" "${place_of[@]}" "${plan_of[@]}" "${parts_of[@]}") ||
  fail "jobs still queued after 120 s: $(squeue 2>&1)"

# check_build KEY DEST DIGEST-FILE-CONTENT
check_build() {
  local i=$1 dest=$2 digest_want=$3 work=$2.zrec-build p=${parts_of[$1]} pl=${plan_of[$1]} pc=${place_of[$1]}
  local c=${publish_of[$1]} shown
  shown=$(printf '%q' "$dest")
  check "$shown: the driver submitted parts, plan, place and publish jobs (IDs '$p' '$pl' '$pc' '$c')" \
    test -n "$p" -a -n "$pl" -a -n "$pc" -a -n "$c"
  [ -n "$c" ] || return
  check "$shown: publish job COMPLETED (got '$(cluster_job_state "$c")')" [ "$(cluster_job_state "$c")" = COMPLETED ]
  check "$shown: DEST exists by exactly its name" [ -d "$dest" ]
  check "$shown: the digest file holds the hash and exactly DEST" \
    cmp -s "$work/digest" <(printf '%s' "$digest_want")
  check "$shown: logs/ of the parts, plan, placement and publish jobs" \
    present "$work/logs/zrec-part-${p}_0.out" "$work/logs/zrec-part-${p}_1.out" "$work/logs/zrec-plan-$pl.out" \
    "$work/logs/zrec-place-${pc}_0.out" "$work/logs/zrec-place-${pc}_1.out" "$work/logs/zrec-publish-$c.out"
  check "$shown: logs/ holds those six logs only (got: $(ls "$work/logs" | tr '\n' ' '))" \
    same "$(find "$work/logs" -mindepth 1 -printf x | wc -c)" 6
  "$build" files --zrec "$zrec" -n 2 --resume "$tmp/list.txt" "$dest" >resume.out 2>&1
  check "$shown: --resume says it was built ($(head -c 300 resume.out))" grep -q "was built already" resume.out
}
for i in "${!names[@]}"; do
  dest=$tmp/out/${names[$i]}
  check_build "$i" "$dest" "$want  $dest"$'\n'
  check "$(printf '%q' "$dest"): digest of DEST equals the one-machine build's" \
    same "$("$zrec" digest "$dest" 2>&1 | cut -d' ' -f1)" "$want"
done
want_tar=""
for stream in cls jpg; do
  want_tar+="$("$zrec" digest "tar-one/$stream" | cut -d' ' -f1)  $tar_dest/$stream"$'\n'
done
check_build tar "$tar_dest" "$want_tar"
# Only the DESTs and their work directories are in out/: nothing a name spelled.
expected=$(( (${#names[@]} + 1) * 2 ))
check "out/ holds the DESTs and their work directories only (got $(find out -mindepth 1 -maxdepth 1 -printf x | wc -c), want $expected)" \
  [ "$(find out -mindepth 1 -maxdepth 1 -printf x | wc -c)" = "$expected" ]
check "no file PWNED anywhere (got: $(find / -xdev -name PWNED 2>/dev/null | head -3 | tr '\n' ' '))" \
  [ -z "$(find "$tmp" "$(dirname "$tmp")" "$cluster_root" -maxdepth 3 -name PWNED 2>/dev/null)" ]
echo "figure: $((${#names[@]} + 1)) builds with hostile DEST names (files x ${#names[@]}, tar x 1) in $((SECONDS - t_start)) s"

cluster_stop
finish
