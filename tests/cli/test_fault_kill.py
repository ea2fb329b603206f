#!/usr/bin/python3
"""SIGKILL at random moments: a store is always at its last published state.

For each kind of writer (append-npy, append-files, append-stream, recompress, concat)
this runs TRIALS trials. A trial starts the command on a fresh copy of the same
inputs, sleeps a random time drawn from [0, the command's run time] (the fastest of
three uninterrupted runs, so a fast CI machine does not make kills land after the
end), and SIGKILLs it. A trial where the command finished first counts as
"completed" and narrows the window for the next ones by 30%.
Then:
  - `zrec verify` passes on every store involved (the target, and for recompress and
    concat the sources and, if it exists, the destination);
  - append-*: the store holds exactly its records from before plus a prefix of the
    input that ends at a publication (a --checkpoint-every boundary, or all of it),
    byte for byte (per-record SHA-256 from `zrec digest --per-record`, against the
    inputs hashed here);
  - recompress/concat: DST is absent or complete with SRC's digest; SRC is unchanged;
    at most the hidden temporary ".DST.zrec-tmp-*" is left beside it, and the next run
    of the same command removes it and succeeds;
  - nothing else appears in the working directory.
Prints the number of trials per kind, how many were killed mid-run, and the distinct
published states seen.

Needs: ZREC (path of the zrec binary), python3-numpy. TRIALS (default 20) and SEED
may be set in the environment.
"""
import hashlib
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import (  # noqa: E402  (tests/cli/cli_helpers.py)
    SANITIZED, expect, must_out as must, require_zrec, run_zrec as run, tree_hash)

ZREC = require_zrec("test_fault_kill")
TRIALS = int(os.environ.get("TRIALS", "20"))
SEED = int(os.environ.get("SEED", "20261129"))
rnd = random.Random(SEED)

FIGURES = []


def sha(b):
    return hashlib.sha256(b).hexdigest()


def ragged_logical(payload, dims):
    return struct.pack("<%dQ" % len(dims), *dims) + payload


def record_hashes(store):
    out = must(["digest", "--per-record", store]).decode()
    # "ID<TAB>hash" lines; IDs run 0, 1, 2, ...
    lines = [l.split("\t") for l in out.splitlines() if l.strip()]
    expect([int(i) for i, _ in lines] == list(range(len(lines))), "digest --per-record IDs are not 0..n-1")
    return [h for _, h in lines]


def verified(store):
    rc, out, err = run(["verify", store])
    expect(rc == 0, "verify fails after the kill (rc %d):\n%s%s" % (rc, out.decode(), err))


def listing(d):
    return sorted(os.listdir(d))


