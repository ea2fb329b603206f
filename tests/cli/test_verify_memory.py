#!/usr/bin/python3
"""verify's memory is bounded however many problems a store has (issue 9, defect 6).

A forged store: an empty Ragged store whose page claims L records over a sparse
meta.zr (every RecordLoc zero, so every record breaks the phys_length rule). Asserts:
  - `verify --max-errors 0` on L = 2^21 lists every problem (one line each, streamed
    as found), the summary counts 2^21, exit 1, and peak RSS (os.wait4 of that process)
    stays below LIMIT_MIB (keeping them all took ~0.5 GB before);
  - the same with --json (L = 2^18): one valid JSON object listing every problem;
  - L = 2^31 - 1 (the issue's 8 KiB sparse meta.zr that took 24 GiB): verify keeps
    streaming problems at a bounded RSS until SIGTERM ends it (exit 143);
  - --max-errors 5 still stops after 5;
  - `verify --against -` reads the digests as it checks the records (issue 46, item 4):
    a raw store of 4 x 2^20 one-byte records, its digests streamed on stdin with one
    changed, finds exactly that record at a peak RSS below LIMIT_MIB and within
    FLAT_MIB of the same run on 2^20 records (holding the list took 32 bytes a record:
    128 MiB at 4 x 2^20, reallocations on top).
RSS asserts are skipped when ZREC_SANITIZED=1. The overlap pass's budget with a data
file larger than it is covered in-process (tests/verify_test.cc "overlaps are found
across passes of a small overlap budget": peak bytes <= budget, many passes).

Needs: ZREC (path of the zrec binary).
"""
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import SANITIZED, require_zrec, wait_peak_rss_mib  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = require_zrec("test_verify_memory")
LIMIT_MIB = 64
FLAT_MIB = 8
PAGE, LOC = 4096, 16
FIGURES = []


def forge(d, length):
    store = os.path.join(d, "s")
    subprocess.run([ZREC, "create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--shards", "1", store], check=True)
    meta = os.path.join(store, "meta.zr")
    with open(meta, "r+b") as f:
        f.write(struct.pack("<Q", length))  # the page's length field
    os.truncate(meta, PAGE + LOC * length)  # sparse: a hole of zero RecordLocs
    return store


