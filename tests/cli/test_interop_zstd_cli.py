#!/usr/bin/python3
"""Interoperability: the records of zstd and zstd_dict stores zrec writes are plain zstd
frames that the real `zstd` command-line tool decodes (docs/format.md §5, §6, §10).

For each store, the RecordLoc table is read from meta.zr with struct (no zrec code, no
zrecord_ref reader), every stored record is cut out of its data_{i % S}.zr, and:
  - `zstd -l` sees exactly one frame per record;
  - `zstd -d` (with `-D dict.zr` for zstd_dict) decompresses it to exactly the logical
    record built from the NumPy input, including the Ragged u64 shape prefix;
  - `zstd -d` of a whole data file gives the shard's records in physical order;
  - the frame header carries the content size (and, if any, the dictionary's ID);
  - zstd_dict frames do not decode without the dictionary (trained dictionaries);
  - frames match `zstd -3` (zstd) / `zstd -15 -D dict.zr` (zstd_dict) where byte-identical
    output is expected, and never match another level's output instead.

Run by CTest with $ZREC set to the zrec binary.
"""

import os
import re
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zrecord_ref import parse_frame_header  # noqa: E402  (header bytes only)
from interop_harness import CheckFailed, Suite, check, npy_bytes, run, stack  # noqa: E402

suite = Suite("interop_zstd_cli")

CODEC_IDS = {"raw": 0, "zstd": 1, "zstd_dict": 2}
LEVELS = {"zstd": 3, "zstd_dict": 15}


