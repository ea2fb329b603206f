#!/usr/bin/python3
"""zrec diff in bounded memory: two roots of 10^6 samples (__key__ and a text stream),
B with 1,000 records changed and, for --by-key, its samples shuffled, are diffed by
position and by key with peak RSS at most 64 MiB each (by key: the external sort's
16 MiB runs spill to --temp-dir, which is empty again afterwards), and the counts are
exact. Prints the peak RSS and seconds as figures.

Needs: ZREC (path of the zrec binary). Process tier, release-only (peak RSS).
"""
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import SANITIZED, ZREC, expect, must, require_zrec, wait_peak_rss_mib  # noqa: E402

require_zrec("test_diff_memory")
CASES, case = case_runner.case_registry()
FIGURES = []
N = 100_000 if SANITIZED else 1_000_000
LIMIT_MIB = 64


def root(path, samples):
    os.makedirs(path)
    for i, name in enumerate(["__key__", "txt"]):
        store = os.path.join(path, name)
        must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", store])
        must(["append-stream", store], stdin=b"".join(s[i] + b"\n" for s in samples))
    must(["adopt", path])
    return path


def peak(args, scratch):
    start = time.monotonic()
    p = subprocess.Popen([ZREC, "diff", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    err = p.stderr.read().decode()
    rc, rss = wait_peak_rss_mib(p)
    expect(rc == 1, "diff %s: rc %d: %s" % (args, rc, err))
    expect(os.listdir(scratch) == [], "scratch left: %s" % os.listdir(scratch))
    return out.decode(), rss, time.monotonic() - start


def counts(text):
    return {" ".join(l.split()[:-1]): int(l.split()[-1]) for l in text.splitlines()
            if l.split() and l.split()[0] in ("removed", "added", "changed", "unchanged")}


@case
def a_million_samples_in_64_mib(d):
    a = [(b"k%07d" % i, b"sample text %d" % (i * 7919)) for i in range(N)]
    changed = set(random.Random(1).sample(range(N), 1000))
    b = [(k, t + b"!" if i in changed else t) for i, (k, t) in enumerate(a)]
    ra = root(os.path.join(d, "a"), a)
    rb = root(os.path.join(d, "b"), b)
    random.Random(2).shuffle(b)
    rs = root(os.path.join(d, "shuffled"), b)
    scratch = os.path.join(d, "scratch")
    os.makedirs(scratch)
    want = {"removed": 0, "added": 0, "changed": 1000, "changed txt": 1000, "unchanged": N - 1000}
    for label, args in (("by position", [ra, rb]), ("by key, shuffled", ["--by-key", "--temp-dir", scratch, ra, rs])):
        out, rss, secs = peak(args, scratch)
        expect(counts(out) == want, "%s: %s" % (label, counts(out)))
        FIGURES.append("diff %s of %d samples: peak RSS %.1f MiB, %.1f s" % (label, N, rss, secs))
        if not SANITIZED:
            expect(rss <= LIMIT_MIB, "%s: peak RSS %.1f MiB > %d MiB" % (label, rss, LIMIT_MIB))


sys.exit(case_runner.run_cases(CASES, "zrec-test-diff-memory-", FIGURES))
