#!/usr/bin/python3
"""A length an input claims costs memory only as its bytes arrive (issue 9, defect 5).

Each case feeds an append a header that claims just under 2 GiB (a 4- or 8-byte
append-stream frame length, a 128-byte .npy header on stdin or in a file; Ragged and
Dense stores; a record larger than the window) followed by a few bytes, and asserts:
  - exit 1 with the "truncated" message naming the frame or the record of the array,
  - the store is unchanged (still empty, verifies clean),
  - peak RSS of zrec (os.wait4 of that one process) stays below LIMIT_MIB, where zero-
    filling the claim would take 2 GiB (skipped when ZREC_SANITIZED=1: ASan's shadow
    memory makes RSS meaningless).
A record that is truly larger than the window (--window-mib 1, 5 MiB) still round-trips
in both commands, exercising the window's geometric growth.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import SANITIZED, require_zrec, wait_peak_rss_mib  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = require_zrec("test_claimed_lengths")
# The default window is 64 MiB; a lying header must cost far less than that (the bytes
# received plus zrec's fixed costs), and nothing like the 2 GiB it claims.
LIMIT_MIB = 64
CLAIM = (1 << 31) - 256  # just under 2 GiB
FIGURES = []


def run_measured(args, stdin_bytes=b""):
    """Runs zrec; returns (rc, stderr text, peak RSS in MiB of that process)."""
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as ferr:
        fin.write(stdin_bytes)
        fin.seek(0)
        p = subprocess.Popen([ZREC] + args, stdin=fin, stdout=subprocess.DEVNULL, stderr=ferr)
        rc, rss = wait_peak_rss_mib(p)
        ferr.seek(0)
        return rc, ferr.read().decode("utf-8", "replace"), rss


def zrec(*args, stdin=b""):
    p = subprocess.run([ZREC] + list(args), input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        raise AssertionError("zrec %s: rc %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()))
    return p.stdout


def npy_header(descr, shape):
    """A version 1.0 header as numpy writes it (128 bytes for these shapes)."""
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join("%d, " % s for s in shape))
    d = d.replace(", )", ",)") if len(shape) == 1 else d.replace(", )", ")")
    pad = 64 - (10 + len(d) + 1) % 64
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d) + pad + 1) + d.encode() + b" " * pad + b"\n"


def expect_refused(store, args, stdin, says, what):
    rc, err, rss = run_measured(args, stdin)
    FIGURES.append("%s: peak RSS %.1f MiB for a claim of %d bytes" % (what, rss, CLAIM))
    if rc != 1:
        raise AssertionError("%s: rc %d (want 1): %s" % (what, rc, err))
    for s in says:
        if s not in err:
            raise AssertionError("%s: %r not in the message: %s" % (what, s, err))
    if not SANITIZED and rss >= LIMIT_MIB:
        raise AssertionError("%s: peak RSS %.1f MiB >= %d MiB (the claim was allocated?)" % (what, rss, LIMIT_MIB))
    info = zrec("info", "--json", store)
    if b'"length": 0' not in info and b'"length":0' not in info:
        raise AssertionError("%s: the store changed: %s" % (what, info))
    zrec("verify", store)


def test_u32le_frame_claim(d):
    store = os.path.join(d, "s")
    zrec("create", "--ragged", "--ndim", "1", "--dtype", "|u1", store)
    expect_refused(store, ["append-stream", "--framing", "u32le", store], struct.pack("<I", CLAIM) + b"abc",
                   ["truncated input: stdin frame 1 (at byte 0) declares %d bytes, but the input ends after 3" % CLAIM],
                   "append-stream u32le (stdin)")


def test_u64le_frame_claim_from_file(d):
    store = os.path.join(d, "s")
    zrec("create", "--ragged", "--ndim", "1", "--dtype", "|u1", store)
    src = os.path.join(d, "frames.bin")
    ok = b"hello"
    with open(src, "wb") as f:
        f.write(struct.pack("<Q", len(ok)) + ok + struct.pack("<Q", CLAIM) + b"x" * 1000)
    expect_refused(store, ["append-stream", "--framing", "u64le", "-i", src, store], b"",
                   ["truncated input: '%s' frame 2 (at byte 13) declares %d bytes, but the input ends after 1000"
                    % (src, CLAIM)], "append-stream u64le (file)")


def test_npy_ragged_claim_stdin(d):
    store = os.path.join(d, "s")
    zrec("create", "--ragged", "--ndim", "1", "--dtype", "|u1", store)
    head = npy_header("|u1", (CLAIM,))
    assert len(head) == 128, len(head)
    expect_refused(store, ["append-npy", store, "-"], head + b"z" * 10,
                   ["'-': array at byte 0: truncated: the input ends inside record 0 of the array's 1 "
                    "(its data is %d bytes; the input ends after 10)" % CLAIM], "append-npy ragged (stdin)")


def test_npy_dense_claim_file(d):
    # Records of 1 KiB, 2 GiB of them claimed: the window must not be filled to its
    # budget before the data arrives either.
    store = os.path.join(d, "s")
    zrec("create", "--dense", "--dtype", "<f4", "--shape", "256", store)
    src = os.path.join(d, "lie.npy")
    with open(src, "wb") as f:
        f.write(npy_header("<f4", (CLAIM // 1024, 256)) + b"\0" * 2048 + b"\1" * 100)
    expect_refused(store, ["append-npy", store, src], b"",
                   ["'%s': array at byte 0: truncated: the input ends inside record 2 of the array's %d "
                    "(its data is %d bytes; the input ends after 2148)" % (src, CLAIM // 1024, CLAIM // 1024 * 1024)],
                   "append-npy dense (file)")


def test_npy_batch_larger_than_window(d):
    store = os.path.join(d, "s")
    zrec("create", "--ragged", "--ndim", "2", "--dtype", "<i8", store)
    src = os.path.join(d, "lie.npy")
    with open(src, "wb") as f:
        f.write(npy_header("<i8", (3, CLAIM // 8 // 3 // 1024, 1024)) + b"\7" * 3000)
    expect_refused(store, ["append-npy", "--split-axis0", "--window-mib", "1", store, src], b"",
                   ["truncated: the input ends inside record 0 of the array's 3"], "append-npy --split-axis0 (file)")


def test_records_larger_than_window_round_trip(d):
    """Growth is geometric, not capped: a 5 MiB record with a 1 MiB window works."""
    big = bytes(range(256)) * (5 * 4096)  # 5 MiB
    store = os.path.join(d, "s")
    zrec("create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "raw", store)
    frames = b"".join(struct.pack("<I", len(r)) + r for r in (b"a", big, b"bc"))
    zrec("append-stream", "--framing", "u32le", "--window-mib", "1", store, stdin=frames)
    arr = np.frombuffer(big[: 4 * 1024 * 1024], dtype=np.uint8)
    zrec("append-npy", "--window-mib", "1", store, "-", stdin=npy_header("|u1", (arr.size,)) + arr.tobytes())
    out = zrec("cat", "--format", "raw", store)
    want = b"a" + big + b"bc" + arr.tobytes()
    if out != want:
        raise AssertionError("records larger than the window came back changed (%d vs %d bytes)" % (len(out), len(want)))
    dense = os.path.join(d, "dense")
    zrec("create", "--dense", "--dtype", "|u1", "--shape", "3,1024,1024", "--codec", "raw", dense)
    imgs = np.arange(4 * 3 << 20, dtype=np.uint64).astype(np.uint8).reshape(4, 3, 1024, 1024)
    zrec("append-npy", "--window-mib", "1", "--skip-first", "1", dense, "-",
         stdin=npy_header("|u1", imgs.shape) + imgs.tobytes())
    if zrec("cat", "--format", "raw", dense) != imgs[1:].tobytes():
        raise AssertionError("Dense records larger than the window (after --skip-first 1) came back changed")


TESTS = [test_u32le_frame_claim, test_u64le_frame_claim_from_file, test_npy_ragged_claim_stdin,
         test_npy_dense_claim_file, test_npy_batch_larger_than_window, test_records_larger_than_window_round_trip]

if __name__ == "__main__":
    sys.exit(case_runner.run_cases(TESTS, "zrec-claims-", figures=FIGURES))