def zstd(*args, input=None, expect_ok=True):
    r = subprocess.run(["zstd", *map(str, args)], input=input, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if expect_ok and r.returncode != 0:
        raise CheckFailed(f"`zstd {' '.join(map(str, args))}` exited {r.returncode}: "
                          f"{r.stderr.decode(errors='replace').strip()}")
    return r


def read_meta(store):
    """(length, shards, codec id, tails, [(offset, phys, logic)]) straight from meta.zr."""
    with open(os.path.join(store, "meta.zr"), "rb") as f:
        meta = f.read()
    length, _schema_length, shards, codec = struct.unpack_from("<QHBB", meta, 0)
    tails = struct.unpack_from(f"<{shards}Q", meta, 16)
    locs = [struct.unpack_from("<QII", meta, 4096 + 16 * i) for i in range(length)]
    return length, shards, codec, tails, locs


def logical(arr, dense):
    arr = np.ascontiguousarray(arr)
    prefix = b"" if dense else struct.pack(f"<{arr.ndim}Q", *arr.shape)
    return prefix + arr.tobytes()


def train_dict(root):
    samples_dir = os.path.join(root, "samples")
    os.mkdir(samples_dir)
    rng = np.random.default_rng(77)
    for i in range(200):
        with open(os.path.join(samples_dir, f"s{i}"), "wb") as f:
            f.write(np.repeat(rng.integers(0, 8, 400), 2).astype("<u2").tobytes())
    path = os.path.join(root, "trained.dict")
    zstd("--train", "-q", "--maxdict=8192", "-o", path,
         *[os.path.join(samples_dir, f"s{i}") for i in range(200)])
    return path


def frame_counts(paths):
    """Frames per file from one `zstd -l` over all of them."""
    out = zstd("-l", *paths).stdout.decode()
    counts = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+(\d+)\s+.*\s(\S+)$", line)
        if m and m.group(3) in paths:
            counts[m.group(3)] = int(m.group(1))
    return counts


def store_case(name, *, dense, dtype, shape_arg, records, codec, shards, dict_kind=None):
    root = suite.tempdir(name)
    store = os.path.join(root, "store")
    create = ["create", "--dtype", dtype, "--codec", codec, "--shards", shards]
    create += ["--dense", "--shape", shape_arg] if dense else ["--ragged", "--ndim", shape_arg]
    dict_path = None
    if codec == "zstd_dict":
        if dict_kind == "trained":
            dict_path = train_dict(root)
        else:  # raw-content dictionary: no magic, any bytes (docs/format.md §10)
            dict_path = os.path.join(root, "content.dict")
            with open(dict_path, "wb") as f:
                f.write(b"".join(np.arange(k, k + 32, dtype="<u2").tobytes()
                                 for k in range(0, 4096, 32)))
        create += ["--dict", dict_path]
    run(create + [store])
    arrays = [stack(records, records[0].shape, np.dtype(dtype))] if dense else records
    half = max(1, len(arrays) // 2)
    run(["append-npy", store, "-"], input=npy_bytes(*arrays[:half]))
    if arrays[half:]:
        run(["append-npy", store, "-"], input=npy_bytes(*arrays[half:]))

    length, s, codec_id, tails, locs = read_meta(store)
    check((length, s, codec_id) == (len(records), shards, CODEC_IDS[codec]),
          f"meta.zr: length {length}, shards {s}, codec {codec_id}")
    want = [logical(r, dense) for r in records]
    dict_args = ["-D", os.path.join(store, "dict.zr")] if codec == "zstd_dict" else []
    if dict_path:
        with open(dict_path, "rb") as a, open(os.path.join(store, "dict.zr"), "rb") as b:
            check(a.read() == b.read(), "dict.zr differs from the --dict file")

    # Cut every stored record out of its shard file.
    shard_bytes = []
    for k in range(shards):
        with open(os.path.join(store, f"data_{k}.zr"), "rb") as f:
            shard_bytes.append(f.read())
    frames_dir, plain_dir, dec_dir, ref_dir = (os.path.join(root, d) for d in
                                               ("frames", "plain", "dec", "ref"))
    for d in (frames_dir, plain_dir, dec_dir, ref_dir):
        os.mkdir(d)  # zstd 1.5.4 crashes on a missing --output-dir-flat
    frame_paths, plain_paths, frames = [], [], []
    for i, (off, phys, logic) in enumerate(locs):
        check(logic == len(want[i]), f"record {i}: logic_length {logic}, expected {len(want[i])}")
        check(off + phys <= tails[i % shards], f"record {i}: past the tail of data_{i % shards}.zr")
        frame = shard_bytes[i % shards][off:off + phys]
        frames.append(frame)
        p = os.path.join(frames_dir, f"r{i}.zst")
        with open(p, "wb") as f:
            f.write(frame)
        frame_paths.append(p)
        q = os.path.join(plain_dir, f"r{i}")
        with open(q, "wb") as f:
            f.write(want[i])
        plain_paths.append(q)

    # One frame per record, as `zstd -l` counts them.
    counts = frame_counts(frame_paths)
    for i, p in enumerate(frame_paths):
        check(counts.get(p) == 1, f"record {i}: `zstd -l` counts {counts.get(p)} frames, not 1")

    # Every record decompresses alone, with the real CLI, to exactly its logical bytes.
    zstd("-d", "-q", *dict_args, "--output-dir-flat", dec_dir, *frame_paths)
    for i in range(len(records)):
        with open(os.path.join(dec_dir, f"r{i}"), "rb") as f:
            got = f.read()
        check(got == want[i], f"record {i}: `zstd -d` gives {len(got)} bytes "
                              f"{got[:16].hex()}..., expected {len(want[i])} bytes "
                              f"{want[i][:16].hex()}...")

    # A whole shard file is its records' frames back to back, in physical order.
    for k in range(shards):
        ids = sorted(range(k, len(records), shards), key=lambda i: locs[i][0])
        if not ids:
            continue
        got = zstd("-d", "-c", "-q", *dict_args, os.path.join(store, f"data_{k}.zr")).stdout
        check(got == b"".join(want[i] for i in ids),
              f"`zstd -d data_{k}.zr` is not the shard's records in physical order")

    # Frame headers: content size always; a dictionary ID, if any, is the dictionary's.
    dict_id = None
    if codec == "zstd_dict":
        with open(os.path.join(store, "dict.zr"), "rb") as f:
            head = f.read(8)
        if struct.unpack_from("<I", head)[0] == 0xEC30A437:
            dict_id = struct.unpack_from("<I", head, 4)[0]
    headers = [parse_frame_header(fr) for fr in frames]
    for i, h in enumerate(headers):
        check(h["content_size"] == len(want[i]),
              f"record {i}: frame content size {h['content_size']}, expected {len(want[i])}")
        if h["dict_id"] not in (None, 0):
            check(codec == "zstd_dict" and h["dict_id"] == dict_id,
                  f"record {i}: frame names dictionary {h['dict_id']}, dict.zr is {dict_id}")

    # Trained-dictionary frames need the dictionary.
    if dict_kind == "trained":
        failures = sum(zstd("-d", "-c", "-q", p, expect_ok=False).returncode != 0
                       for p in frame_paths[:8])
        check(failures > 0, "zstd_dict frames decode without the dictionary")

    # Level: frames are byte-identical to the CLI's at the codec's level with the same
    # frame flags (same libzstd), and never identical to another level's output instead.
    h0 = headers[0]
    flags = ["--check" if h0["checksum"] else "--no-check"]
    if codec == "zstd_dict" and h0["dict_id"] in (None, 0):
        flags.append("--no-dictID")
    level = LEVELS[codec]
    outputs = {}
    for lv in sorted({level, 1, 3, 9, 15, 19}):
        out_dir = os.path.join(ref_dir, str(lv))
        os.mkdir(out_dir)
        zstd(f"-{lv}", "-q", *flags, *dict_args, "--output-dir-flat", out_dir, *plain_paths)
        outputs[lv] = []
        for i in range(len(records)):
            with open(os.path.join(out_dir, f"r{i}.zst"), "rb") as f:
                outputs[lv].append(f.read())
    same = sum(frames[i] == outputs[level][i] for i in range(len(records)))
    for i in range(len(records)):
        if frames[i] == outputs[level][i]:
            continue
        other = [lv for lv in outputs if lv != level and outputs[lv][i] == frames[i]]
        if other:
            raise CheckFailed(f"record {i}: frame equals `zstd -{other[0]}` output, "
                              f"not `zstd -{level}`")
    print(f"     {name}: {same}/{len(records)} frames byte-identical to `zstd -{level}`")


def register():
    rng = np.random.default_rng(2024)
    cases = []
    # Dense: several dtypes and shapes; compressible and random bytes.
    dense_specs = [("<i4", "4,4", (4, 4)), (">f8", "3", (3,)), ("|u1", "scalar", ()),
                   ("<U3", "2,2", (2, 2)), (">c8", "5", (5,)), ("|b1", "16", (16,))]
    ragged_specs = [("<i2", 1), ("|u1", 1), (">f4", 2), ("<M8[ns]", 1), ("|S5", 3), ("<u8", 2)]
    combos = [("zstd", 1, None), ("zstd", 4, None), ("zstd_dict", 3, "trained"),
              ("zstd_dict", 7, "content"), ("zstd", 255, None), ("zstd_dict", 1, "trained")]

    def values(dt, shape, k):
        n = int(np.prod(shape, dtype=np.int64))
        if dt.kind == "b":
            return rng.integers(0, 2, n).astype(dt).reshape(shape)
        if dt.kind == "U":
            return rng.choice(np.array(["ab", "abc", "b", "", "xyz", "\u00e9t\u00e9"], dtype=dt),
                              n).reshape(shape)
        if dt.kind == "S":
            return rng.choice(np.array([b"hello", b"hi", b"\x00\x01", b"zzzzz"], dtype=dt),
                              n).reshape(shape)
        if k % 3 == 2:  # incompressible
            raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8)
        else:
            raw = np.repeat(rng.integers(0, 5, n * dt.itemsize // 4 + 1, dtype=np.uint8), 4)
            raw = raw[:n * dt.itemsize]
        return np.frombuffer(raw.tobytes(), dtype=dt).reshape(shape).copy()

    for k, (dtype, shape_arg, shape) in enumerate(dense_specs):
        codec, shards, dict_kind = combos[k % len(combos)]
        dt = np.dtype(dtype)
        n = 300 if shards == 255 else 40
        records = [values(dt, shape, i) for i in range(n)]
        cases.append((f"dense {dtype} {codec}{'/' + dict_kind if dict_kind else ''} shards={shards}",
                      dict(dense=True, dtype=dtype, shape_arg=shape_arg, records=records,
                           codec=codec, shards=shards, dict_kind=dict_kind)))
    for k, (dtype, ndim) in enumerate(ragged_specs):
        codec, shards, dict_kind = combos[(k + 2) % len(combos)]
        dt = np.dtype(dtype)
        n = 300 if shards == 255 else 40
        records = [values(dt, tuple(int(d) for d in rng.integers(1, 7, ndim)), i)
                   for i in range(n)]
        if k == 1:  # multi-block frames: a large compressible and a large random record
            records[3] = np.repeat(rng.integers(0, 3, 100_000, dtype=np.uint8), 3)
            records[4] = rng.integers(0, 256, 200_000, dtype=np.uint8)
        cases.append((f"ragged {dtype} ndim={ndim} {codec}{'/' + dict_kind if dict_kind else ''} "
                      f"shards={shards}",
                      dict(dense=False, dtype=dtype, shape_arg=ndim, records=records,
                           codec=codec, shards=shards, dict_kind=dict_kind)))
    for name, kwargs in cases:
        suite.add(name, store_case, name, **kwargs)


register()

if __name__ == "__main__":
    suite.main()
