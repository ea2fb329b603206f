#!/usr/bin/python3
"""train-dict, recompress, concat and digest through the CLI.

- recompress between every pair of codecs (raw, zstd, zstd_dict) with shard changes:
  same digest, same `cat` bytes, and frames copied exactly when codec and dictionary
  agree (the summary line's "N frames copied, M records re-encoded" counters).
- concat of 3 parts (one in another codec) equals a one-shot build of the same records.
- `zrec digest` equals the documented definition recomputed here with hashlib, and
  `--per-record` prints each record's SHA-256.
- train-dict: same input and seed give the same bytes; a .npy source gives the same
  dictionary as a store built from it (the exact logical records, Ragged shape prefix
  included); too few records or bytes fail with the reason; a thin sample warns.
- Errors: schema mismatch, DST exists, --dict with a non-dict codec, a malformed SRC:
  a clear message, DST absent, no temporary left, SRC byte-for-byte unchanged.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)

import cli_helpers  # noqa: E402  (tests/cli/cli_helpers.py)
from cli_helpers import must  # noqa: E402

ZREC = cli_helpers.require_zrec("test_compress_tools")

CODECS = ["raw", "zstd", "zstd_dict"]


def run(args, timeout=120):
    p = subprocess.run([ZREC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def digest(store):
    out, _ = must(["digest", store])
    return out.decode().split()[0]


def cat_bytes(store):
    out, _ = must(["cat", "--format", "npy", store])
    return out


def counters(err):
    m = re.search(r"(\d+) frames copied, (\d+) records re-encoded", err)
    if not m:
        raise AssertionError("no counters in: %s" % err.strip())
    return int(m.group(1)), int(m.group(2))


def hash_tree(store):
    return {name: hashlib.sha256(open(os.path.join(store, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(store))}


def token_arrays(n, seed):
    rng = np.random.default_rng(seed)
    # Token-like: Zipf-distributed ids with a few frequent "words", varying lengths.
    return [(rng.zipf(1.4, int(rng.integers(40, 300))) % 30000).astype("<i4") for _ in range(n)]


def write_stream(path, arrays):
    with open(path, "wb") as f:
        for a in arrays:
            np.save(f, a)
    return path


def make_store(root, name, arrays, codec="zstd", shards=4, dict_file=None, dtype="<i4"):
    store = os.path.join(root, name)
    args = ["create", "--ragged", "--dtype", dtype, "--ndim", "1", "--codec", codec, "--shards", str(shards)]
    if dict_file:
        args += ["--dict", dict_file]
    must(args + [store])
    must(["append-npy", store, write_stream(os.path.join(root, name + ".npy"), arrays)])
    return store


def python_digest(arrays):
    """The digest as docs/compression.md defines it, for Ragged ndim=1 records."""
    dtype = arrays[0].dtype.str
    h = hashlib.sha256(("zrec-digest-v1\ndtype=%s\nndim=1\nragged\nlength=%d\n" % (dtype, len(arrays))).encode())
    per = []
    for a in arrays:
        r = hashlib.sha256(np.array(a.shape, dtype="<u8").tobytes() + a.tobytes()).digest()
        per.append(r.hex())
        h.update(r)
    return h.hexdigest(), per


def no_temporaries(root):
    return [n for n in os.listdir(root) if ".zrec-tmp-" in n]


def test_digest_matches_definition(root):
    arrays = token_arrays(120, 1)
    store = make_store(root, "s", arrays, shards=3)
    want, per = python_digest(arrays)
    if digest(store) != want:
        raise AssertionError("digest %s, want %s" % (digest(store), want))
    out, _ = must(["digest", "--per-record", store])
    if out.decode().splitlines() != ["%d\t%s" % (i, h) for i, h in enumerate(per)]:
        raise AssertionError("--per-record lines differ from hashlib's per-record SHA-256")


def test_recompress_every_codec_pair(root):
    arrays = token_arrays(400, 2)
    base = make_store(root, "base", arrays, codec="zstd", shards=4)
    dict_file = os.path.join(root, "d.zr")
    must(["train-dict", base, "-o", dict_file, "--size", "8K", "--tier", "small"])
    want_digest, _ = python_digest(arrays)
    want_cat = cat_bytes(base)
    srcs = {}
    for codec in CODECS:
        extra = ["--dict", dict_file] if codec == "zstd_dict" else []
        src = os.path.join(root, "src-" + codec)
        must(["recompress", base, src, "--codec", codec, "--shards", "3"] + extra)
        srcs[codec] = src
    for a in CODECS:
        for b in CODECS:
            dst = os.path.join(root, "%s-to-%s" % (a, b))
            extra = ["--dict", dict_file] if b == "zstd_dict" and a != "zstd_dict" else []
            shards = "1" if a != b else "7"
            _, err = must(["recompress", srcs[a], dst, "--codec", b, "--shards", shards] + extra)
            copied, recoded = counters(err)
            want = (400, 0) if a == b else (0, 400)
            if (copied, recoded) != want:
                raise AssertionError("%s -> %s: %d copied, %d re-encoded; want %s" % (a, b, copied, recoded, want))
            if digest(dst) != want_digest:
                raise AssertionError("%s -> %s: digest differs" % (a, b))
            if cat_bytes(dst) != want_cat:
                raise AssertionError("%s -> %s: records differ" % (a, b))
            info, _ = must(["info", "--json", dst])
            if ('"codec":"%s"' % b) not in info.decode().replace(" ", ""):
                raise AssertionError("%s -> %s: info says %s" % (a, b, info))
            shutil.rmtree(dst)
    if no_temporaries(root):
        raise AssertionError("temporaries left: %s" % no_temporaries(root))


def test_recompress_defaults_level_and_training(root):
    arrays = token_arrays(500, 3)
    base = make_store(root, "base", arrays)
    want = digest(base)
    # No options: SRC's codec and shards, frames copied.
    _, err = must(["recompress", base, os.path.join(root, "copy")])
    if counters(err) != (500, 0):
        raise AssertionError("plain recompress did not copy frames: %s" % err)
    # An explicit level re-encodes (same codec).
    _, err = must(["recompress", base, os.path.join(root, "l9"), "--level", "9"])
    if counters(err) != (0, 500):
        raise AssertionError("--level did not re-encode: %s" % err)
    # zstd_dict without --dict trains one from SRC first.
    _, err = must(["recompress", base, os.path.join(root, "dict"), "--codec", "zstd_dict", "--tier", "small"])
    if "trained a dictionary" not in err or not os.path.exists(os.path.join(root, "dict", "dict.zr")):
        raise AssertionError("no dictionary trained: %s" % err)
    # zstd_dict -> zstd_dict with a reshard keeps the dictionary and copies frames.
    _, err = must(["recompress", os.path.join(root, "dict"), os.path.join(root, "dict8"), "--shards", "8"])
    if counters(err) != (500, 0):
        raise AssertionError("dictionary reshard re-encoded: %s" % err)
    if open(os.path.join(root, "dict", "dict.zr"), "rb").read() != open(os.path.join(root, "dict8", "dict.zr"), "rb").read():
        raise AssertionError("the reshard changed the dictionary")
    for s in ["copy", "l9", "dict", "dict8"]:
        if digest(os.path.join(root, s)) != want:
            raise AssertionError("%s: digest differs" % s)


def test_concat_equals_one_shot(root):
    parts = [token_arrays(150, 10 + p) for p in range(3)]
    one = make_store(root, "one", parts[0] + parts[1] + parts[2], shards=4)
    paths = [make_store(root, "part%d" % p, parts[p], codec="raw" if p == 1 else "zstd", shards=p + 1)
             for p in range(3)]
    dst = os.path.join(root, "all")
    _, err = must(["concat"] + paths + [dst])
    if counters(err) != (300, 150):
        raise AssertionError("concat counters: %s" % err)
    if digest(dst) != digest(one) or digest(dst) != python_digest(parts[0] + parts[1] + parts[2])[0]:
        raise AssertionError("concat digest differs from the one-shot build")
    if cat_bytes(dst) != cat_bytes(one):
        raise AssertionError("concat records differ from the one-shot build")
    # Into another codec: every source recompressed.
    _, err = must(["concat", "--codec", "raw", "--shards", "2"] + paths + [os.path.join(root, "raw")])
    if counters(err) != (150, 300) or digest(os.path.join(root, "raw")) != digest(one):
        raise AssertionError("concat --codec raw: %s" % err)


def expect_failure(root, args, rc_want, text, dst, srcs):
    before = [hash_tree(s) for s in srcs]
    rc, _, err = run(args)
    if rc != rc_want or text not in err:
        raise AssertionError("zrec %s: rc %d, stderr %r; want rc %d and %r" % (" ".join(args), rc, err, rc_want, text))
    if len(err.strip().splitlines()) > 2:
        raise AssertionError("more than a one-line error: %r" % err)
    if dst is not None and os.path.exists(dst):
        raise AssertionError("%s exists after a failure" % dst)
    if no_temporaries(root):
        raise AssertionError("temporaries left: %s" % no_temporaries(root))
    if [hash_tree(s) for s in srcs] != before:
        raise AssertionError("a failed command changed a source")


def test_errors_leave_nothing(root):
    a = make_store(root, "a", token_arrays(30, 4))
    b = make_store(root, "b", [x.astype("<i8") for x in token_arrays(30, 5)], dtype="<i8")
    dst = os.path.join(root, "dst")
    expect_failure(root, ["concat", a, b, dst], 1, "differs from '%s': dtype '<i4' vs '<i8'" % a, dst, [a, b])
    os.mkdir(dst)
    expect_failure(root, ["recompress", a, dst], 1, "'%s' already exists" % dst, None, [a])
    os.rmdir(dst)
    expect_failure(root, ["recompress", a, dst, "--codec", "zstd", "--dict", os.path.join(root, "x.zr")], 2,
                   "--dict is only used with --codec zstd_dict", dst, [a])
    expect_failure(root, ["recompress", a, dst, "--codec", "raw", "--level", "5"], 2, "--level", dst, [a])
    expect_failure(root, ["recompress", os.path.join(root, "nope"), dst], 1, "nope", dst, [])
    # A damaged frame: found on the frame-copy path (no decoding) and on the decode path.
    meta = open(os.path.join(a, "meta.zr"), "rb").read()
    offset = int.from_bytes(meta[4096 + 16 * 5: 4096 + 16 * 5 + 8], "little")  # record 5: data_1.zr
    data = bytearray(open(os.path.join(a, "data_1.zr"), "rb").read())
    data[offset] ^= 0xFF
    open(os.path.join(a, "data_1.zr"), "wb").write(bytes(data))
    expect_failure(root, ["recompress", a, dst, "--shards", "2"], 1, "record 5", dst, [a])
    expect_failure(root, ["recompress", a, dst, "--codec", "raw"], 1, "malformed store", dst, [a])
    c = make_store(root, "c", token_arrays(20, 6))
    expect_failure(root, ["concat", c, a, dst], 1, "record 5", dst, [a, c])
    # A truncated data file: refused at open.
    os.truncate(os.path.join(a, "data_2.zr"), 10)
    expect_failure(root, ["recompress", a, dst], 1, "shorter than its tail", dst, [a])


def test_train_dict(root):
    arrays = token_arrays(1500, 6)
    store = make_store(root, "s", arrays, shards=3)
    d1, d2, d3, d4 = (os.path.join(root, "d%d.zr" % i) for i in range(1, 5))
    _, err = must(["train-dict", store, "-o", d1, "--size", "16K"])
    m = re.search(r"held-out ratio: zstd ([0-9.]+)x, zstd_dict ([0-9.]+)x", err)
    if not m or float(m.group(2)) <= float(m.group(1)):
        raise AssertionError("no useful held-out ratio reported: %s" % err)
    must(["train-dict", store, "-o", d2, "--size", "16K", "--threads", "1"])
    must(["train-dict", store, "-o", d3, "--size", "16K", "--seed", "1", "--samples", "1000"])
    rd = lambda p: open(p, "rb").read()
    if rd(d1) != rd(d2):
        raise AssertionError("same input and seed gave different dictionaries")
    if rd(d1) == rd(d3):
        raise AssertionError("another seed gave the same dictionary")
    if len(rd(d1)) > 16384:
        raise AssertionError("dictionary larger than --size")
    # The .npy files the store was built from are the same records: the same dictionary.
    must(["train-dict", "--for-ragged", os.path.join(root, "s.npy"), "-o", d4, "--size", "16K"])
    if rd(d4) != rd(d1):
        raise AssertionError("a .npy source gave another dictionary than the store built from it")
    # Dense .npy (axis 0 the batch) vs the store built from it, via --files-from.
    dense = np.random.default_rng(7).integers(0, 40, size=(600, 8, 8)).astype("|u1")
    np.save(os.path.join(root, "dense.npy"), dense)
    must(["create", "--dense", "--dtype", "|u1", "--shape", "8,8", os.path.join(root, "ds")])
    must(["append-npy", os.path.join(root, "ds"), os.path.join(root, "dense.npy")])
    open(os.path.join(root, "list.txt"), "w").write(os.path.join(root, "dense.npy") + "\n")
    # d1 and d2 exist from above: -f replaces them.
    must(["train-dict", os.path.join(root, "ds"), "-o", d1, "-f", "--size", "4K", "--tier", "small"])
    must(["train-dict", "--for-dense", "--files-from", os.path.join(root, "list.txt"), "-o", d2, "-f", "--size", "4K",
          "--tier", "small"])
    if rd(d1) != rd(d2):
        raise AssertionError("a Dense .npy source gave another dictionary than the store built from it")
    # The same list as CRLF with blank lines, and NUL-separated (-0): the same dictionary
    # (zrec_support/file_list.h, the rule append-files' lists follow too).
    npy = os.path.join(root, "dense.npy").encode()
    open(os.path.join(root, "list-crlf.txt"), "wb").write(b"\r\n" + npy + b"\r\n\r\n")
    open(os.path.join(root, "list0"), "wb").write(b"\0" + npy + b"\0")
    for listing in (["--files-from", os.path.join(root, "list-crlf.txt")],
                    ["-0", "--files-from", os.path.join(root, "list0")]):
        must(["train-dict", "--for-dense"] + listing + ["-f", "-o", d3, "--size", "4K", "--tier", "small"])
        if rd(d3) != rd(d1):
            raise AssertionError("%s gave another dictionary than the plain list" % listing)
    open(os.path.join(root, "list-nul-in-lines"), "wb").write(npy + b"\n" + npy + b"\0\n")
    rc, _, err = run(["train-dict", "--for-dense", "--files-from", os.path.join(root, "list-nul-in-lines"), "-f", "-o", d3])
    want = "'%s' line 2 holds a NUL byte" % os.path.join(root, "list-nul-in-lines")
    if rc != 1 or want not in err:
        raise AssertionError("a NUL byte in a newline list: rc %d %r" % (rc, err))
    rc, _, err = run(["train-dict", "--for-dense", "--null", os.path.join(root, "dense.npy"), "-f", "-o", d3])
    if rc != 2 or "--files-from" not in err:
        raise AssertionError("--null without --files-from: rc %d %r" % (rc, err))
    # Too few records; too few bytes for the size; a thin sample warns.
    few = make_store(root, "few", token_arrays(9, 8))
    rc, _, err = run(["train-dict", few, "-o", os.path.join(root, "x.zr")])
    if rc != 1 or "needs at least 10" not in err or os.path.exists(os.path.join(root, "x.zr")):
        raise AssertionError("too few records: rc %d %r" % (rc, err))
    small = make_store(root, "small", token_arrays(40, 9))
    rc, _, err = run(["train-dict", small, "-o", os.path.join(root, "x.zr")])
    if rc != 1 or "too few for a 112640-byte dictionary" not in err:
        raise AssertionError("too few bytes: rc %d %r" % (rc, err))
    rc, _, err = run(["train-dict", small, "-o", os.path.join(root, "x.zr"), "--size", "4K"])
    if rc != 0 or "warning:" not in err or "less than 10x" not in err:
        raise AssertionError("no warning for a thin sample: rc %d %r" % (rc, err))
    rc, _, err = run(["train-dict", os.path.join(root, "s.npy"), "-o", os.path.join(root, "x.zr")])
    if rc != 2 or "--for-dense" not in err:
        raise AssertionError(".npy without --for-dense/--for-ragged: rc %d %r" % (rc, err))


TESTS = [v for k, v in list(globals().items()) if k.startswith("test_")]


def main():
    return case_runner.run_cases(TESTS, "zrec-compress-")


if __name__ == "__main__":
    sys.exit(main())
