# A private single-node Slurm cluster on localhost, for tests (sourced by test_slurm.sh).
#
#   source tests/cli/slurm_cluster.sh
#   slurm_test_begin        # a test script's common start: cluster_root, traps, $zrec, $build
#   cluster_start DIR       # DIR: an empty private directory; exports SLURM_CONF
#   cluster_wait_jobs T ID...   # waits (at most T s) until the jobs have left the queue
#   cluster_job_state ID    # final state from the job completion log: COMPLETED, FAILED, CANCELLED...
#   cluster_stop            # kills the daemons this file started (idempotent)
#
# Everything lives under DIR: slurm.conf, the munge key and socket, spool, state and logs.
# It needs root (slurmd starts jobs as their user; munged runs as the munge user) and
# the Debian packages slurmd, slurmctld, slurm-client and munge (scripts/setup.sh).
# Facts learned the hard way on a container without systemd:
# - munged refuses a socket directory that others may write to: the directory is 0755,
#   owned by munge, and so is every directory above it up to a sticky /tmp.
# - proctrack/linuxproc and task/none, no cgroup plugins (no systemd, no cgroup v2 rights).
# - NodeHostname=localhost and NodeAddr=127.0.0.1, so nothing resolves the host name.
# - DependencyParameters=kill_invalid_depend: a job whose afterok dependency can never be
#   met is cancelled instead of pending forever.
# - MinJobAge small (finished jobs leave slurmctld's memory after it), so a final state
#   is read from the job completion log (jobcomp/filetxt), not from scontrol.
# - Every wait is bounded by a deadline; nothing here can hang a test.

cluster_dir=""
cluster_pids=()
cluster_node=zrecnode
cluster_ctld_port=6817
cluster_slurmd_port=6818

cluster_log() { echo "slurm_cluster: $*" >&2; }

# The common start of a live-cluster test script (after testlib.sh): the cluster's own
# directory (munged must reach it, so it cannot be inside $tmp, which is 0700), cleanup and
# signal exits, the zrec under test as an absolute path, the Slurm driver, the start time.
slurm_test_begin() {
  cluster_root=$(mktemp -d)
  trap 'cluster_stop; rm -rf "$cluster_root"; chmod -R u+rwX "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  require_zrec
  zrec=$(readlink -f "$zrec")
  build=$root/scripts/slurm/zrec-slurm-build
  t_start=$SECONDS
}

