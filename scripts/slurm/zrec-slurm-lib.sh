# Shared by zrec-slurm-build and its job scripts (sourced, never run).
#
# A build of DEST keeps everything in the work directory DEST.zrec-build/, next to DEST
# (same file system, so the finished store is renamed into place):
#   build.conf      the build's settings, written by the driver (shell assignments)
#   list            the input, one NUL-terminated name per item, in record order
#   lists/part-NNNNN  the contiguous share of part N
#   dict.zr         the dictionary every part is compressed with (codec zstd_dict)
#   parts/part-NNNNN  part N: an ordinary store, built by array task N
#   parts/part-NNNNN.done  written by task N after its part passed `zrec verify`; holds its length
#   parts/part-NNNNN.from-K  (lmdb, h5) where input K of part N begins in it: a rerun's --from-length
#   join/plan       the join's plan (`zrec concat --plan`; tar: join/stream-K.plan, one per
#                   stream, whose names join/streams holds, NUL-terminated, in order)
#   join/placed/part-NNNNN  written by placement task N after it placed part N (every stream)
#   result/         the joined store, published by the plan(s), verified and digested before
#                   the rename to DEST; its hidden .result.zrec-join-XXXXXX temporary before that
#   logs/           one file per job (task)
#   jobs            the job IDs of every submission, one line each
#   identity        what identifies the result at DEST (zs_identity), written before the rename
#   digest.tmp      `zrec digest` of the result, before the rename to DEST
#   digest          the same, once DEST is the result: the record that the build succeeded
# The publish job removes list, lists/, dict.zr, parts/ and join/ only after DEST is the
# result that passed verify and digest; logs/, jobs, identity and digest stay for the record.

zs_die() {
  echo "${zs_prog:-zrec-slurm}: $*" >&2
  exit 1
}

# zs_job_setup: what every job does after sourcing build.conf and this file.
zs_job_setup() {
  zs_prog="zrec-slurm ${SLURM_JOB_NAME:-job}"
  # The task's CPUs are its lanes: task/affinity may not pin them, and the default
  # (every CPU of the node) would oversubscribe a node shared by several tasks.
  if [ -z "${ZREC_THREADS:-}" ] && [ -n "${SLURM_CPUS_PER_TASK:-}" ]; then
    export ZREC_THREADS=$SLURM_CPUS_PER_TASK
  fi
}

zs_part_name() { printf 'part-%05d' "$1"; }

# Items (NUL-terminated names) in a list file.
zs_count_items() { tr -cd '\0' <"$1" | wc -c; }

# The create options of every part (and of the dictionary's sample store: codec aside).
zs_schema_args() {
  case $zs_mode in
  files | stream) printf '%s\0' --ragged --dtype '|u1' --ndim 1 ;;
  npy)
    if [ "$zs_dense" = 1 ]; then
      printf '%s\0' --dense --dtype "$zs_dtype" --shape "$zs_shape"
    else
      printf '%s\0' --ragged --dtype "$zs_dtype" --ndim "$zs_ndim"
    fi
    ;;
  lmdb)
    if [ "$zs_dense" = 1 ]; then
      printf '%s\0' --dense --dtype "$zs_dtype" --shape "$zs_shape"
    else
      printf '%s\0' --ragged --dtype '|u1' --ndim 1
    fi
    ;;
  esac
}

# zs_part_ok N: part N is complete (its task verified it and wrote the marker) and still
# passes `zrec verify --quick` with the length the marker recorded.
zs_part_ok() {
  local name part want got
  name=$(zs_part_name "$1")
  part=$zs_work/parts/$name
  [ -f "$part.done" ] && [ -d "$part" ] || return 1
  want=$(cat "$part.done")
  got=$(zs_verified_length --quick "$part") || return 1
  [ "$got" = "$want" ]
}

# zs_length STORE: the store's published length (the root's committed samples), from
# `zrec info` (which reads a store a writer holds without waiting); fails on an error.
zs_length() {
  local json
  json=$("$zs_zrec" info --json "$1" 2>/dev/null) || return 1
  sed -n 's/.*"committed_length": *\([0-9]*\).*/\1/p; t; s/.*"length": *\([0-9]*\).*/\1/p' <<<"$json" | head -n 1 | grep .
}

# zs_part_start N: before task N appends to its part. A part that was done once but
# fails `zrec verify` now is removed with what belongs to it, so it is built again from
# nothing; any other leftover (a killed, failed or requeued run of this task) is kept:
# the task's appends take --from-length, so they add exactly what the part lacks and
# never a record twice.
zs_part_start() {
  local part
  part=$zs_work/parts/$(zs_part_name "$1")
  if [ -f "$part.done" ]; then
    rm -rf -- "$part" "$part.stage" "$part.keys" "$part.done"
    rm -f -- "$part".from-*
  fi
}

