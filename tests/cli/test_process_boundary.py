#!/usr/bin/python3
"""The CLI's process boundary (issue 9): what zrec inherits from its caller must not
reach a store it was not asked to write.

- closed standard descriptors: every writing subcommand run with fd 0, 1 or 2 closed
  (with --progress and with warnings) leaves the same store as a normal run, which
  verifies (defect 2);
- --wait blocked on a held lock ends within a second on SIGINT/SIGTERM with 130/143
  and leaves nothing behind, for every command that takes a store's lock (defect 3);
- an output path (-o, --manifest, DST) inside or onto a store the command reads or
  writes, through symlinks or hard links, is refused before anything is written
  (defect 8);
- every unsigned option refuses a negative number as a usage error (exit 2);
- an output path equal to a --wait reader's own input store cannot deadlock (see
  test_output_guard for the store cases).

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import fcntl
import io
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
from cli_helpers import (  # noqa: E402  (tests/cli/cli_helpers.py)
    expect, in_lock_wait, must_out as must, require_zrec, run_zrec as run, wait_until)

ZREC = require_zrec("test_process_boundary")
FIGURES = []


def digest(store):
    return must(["digest", "--per-record", store])


def verified(store, what):
    rc, out, err = run(["verify", store])
    expect(rc == 0, "%s: verify fails (rc %d):\n%s%s" % (what, rc, out.decode(), err))


def snapshot(store):
    """Every file of a store, name -> bytes."""
    return {n: open(os.path.join(store, n), "rb").read() for n in sorted(os.listdir(store))}


def npy_bytes(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def make_inputs(d):
    """A source store (ragged |u1, zstd) of 400 text-like records, a .npy, files, a text."""
    rng = np.random.default_rng(7)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta"]
    lines = [b" ".join(words[i] for i in rng.integers(0, len(words), 20)) + b" %d" % k for k in range(400)]
    with open(os.path.join(d, "lines.txt"), "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    src = os.path.join(d, "src")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", src])
    must(["append-stream", "-i", os.path.join(d, "lines.txt"), src])
    with open(os.path.join(d, "a.npy"), "wb") as f:
        f.write(npy_bytes(np.frombuffer(b"hello npy record", dtype=np.uint8)))
    for k in range(3):
        with open(os.path.join(d, "f%d" % k), "wb") as f:
            f.write(lines[k])
    return src


def shell(cmd, cwd):
    """Runs `cmd` in bash (so that `2>&-` and friends apply to zrec): rc, stdout, stderr."""
    p = subprocess.run(["bash", "-c", cmd], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


# --- defect 2: closed standard descriptors -------------------------------------------

NEW = "--ragged --dtype '|u1' --ndim 1"


# Each writing subcommand: (name, setup shell command, the command, the store it writes,
# the exit code expected). {z} is zrec; run in the case's directory.
WRITERS = [
    ("create", "", "{z} {g} create " + NEW + " out", "out", 0),
    ("append-npy", "{z} create " + NEW + " out", "{z} {g} append-npy out a.npy", "out", 0),
    ("append-files", "{z} create " + NEW + " out", "{z} {g} append-files --skip-missing out f0 missing f1 f2", "out", 0),
    ("append-stream", "{z} create " + NEW + " out", "{z} {g} append-stream -i lines.txt out", "out", 0),
    ("append-stream-stdin", "{z} create " + NEW + " out", "{z} {g} append-stream out", "out", 0),
    ("recompress", "", "{z} {g} recompress --codec raw --shards 3 src out", "out", 0),
    ("concat", "", "{z} {g} concat src src out", "out", 0),
    ("train-dict", "", "{z} {g} train-dict --tier small --samples 400 src -o out.dict", "src", 0),
]

CLOSES = [("stdin", "<&-"), ("stdout", ">&-"), ("stderr", "2>&-")]


def prepared_copy(d, sub, name, setup):
    """d/sub: a copy of d's inputs (all but ref/ and run/), with writer `name`'s setup run in it."""
    dest = os.path.join(d, sub)
    os.makedirs(dest)
    for f in os.listdir(d):
        if f not in ("ref", "run"):
            subprocess.run(["cp", "-a", os.path.join(d, f), dest], check=True)
    if setup:
        expect(shell(setup.format(z=ZREC), dest)[0] == 0, "setup of " + name)
    return dest


def test_closed_standard_fds(d):
    src = make_inputs(d)
    src_files = snapshot(src)
    runs = 0
    for name, setup, cmd, store, want_rc in WRITERS:
        for progress in ("", "--progress"):
            # The reference: the same command with every descriptor open.
            ref_dir = prepared_copy(d, "ref", name, setup)
            rc, _, err = shell(cmd.format(z=ZREC, g=progress) + " < /dev/null", ref_dir)
            expect(rc == want_rc, "%s (reference): rc %d: %s" % (name, rc, err))
            ref_store = os.path.join(ref_dir, store)
            ref_digest = digest(ref_store)
            ref_dict = open(os.path.join(ref_dir, "out.dict"), "rb").read() if name == "train-dict" else None
            for fd_name, redirect in CLOSES:
                run_dir = prepared_copy(d, "run", name, setup)
                what = "%s %s with %s closed" % (name, progress or "(no progress)", fd_name)
                stdin = "" if redirect == "<&-" else " < /dev/null"
                rc, _, err = shell(cmd.format(z=ZREC, g=progress) + " " + redirect + stdin, run_dir)
                runs += 1
                expect(rc == want_rc, "%s: rc %d, want %d: %s" % (what, rc, want_rc, err))
                out_store = os.path.join(run_dir, store)
                verified(out_store, what)
                expect(digest(out_store) == ref_digest, "%s: the store differs from the normal run's" % what)
                if name in ("recompress", "concat", "train-dict"):
                    expect(snapshot(os.path.join(run_dir, "src")) == src_files, "%s: the source store changed" % what)
                if ref_dict is not None:
                    expect(open(os.path.join(run_dir, "out.dict"), "rb").read() == ref_dict,
                           "%s: the dictionary differs from the normal run's" % what)
                subprocess.run(["rm", "-rf", run_dir], check=True)
            subprocess.run(["rm", "-rf", ref_dir], check=True)
    FIGURES.append("closed-descriptor runs: %d (%d writing commands x fd 0/1/2 x with/without --progress)"
                   % (runs, len(WRITERS)))


# --- defect 3: --wait is interruptible ------------------------------------------------

HOLDER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""

# Every command that takes a store's lock: (name, argv after --wait, paths that must not
# appear). The held store is 'held'.
WAITERS = [
    ("verify", ["verify", "held"], []),
    ("digest", ["digest", "held", "-o", "out.txt"], ["out.txt"]),
    ("digest-two", ["digest", "src", "held", "-o", "out.txt"], ["out.txt"]),
    ("recompress", ["recompress", "--codec", "raw", "held", "dst"], ["dst"]),
    ("concat", ["concat", "src", "held", "dst"], ["dst"]),
    ("cat", ["cat", "--format", "raw", "held", "-o", "out.bin"], ["out.bin"]),
    ("info", ["info", "held"], []),
    ("train-dict", ["train-dict", "--tier", "small", "held", "-o", "out.dict"], ["out.dict"]),
    ("append-npy", ["append-npy", "held", "a.npy"], []),
    ("append-files", ["append-files", "held", "f0"], []),
    ("append-stream", ["append-stream", "-i", "lines.txt", "held"], []),
    ("bench", ["bench", "--seconds", "0.2", "held"], []),
]


def wait_in_lock_wait(p, meta, what):
    """Until zrec process p sleeps waiting for the lock on `meta` (it opens meta.zr, then
    waits for its lock; a sanitized build starts slowly): cli_helpers.in_lock_wait."""
    wait_until(lambda: in_lock_wait(p.pid, meta), "%s waiting for the held lock" % what, proc=p)


def test_wait_is_interruptible(d):
    make_inputs(d)
    must(["recompress", os.path.join(d, "src"), os.path.join(d, "held")])
    held = os.path.join(d, "held")
    before_store = snapshot(held)
    worst = 0.0
    runs = 0
    for name, argv, outputs in WAITERS:
        for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            holder = subprocess.Popen([sys.executable, "-c", HOLDER, os.path.join(held, "meta.zr")],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            try:
                expect(holder.stdout.readline().strip() == b"locked", "the holder did not take the lock")
                before = sorted(os.listdir(d))
                p = subprocess.Popen([ZREC, "--wait"] + argv, cwd=d, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                wait_in_lock_wait(p, os.path.join(held, "meta.zr"), "zrec --wait " + name)
                expect(p.poll() is None, "%s: did not wait for the held lock (rc %s)" % (name, p.poll()))
                t0 = time.monotonic()
                p.send_signal(sig)
                try:
                    _, err = p.communicate(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
                    raise AssertionError("zrec --wait %s ignored %s while waiting for the lock" % (name, sig.name))
                took = time.monotonic() - t0
                worst = max(worst, took)
                runs += 1
                what = "zrec --wait %s, %s" % (name, sig.name)
                expect(took < 1.0, "%s: took %.2f s to stop" % (what, took))
                expect(p.returncode == code, "%s: rc %d, want %d: %s" % (what, p.returncode, code, err.decode()))
                expect(b"interrupted" in err, "%s: no 'interrupted' message: %s" % (what, err.decode()))
                expect(sorted(os.listdir(d)) == before, "%s: left %s" % (what, sorted(set(os.listdir(d)) - set(before))))
                for o in outputs:
                    expect(not os.path.exists(os.path.join(d, o)), "%s: left %s" % (what, o))
            finally:
                holder.stdin.close()
                holder.wait()
    expect(snapshot(held) == before_store, "the held store changed")
    verified(held, "the held store")
    FIGURES.append("interrupted --wait runs: %d (%d commands x SIGINT/SIGTERM), slowest stop %.3f s"
                   % (runs, len(WAITERS), worst))


def test_wait_still_waits(d):
    """A cancellable wait still takes the lock once the holder lets go."""
    make_inputs(d)
    src = os.path.join(d, "src")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, os.path.join(src, "meta.zr")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    expect(holder.stdout.readline().strip() == b"locked", "the holder did not take the lock")
    p = subprocess.Popen([ZREC, "--wait", "append-npy", src, os.path.join(d, "a.npy")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_in_lock_wait(p, os.path.join(src, "meta.zr"), "zrec --wait append-npy")
    expect(p.poll() is None, "append-npy did not wait")
    holder.stdin.close()
    holder.wait()
    _, err = p.communicate(timeout=30)
    expect(p.returncode == 0, "append-npy after the wait: rc %d: %s" % (p.returncode, err.decode()))
    expect(b"now holds 401" in err, "append-npy: %s" % err.decode())


# --- defect 8: outputs inside the stores read or written ------------------------------

INSIDE = "which this command reads or writes; choose a path outside it"


def refused(d, argv, store, option, out_path, stdin=None):
    """zrec argv fails with exit 1 and the one-line refusal; `store` is byte for byte
    unchanged and verifies."""
    before = snapshot(store)
    rc, _, err = run(argv, stdin=stdin, cwd=d)
    what = "zrec " + " ".join(argv)
    expect(rc == 1, "%s: rc %d, want 1: %s" % (what, rc, err))
    lines = err.strip().splitlines()
    expect(len(lines) == 1 and option + " '" + out_path + "'" in lines[0] and
           ("is inside store" in lines[0] and INSIDE in lines[0] or "is the input file" in lines[0]),
           "%s: message %r" % (what, err))
    expect(snapshot(store) == before, "%s: the store changed" % what)
    verified(store, what)


def test_output_guard(d):
    src = make_inputs(d)
    must(["train-dict", "--tier", "small", "--samples", "400", "src", "-o", "d.dict"], cwd=d)
    must(["recompress", "--dict", "d.dict", "src", "zd"], cwd=d)
    zd = os.path.join(d, "zd")
    os.symlink("src", os.path.join(d, "link"))
    os.symlink("src/meta.zr", os.path.join(d, "meta-link"))
    os.symlink("src/new-file", os.path.join(d, "dangling"))
    os.mkdir(os.path.join(d, "elsewhere"))
    os.link(os.path.join(src, "meta.zr"), os.path.join(d, "elsewhere", "hard"))
    cases = [
        (["train-dict", "--tier", "small", "zd", "-o", "zd/dict.zr"], zd, "-o", "zd/dict.zr"),
        (["train-dict", "--tier", "small", "src", "-o", "src/dict.zr"], src, "-o", "src/dict.zr"),
        (["train-dict", "--tier", "small", "zd", "-o", "./zd/../zd/dict.zr"], zd, "-o", "./zd/../zd/dict.zr"),
        (["recompress", "src", "src/dict.zr"], src, "DST", "src/dict.zr"),
        (["recompress", "src", "link/sub"], src, "DST", "link/sub"),
        (["concat", "zd", "src", "src/x"], src, "DST", "src/x"),
        (["cat", "src", "-o", "src/meta.zr"], src, "-o", "src/meta.zr"),
        (["cat", "src", "-o", "link/meta.zr"], src, "-o", "link/meta.zr"),
        (["cat", "src", "-o", "meta-link"], src, "-o", "meta-link"),
        (["cat", "src", "-o", "dangling"], src, "-o", "dangling"),
        (["cat", "src", "-o", "elsewhere/hard"], src, "-o", "elsewhere/hard"),
        (["cat", "src", "-o", "src/data_0.zr"], src, "-o", "src/data_0.zr"),
        (["digest", "zd", "src", "-o", "link/digest.txt"], src, "-o", "link/digest.txt"),
    ]
    for argv, store, option, out_path in cases:
        refused(d, argv, store, option, out_path)
    # Writers refuse a hard-linked meta.zr on its own (store_files), so the hard link goes
    # before the writing cases: they must meet the output guard, not that rule.
    os.unlink(os.path.join(d, "elsewhere", "hard"))
    writer_cases = [
        (["append-files", "--manifest", "src/meta.zr", "src", "f0"], src, "--manifest", "src/meta.zr"),
        (["append-files", "--manifest", "link/m.tsv", "src", "f0"], src, "--manifest", "link/m.tsv"),
        (["append-files", "--manifest", "meta-link", "src", "f0"], src, "--manifest", "meta-link"),
    ]
    for argv, store, option, out_path in writer_cases:
        refused(d, argv, store, option, out_path)
    cases += writer_cases
    expect(not os.path.exists(os.path.join(src, "new-file")), "the dangling link's target was created")
    # An input .npy file is not an output either.
    rc, _, err = run(["train-dict", "--for-ragged", "a.npy", "-o", "a.npy"], cwd=d)
    expect(rc == 1 and "is the input file 'a.npy'" in err, "train-dict -o its own input: rc %d %s" % (rc, err))
    # Outputs next to the stores are fine.
    must(["cat", "--format", "raw", "src", "-o", "beside.bin"], cwd=d)
    must(["append-files", "--manifest", "m.tsv", "src", "f0"], cwd=d)
    FIGURES.append("refused outputs into stores: %d cases" % len(cases))


# --- weak point: unsigned options ------------------------------------------------------

COMMANDS = ["create", "append-npy", "append-files", "append-stream", "cat", "info", "train-dict",
            "recompress", "concat", "digest", "verify", "bench"]


def unsigned_options():
    """(command or None for the root, option) for every option whose --help value is N (a number)."""
    found = []
    for cmd in [None] + COMMANDS:
        rc, out, err = run(([cmd] if cmd else []) + ["--help"])
        expect(rc == 0, "zrec %s --help: rc %d" % (cmd, rc))
        for m in re.finditer(r"^\s+(?:-\w,)?(--[\w-]+)(?:,[\w-]+)?\s+N\s", out.decode(), re.M):
            found.append((cmd, m.group(1)))
    return found


def test_unsigned_options_refuse_negatives(d):
    found = unsigned_options()
    expect(len(found) >= 15, "found only %d unsigned options: %s" % (len(found), found))
    for cmd, opt in found:
        for value in ("-1", "-18446744073709551615"):
            argv = ([cmd] if cmd else ["info"]) if cmd else ["info"]
            argv = ([opt, value] + ["info"]) if cmd is None else [cmd, opt, value]
            rc, _, err = run(argv)
            what = "zrec %s" % " ".join(argv)
            expect(rc == 2, "%s: rc %d, want 2 (usage): %s" % (what, rc, err))
            expect(any(m in err for m in ("not a non-negative integer", "is out of range", "not a whole number")), "%s: message %r" % (what, err))
    # --skip-first -1 must not wrap to 2^64-1 and skip everything.
    make_inputs(d)
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    rc, _, err = run(["append-stream", "--skip-first", "-1", s], stdin=b"a\nb\n")
    expect(rc == 2 and "--skip-first: '-1' is not a non-negative integer" in err, "skip-first -1: %d %s" % (rc, err))
    rc, _, err = run(["append-stream", "--skip-first=-1", s], stdin=b"a\nb\n")
    expect(rc == 2, "--skip-first=-1: rc %d %s" % (rc, err))
    FIGURES.append("unsigned options checked: %d" % len(found))


# --- weak point: memory bounded by separators ----------------------------------------

# Runs argv with stdin from a file in a fresh Python, which prints the child's peak RSS:
# RUSAGE_CHILDREN of this process would include every zrec run before.
RSS_PROBE = r"""
import resource, subprocess, sys
with open(sys.argv[1], "rb") as f:
    p = subprocess.run(sys.argv[3:], cwd=sys.argv[2], stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.stderr.buffer.write(p.stderr)
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_rss_kib(argv, cwd, stdin_path):
    """rc, stderr, peak RSS (KiB) of `zrec argv` reading stdin from stdin_path."""
    p = subprocess.run([sys.executable, "-c", RSS_PROBE, stdin_path, cwd, ZREC] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    rc, rss = p.stdout.split()
    return int(rc), p.stderr.decode("utf-8", "replace"), int(rss)


def test_lines_are_bounded(d):
    make_inputs(d)
    big = os.path.join(d, "noseparator")
    with open(big, "wb") as f:  # 64 MiB without a newline or a NUL
        chunk = b"7" * (1 << 20)
        for _ in range(64):
            f.write(chunk)
    with open(os.path.join(d, "idx"), "wb") as f:
        f.write(b"1\n-1\n" + b"1" * 300 + b"\n")
    cases = [
        (["cat", "--format", "raw", "src", "--indices-from", "-"], "'-' line 1 is longer than 256 bytes: one record index per line"),
        (["cat", "--format", "raw", "src", "--indices-from", "idx"], "'idx' line 3 is longer than 256 bytes: one record index per line"),
        (["append-files", "src", "-"], "'-' line 1 is longer than 4096 bytes, more than any path: one name per line (or --null for NUL-separated names)"),
        (["append-files", "--null", "src", "-"], "'-' name 1 is longer than 4096 bytes, more than any path: names must be NUL-separated"),
        (["append-files", "--files-from", "-", "src"], "'-' line 1 is longer than 4096 bytes"),
        (["train-dict", "--files-from", "-", "-o", "x.dict"], "'-' line 1 is longer than 4096 bytes"),
        (["train-dict", "--null", "--files-from", "-", "-o", "x.dict"],
         "'-' name 1 is longer than 4096 bytes, more than any path: names must be NUL-separated"),
    ]
    before = snapshot(os.path.join(d, "src"))
    for argv, message in cases:
        rc, err, _ = peak_rss_kib(argv, d, big)
        what = "zrec " + " ".join(argv)
        expect(rc == 1, "%s: rc %d, want 1: %s" % (what, rc, err[:300]))
        expect(message in err and len(err.strip().splitlines()) == 1, "%s: message %r" % (what, err[:300]))
    expect(snapshot(os.path.join(d, "src")) == before, "the store changed")
    # Memory: a 64 MiB line costs no more than a few MiB (main held it all, and more).
    _, _, rss = peak_rss_kib(["append-files", "src", "-"], d, big)
    if os.environ.get("ZREC_SANITIZED") != "1":  # ASan's shadow memory inflates RSS
        expect(rss < 48 * 1024, "peak RSS %d KiB reading a 64 MiB list without separators" % rss)
    FIGURES.append("unbounded-line inputs refused: %d (64 MiB each), peak RSS of the children %d KiB" % (len(cases), rss))


# --- weak point: messages and --json escape what came from outside --------------------

def strings(doc):
    """Every string value in a parsed JSON document."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for v in doc.values():
            yield from strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v)


NASTY = b"st\x1b[31m\nX\xff\xfe\x01end"


def test_escaped_messages_and_json(d):
    dd = d.encode()
    store = os.path.join(dd, NASTY)
    # raw: a zstd store of one 2-byte record would add the first window's codec warning
    # (escaped the same way) to the one summary line this checks.
    rc, _, err = run([b"create", b"--ragged", b"--dtype", b"|u1", b"--ndim", b"1", b"--codec", b"raw", store])
    expect(rc == 0, "create with a nasty name: %s" % err)
    rc, _, err = run([b"append-stream", store], stdin=b"hi\n")
    expect(rc == 0, "append-stream: %s" % err)
    expect(err.count("\n") == 1 and "\x1b" not in err and "\\x1b[31m\\x0aX\\xff\\xfe\\x01end" in err,
           "append-stream summary not escaped: %r" % err)
    # Errors: one line, escaped.
    for argv in ([b"info", store + b"/nope"], [b"verify", store + b"/nope"], [b"cat", store, b"-o", store + b"/meta.zr"]):
        rc, _, err = run(argv)
        expect(rc != 0 and len(err.strip("\n").splitlines()) == 1 and "\x1b" not in err and "\\x1b" in err,
               "zrec %r: message not one escaped line: %r" % (argv, err))
    with open(os.path.join(d, "idx"), "wb") as f:
        f.write(b"1\x00\x1bx\n")
    rc, _, err = run([b"cat", store, b"--indices-from", os.path.join(dd, b"idx")])
    expect(rc != 0 and "'1\\x00\\x1bx'" in err and "\x00" not in err, "NUL in an index line: %r" % err)
    # Every --json output parses as UTF-8 JSON and carries the name (U+FFFD for the bad bytes).
    import json
    want_name = NASTY.decode("utf-8", "replace")
    for argv in ([b"info", b"--json", store], [b"verify", b"--json", store]):
        rc, out, err = run(argv)
        expect(rc == 0, "zrec %r: %s" % (argv, err))
        doc = json.loads(out.decode("utf-8"))
        expect(any(want_name in v for v in strings(doc)),
               "zrec %r: the store name %r is not in %s" % (argv, want_name, json.dumps(doc)[:300]))
    FIGURES.append("escaped outputs checked: append summary, 4 errors, info/verify --json")


# --- weak point: a --wait on the process that feeds us --------------------------------

def test_pipe_from_the_same_store_does_not_hang(d):
    """`zrec --wait cat --format npy src | zrec --wait append-npy src -`: whichever takes
    src's lock first, the other would wait for it forever (cat holds it while it writes
    more than a pipe holds; append-npy holds it while it waits for cat's output). The
    waiter sees that the holder is at the other end of its pipe and fails at once."""
    src = make_inputs(d)
    before = snapshot(src)
    seen = {"stdin": 0, "stdout": 0}
    for _ in range(6):
        cmd = "%s --wait cat --format npy src | %s --wait append-npy src -" % (ZREC, ZREC)
        t0 = time.monotonic()
        try:
            p = subprocess.run(["bash", "-c", cmd], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
        except subprocess.TimeoutExpired:
            raise AssertionError("cat | append-npy on one store, both --wait, hangs")
        err = p.stderr.decode("utf-8", "replace")
        m = re.search(r"zrec (cat|append-npy): store 'src' is held by process \d+, which is connected to (stdin|stdout) "
                      r"by a pipe: waiting for it would never end; write that output to a file first", err)
        expect(m is not None, "no deadlock message: %r" % err)
        expect((m.group(1), m.group(2)) in (("append-npy", "stdin"), ("cat", "stdout")), "message: %r" % err)
        seen[m.group(2)] += 1
        expect(time.monotonic() - t0 < 10, "took %.1f s" % (time.monotonic() - t0))
        expect(snapshot(src) == before, "the store changed: %s" % err)
    verified(src, "after the refused pipelines")
    FIGURES.append("same-store pipelines refused: %d by the appender, %d by the reader" % (seen["stdin"], seen["stdout"]))

if __name__ == "__main__":
    sys.exit(case_runner.run_cases([test_closed_standard_fds, test_wait_is_interruptible, test_wait_still_waits,
                                    test_output_guard, test_unsigned_options_refuse_negatives,
                                    test_lines_are_bounded, test_escaped_messages_and_json,
                                    test_pipe_from_the_same_store_does_not_hang],
                                   "zrec-boundary-", figures=FIGURES))
