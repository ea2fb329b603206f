#!/usr/bin/env bash
# Sets up, builds, and runs zrec on a built-in sample: a Dense image-like store and a
# Ragged token store, filled from NumPy, inspected and read back.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build >/dev/null
zrec=$PWD/build/zrec
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "\$ zrec create --dense --dtype '|u1' --shape 3,32,32 images/"
"$zrec" create --dense --dtype '|u1' --shape 3,32,32 images/
/usr/bin/python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(0)
y, x = np.mgrid[0:32, 0:32]
imgs = np.stack([((x * (i % 7 + 1) + y * c) % 256).astype(np.uint8) for i in range(256) for c in (1, 2, 3)])
np.save("images.npy", imgs.reshape(256, 3, 32, 32))
PY
echo "\$ zrec append-npy images/ images.npy"
"$zrec" append-npy images/ images.npy

echo "\$ zrec create --ragged --dtype '<i4' --ndim 1 tokens/"
"$zrec" create --ragged --dtype '<i4' --ndim 1 tokens/
echo "\$ python3 gen_tokens.py | zrec append-npy tokens/ -"
/usr/bin/python3 -c '
import sys, numpy as np
rng = np.random.default_rng(1)
for n in rng.integers(1, 64, size=1000):
    np.save(sys.stdout.buffer, (rng.zipf(1.3, size=n) % 50000).astype("<i4"))
' | "$zrec" append-npy tokens/ -

echo "\$ zrec info images/"
"$zrec" info images/
echo "\$ zrec cat tokens/ 0:3 --format jsonl"
"$zrec" cat tokens/ 0:3 --format jsonl
echo "\$ zrec cat images/ ::64 | python3 -c 'import numpy, sys; print(numpy.load(sys.stdin.buffer).shape)'"
"$zrec" cat images/ ::64 | /usr/bin/python3 -c 'import io, numpy, sys; print(numpy.load(io.BytesIO(sys.stdin.buffer.read())).shape)'
