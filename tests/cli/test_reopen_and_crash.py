#!/usr/bin/python3
"""Reopen-and-append, all-or-nothing appends, and crash consistency (docs/format.md section 7).

- create, then append-npy in several separate processes: each reopens the published
  store, resumes at `length` and the tails, and publishes again; contents stay correct.
- A failed append (bad dtype in the 3rd of three files, truncated .npy on stdin,
  zero-element array, wrong shape, not a .npy) exits 1 with one stderr line naming the
  input, and leaves every store file byte-for-byte as it was, even when earlier windows
  of that invocation had already been written.
- SIGKILL of a writer in the middle of a large streamed append: the store reads as its
  last published state (leftovers past the tails / past `length` are ignored), and the
  next append works, overwriting the leftovers.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import hashlib
import io
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)

import cli_helpers  # noqa: E402  (tests/cli/cli_helpers.py)
from cli_helpers import must_out as must  # noqa: E402

ZREC = cli_helpers.require_zrec("test_reopen_and_crash")

PAGE = 4096


def run(args, stdin=None, timeout=120):
    p = subprocess.run([ZREC] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def npy_bytes(*arrays):
    buf = io.BytesIO()
    for a in arrays:
        np.save(buf, a)
    return buf.getvalue()


def save(path, a):
    np.save(path, a)
    return path


def hash_tree(store):
    return {name: hashlib.sha256(open(os.path.join(store, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(store))}


def read_page(store):
    with open(os.path.join(store, "meta.zr"), "rb") as f:
        b = f.read(PAGE)
    length, _, shards, codec = struct.unpack_from("<QHBB", b, 0)
    return length, list(struct.unpack_from("<%dQ" % shards, b, 16))


def read_ragged(store):
    """All records of a Ragged store, via `cat --format npy` (a stream of .npy)."""
    data = io.BytesIO(must(["cat", store]))
    out = []
    while data.tell() < len(data.getbuffer()):
        out.append(np.load(data))
    return out


def dense(n, seed, shape=(3,), dtype="<i4"):
    return (np.arange(n * int(np.prod(shape)), dtype=np.int64).reshape((n,) + shape) * 7 + seed).astype(dtype)


def ragged(i):
    return (np.arange((i * 37) % 50 + 1, dtype="<i4") + i * 1000)


def check_failed_append(cmd_args, store, name_in_message, stdin=None, keys=()):
    before = hash_tree(store)
    rc, _, err = run(cmd_args, stdin)
    shown = "zrec %s -> rc %d, stderr %r" % (" ".join(cmd_args), rc, err)
    if rc != 1:
        raise AssertionError("expected exit 1: " + shown)
    # The first window's codec warning (12-byte records grow in zstd frames) may come
    # before the error when a window was appended before the bad record.
    lines = [l for l in err.splitlines() if not re.match(r"zrec append-npy: warning: '.*': zstd stored ", l)]
    if len(lines) != 1 or not lines[0].startswith("zrec append-npy: "):
        raise AssertionError("expected one stderr line 'zrec append-npy: ...': " + shown)
    for k in (name_in_message,) + tuple(keys):
        if k not in lines[0]:
            raise AssertionError("message lacks %r: %s" % (k, shown))
    after = hash_tree(store)
    if after != before:
        changed = [k for k in set(before) | set(after) if before.get(k) != after.get(k)]
        raise AssertionError("a failed append changed %s: %s" % (changed, shown))


# ---------------------------------------------------------------------------------------


def test_reopen_and_append_dense(root):
    for codec, shards in (("zstd", 3), ("raw", 1), ("raw", 4)):
        store = os.path.join(root, "dense_%s_%d" % (codec, shards))
        must(["create", "--dense", "--dtype", "<i4", "--shape", "3", "--codec", codec, "--shards", str(shards), store])
        want = np.zeros((0, 3), dtype="<i4")
        for step, n in enumerate([1, 5, 2, 17, 3, 1]):
            parts = [dense(n, 100 * step), dense(step + 1, 100 * step + 50)]
            if step % 2:
                files = [save(os.path.join(root, "in_%d_%d.npy" % (step, k)), p) for k, p in enumerate(parts)]
                must(["-q", "append-npy", store] + files)
            else:
                must(["-q", "append-npy", store, "-"], stdin=npy_bytes(*parts))
            want = np.concatenate([want] + parts)
            got = np.load(io.BytesIO(must(["cat", store])))
            if not np.array_equal(got, want):
                raise AssertionError("%s: contents wrong after append %d" % (store, step))
            length, tails = read_page(store)
            if length != len(want):
                raise AssertionError("%s: length %d != %d" % (store, length, len(want)))
            sizes = [os.path.getsize(os.path.join(store, "data_%d.zr" % s)) for s in range(shards)]
            if sizes != tails or os.path.getsize(os.path.join(store, "meta.zr")) != PAGE + 16 * length:
                raise AssertionError("%s: files are not exactly at their published sizes" % store)


def test_reopen_and_append_ragged(root):
    store = os.path.join(root, "ragged")
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", "--codec", "zstd", "--shards", "3", store])
    want = []
    i = 0
    for step in range(5):
        arrays = [ragged(i + k) for k in range(step + 2)]
        i += len(arrays)
        must(["-q", "append-npy", store, "-"], stdin=npy_bytes(*arrays))
        want += arrays
        got = read_ragged(store)
        if len(got) != len(want) or not all(np.array_equal(a, b) for a, b in zip(got, want)):
            raise AssertionError("ragged contents wrong after append %d" % step)


def test_failed_appends_change_nothing(root):
    store = os.path.join(root, "s")
    must(["create", "--dense", "--dtype", "<i4", "--shape", "3", "--codec", "zstd", "--shards", "3", store])
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(dense(10, 1)))
    want = must(["cat", store])

    a = save(os.path.join(root, "a.npy"), dense(4, 2))
    b = save(os.path.join(root, "b.npy"), dense(5, 3))
    bad_dtype = save(os.path.join(root, "c_int64.npy"), dense(2, 4, dtype="<i8"))
    empty = save(os.path.join(root, "empty.npy"), np.zeros((0, 3), dtype="<i4"))
    wrong_shape = save(os.path.join(root, "shape_5x4.npy"), dense(5, 5, shape=(4,)))
    wrong_rank = save(os.path.join(root, "rank3.npy"), dense(2, 5, shape=(3, 1)))
    big_endian = save(os.path.join(root, "big_endian.npy"), dense(2, 5, dtype=">i4"))
    not_npy = os.path.join(root, "not_npy.npy")
    with open(not_npy, "wb") as f:
        f.write(b"this is not an npy file at all" * 10)
    truncated_file = os.path.join(root, "truncated.npy")
    with open(truncated_file, "wb") as f:
        f.write(npy_bytes(dense(50, 6))[:-7])
    missing = os.path.join(root, "does_not_exist.npy")

    cases = [
        ([a, b, bad_dtype], "c_int64.npy", ["dtype"]),
        ([a, empty], "empty.npy", ["no elements"]),
        ([a, b, wrong_shape], "shape_5x4.npy", ["shape"]),
        ([wrong_rank], "rank3.npy", ["shape"]),
        ([a, big_endian], "big_endian.npy", ["dtype"]),
        ([a, not_npy], "not_npy.npy", ["npy"]),
        ([b, truncated_file], "truncated.npy", ["truncated"]),
        ([a, b, missing], "does_not_exist.npy", []),
    ]
    for files, name, keys in cases:
        check_failed_append(["append-npy", store] + files, store, name, keys=keys)

    # stdin streams: a truncated array after two good ones, a zero-element array, a bad one.
    stream = npy_bytes(dense(3, 7), dense(4, 8), dense(20, 9))
    check_failed_append(["append-npy", store, "-"], store, "'-'", stdin=stream[:-5],
                        keys=["truncated", "byte %d" % len(npy_bytes(dense(3, 7), dense(4, 8)))])
    at = len(npy_bytes(dense(3, 7), dense(4, 8)))  # truncated inside the third header
    check_failed_append(["append-npy", store, "-"], store, "'-'", stdin=stream[:at + 20],
                        keys=["truncated", "byte %d" % at])
    check_failed_append(["append-npy", store, "-"], store, "'-'",
                        stdin=npy_bytes(dense(3, 7), np.zeros((0, 3), dtype="<i4")),
                        keys=["byte %d" % len(npy_bytes(dense(3, 7))), "no elements"])
    check_failed_append(["append-npy", store, "-"], store, "'-'", stdin=npy_bytes(dense(3, 7)) + b"\x93NUMPY\x01",
                        keys=["truncated", "byte %d" % len(npy_bytes(dense(3, 7)))])

    # The same with earlier windows already written (1 MiB windows, ~4 MiB good data first):
    # the rollback must truncate what those windows wrote.
    big = dense(350000, 11)  # 4.2 MB
    check_failed_append(["append-npy", "--window-mib", "1", store, "-"], store, "'-'",
                        stdin=npy_bytes(big, dense(10, 3))[:-1], keys=["truncated", "byte %d" % len(npy_bytes(big))])
    big_file = save(os.path.join(root, "big.npy"), big)
    check_failed_append(["append-npy", "--window-mib", "1", store, big_file, a, bad_dtype], store, "c_int64.npy",
                        keys=["dtype"])

    if must(["cat", store]) != want:
        raise AssertionError("store contents changed after failed appends")
    # And the store still takes a good append afterwards.
    must(["-q", "append-npy", store, a, b])
    got = np.load(io.BytesIO(must(["cat", store])))
    if not np.array_equal(got, np.concatenate([dense(10, 1), dense(4, 2), dense(5, 3)])):
        raise AssertionError("append after failed appends is wrong")


def test_failed_ragged_appends_change_nothing(root):
    store = os.path.join(root, "r")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "2", "--codec", "raw", "--shards", "2", store])
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(np.ones((2, 3), "|u1"), np.ones((4, 1), "|u1")))
    one_d = save(os.path.join(root, "one_d.npy"), np.ones(5, "|u1"))
    zero_dim = save(os.path.join(root, "zero_dim.npy"), np.ones((3, 0), "|u1"))
    scalar = save(os.path.join(root, "scalar.npy"), np.array(7, "|u1"))
    ok = save(os.path.join(root, "ok.npy"), np.ones((2, 2), "|u1"))
    check_failed_append(["append-npy", store, ok, one_d], store, "one_d.npy", keys=["dims"])
    check_failed_append(["append-npy", store, ok, ok, zero_dim], store, "zero_dim.npy", keys=["no elements"])
    check_failed_append(["append-npy", store, scalar], store, "scalar.npy", keys=["dims"])
    batch_ok = save(os.path.join(root, "batch_ok.npy"), np.ones((2, 2, 2), "|u1"))
    check_failed_append(["append-npy", "--split-axis0", store, batch_ok, ok], store, "ok.npy", keys=["dims", "--split-axis0"])


class Feeder(threading.Thread):
    """Streams records of one big .npy array into a pipe; stops on a broken pipe."""

    def __init__(self, pipe, records, record_shape, dtype, seed):
        super().__init__(daemon=True)
        self.pipe, self.records, self.shape, self.dtype, self.seed = pipe, records, record_shape, dtype, seed
        self.sent = 0
        self.broken = False

    def run(self):
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": np.dtype(self.dtype).str, "fortran_order": False, "shape": (self.records,) + self.shape})
        rng = np.random.default_rng(self.seed)
        # Compressible but not trivial: a random base record, a few bytes varied per record.
        base = rng.integers(0, 16, size=self.shape, dtype=np.uint8).astype(self.dtype)
        try:
            self.pipe.write(header.getvalue())
            batch = 64
            for first in range(0, self.records, batch):
                n = min(batch, self.records - first)
                block = np.repeat(base[None], n, axis=0)
                block.reshape(n, -1)[:, :8] = (np.arange(first, first + n)[:, None] + np.arange(8)) % 251
                self.pipe.write(block.tobytes())
                self.sent += block.nbytes
            self.pipe.close()
        except (BrokenPipeError, ValueError, OSError):
            self.broken = True


def crash_case(root, codec, window_mib):
    shape = (3, 224, 224)
    record = int(np.prod(shape))
    store = os.path.join(root, "crash_" + codec)
    must(["create", "--dense", "--dtype", "|u1", "--shape", "3,224,224", "--codec", codec, "--shards", "3", store])
    prefix = [dense(7, 5, shape=shape, dtype="|u1"), dense(4, 9, shape=shape, dtype="|u1")]
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(prefix[0]))
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(prefix[1]))  # reopened once already
    published = must(["cat", store])
    length, tails = read_page(store)
    assert length == 11

    records = 2000  # ~300 MB
    window = ["--window-mib", str(window_mib)] if window_mib != 64 else []  # 64: the default
    p = subprocess.Popen([ZREC, "-q", "append-npy"] + window + [store, "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    feeder = Feeder(p.stdin, records, shape, "|u1", seed=1)
    feeder.start()
    # Kill once the writer has put at least two windows of payload past the tails and
    # RecordLocs past the published table.
    meta_path = os.path.join(store, "meta.zr")
    deadline = time.monotonic() + 60
    try:
        while True:
            grown = sum(os.path.getsize(os.path.join(store, "data_%d.zr" % s)) - tails[s] for s in range(3))
            locs = (os.path.getsize(meta_path) - PAGE) // 16 - length
            if codec == "raw" and grown >= 2 * (window_mib << 20) and locs > 0:
                break
            if codec != "raw" and locs * record >= 2 * (window_mib << 20):
                break
            if p.poll() is not None:
                raise AssertionError("writer exited before the kill (rc %d): %s" % (p.returncode, p.stderr.read()))
            if time.monotonic() > deadline:
                raise AssertionError("writer made no progress")
            time.sleep(0.01)
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
        p.wait()
        feeder.join(timeout=30)
        p.stderr.close()
    if p.returncode != -signal.SIGKILL:
        raise AssertionError("writer was not killed (rc %d)" % p.returncode)
    if feeder.sent >= records * record:
        raise AssertionError("the whole input flowed before the kill; the test proves nothing")

    # Leftovers are on disk, but the static page is the last published one.
    leftover_locs = (os.path.getsize(meta_path) - PAGE) // 16 - length
    leftover_bytes = sum(os.path.getsize(os.path.join(store, "data_%d.zr" % s)) - tails[s] for s in range(3))
    if leftover_locs <= 0 or leftover_bytes <= 0:
        raise AssertionError("expected leftovers after the kill (locs %d, bytes %d)" % (leftover_locs, leftover_bytes))
    if read_page(store) != (length, tails):
        raise AssertionError("the static page changed although nothing was published")
    if must(["cat", store]) != published:
        raise AssertionError("after SIGKILL the store does not read as its last published state")
    info = must(["info", "--json", store]).decode()
    if '"length": 11' not in info:
        raise AssertionError("info after crash: %s" % info)

    # The next writer resumes at the published tails and overwrites the leftovers.
    more = dense(5, 77, shape=shape, dtype="|u1")
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(more))
    got = np.load(io.BytesIO(must(["cat", store])))
    if not np.array_equal(got, np.concatenate(prefix + [more])):
        raise AssertionError("append after the crash is wrong")
    length2, tails2 = read_page(store)
    sizes = [os.path.getsize(os.path.join(store, "data_%d.zr" % s)) for s in range(3)]
    if length2 != 16 or sizes != tails2 or os.path.getsize(meta_path) != PAGE + 16 * 16:
        raise AssertionError("leftovers survived the next publication: sizes %s tails %s" % (sizes, tails2))
    if any(t2 <= t for t, t2 in zip(tails, tails2)):
        raise AssertionError("the new records were not written at the old tails")
    return leftover_locs, leftover_bytes, feeder.sent


def test_sigkill_mid_append_raw(root):
    locs, data, sent = crash_case(root, "raw", 64)
    print("     raw: killed after %.0f MB streamed; leftovers: %d RecordLocs, %.0f MB of payload"
          % (sent / 1e6, locs, data / 1e6))


def test_sigkill_mid_append_zstd(root):
    locs, data, sent = crash_case(root, "zstd", 64)
    print("     zstd: killed after %.0f MB streamed; leftovers: %d RecordLocs, %.1f MB of payload"
          % (sent / 1e6, locs, data / 1e6))


def test_crash_leftovers_then_failed_append(root):
    """Leftovers from a crash, then a failed append: the store still reads as published."""
    store = os.path.join(root, "lf")
    must(["create", "--dense", "--dtype", "<i4", "--shape", "3", "--codec", "zstd", "--shards", "2", store])
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(dense(6, 1)))
    want = must(["cat", store])
    # Simulate a crashed writer's leftovers: junk past each tail and past the table.
    for s in range(2):
        with open(os.path.join(store, "data_%d.zr" % s), "ab") as f:
            f.write(b"\xab" * 1000)
    with open(os.path.join(store, "meta.zr"), "ab") as f:
        f.write(struct.pack("<QII", 0, 1000, 12) * 3)
    if must(["cat", store]) != want:
        raise AssertionError("leftovers changed what readers see")
    rc, _, err = run(["append-npy", store, "-"], stdin=npy_bytes(dense(2, 3, dtype="<i8")))
    if rc != 1 or len(err.splitlines()) != 1:
        raise AssertionError("bad append: rc %d %r" % (rc, err))
    if must(["cat", store]) != want:
        raise AssertionError("a failed append over leftovers changed what readers see")
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(dense(3, 4)))
    got = np.load(io.BytesIO(must(["cat", store])))
    if not np.array_equal(got, np.concatenate([dense(6, 1), dense(3, 4)])):
        raise AssertionError("append over leftovers is wrong")


TESTS = [v for k, v in globals().items() if k.startswith("test_")]


def main():
    return case_runner.run_cases(TESTS, "zrec-reopen-")


if __name__ == "__main__":
    sys.exit(main())
