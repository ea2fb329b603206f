#!/usr/bin/python3
"""How frame copy writes what it copies (issue 12): kernel-side with copy_file_range
where records lie in long runs adjacent both in the source and in the destination
(concat keeps each record's shard), from the bytes it already read and checked where
they do not (a reshard scatters neighbours: one copy_file_range per 60-byte frame was
16x `cp`), and kernel-side always for a raw Dense source, whose bytes are not read.

Each case counts the copy_file_range calls and the bytes written by pwrite/pwritev
(strace -f), and checks that the destination holds every record: the digest of the
sources' records equals the destination's, and verify passes.

Needs: ZREC (path of the zrec binary), strace, python3-numpy.
"""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import STRACE_NO_LEAK_CHECK  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = os.environ.get("ZREC")
if not ZREC or not os.access(ZREC, os.X_OK):
    sys.exit("test_frame_copy_paths: set ZREC to the zrec binary (got %r)" % ZREC)
CASES, case = case_runner.case_registry()
FIGURES = []


def zrec(*args, stdin=b""):
    p = subprocess.run([ZREC] + list(args), input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        raise AssertionError("zrec %s: rc %d: %s" % (" ".join(args), p.returncode, p.stderr.decode("utf-8", "replace")))
    return p.stdout.decode()


def traced(d, *args):
    """Runs zrec ARGS under strace; returns (copy_file_range calls, bytes they copied,
    bytes written by pwrite64/pwritev to data files)."""
    log = os.path.join(d, "strace")
    # -ff: one log per thread, so no call is split into "unfinished" and "resumed" lines.
    cmd = ["strace", *STRACE_NO_LEAK_CHECK, "-ff", "-qq", "-e", "trace=copy_file_range,pwrite64,pwritev",
           "-e", "signal=none", "-o", log, ZREC] + list(args)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        raise AssertionError("zrec %s: rc %d: %s" % (" ".join(args), p.returncode, p.stderr.decode("utf-8", "replace")))
    calls = copied = written = 0
    for name in os.listdir(d):
        if not name.startswith("strace."):
            continue
        with open(os.path.join(d, name)) as f:
            for line in f:
                m = re.match(r"(copy_file_range|pwrite64|pwritev)\(.*\)\s+=\s+(\d+)", line)
                if not m:
                    continue
                if m.group(1) == "copy_file_range":
                    calls += 1
                    copied += int(m.group(2))
                else:
                    written += int(m.group(2))
        os.unlink(os.path.join(d, name))
    return calls, copied, written


def digest(store):
    return zrec("digest", store).split()[0]


def cat(store):
    """Every record's bytes, one after the other."""
    p = subprocess.run([ZREC, "cat", store, "--format", "raw"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    if p.returncode != 0:
        raise AssertionError("zrec cat %s: %s" % (store, p.stderr.decode("utf-8", "replace")))
    return p.stdout


def stored_bytes(store):
    return sum(os.path.getsize(os.path.join(store, n)) for n in os.listdir(store) if n.startswith("data_"))


@case
def concat_of_large_frames_copies_kernel_side(d):
    # Incompressible 256 KiB records: frames of raw blocks, so each shard's runs are MiBs.
    rng = np.random.default_rng(3)
    parts = []
    for p in range(2):
        store = os.path.join(d, "part%d" % p)
        zrec("create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "zstd", "--shards", "2", store)
        frames = b"".join(len(r).to_bytes(4, "little") + r
                          for r in (rng.integers(0, 256, 256 << 10, dtype=np.uint8).tobytes() for _ in range(24)))
        zrec("append-stream", "--framing", "u32le", store, stdin=frames)
        parts.append(store)
    dst = os.path.join(d, "all")
    calls, copied, written = traced(d, "concat", parts[0], parts[1], dst)
    total = stored_bytes(parts[0]) + stored_bytes(parts[1])
    assert calls > 0 and copied == total, "copy_file_range: %d calls, %d of %d bytes" % (calls, copied, total)
    assert written < total // 10, "%d bytes written from memory besides the copy" % written
    zrec("verify", "-q", dst)
    want = b"".join(cat(s) for s in parts)
    assert cat(dst) == want, "the concatenated records differ from the parts'"
    FIGURES.append("concat of 2 x 24 frames of 256 KiB: %d copy_file_range calls" % calls)


@case
def reshard_of_small_frames_writes_from_memory(d):
    store = os.path.join(d, "lines")
    zrec("create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "zstd", "--shards", "4", store)
    zrec("append-stream", store, stdin=b"".join(b'{"id": %d, "text": "line %d"}\n' % (i, i * i) for i in range(5000)))
    dst = os.path.join(d, "resharded")
    calls, copied, written = traced(d, "recompress", store, dst, "--shards", "3")
    assert calls == 0, "%d copy_file_range calls for 5000 scattered frames" % calls
    assert written >= stored_bytes(store), "%d bytes written of %d" % (written, stored_bytes(store))
    zrec("verify", "-q", dst)
    assert digest(dst) == digest(store)
    FIGURES.append("reshard of 5000 small zstd frames 4 -> 3 shards: %d copy_file_range calls" % calls)


@case
def raw_dense_reshard_copies_kernel_side(d):
    store = os.path.join(d, "img")
    zrec("create", "--dense", "--dtype", "|u1", "--shape", "64,64", "--codec", "raw", "--shards", "4", store)
    npy = os.path.join(d, "img.npy")
    np.save(npy, np.random.default_rng(4).integers(0, 256, (300, 64, 64), dtype=np.uint8))
    zrec("append-npy", store, npy)
    dst = os.path.join(d, "resharded")
    calls, copied, written = traced(d, "recompress", store, dst, "--shards", "3")
    assert calls > 0 and copied == stored_bytes(store), "copy_file_range: %d calls, %d bytes" % (calls, copied)
    zrec("verify", "-q", dst)
    assert digest(dst) == digest(store)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-frame-copy-paths-", figures=FIGURES))
