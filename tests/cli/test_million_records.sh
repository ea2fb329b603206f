#!/usr/bin/env bash
# A million small records, Dense and Ragged (--split-axis0), appended and read back exactly.
set -euo pipefail
ZREC=${ZREC:-build/zrec}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() {  # name, command...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}

/usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(3)
np.save(f"{d}/dense.npy", rng.integers(0, 2**31 - 1, size=(1_000_000, 2), dtype="<i4"))
np.save(f"{d}/ragged.npy", rng.integers(0, 255, size=(1_000_000, 3), dtype="u1"))
PY

dense_ok() {
  "$ZREC" create --dense --dtype '<i4' --shape 2 --shards 7 "$tmp/d" &&
  "$ZREC" -q append-npy "$tmp/d" "$tmp/dense.npy" &&
  "$ZREC" cat "$tmp/d" -o "$tmp/dense_out.npy" &&
  /usr/bin/python3 -c "
import numpy as np, sys
a = np.load('$tmp/dense.npy'); b = np.load('$tmp/dense_out.npy')
sys.exit(0 if a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes() else 1)"
}
ragged_ok() {
  "$ZREC" create --ragged --dtype '|u1' --ndim 1 --codec raw "$tmp/r" &&
  "$ZREC" -q append-npy --split-axis0 "$tmp/r" "$tmp/ragged.npy" &&
  "$ZREC" cat "$tmp/r" --format raw -o "$tmp/ragged_out.raw" &&
  [ "$("$ZREC" info --json "$tmp/r" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["length"])')" = 1000000 ] &&
  /usr/bin/python3 -c "
import numpy as np, sys
a = np.load('$tmp/ragged.npy')
sys.exit(0 if open('$tmp/ragged_out.raw', 'rb').read() == a.tobytes() else 1)"
}
check "a million Dense <i4 records round trip" dense_ok
check "a million Ragged |u1 records round trip (--split-axis0)" ragged_ok
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