# zs_from_length PART K TARGET: where input K of a part that appends several inputs in
# order (key prefixes, row ranges) begins: recorded in PART.from-K when input K first
# starts (TARGET's length then, all of input K-1 being in), and read back by a rerun.
zs_from_length() {
  local file=$1.from-$2 n
  if [ ! -f "$file" ]; then
    if [ -e "$3" ]; then n=$(zs_length "$3") || return 1; else n=0; fi
    echo "$n" >"$file.tmp" && mv -- "$file.tmp" "$file" || return 1
  fi
  cat -- "$file"
}

# zs_verified_length [--quick] STORE: prints the store's length if `zrec verify` finds it
# valid; fails (and prints nothing) otherwise. STORE may be a root append-tar built,
# which verify finds valid only when every stream holds its committed samples: that
# count (the last "length" of the JSON).
zs_verified_length() {
  local json
  json=$("$zs_zrec" verify --json "$@" 2>/dev/null) || return 1
  sed -n 's/.*"length": *\([0-9]*\).*/\1/p' <<<"$json" | tail -n 1 | grep .
}

# --- the join in steps (join-plan, join-place, join-publish.sbatch) ------------------------

# zs_join_plans: the plan files of this build, one per line of the array zs_plans (tar:
# one per stream, in the order of join/streams).
zs_join_plans() {
  zs_plans=()
  if [ "$zs_mode" != tar ]; then
    zs_plans=("$zs_work/join/plan")
    return 0
  fi
  local n k
  [ -f "$zs_work/join/streams" ] || zs_die "no '$zs_work/join/streams': the plan job has not run"
  n=$(zs_count_items "$zs_work/join/streams")
  for ((k = 0; k < n; k++)); do zs_plans+=("$zs_work/join/stream-$k.plan"); done
}

# zs_join_placed N: placement task N finished (it placed part N into every plan).
zs_join_placed() { [ -f "$zs_work/join/placed/$(zs_part_name "$1")" ]; }

# zs_join_discard: gives up the join made so far (its plans and their temporaries, the
# placement markers, an unverified result), so that the next plan job starts afresh:
# after parts were rebuilt, the placed bytes are stale.
zs_join_discard() {
  local plan
  if [ -d "$zs_work/join" ]; then
    for plan in "$zs_work"/join/*.plan "$zs_work/join/plan"; do
      [ -f "$plan" ] || continue
      "$zs_zrec" -q concat --discard "$plan" || zs_die "cannot discard the join plan '$plan'"
    done
    rm -rf -- "$zs_work/join"
  fi
  rm -rf -- "$zs_work/result"
  rm -f -- "$zs_work/identity" "$zs_work/digest.tmp"
}

# --- publishing: DEST is this build's result, or the build did not succeed ---------------

# zs_identity DIR: what tells this build's result from anything else at DEST, cheaply (a
# digest would read it all): the inode numbers of the directory and of its meta.zr (a
# root: its zrec-root marker, if it has one), which the rename to DEST keeps. Not the
# device number: an NFS client numbers its mounts itself, so it differs between the
# nodes and the submit host. Fails when DIR is no directory.
zs_identity() {
  local files=("$1") ids
  [ -d "$1" ] && [ ! -L "$1" ] || return 1
  if [ -f "$1/meta.zr" ]; then files+=("$1/meta.zr"); elif [ -f "$1/zrec-root" ]; then files+=("$1/zrec-root"); fi
  ids=$(stat -c %i -- "${files[@]}" 2>/dev/null) || return 1
  printf '%s\n' "${ids//$'\n'/:}"
}

# zs_dest_is_result: DEST is the result this build published (its identity recorded).
zs_dest_is_result() {
  local got
  [ -f "$zs_work/identity" ] && got=$(zs_identity "$zs_dest") && [ "$got" = "$(cat -- "$zs_work/identity")" ]
}

# zs_dest_taken: the error for a DEST that exists and is not this build's result; names
# where the result is kept, if it is.
zs_dest_taken() {
  local kept=""
  [ -d "$zs_work/result" ] &&
    kept="; the verified result is kept in '$zs_work/result' and the parts in '$zs_work/parts': move '$zs_dest' away and run zrec-slurm-build again with --resume"
  zs_die "'$zs_dest' exists and is not the store this build published; not overwriting it$kept"
}

# zs_move_into_place RESULT: renames RESULT to DEST, never over anything there (mv -n:
# renameat2 RENAME_NOREPLACE, where rename(2) alone would replace an empty directory),
# after recording RESULT's identity; fails loudly (zs_dest_taken) when DEST appeared
# meanwhile, with RESULT and the parts kept. The caller writes the digest (the record
# that the build succeeded) only after this returned.
zs_move_into_place() {
  local id
  id=$(zs_identity "$1") || zs_die "'$1' is not a directory; not publishing it"
  printf '%s\n' "$id" >"$zs_work/identity.tmp"
  mv -- "$zs_work/identity.tmp" "$zs_work/identity"
  local err
  err=$(mv -n -T -- "$1" "$zs_dest" 2>&1) || true
  if [ -e "$zs_dest" ] || [ -L "$zs_dest" ]; then
    zs_dest_is_result || zs_dest_taken
  else
    zs_die "cannot rename '$1' to '$zs_dest': ${err:-mv failed}; the result and the parts are kept"
  fi
}
