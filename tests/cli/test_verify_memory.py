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
  - --max-errors 5 still stops after 5.
RSS asserts are skipped when ZREC_SANITIZED=1. The overlap pass's budget with a data
file larger than it is covered in-process (tests/verify_test.cc "overlaps are found
across passes of a small overlap budget": peak bytes <= budget, many passes).

Needs: ZREC (path of the zrec binary).
"""
import json
import os
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


TESTS = [test_every_problem_streamed_text, test_issue_scale_claim_stays_bounded, test_max_errors_still_stops,
         test_every_problem_streamed_json]

if __name__ == "__main__":
    sys.exit(case_runner.run_cases(TESTS, "zrec-verify-memory-", figures=FIGURES))