def killed_run(args, stdin_path, duration, cwd):
    """Runs zrec args, kills it at a random moment; returns (killed, seconds waited)."""
    delay = rnd.uniform(0, duration)
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        p = subprocess.Popen([ZREC] + args, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
        time.sleep(delay)
        killed = p.poll() is None
        if killed:
            p.send_signal(signal.SIGKILL)
        _, err = p.communicate(timeout=300)
        if not killed:
            expect(p.returncode == 0, "zrec %s failed on its own: %s" % (" ".join(args), err.decode()))
        else:
            expect(p.returncode in (-signal.SIGKILL, 0), "unexpected exit %d" % p.returncode)
            killed = p.returncode == -signal.SIGKILL
        return killed, delay
    finally:
        if stdin_path:
            stdin.close()


def timed(fn):
    t = time.monotonic()
    fn()
    return time.monotonic() - t


# ---------------------------------------------------------------------------------------
# append-* kinds: (name, how to create the store, inputs, command, expected logical records)

CHECKPOINT = 500


class AppendKind:
    def __init__(self, name, create_args, first_input, make_input, command):
        self.name = name
        self.create_args = create_args
        self.first_input = first_input  # (path, logical records) appended before the trials
        self.make_input = make_input    # (work dir) -> (stdin path or None, extra args, logical records)
        self.command = command

    def run(self, root):
        base = os.path.join(root, "template")
        must(["create"] + self.create_args + [base])
        path, first_logical, tail = self.first_input(root)
        with open(path, "rb") as f:
            rc, _, err = run(self.command + [base] + tail, stdin=f.read())
        expect(rc == 0, "initial append failed: %s" % err)
        stdin_path, tail, logical = self.make_input(root)
        before = [sha(r) for r in first_logical]
        expected = before + [sha(r) for r in logical]
        expect(record_hashes(base) == before, "initial store is not as appended")
        n_new = len(logical)
        allowed = {len(before) + k for k in range(0, n_new + 1, CHECKPOINT)} | {len(before) + n_new}
        opts = ["--checkpoint-every", str(CHECKPOINT), "--window-mib", "1"]

        def cmd(extra=()):
            return self.command + opts + list(extra) + [trial_store] + tail

        work = os.path.join(root, "work")
        trial_store = os.path.join(work, "s")

        def fresh():
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
            shutil.copytree(base, trial_store)

        with open(stdin_path, "rb") as f:
            data = f.read()
        runs = []
        for _ in range(3):
            fresh()
            runs.append(timed(lambda: must(cmd(), stdin=data)))
            expect(record_hashes(trial_store) == expected, "an uninterrupted run does not append the input exactly")
        duration = measured = min(runs)
        killed = 0
        states = set()
        for t in range(TRIALS):
            fresh()
            k, _ = killed_run(cmd(), stdin_path, duration, work)
            killed += k
            if not k:  # the command outran the kill: aim earlier from now on
                duration *= 0.7
            expect(listing(work) == ["s"], "stray files after the kill: %r" % listing(work))
            verified(trial_store)
            got = record_hashes(trial_store)
            expect(len(got) in allowed, "trial %d: %d records is not a published state (%s)" %
                   (t, len(got), sorted(allowed)[:6]))
            expect(got == expected[:len(got)], "trial %d: contents differ from the published prefix" % t)
            states.add(len(got) - len(before))
            # The next writer resumes from the published state (overwriting leftovers).
            if t % 5 == 0:
                rc, _, err = run(cmd(["--skip-first", str(len(got) - len(before))]), stdin=data)
                expect(rc == 0, "resume after the kill failed: %s" % err)
                expect(record_hashes(trial_store) == expected, "resumed store is not the whole input")
                verified(trial_store)
        FIGURES.append("%s: %d trials, %d killed mid-run, run %.2f s, published states seen %d (records appended: %s)"
                       % (self.name, TRIALS, killed, measured, len(states), sorted(states)[:8]))
        expect(killed >= TRIALS // 2, "only %d of %d trials killed the command mid-run" % (killed, TRIALS))


def npy_first(root):
    rng = np.random.default_rng(1)
    arrays = [rng.integers(0, 1000, size=rng.integers(1, 50), dtype="<i4") for _ in range(37)]
    path = os.path.join(root, "first.npys")
    with open(path, "wb") as f:
        for a in arrays:
            np.save(f, a)
    return path, [ragged_logical(a.tobytes(), a.shape) for a in arrays], ["-"]


def npy_input(root):
    rng = np.random.default_rng(2)
    n = 3000 if not SANITIZED else 1500
    arrays = [rng.integers(0, 50, size=rng.integers(500, 3000), dtype="<i4") for _ in range(n)]
    path = os.path.join(root, "input.npys")
    with open(path, "wb") as f:
        for a in arrays:
            np.save(f, a)
    return path, ["-"], [ragged_logical(a.tobytes(), a.shape) for a in arrays]


def files_first(root):
    d = os.path.join(root, "first_files")
    os.makedirs(d)
    recs = []
    for i in range(11):
        b = (b"first %d " % i) * (i + 1)
        with open(os.path.join(d, "%03d" % i), "wb") as f:
            f.write(b)
        recs.append(b)
    names = os.path.join(root, "first_list")
    with open(names, "w") as f:
        f.write("".join(os.path.join(d, "%03d" % i) + "\n" for i in range(11)))
    return names, [ragged_logical(b, (len(b),)) for b in recs], ["-"]


def files_input(root):
    rng = np.random.default_rng(3)
    d = os.path.join(root, "files")
    os.makedirs(d)
    n = 3000 if not SANITIZED else 1500
    recs = []
    for i in range(n):
        b = bytes(rng.integers(0, 16, size=int(rng.integers(1000, 8000)), dtype=np.uint8))
        with open(os.path.join(d, "%05d" % i), "wb") as f:
            f.write(b)
        recs.append(b)
    names = os.path.join(root, "list")
    with open(names, "w") as f:
        f.write("".join(os.path.join(d, "%05d" % i) + "\n" for i in range(n)))
    return names, ["-"], [ragged_logical(b, (len(b),)) for b in recs]


def stream_first(root):
    lines = [b"first line %d" % i for i in range(23)]
    path = os.path.join(root, "first.txt")
    with open(path, "wb") as f:
        f.write(b"".join(l + b"\n" for l in lines))
    return path, [ragged_logical(l, (len(l),)) for l in lines], []


def stream_input(root):
    rng = np.random.default_rng(4)
    n = 20000 if not SANITIZED else 8000
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta"]
    lines = [b" ".join(words[j] for j in rng.integers(0, 8, size=int(rng.integers(5, 120)))) for _ in range(n)]
    path = os.path.join(root, "input.txt")
    with open(path, "wb") as f:
        f.write(b"".join(l + b"\n" for l in lines))
    return path, [], [ragged_logical(l, (len(l),)) for l in lines]


APPEND_KINDS = [
    AppendKind("append-npy", ["--ragged", "--ndim", "1", "--dtype", "<i4", "--shards", "3"], npy_first, npy_input,
               ["append-npy"]),
    AppendKind("append-files", ["--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "raw"], files_first,
               files_input, ["append-files"]),
    AppendKind("append-stream", ["--ragged", "--ndim", "1", "--dtype", "|u1", "--checksum"], stream_first,
               stream_input, ["append-stream"]),
]


def make_append_test(kind):
    def t(root):
        kind.run(root)
    t.__name__ = "test_sigkill_" + kind.name.replace("-", "_")
    return t


# ---------------------------------------------------------------------------------------
# recompress and concat: DST is all or nothing, sources untouched


def build_source(root, name, seed, n):
    path = os.path.join(root, name)
    must(["create", "--dense", "--dtype", "<i4", "--shape", "64,32", "--codec", "raw", path])
    rng = np.random.default_rng(seed)
    a = (rng.integers(0, 64, size=(n, 64, 32)) * np.arange(32)).astype("<i4")
    buf = os.path.join(root, name + ".npy")
    np.save(buf, a)
    must(["-q", "append-npy", path, buf])
    os.remove(buf)
    return path


def transfer_trials(root, label, make_args, sources):
    src_hashes = {s: tree_hash(s) for s in sources}
    want = must(["digest"] + sources).decode().split()[0] if len(sources) == 1 else None
    work = os.path.join(root, "out")
    os.makedirs(work, exist_ok=True)
    dst = os.path.join(work, "dst")
    runs = []
    for _ in range(3):
        shutil.rmtree(work)
        os.makedirs(work)
        runs.append(timed(lambda: must(make_args(dst))))
    duration = measured = min(runs)
    verified(dst)
    if want is None:  # concat: the digest of the first complete result stands for all
        want = must(["digest", dst]).decode().split()[0]
    else:
        expect(must(["digest", dst]).decode().split()[0] == want, "recompress changed the records")
    killed = complete = 0
    for t in range(TRIALS):
        shutil.rmtree(work)
        os.makedirs(work)
        k, _ = killed_run(make_args(dst), None, duration, root)
        killed += k
        if not k:
            duration *= 0.7
        left = listing(work)
        temps = [n for n in left if n.startswith(".dst.zrec-tmp-")]
        expect(set(left) <= {"dst"} | set(temps) and len(temps) <= 1, "trial %d: stray files %r" % (t, left))
        for s in sources:
            expect(tree_hash(s) == src_hashes[s], "trial %d: source %s changed" % (t, s))
            verified(s)
        if "dst" in left:
            complete += 1
            verified(dst)
            expect(must(["digest", dst]).decode().split()[0] == want, "trial %d: DST is not SRC's records" % t)
        elif t % 4 == 0:
            # The next run removes the abandoned temporary and succeeds.
            must(make_args(dst))
            expect(listing(work) == ["dst"], "trial %d: the rerun left %r" % (t, listing(work)))
            verified(dst)
            expect(must(["digest", dst]).decode().split()[0] == want, "trial %d: rerun result differs" % t)
    FIGURES.append("%s: %d trials, %d killed mid-run, run %.2f s, DST complete after %d, absent after %d"
                   % (label, TRIALS, killed, measured, complete, TRIALS - complete))
    expect(killed >= TRIALS // 2, "only %d of %d trials killed the command mid-run" % (killed, TRIALS))


def test_sigkill_recompress(root):
    n = 1200 if not SANITIZED else 400
    src = build_source(root, "src", 5, n)
    transfer_trials(root, "recompress", lambda dst: ["--threads", "2", "recompress", "--codec", "zstd", "--level", "9", "--checksum",
                                                      "--window-mib", "1", src, dst], [src])


def test_sigkill_concat(root):
    n = 600 if not SANITIZED else 200
    a = build_source(root, "a", 6, n)
    b = build_source(root, "b", 7, n)
    transfer_trials(root, "concat", lambda dst: ["--threads", "2", "concat", "--codec", "zstd", "--level", "9",
                                                  "--window-mib", "1", a, b, dst], [a, b])


TESTS = [make_append_test(k) for k in APPEND_KINDS] + [test_sigkill_recompress, test_sigkill_concat]


def main():
    return case_runner.run_cases(TESTS, "zrec-fault-kill-", figures=FIGURES)


if __name__ == "__main__":
    sys.exit(main())