def run_counting(args, stop_after=None):
    """Runs zrec, counting stdout lines as they stream; SIGTERM after stop_after
    seconds. Returns (rc, lines, last bytes of stdout, stderr, peak RSS MiB)."""
    p = subprocess.Popen([ZREC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines, tail, t0 = 0, b"", time.monotonic()
    while True:
        chunk = p.stdout.read1(1 << 16)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        tail = (tail + chunk)[-4096:]
        if stop_after is not None and time.monotonic() - t0 > stop_after and p.returncode is None:
            p.send_signal(signal.SIGTERM)
            stop_after = None
    err = p.stderr.read().decode("utf-8", "replace")
    rc, rss = wait_peak_rss_mib(p)
    return rc, lines, tail, err, rss


def check_rss(what, rss):
    FIGURES.append("%s: peak RSS %.1f MiB" % (what, rss))
    if not SANITIZED and rss >= LIMIT_MIB:
        raise AssertionError("%s: peak RSS %.1f MiB >= %d MiB" % (what, rss, LIMIT_MIB))


def test_every_problem_streamed_text(d):
    n = 1 << 21
    store = forge(d, n)
    rc, lines, tail, err, rss = run_counting(["verify", "--quick", "--max-errors", "0", store])
    if rc != 1:
        raise AssertionError("rc %d: %s" % (rc, err))
    if lines != n + 1:
        raise AssertionError("%d lines, want %d problems and a summary" % (lines, n))
    last = tail.decode().strip().splitlines()[-1]
    if "CORRUPT: %d problems" % n not in last:
        raise AssertionError("summary: %s" % last)
    if "record %d (offset 0), 0 bytes: " % (n - 1) not in tail.decode():
        raise AssertionError("the last record's problem is missing: %s" % tail[-500:])
    check_rss("verify --max-errors 0, %d problems (text)" % n, rss)


def test_every_problem_streamed_json(d):
    n = 1 << 18
    store = forge(d, n)
    p = subprocess.Popen([ZREC, "verify", "--quick", "--json", "--max-errors", "0", store], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out, err = p.communicate()
    doc = json.loads(out)
    if p.returncode != 1 or doc["problem_count"] != n or len(doc["problems"]) != n or doc["valid"]:
        raise AssertionError("rc %d, %d problems listed, count %d" % (p.returncode, len(doc["problems"]),
                                                                      doc["problem_count"]))
    first = doc["problems"][0]
    if first["rule"] != "phys_length" or first["record"] != 0 or first["file"] != "data_0.zr":
        raise AssertionError("first problem: %r" % first)
    if doc["problems"][-1]["record"] != n - 1:
        raise AssertionError("last problem: %r" % doc["problems"][-1])
    # Runs last: a forked child's peak RSS starts at this process's, grown by the parse.


def test_issue_scale_claim_stays_bounded(d):
    store = forge(d, (1 << 31) - 1)
    rc, lines, _, err, rss = run_counting(["verify", "--quick", "--max-errors", "0", store], stop_after=3.0)
    if rc != 143:
        raise AssertionError("rc %d after SIGTERM (want 143): %s" % (rc, err))
    if lines < 10000:
        raise AssertionError("only %d problems streamed in 3 s" % lines)
    check_rss("verify --max-errors 0 of 2^31-1 claimed records, %d problems streamed in 3 s" % lines, rss)


def test_max_errors_still_stops(d):
    store = forge(d, 1 << 16)
    p = subprocess.run([ZREC, "verify", "--quick", "--max-errors", "5", store], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    out = p.stdout.decode().splitlines()
    if p.returncode != 1 or len([line for line in out if "problem:" in line]) != 5 or \
            "stopped after 5 problems" not in p.stdout.decode():
        raise AssertionError("rc %d: %s" % (p.returncode, out))


def one_byte_store(d, n):
    """A raw Ragged '|u1' store of n records b"a" (append-stream, one line a record)."""
    store = os.path.join(d, "a%d" % n)
    subprocess.run([ZREC, "create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", store], check=True)
    p = subprocess.Popen([ZREC, "-q", "append-stream", store], stdin=subprocess.PIPE)
    block = b"a\n" * (1 << 12)
    for left in range(n, 0, -(1 << 12)):
        p.stdin.write(block if left >= 1 << 12 else b"a\n" * left)
    p.stdin.close()
    if p.wait() != 0:
        raise AssertionError("append-stream failed")
    return store


def verify_against_streamed(store, n, changed):
    """`verify --json --against - STORE` fed n hash-only lines (record `changed`'s
    altered) as it reads them. Returns (rc, the JSON report, stderr, peak RSS MiB)."""
    logical = struct.pack("<Q", 1) + b"a"  # the shape prefix, then the byte
    line = (hashlib.sha256(logical).hexdigest() + "\n").encode()
    wrong = (hashlib.sha256(b"not " + logical).hexdigest() + "\n").encode()
    p = subprocess.Popen([ZREC, "verify", "--json", "--against", "-", store], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Small writes: a child's peak RSS counts this process's at the fork (exec keeps the
    # high-water mark), so this one must stay below what is measured.
    step = 1 << 10
    block = line * step
    for first in range(0, n, step):
        count = min(step, n - first)
        if first <= changed < first + count:
            at = changed - first
            p.stdin.write(line * at + wrong + line * (count - at - 1))
        else:
            p.stdin.write(block if count == step else line * count)
    p.stdin.close()
    out, err = p.stdout.read(), p.stderr.read().decode("utf-8", "replace")
    rc, rss = wait_peak_rss_mib(p)
    return rc, json.loads(out), err, rss


def test_against_streamed_in_flat_memory(d):
    figures = []
    for n in (1 << 20, 4 << 20):
        store = one_byte_store(d, n)
        changed = n - 7
        rc, doc, err, rss = verify_against_streamed(store, n, changed)
        problems = [(p["rule"], p["record"]) for p in doc["problems"]]
        if rc != 1 or problems != [("digest", changed)] or doc["digests_compared"] != n:
            raise AssertionError("n %d: rc %d, problems %r, compared %d: %s" % (n, rc, problems,
                                                                                doc["digests_compared"], err))
        check_rss("verify --against - of %d one-byte records" % n, rss)
        figures.append(rss)
        shutil.rmtree(store)
    if not SANITIZED and figures[1] - figures[0] >= FLAT_MIB:
        raise AssertionError("peak RSS grew %.1f -> %.1f MiB with 4x the records" % (figures[0], figures[1]))


TESTS = [test_every_problem_streamed_text, test_issue_scale_claim_stays_bounded, test_max_errors_still_stops,
         test_against_streamed_in_flat_memory, test_every_problem_streamed_json]

if __name__ == "__main__":
    sys.exit(case_runner.run_cases(TESTS, "zrec-verify-memory-", figures=FIGURES))
