#!/usr/bin/python3
"""zrec diff in bounded memory: two roots of 10^6 samples (__key__ and a text stream),
B with 1,000 records changed and, for --by-key, its samples shuffled, are diffed by
position and by key with peak RSS at most 64 MiB each (by key: the external sort's
16 MiB runs spill to --temp-dir, which is empty again afterwards), and the counts are
exact. Prints the peak RSS and seconds as figures.

Needs: ZREC (path of the zrec binary). Process tier, release-only (peak RSS).
"""
import os
import shlex
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


# The samples are made by a child python that writes them to append-stream: held in
# this process, 10^6 of them would count in zrec's peak RSS (a vfork'd child inherits
# its parent's high-water mark across exec).
GEN = """
import random, sys
n, field, shuffle = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
changed = set(random.Random(1).sample(range(n), 1000)) if sys.argv[4] == "1" else set()
order = list(range(n))
if shuffle:
    random.Random(2).shuffle(order)
out = sys.stdout.buffer
for i in order:
    if field == "key":
        out.write(b"k%07d\\n" % i)
    else:
        out.write(b"sample text %d%s\\n" % (i * 7919, b"!" if i in changed else b""))
"""


def root(path, changed, shuffle):
    os.makedirs(path)
    for name, field in (("__key__", "key"), ("txt", "txt")):
        store = os.path.join(path, name)
        must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", store])
        gen = " ".join(shlex.quote(w) for w in ["python3", "-c", GEN, str(N), field, "1" if shuffle else "0",
                                                 "1" if changed else "0"])
        must(["append-stream", store], stdin_from=gen)
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
    ra = root(os.path.join(d, "a"), changed=False, shuffle=False)
    rb = root(os.path.join(d, "b"), changed=True, shuffle=False)
    rs = root(os.path.join(d, "shuffled"), changed=True, shuffle=True)
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
