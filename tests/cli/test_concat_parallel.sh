#!/usr/bin/env bash
# The scale-out pattern of docs/compression.md, locally: GNU parallel builds four parts
# concurrently (create + append-npy, one process each, sharing one trained dictionary),
# `zrec concat` joins them with frames copied verbatim, and the result equals a one-shot
# build of the same records: same digest, same `cat` bytes, and the concat's counters
# say every frame was copied and none re-encoded.
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_concat_parallel.sh  (CTest sets ZREC).
# Needs: GNU parallel (Debian package parallel), python3-numpy.
set -u

source "$(dirname "$0")/testlib.sh"
export ZREC=$zrec
if ! command -v parallel >/dev/null 2>&1; then
  fail "GNU parallel is not installed (scripts/setup.sh installs the Debian package parallel)"
  finish
fi

# Four inputs of token-like Ragged records, as a data pipeline would shard them.
/usr/bin/python3 - "$tmp" <<'PY'
import sys
import numpy as np
root = sys.argv[1]
for p in range(4):
    rng = np.random.default_rng(100 + p)
    with open("%s/in-%d.npy" % (root, p), "wb") as f:
        for _ in range(300):
            np.save(f, (rng.zipf(1.4, int(rng.integers(30, 250))) % 30000).astype("<i4"))
PY

# One dictionary for all parts, trained on a sample of the inputs (any one part would do).
if "$zrec" train-dict --for-ragged "$tmp"/in-0.npy "$tmp"/in-1.npy -o "$tmp/dict.zr" --size 16K --tier small \
  2>"$tmp/train.err"; then ok; else fail "train-dict: $(cat "$tmp/train.err")"; fi

# The parts, built concurrently: each job is an ordinary create + append-npy.
build_part() {
  "$ZREC" create --ragged --dtype '<i4' --ndim 1 --codec zstd_dict --dict "$2/dict.zr" --shards 2 "$2/part-$1" &&
    "$ZREC" -q append-npy "$2/part-$1" "$2/in-$1.npy"
}
export -f build_part
if parallel --will-cite --halt now,fail=1 -j 4 build_part {} "$tmp" ::: 0 1 2 3 2>"$tmp/parallel.err"; then ok; else
  fail "parallel build: $(cat "$tmp/parallel.err")"
fi

if "$zrec" concat "$tmp"/part-0 "$tmp"/part-1 "$tmp"/part-2 "$tmp"/part-3 "$tmp/all" --shards 4 2>"$tmp/concat.err"; then
  ok
else
  fail "concat: $(cat "$tmp/concat.err")"
fi
if grep -q "1200 frames copied, 0 records re-encoded" "$tmp/concat.err"; then ok; else
  fail "concat did not copy every frame: $(cat "$tmp/concat.err")"
fi

# The one-shot build of the same records, in the same order.
"$zrec" create --ragged --dtype '<i4' --ndim 1 --codec zstd_dict --dict "$tmp/dict.zr" "$tmp/one" &&
  "$zrec" -q append-npy "$tmp/one" "$tmp"/in-0.npy "$tmp"/in-1.npy "$tmp"/in-2.npy "$tmp"/in-3.npy || fail "one-shot build"

d_all=$("$zrec" digest "$tmp/all" | cut -d' ' -f1)
d_one=$("$zrec" digest "$tmp/one" | cut -d' ' -f1)
if [ -n "$d_all" ] && [ "$d_all" = "$d_one" ]; then ok; else fail "digests differ: concat $d_all, one-shot $d_one"; fi
"$zrec" cat --format npy "$tmp/all" >"$tmp/all.npy"
"$zrec" cat --format npy "$tmp/one" >"$tmp/one.npy"
if [ -s "$tmp/all.npy" ] && cmp -s "$tmp/all.npy" "$tmp/one.npy"; then ok; else fail "records differ from the one-shot build"; fi
if cmp -s "$tmp/all/dict.zr" "$tmp/dict.zr"; then ok; else fail "the concatenated store's dictionary differs"; fi

finish
