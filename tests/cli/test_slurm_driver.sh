#!/usr/bin/env bash
# zrec-slurm-build on a submit host whose controller cannot be reached (issue 34,
# problem 7): sbatch is present, `scontrol show config` fails. The driver used to exit 1
# with no output (the failing scontrol under pipefail); it must say why in one line,
# exit 1, and submit nothing (no sbatch call, no work directory). No live cluster: a
# fake sbatch and scontrol on PATH.
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
finish
