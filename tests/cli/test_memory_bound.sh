#!/usr/bin/env bash
# Memory bound of streaming append and cat (docs/format.md section 9: bounded windows).
#
# Streams ~400 MB of Dense |u1 (3,224,224) records from a Python generator into
# `zrec append-npy STORE -` (nothing that size is written to disk except the store),
# then `zrec cat --format raw STORE` into sha256sum, for codecs zstd and raw. Asserts:
#   - the input is more than 4x the 64 MiB window budget,
#   - peak RSS of each zrec process is below 200 MiB (not checked when ZREC_SANITIZED=1),
#   - the bytes cat returns hash the same as the bytes the generator produced.
# Peak RSS comes from /usr/bin/time -f %M (Debian package "time"); without it, from
# python3's resource.getrusage(RUSAGE_CHILDREN).
#
# Needs: ZREC (path of the zrec binary), /usr/bin/python3 with numpy.
set -uo pipefail

ZREC=${ZREC:?set ZREC to the zrec binary}
PY=/usr/bin/python3
RECORDS=${ZREC_MEMTEST_RECORDS:-2660}     # 2660 * 150528 B = 400.4 MB
RECORD_BYTES=$((3 * 224 * 224))
WINDOW_BYTES=$((64 << 20))                 # zrec's default window budget
LIMIT_KIB=$((200 * 1024))

# Each write lane keeps a ~4 MiB chunk scratch on top of the window, so peak RSS grows
# with the lane count (~74 MiB at 1 lane, ~144 MiB at 16, ~250 MiB at 48 for zstd).
# Keep the measured figure comparable across machines: at most 16 lanes.
if [[ -z ${ZREC_THREADS:-} ]] && (($(nproc) > 16)); then
  export ZREC_THREADS=16
  echo "note: $(nproc) CPUs; running zrec with ZREC_THREADS=16"
fi
echo "CPUs: $(nproc), ZREC_THREADS=${ZREC_THREADS:-default}"

passed=0
failed=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zrec-memory-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL $*"; failed=$((failed + 1)); }
ok() { echo "ok   $*"; passed=$((passed + 1)); }

# Runs "$@" and writes its peak RSS in KiB to the file named by $1.
if [[ -x /usr/bin/time ]]; then
  peak_rss() { local out=$1; shift; /usr/bin/time -f %M -o "$out" "$@"; }
else
  echo "note: /usr/bin/time missing (apt-get install time); using python3 getrusage"
  peak_rss() {
    local out=$1; shift
    "$PY" -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$out" "$@"
  }
fi

# The generator: one .npy array of shape (RECORDS, 3, 224, 224) on stdout, produced
# block by block; the sha256 of the payload goes to argv[3].
cat >"$tmp/gen.py" <<'EOF'
import hashlib, io, sys
import numpy as np
records, seed, hash_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
shape = (3, 224, 224)
out = sys.stdout.buffer
header = io.BytesIO()
np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False, "shape": (records,) + shape})
out.write(header.getvalue())
rng = np.random.default_rng(seed)
# Image-like: a noisy base record (zstd shrinks it ~12%), each record a little different.
base = (rng.integers(0, 24, size=shape, dtype=np.uint8) + np.arange(224, dtype=np.uint8)[None, None, :] // 2)
h = hashlib.sha256()
for first in range(0, records, 32):
    n = min(32, records - first)
    block = np.repeat(base[None], n, axis=0)
    flat = block.reshape(n, -1)
    flat[:, :64] = (np.arange(first, first + n)[:, None] * 7 + np.arange(64)) % 256
    flat[:, -64:] = rng.integers(0, 256, size=(n, 64), dtype=np.uint8)
    b = block.tobytes()
    h.update(b)
    out.write(b)
out.flush()
open(hash_path, "w").write(h.hexdigest() + "\n")
EOF

input_bytes=$((RECORDS * RECORD_BYTES))
ratio=$(awk -v a="$input_bytes" -v b="$WINDOW_BYTES" 'BEGIN { printf "%.2f", a / b }')
if awk -v r="$ratio" 'BEGIN { exit !(r > 4) }'; then
  ok "input is $input_bytes bytes = ${ratio}x the $WINDOW_BYTES-byte window budget"
else
  fail "input is only ${ratio}x the window budget (need > 4x)"
fi

for codec in zstd raw; do
  store="$tmp/store_$codec"
  if ! "$ZREC" create --dense --dtype '|u1' --shape 3,224,224 --codec "$codec" --shards 4 "$store"; then
    fail "$codec: create"
    continue
  fi

  start=$(date +%s.%N)
  "$PY" "$tmp/gen.py" "$RECORDS" 7 "$tmp/src_$codec.sha" |
    peak_rss "$tmp/rss_append_$codec" "$ZREC" -q append-npy "$store" - 2>"$tmp/err"
  st=("${PIPESTATUS[@]}")
  append_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  if [[ ${st[0]} != 0 || ${st[1]} != 0 ]]; then
    fail "$codec: append-npy failed (generator ${st[0]}, zrec ${st[1]}): $(cat "$tmp/err")"
    continue
  fi

  length=$("$ZREC" info --json "$store" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["length"])')
  payload=$(du -sb "$store" | cut -f1)
  if [[ $length == "$RECORDS" ]]; then
    ok "$codec: store holds $length records ($payload bytes on disk)"
  else
    fail "$codec: store holds $length records, expected $RECORDS"
  fi

  start=$(date +%s.%N)
  peak_rss "$tmp/rss_cat_$codec" "$ZREC" cat --format raw "$store" 2>"$tmp/err" | sha256sum >"$tmp/cat_$codec.sha"
  st=("${PIPESTATUS[@]}")
  cat_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  if [[ ${st[0]} != 0 ]]; then
    fail "$codec: cat failed: $(cat "$tmp/err")"
    continue
  fi
  src_hash=$(cut -d' ' -f1 "$tmp/src_$codec.sha")
  cat_hash=$(cut -d' ' -f1 "$tmp/cat_$codec.sha")
  if [[ $src_hash == "$cat_hash" ]]; then
    ok "$codec: cat returns exactly the streamed bytes (sha256 $cat_hash)"
  else
    fail "$codec: cat output sha256 $cat_hash != source $src_hash"
  fi

  for op in append cat; do
    if [[ ${ZREC_SANITIZED:-0} == 1 ]]; then
      echo "skip $codec: $op peak RSS (ASan's shadow memory inflates it)"
      continue
    fi
    rss=$(tail -n1 "$tmp/rss_${op}_$codec")
    secs=$append_s
    [[ $op == cat ]] && secs=$cat_s
    mib=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
    if [[ $rss =~ ^[0-9]+$ ]] && ((rss < LIMIT_KIB)); then
      ok "$codec: $op peak RSS $mib MiB ($rss KiB) < 200 MiB, ${secs} s"
    else
      fail "$codec: $op peak RSS '$rss' KiB is not below 200 MiB"
    fi
  done
  rm -rf "$store"
done

echo "$passed passed, $failed failed"
((failed == 0))
