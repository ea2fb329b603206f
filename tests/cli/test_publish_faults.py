#!/usr/bin/python3
"""The publish path under failing syscalls: strace fault injection on every fsync,
fdatasync, pwrite64, pwritev and ftruncate call of an append with checkpoints.

A store (zstd, and raw, whose records go out through pwritev) holding 30 records gets
25 more through `append-stream --checkpoint-every 10`, so the published states are 30,
40, 50 and 55 records. The run is repeated once per
call index N of each syscall with `strace -e inject=SYSCALL:error=E:when=N`, for E in
EIO (every syscall), ENOSPC and EFBIG (fsync, pwrite64) and EINTR (every syscall).
After every run:
  - the store opens and `zrec verify` passes;
  - it holds exactly a published state, and its records are that prefix of the input;
  - the exit code and message are true: exit 0 means all 55 records; a failure that
    says "holds N records" or "the new static page was written (N records published)"
    holds N; a failure that claims nothing left the 30 it had;
  - EINTR is retried, never reported: those runs exit 0 with 55 records.
The runs that fail the fsync after the new static page was written are the ones that
used to truncate the store below what that page references (issue 9, defect 1).

A third case appends ~33 MiB so that the writer's early writeback (sync_file_range,
whole pages, 8 MiB at a time) runs, and fails each of those calls with EIO (exit 1,
"cannot write back", the store at its last checkpoint) and EINTR (retried, exit 0).

Needs: ZREC (path of the zrec binary), strace.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import STRACE_NO_LEAK_CHECK, must, must_out  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = os.environ.get("ZREC")
if not ZREC or not os.access(ZREC, os.X_OK):
    sys.exit("test_publish_faults: set ZREC to the zrec binary (got %r)" % ZREC)
STRACE = shutil.which("strace")
if STRACE is None:
    sys.exit("test_publish_faults: strace is missing (scripts/setup.sh installs it)")

SYSCALLS = ["fsync", "fdatasync", "pwrite64", "pwritev", "ftruncate"]
# Records zstd makes smaller (so the zstd store's appends print no codec warning besides
# the one error line the faults are checked for).
OLD = [b"old%05d " % i + b"payload " * 12 for i in range(30)]
NEW = [b"new%05d " % i + b"payload " * 12 for i in range(25)]
STATES = {30, 40, 50, 55}
FIGURES = []


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run(args, stdin=None, prefix=()):
    p = subprocess.run(list(prefix) + [ZREC] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")




def make_base(d, codec):
    base = os.path.join(d, "base-" + codec)
    must(["-q", "create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--shards", "2", "--codec", codec, base])
    must(["-q", "append-stream", base], stdin=b"".join(x + b"\n" for x in OLD))
    return base


APPEND = ["append-stream", "--checkpoint-every", "10"]


def call_counts(d, base):
    """How many times the append calls each syscall (strace -c over a clean run)."""
    store = os.path.join(d, "count-" + os.path.basename(base))
    shutil.copytree(base, store)
    summary = os.path.join(d, "strace-c")
    rc, _, err = run(APPEND + [store], NEW_INPUT, prefix=[STRACE, *STRACE_NO_LEAK_CHECK, "-f", "-c", "-o", summary, "-e",
                                                          "trace=" + ",".join(SYSCALLS)])
    expect(rc == 0, "the uninjected run failed: " + err)
    counts = {}
    for line in open(summary):
        fields = line.split()
        if len(fields) >= 5 and fields[-1] in SYSCALLS:
            counts[fields[-1]] = int(fields[3])
    shutil.rmtree(store)
    return counts


NEW_INPUT = b"".join(x + b"\n" for x in NEW)


def published_prefix(store, records, is_state, what):
    """Checks that the store verifies, holds a published state (is_state(length)) and
    that its records are that prefix of `records`; returns its length."""
    vrc, vout, verr = run(["verify", "-q", store])
    expect(vrc == 0, "%s: verify fails afterwards: %s %s" % (what, vout.decode(errors="replace"), verr))
    length = json.loads(must_out(["info", "--json", store]))["length"]
    expect(is_state(length), "%s: the store holds %d records, not a published state" % (what, length))
    raw = must_out(["cat", "--format", "raw", store])
    expect(raw == b"".join(records[:length]), "%s: the %d records are not the input's prefix" % (what, length))
    return length


def check_after(store, rc, err, what):
    length = published_prefix(store, OLD + NEW, lambda n: n in STATES, what)
    if rc == 0:
        expect(length == 55, "%s: exit 0 but the store holds %d of 55 records" % (what, length))
        return "ok"
    expect(rc == 1, "%s: exit %d, not 1 (%s)" % (what, rc, err))
    lines = err.strip().splitlines()
    expect(len(lines) == 1, "%s: expected one line of error, got %r" % (what, err))
    written = re.search(r"the new static page was written \((\d+) records published\)", err)
    held = re.findall(r"holds (\d+) records", err)
    previous = re.search(r"still holds its previous state: (\d+) records", err)
    if held:
        claimed = int(held[-1])
    elif written:
        claimed = int(written.group(1))
    elif previous:
        claimed = int(previous.group(1))
    else:
        claimed = 30
    expect(claimed == length, "%s: the message says %d records but the store holds %d: %s" %
           (what, claimed, length, err.strip()))
    if written:
        expect(int(written.group(1)) == length, "%s: 'new static page written' but the store holds %d: %s" %
               (what, length, err.strip()))
    return "failed"


def every_call_fails(d, codec, all_errors):
    base = make_base(d, codec)
    counts = call_counts(d, base)
    expect(counts.get("fsync", 0) >= 8, "expected the checkpoints to fsync, counts %r" % counts)
    small = os.environ.get("ZREC_SANITIZED") == "1"
    plan = []
    for sc, n in sorted(counts.items()):
        errors = ["EIO", "EINTR"] + (["ENOSPC", "EFBIG"] if all_errors and sc in ("fsync", "pwrite64") else [])
        for e in errors:
            for when in range(1, n + 1):
                if small and e != "EIO" and when % 3 != 0:
                    continue
                plan.append((sc, e, when))
    outcomes = {"ok": 0, "failed": 0}
    page_sync_failures = 0
    for i, (sc, e, when) in enumerate(plan):
        store = os.path.join(d, "%s-%d" % (codec, i))
        shutil.copytree(base, store)
        what = "%s: %s=%s at call %d" % (codec, sc, e, when)
        rc, _, err = run(APPEND + [store], NEW_INPUT,
                         prefix=[STRACE, *STRACE_NO_LEAK_CHECK, "-f", "-o", "/dev/null", "-e", "inject=%s:error=%s:when=%d" % (sc, e, when)])
        outcome = check_after(store, rc, err, what)
        if e == "EINTR":
            expect(outcome == "ok", "%s: EINTR was reported instead of retried: %s" % (what, err.strip()))
        if "the new static page was written" in err:
            page_sync_failures += 1
        outcomes[outcome] += 1
        shutil.rmtree(store)
    expect(page_sync_failures >= 3, "no run failed after the page write (%d); the plan missed the publish" %
           page_sync_failures)
    FIGURES.append("%s: %d injected runs over %s (%d failed truthfully, %d succeeded; %d failed after the new page "
                   "was written)" % (codec, len(plan), counts, outcomes["failed"], outcomes["ok"], page_sync_failures))


def test_every_call_fails_zstd(d):
    every_call_fails(d, "zstd", all_errors=True)


def test_every_call_fails_raw(d):
    # Raw records go out through pwritev.
    every_call_fails(d, "raw", all_errors=False)


def test_early_writeback_fails(d):
    """The writer starts writeback early (sync_file_range) once a file has 8 MiB not yet
    started; the kernel may report a write error there instead of at the next fsync, so
    a failure must fail the command like a failed write, and EINTR must be retried."""
    lines = [b"%07d:" % i + b"x" * (i % 150) for i in range(400000)]  # ~33 MiB
    store0 = os.path.join(d, "wb-base")
    must(["-q", "create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--shards", "1", "--codec", "raw", store0])
    stdin = b"".join(x + b"\n" for x in lines)
    args = ["append-stream", "--checkpoint-every", "100000"]
    summary = os.path.join(d, "wb-strace-c")
    count = os.path.join(d, "wb-count")
    shutil.copytree(store0, count)
    rc, _, err = run(args + [count], stdin, prefix=[STRACE, *STRACE_NO_LEAK_CHECK, "-f", "-c", "-o", summary, "-e",
                                                   "trace=sync_file_range"])
    expect(rc == 0, "the uninjected run failed: " + err)
    calls = [int(l.split()[3]) for l in open(summary) if l.split()[-1:] == ["sync_file_range"]]
    expect(calls and calls[0] >= 3, "expected early writeback calls, strace -c says %r" % open(summary).read())
    shutil.rmtree(count)
    runs = 0
    for e in ("EIO", "EINTR"):
        for when in range(1, calls[0] + 1):
            store = os.path.join(d, "wb-%s-%d" % (e, when))
            shutil.copytree(store0, store)
            rc, _, err = run(args + [store], stdin, prefix=[STRACE, *STRACE_NO_LEAK_CHECK, "-f", "-o", "/dev/null", "-e",
                                                           "inject=sync_file_range:error=%s:when=%d" % (e, when)])
            what = "sync_file_range=%s at call %d" % (e, when)
            length = published_prefix(store, lines, lambda n: n % 100000 == 0, what)
            if e == "EINTR":
                expect(rc == 0 and length == len(lines), "%s: not retried: rc %d, %d records: %s" % (what, rc, length, err))
            else:
                expect(rc == 1 and "cannot write back" in err and "Input/output error" in err,
                       "%s: rc %d, stderr %r" % (what, rc, err))
                # Once a checkpoint was published, the message says how many records the
                # store holds; before that, the store is as it was and nothing is claimed.
                claims = re.findall(r"holds (\d+) records", err)
                expect([int(c) for c in claims] == ([length] if length else []),
                       "%s: the message claims %r, the store holds %d: %s" % (what, claims, length, err.strip()))
            shutil.rmtree(store)
            runs += 1
    FIGURES.append("early writeback: %d sync_file_range calls, each failed with EIO and EINTR (%d runs)" %
                   (calls[0], runs))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases([test_every_call_fails_zstd, test_every_call_fails_raw, test_early_writeback_fails],
                                   "zrec-publish-faults-", figures=FIGURES))