# Whether something listens on a TCP port of this machine (state 0A in /proc/net/tcp*;
# connections of an earlier run in TIME-WAIT do not count).
cluster_port_busy() {
  local hex
  hex=$(printf '%04X' "$1")
  awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

cluster_start() {
  cluster_dir=$1
  local d=$cluster_dir p
  for cmd in munged slurmctld slurmd sbatch sinfo squeue scontrol scancel setpriv; do
    if ! command -v "$cmd" >/dev/null 2>&1; then
      cluster_log "'$cmd' not found: install the Debian packages slurmd slurmctld slurm-client munge (scripts/setup.sh)"
      return 1
    fi
  done
  if [ "$(id -u)" -ne 0 ]; then
    cluster_log "needs root (slurmd runs jobs as their user, munged as the munge user)"
    return 1
  fi
  if ! id munge >/dev/null 2>&1; then
    cluster_log "no 'munge' user (the munge package creates it)"
    return 1
  fi
  for p in "$cluster_ctld_port" "$cluster_slurmd_port"; do
    if cluster_port_busy "$p"; then
      cluster_log "TCP port $p is in use (another Slurm daemon?); this test needs ports $cluster_ctld_port and $cluster_slurmd_port free"
      return 1
    fi
  done

  chmod 0755 "$d"
  # munged (user munge) must reach its socket: every directory above DIR must let others in.
  p=$(dirname "$(readlink -f "$d")")
  while [ "$p" != / ]; do
    if [ "$(( $(stat -c '0%a' "$p") & 1 ))" = 0 ]; then
      cluster_log "'$p' (above '$d') is closed to other users, so munged cannot reach its socket; put the cluster directory elsewhere (mktemp -d)"
      return 1
    fi
    p=$(dirname "$p")
  done
  mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log"
  chmod 0755 "$d/munge"
  head -c 1024 /dev/urandom >"$d/munge/munge.key"
  chown -R munge:munge "$d/munge"
  chmod 0400 "$d/munge/munge.key"

  local ncpu
  ncpu=$(nproc)
  [ "$ncpu" -lt 2 ] && ncpu=2
  cat >"$d/slurm.conf" <<EOF
ClusterName=zrectest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$cluster_ctld_port
SlurmdPort=$cluster_slurmd_port
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket.2
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$d/log/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=2
MaxArraySize=100
DependencyParameters=kill_invalid_depend
SlurmdParameters=config_overrides
SlurmctldTimeout=10
SlurmdTimeout=10
NodeName=$cluster_node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$ncpu State=UNKNOWN
PartitionName=zrec Nodes=$cluster_node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$d/slurm.conf

  setpriv --reuid=munge --regid=munge --init-groups -- munged -F --socket="$d/munge/munge.socket.2" \
    --key-file="$d/munge/munge.key" --pid-file="$d/munge/munged.pid" \
    --log-file="$d/munge/munged.log" --seed-file="$d/munge/munged.seed" >"$d/log/munged.out" 2>&1 &
  cluster_pids+=($!)
  if ! cluster_until 10 test -S "$d/munge/munge.socket.2"; then
    cluster_log "munged did not start: $(tail -3 "$d/munge/munged.log" "$d/log/munged.out" 2>/dev/null)"
    return 1
  fi

  slurmctld -D -i -f "$d/slurm.conf" >"$d/log/slurmctld.out" 2>&1 &
  cluster_pids+=($!)
  slurmd -D -N "$cluster_node" -f "$d/slurm.conf" >"$d/log/slurmd.out" 2>&1 &
  cluster_pids+=($!)
  if ! cluster_until 30 cluster_node_idle; then
    cluster_log "the node did not become idle within 30 s: $(sinfo -h -N -o '%N %T %E' 2>&1)"
    tail -5 "$d/log/slurmctld.log" "$d/log/slurmd.log" >&2 2>/dev/null
    return 1
  fi
}

cluster_node_idle() {
  [ "$(timeout 5 sinfo -h -N -n "$cluster_node" -o %T 2>/dev/null)" = idle ]
}

# cluster_until SECONDS command...: runs the command every 0.1 s until it succeeds (0)
# or the deadline passes (1).
cluster_until() {
  local deadline=$((SECONDS + $1))
  shift
  while ! "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

cluster_jobs_gone() {
  local out
  out=$(timeout 5 squeue -h -o %i -j "$(IFS=,; echo "$*")" 2>/dev/null) || return 1
  [ -z "$out" ]
}

cluster_jobs_gone_all() { [ -z "$(timeout 5 squeue -h -o %i 2>&1)" ]; }

# cluster_wait_jobs SECONDS JOBID...: until no job (or array task) of these IDs is queued or running.
cluster_wait_jobs() {
  local t=$1
  shift
  cluster_until "$t" cluster_jobs_gone "$@"
}

# The final state of a job (for an array job: of each task, one per line, in task order),
# as the job completion log recorded it.
cluster_job_state() {
  local id=$1
  [ -f "$cluster_dir/log/jobcomp.log" ] || return 0
  grep -E "(^JobId=$id | ArrayJobId=$id )" "$cluster_dir/log/jobcomp.log" |
    sed -E 's/.*JobState=([A-Z_]+).*/\1/'
}

# The processes of this cluster's jobs: slurmstepd (started by our slurmd, so its
# environment names our slurm.conf) and the job scripts and commands it runs (our
# SLURM_CONF and a SLURM_JOB_ID, since sbatch passed the submitter's environment on).
cluster_job_pids() {
  local pid env conf="SLURM_CONF=$cluster_dir/slurm.conf"
  for env in /proc/[0-9]*/environ; do
    pid=${env#/proc/}
    pid=${pid%/environ}
    [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
    grep -qzx -- "$conf" "$env" 2>/dev/null || continue
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] || grep -qz '^SLURM_JOB_ID=' "$env" 2>/dev/null; then
      echo "$pid"
    fi
  done
}
cluster_no_job_pids() { [ -z "$(cluster_job_pids)" ]; }

cluster_stop() {
  local p i
  [ ${#cluster_pids[@]} -eq 0 ] && return 0
  # Jobs first, while slurmd can still tell their steps to end and hear back.
  timeout 10 scancel --partition zrec >/dev/null 2>&1
  cluster_until 15 cluster_jobs_gone_all
  cluster_until 10 cluster_no_job_pids
  # Then the daemons, newest first.
  for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${cluster_pids[$i]}" 2>/dev/null
  done
  for p in "${cluster_pids[@]}"; do
    timeout 10 tail --pid="$p" -f /dev/null 2>/dev/null || kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  cluster_pids=()
  # A step that outlived slurmd waits for it forever (and ignores SIGTERM): kill what is
  # left of our jobs, by PID.
  for p in $(cluster_job_pids); do
    cluster_log "killing leftover job process $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null))"
    kill -KILL "$p" 2>/dev/null
  done
  cluster_until 10 cluster_no_job_pids
  [ -n "${ZREC_SLURM_TIMELINE:-}" ] && [ -f "$cluster_dir/log/jobcomp.log" ] &&
    sed -E 's/^JobId=([0-9]+) .* Name=([^ ]+) JobState=([A-Z]+) .*StartTime=([^ ]+) EndTime=([^ ]+) .*SubmitTime=([^ ]+) EligibleTime=([^ ]+) .*/\1 \2 \3 submit \6 eligible \7 start \4 end \5/' "$cluster_dir/log/jobcomp.log" >&2
  return 0
}
