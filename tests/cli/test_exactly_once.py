#!/usr/bin/python3
"""Exactly-once appends under SIGKILL (issue 19): for every append command, one command
line with --from-length, run again after a kill at any instant, ends with exactly the
records of one clean run.

For each of append-npy, append-files (--manifest), append-stream, append-tar (three
streams, --keys), append-h5 and append-lmdb (--keys), into a store (root) that already
holds 7 records (samples), with --checkpoint-every so that a run publishes many times,
and for the import options issue 21 added (append-lmdb --create --db --exclude-key from
no store at all, append-tar --parse cls=int into a Dense scalar stream, append-stream
--parse ints into a Dense store):
  - TRIALS (>= 20; half as many for issue 21's options, whose kills reach the same
    writer) random instants: the command is SIGKILLed at a random moment of its
    run (drawn from [0, its clean run time]), then the identical command line runs
    again and must exit 0;
  - every fsync and fdatasync of one run (strace), the process killed on entering it,
    for append-tar including the kills between two streams' publications and between
    the streams and the root's commit (counted, and required to occur);
after each: `zrec digest` of every store equals a clean run's, the keys file or manifest
is byte-equal to a clean run's, and a third run of the same line appends nothing and
exits 0.
Then:
  - two `zrec --wait append-tar` runs started together into one root, three times:
    both exit 0, the root holds A's samples then B's or B's then A's (digests equal to
    the serial build in that order), keys aligned;
  - the README's resume recipe (issue 19, problem 1): a store of 300 records, a
    producer of 3000, killed after its first checkpoint: the recipe's rerun holds the
    same records as a clean build.

Needs: ZREC (path of the zrec binary), strace, python3-numpy, h5py, lmdb. TRIALS
(default 20) and SEED may be set in the environment.
"""
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
import strace_faults  # noqa: E402  (tests/cli/strace_faults.py)
from cli_helpers import SANITIZED, expect, must_out, require_zrec  # noqa: E402

ZREC = require_zrec("test_exactly_once")
TRIALS = max(20, int(os.environ.get("TRIALS", "20")))
SEED = int(os.environ.get("SEED", "20261219"))
rnd = random.Random(SEED)
FIGURES = []
# LeakSanitizer cannot run under ptrace: the traced zrec runs without it.
TRACED_ENV = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))


def zrec(argv, cwd, stdin_path=None, timeout=300):
    with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as f:
        p = subprocess.run([ZREC] + argv, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                           timeout=timeout)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def digest(store, cwd):
    return must_out(["digest", store], cwd=cwd).split()[0].decode()


class Kind:
    """One append command: `prepare(inputs)` makes its inputs (absolute paths, shared by
    every trial); `setup` argv lists run in a fresh directory to give it 7 records;
    `argv` is the command line under test (relative paths: store "s", side files), and
    `sweep` the same command on a shorter input, for the kill at every fsync; `stores`
    the stores whose digests must match, `side` the files whose bytes must."""

    def __init__(self, name, prepare, trials=TRIALS):
        self.name = name
        self.prepare = prepare
        self.trials = trials

    def build(self, inputs):
        spec = self.prepare(inputs)
        self.setup = spec["setup"]
        self.long = (spec["argv"], spec.get("stdin"))
        self.short = (spec["sweep"], spec.get("sweep_stdin"))
        self.stores, self.side, self.unit = spec["stores"], spec.get("side", []), spec.get("unit", "records")
        self.length = spec.get("length")  # records a clean run leaves, where the kind checks it
        self.use(self.long)

    def use(self, command):
        self.argv, self.stdin = command


def npy_kind(inputs):
    rng = np.random.default_rng(1)
    first, rest, short = (os.path.join(inputs, n + ".npys") for n in ("first", "input", "short"))
    for path, n in ((first, 7), (rest, 400 if not SANITIZED else 150), (short, 100)):
        with open(path, "wb") as f:
            for _ in range(n):
                np.save(f, rng.integers(0, 1000, size=int(rng.integers(20, 400)), dtype="<i4"))
    cmd = ["append-npy", "--checkpoint-every", "40", "--from-length", "7", "s"]
    return {"setup": [["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--shards", "3", "s"],
                      ["append-npy", "s", first]],
            "argv": cmd + [rest], "sweep": cmd + [short], "stores": ["s"]}


def files_kind(inputs):
    rng = random.Random(2)
    d = os.path.join(inputs, "files")
    os.makedirs(d)
    names = []
    for i in range(7 + (400 if not SANITIZED else 150)):
        p = os.path.join(d, "f%04d" % i)
        with open(p, "wb") as f:
            f.write(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))) * rng.randint(1, 8))
        names.append(p)
    first, rest, short = (os.path.join(inputs, n + ".list") for n in ("first", "rest", "short"))
    open(first, "w").write("\n".join(names[:7]) + "\n")
    open(rest, "w").write("\n".join(names[7:]) + "\n")
    open(short, "w").write("\n".join(names[7:107]) + "\n")
    cmd = ["append-files", "--checkpoint-every", "40", "--manifest", "s.tsv", "--from-length", "7", "--files-from"]
    return {"setup": [["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "raw", "--shards", "2", "s"],
                      ["append-files", "--manifest", "s.tsv", "--files-from", first, "s"]],
            "argv": cmd + [rest, "s"], "sweep": cmd + [short, "s"], "stores": ["s"], "side": ["s.tsv"]}


def stream_kind(inputs):
    rng = random.Random(3)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon"]
    first, rest, short = (os.path.join(inputs, n + ".txt") for n in ("first", "input", "short"))
    open(first, "wb").write(b"".join(b"first %d\n" % i for i in range(7)))
    n = 6000 if not SANITIZED else 2000
    lines = [b" ".join(rng.choice(words) for _ in range(rng.randint(3, 60))) + b"\n" for _ in range(n)]
    open(rest, "wb").write(b"".join(lines))
    open(short, "wb").write(b"".join(lines[:1500]))
    cmd = ["append-stream", "--checkpoint-every", "500", "--from-length", "7", "s"]
    return {"setup": [["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--checksum", "--shards", "2", "s"],
                      ["append-stream", "-i", first, "s"]],
            "argv": cmd, "stdin": rest, "sweep": cmd, "sweep_stdin": short, "stores": ["s"]}


def write_tar(path, keys, rng):
    with tarfile.open(path, "w") as t:
        for key in keys:
            for ext in ("jpg", "cls", "txt"):
                if ext == "cls":
                    data = b"%d" % rng.randrange(1000)
                else:
                    data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 200))) * rng.randint(1, 6)
                ti = tarfile.TarInfo("%s.%s" % (key, ext))
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))


def tar_kind_parsing(cls, seed):
    """append-tar into a root of three streams, its cls members parsed as `cls` (ints: a
    Ragged stream; int: a Dense scalar '<i8' one)."""
    def prepare(inputs):
        rng = random.Random(seed)
        first, rest, short = (os.path.join(inputs, n + ".tar") for n in ("first", "input", "short"))
        write_tar(first, ["p/%05d" % i for i in range(7)], rng)
        write_tar(rest, ["q/%05d" % i for i in range(200 if not SANITIZED else 120)], rng)
        write_tar(short, ["q/%05d" % i for i in range(40)], rng)
        cmd = ["append-tar", "--parse", "cls=" + cls, "--checkpoint-every", "20", "--keys", "s.keys", "--from-length",
               "7", "s"]
        # One data file per stream, so that a sweep over every fsync stays short.
        return {"setup": [["append-tar", "--shards", "1", "--parse", "cls=" + cls, "--keys", "s.keys", "s", first]],
                "argv": cmd + [rest], "sweep": cmd + [short], "stores": ["s/cls", "s/jpg", "s/txt"],
                "side": ["s.keys"], "unit": "samples"}
    return prepare


def h5_kind(inputs):
    import h5py
    path = os.path.join(inputs, "rows.h5")
    n = 7 + (10000 if not SANITIZED else 6000)
    rows = np.random.default_rng(5).integers(0, 1 << 20, size=(n, 16)).astype("<i4")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=rows, chunks=(256, 16), compression="gzip")
    cmd = ["append-h5", "--checkpoint-every", "1000", "--window-mib", "1", "--start", "7", "--from-length", "7"]
    return {"setup": [["append-h5", "--create", "--shards", "2", "--stop", "7", "s", path, "x"]],
            "argv": cmd + ["s", path, "x"], "sweep": cmd + ["--stop", "3007", "s", path, "x"], "stores": ["s"]}


def lmdb_kind(inputs):
    import lmdb
    rng = random.Random(6)
    path = os.path.join(inputs, "env")
    env = lmdb.open(path, map_size=1 << 26)
    with env.begin(write=True) as txn:
        for i in range(7):
            txn.put(b"a%03d" % i, b"first %d" % i)
        for i in range(3000 if not SANITIZED else 1000):
            txn.put(b"b%05d" % i, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200))))
    env.close()
    cmd = ["append-lmdb", "--checkpoint-every", "300", "--keys", "s.keys", "--from-length", "7", "--prefix"]
    return {"setup": [["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--shards", "2", "s"],
                      ["append-lmdb", "--prefix", "a", "--keys", "s.keys", "s", path]],
            "argv": cmd + ["b", "s", path], "sweep": cmd + ["b00", "s", path], "stores": ["s"], "side": ["s.keys"]}


def lmdb_named_db_kind(inputs):
    """append-lmdb --create from no store: the first run's kill leaves a store (or
    nothing), the rerun of the same line continues it; a named database whose loader
    keys (__len__, __keys__) sort among the values and are left out."""
    import lmdb
    rng = random.Random(7)
    path = os.path.join(inputs, "env")
    env = lmdb.open(path, map_size=1 << 26, max_dbs=2)
    train = env.open_db(b"train")
    n = 3000 if not SANITIZED else 1000
    with env.begin(write=True) as txn:
        txn.put(b"main-only", b"not in the named database")
        txn.put(b"__len__", b"%d" % n, db=train)
        txn.put(b"__keys__", b"pickled keys", db=train)
        for i in range(n):
            txn.put(b"s%05d" % i, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200))), db=train)
    env.close()
    cmd = ["append-lmdb", "--create", "--shards", "2", "--db", "train", "--exclude-key", "__len__", "--exclude-key",
           "__keys__", "--checkpoint-every", "300", "--keys", "s.keys", "--from-length", "0"]
    return {"setup": [], "argv": cmd + ["s", path], "sweep": cmd + ["--prefix", "s00", "s", path], "stores": ["s"],
            "side": ["s.keys"], "length": n}


def stream_dense_kind(inputs):
    """append-stream --parse ints into a Dense (3,) '<i8' store: three numbers a line."""
    rng = random.Random(9)
    first, rest, short = (os.path.join(inputs, n + ".txt") for n in ("first", "input", "short"))
    open(first, "wb").write(b"".join(b"%d %d %d\n" % (i, -i, i * i) for i in range(7)))
    n = 6000 if not SANITIZED else 2000
    lines = [b"%d %d %d\n" % tuple(rng.randrange(-10**12, 10**12) for _ in range(3)) for _ in range(n)]
    open(rest, "wb").write(b"".join(lines))
    open(short, "wb").write(b"".join(lines[:1500]))
    cmd = ["append-stream", "--parse", "ints", "--checkpoint-every", "500", "--from-length", "7", "s"]
    return {"setup": [["create", "--dense", "--shape", "3", "--dtype", "<i8", "--shards", "2", "s"],
                      ["append-stream", "--parse", "ints", "-i", first, "s"]],
            "argv": cmd, "stdin": rest, "sweep": cmd, "sweep_stdin": short, "stores": ["s"]}


KINDS = [Kind("append-npy", npy_kind), Kind("append-files", files_kind), Kind("append-stream", stream_kind),
         Kind("append-tar", tar_kind_parsing("ints", 4)), Kind("append-h5", h5_kind), Kind("append-lmdb", lmdb_kind),
         Kind("append-lmdb --create --db", lmdb_named_db_kind, TRIALS // 2),
         Kind("append-tar --parse cls=int", tar_kind_parsing("int", 8), TRIALS // 2),
         Kind("append-stream --parse ints (dense)", stream_dense_kind, TRIALS // 2)]


def state_of(kind, cwd):
    """What must equal a clean run's: every store's digest, every side file's bytes."""
    out = {s: digest(s, cwd) for s in kind.stores}
    for f in kind.side:
        out[f] = open(os.path.join(cwd, f), "rb").read()
    return out


def root_shape(cwd):
    """append-tar: (committed samples, the streams' lengths) of root s."""
    j = json.loads(must_out(["info", "--json", "s"], cwd=cwd))
    return j["committed_length"], sorted(st["length"] for st in j["streams"].values())


def rerun_and_check(kind, cwd, want, what):
    rc, err = zrec(kind.argv, cwd, kind.stdin)
    expect(rc == 0, "%s: %s: the rerun failed (rc %d): %s" % (kind.name, what, rc, err))
    got = state_of(kind, cwd)
    expect(got == want, "%s: %s: after the rerun %s differ from a clean run's" %
           (kind.name, what, [k for k in want if got.get(k) != want[k]]))
    rc, err = zrec(kind.argv, cwd, kind.stdin)
    expect(rc == 0 and ("appended 0 %s" % kind.unit) in err and "already present" in err,
           "%s: %s: the third run (rc %d): %s" % (kind.name, what, rc, err))
    expect(state_of(kind, cwd) == want, "%s: %s: the third run changed something" % (kind.name, what))


def exactly_once(kind, d):
    inputs, template, work = (os.path.join(d, n) for n in ("inputs", "template", "work"))
    os.makedirs(inputs)
    os.makedirs(template)
    kind.build(inputs)
    for argv in kind.setup:
        must_out(argv, cwd=template)

    def fresh():
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work)

    runs = []
    for _ in range(3):
        fresh()
        t0 = time.monotonic()
        rc, err = zrec(kind.argv, work, kind.stdin)
        runs.append(time.monotonic() - t0)
        expect(rc == 0, "%s: a clean run failed: %s" % (kind.name, err))
    want = state_of(kind, work)
    if kind.length is not None:
        length = json.loads(must_out(["info", "--json", "s"], cwd=work))["length"]
        expect(length == kind.length, "%s: a clean run left %d records, not %d" % (kind.name, length, kind.length))
    duration = measured = min(runs)

    killed = 0
    for t in range(kind.trials):
        fresh()
        delay = rnd.uniform(0, duration)
        with open(kind.stdin, "rb") if kind.stdin else open(os.devnull, "rb") as f:
            p = subprocess.Popen([ZREC] + kind.argv, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 cwd=work)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            _, err = p.communicate(timeout=300)
        if p.returncode == -signal.SIGKILL:
            killed += 1
        else:
            expect(p.returncode == 0, "%s: trial %d failed on its own: %s" % (kind.name, t, err.decode()))
            duration *= 0.7  # it outran the kill: aim earlier from now on
        rerun_and_check(kind, work, want, "kill %d at %.3f s" % (t, delay))
    expect(killed >= kind.trials // 2, "%s: only %d of %d trials killed the command mid-run" %
           (kind.name, killed, kind.trials))

    # Every fsync of one run (of a shorter input): the kill lands exactly between two
    # durable steps.
    kind.use(kind.short)
    fresh()
    rc, err = zrec(kind.argv, work, kind.stdin)
    expect(rc == 0, "%s: a clean short run failed: %s" % (kind.name, err))
    want = state_of(kind, work)
    fresh()
    sites, rc, err = strace_faults.enumerate_sites([ZREC] + kind.argv, work, work, stdin=kind.stdin, env=TRACED_ENV,
                                                    syscalls=("fsync", "fdatasync"))
    expect(rc == 0 and len(sites) >= 10, "%s: tracing found %d fsync sites (rc %s): %s" % (kind.name, len(sites), rc,
                                                                                          err))
    past_commit = unequal = 0
    for site in sites:
        fresh()
        out = strace_faults.inject([ZREC] + kind.argv, site, "SIGKILL", work, stdin=kind.stdin, env=TRACED_ENV)
        expect(out.injected and out.rc == -signal.SIGKILL,
               "%s: the kill at %s %d did not land (rc %s)" % (kind.name, site.syscall, site.index, out.rc))
        if kind.name.startswith("append-tar"):
            committed, lengths = root_shape(work)
            past_commit += lengths[-1] > committed
            unequal += lengths[0] != lengths[-1]
        rerun_and_check(kind, work, want, "kill at %s #%d (%s)" % (site.syscall, site.index, out.call[:80]))
    if kind.name.startswith("append-tar"):
        # Some kills fell between two streams' publications, some between the streams
        # and the root's commit (every stream published, the root not yet committed).
        expect(unequal > 0 and past_commit > unequal,
               "append-tar: fsync kills left %d roots with unequal streams and %d with streams past the commit" %
               (unequal, past_commit))
    FIGURES.append("%s: %d random kills (%d mid-run, run %.2f s) and %d fsync kills%s, each rerun equal to a clean "
                   "run, the third appending nothing" %
                   (kind.name, kind.trials, killed, measured, len(sites),
                    " (%d left unequal streams, %d streams past the root's commit)" % (unequal, past_commit)
                    if kind.name.startswith("append-tar") else ""))


def make_case(kind):
    def t(d):
        exactly_once(kind, d)
    t.__name__ = "exactly_once_" + "_".join("".join(c if c.isalnum() else " " for c in kind.name).split())
    return t


def concurrent_append_tar(d):
    rng = random.Random(8)
    a, b, pre = (os.path.join(d, n + ".tar") for n in ("a", "b", "pre"))
    write_tar(a, ["a/%04d" % i for i in range(60)], rng)
    write_tar(b, ["b/%04d" % i for i in range(60)], rng)
    write_tar(pre, ["p/%04d" % i for i in range(5)], rng)
    streams = ("cls", "jpg", "txt")

    def serial(order):
        w = os.path.join(d, "serial-" + "".join(order))
        os.makedirs(w)
        for t in ("pre",) + order:
            rc, err = zrec(["append-tar", "--keys", "k", "r", os.path.join(d, t + ".tar")], w)
            expect(rc == 0, err)
        return {s: digest("r/" + s, w) for s in streams}, open(os.path.join(w, "k"), "rb").read()

    refs = {"ab": serial(("a", "b")), "ba": serial(("b", "a"))}
    seen = []
    for round_ in range(3):
        w = os.path.join(d, "round-%d" % round_)
        os.makedirs(w)
        rc, err = zrec(["append-tar", "--keys", "k", "r", pre], w)
        expect(rc == 0, err)
        argv = lambda t: [ZREC, "--wait", "append-tar", "--checkpoint-every", "5", "--keys", "k", "r", t]  # noqa: E731
        procs = [subprocess.Popen(argv(t), cwd=w, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for t in ((a, b) if round_ % 2 == 0 else (b, a))]
        for p in procs:
            _, err = p.communicate(timeout=300)
            expect(p.returncode == 0, "round %d: a concurrent append-tar --wait failed: %s" % (round_, err.decode()))
        got = ({s: digest("r/" + s, w) for s in streams}, open(os.path.join(w, "k"), "rb").read())
        order = [o for o, ref in refs.items() if ref == got]
        expect(len(order) == 1, "round %d: the root is neither A then B nor B then A" % round_)
        j = json.loads(must_out(["info", "--json", "r"], cwd=w))
        expect(j["committed_length"] == 125 and j["lengths_agree"], j)
        seen.append(order[0])
    FIGURES.append("concurrent append-tar --wait: 3 rounds of two runs into one root, orders %s, each equal to the "
                   "serial build" % ",".join(seen))


def readme_resume_recipe(d):
    # Issue 19, problem 1. The README: n=$(zrec info --json tokens/ | jq .length) once,
    # then `gen | zrec append-stream --parse ints --checkpoint-every ... --from-length "$n"
    # tokens/` until it succeeds.
    gen = os.path.join(d, "gen.txt")
    rng = random.Random(9)
    open(gen, "wb").write(b"".join(b" ".join(b"%d" % rng.randrange(50000) for _ in range(rng.randint(1, 30))) + b"\n"
                                   for _ in range(3000)))
    first = os.path.join(d, "first.txt")
    open(first, "wb").write(b"".join(b"%d %d\n" % (i, i * i) for i in range(300)))
    for name in ("clean", "killed"):
        w = os.path.join(d, name)
        os.makedirs(w)
        for argv in (["create", "--ragged", "--dtype", "<i4", "--ndim", "1", "tokens"],
                     ["append-stream", "--parse", "ints", "-i", first, "tokens"]):
            rc, err = zrec(argv, w)
            expect(rc == 0, err)
    n = json.loads(must_out(["info", "--json", "tokens"], cwd=os.path.join(d, "killed")))["length"]
    # --wait: the test's own `zrec info` polls hold the store's shared lock for moments, and
    # a writer that finds it taken fails at once (exit 75) without it.
    argv = ["append-stream", "--wait", "--parse", "ints", "--checkpoint-every", "100", "--from-length", str(n),
            "tokens"]
    rc, err = zrec(argv, os.path.join(d, "clean"), gen)
    expect(rc == 0, err)
    want = digest("tokens", os.path.join(d, "clean"))
    # The first try dies (SIGKILL) after its first checkpoint; a slow producer lets the
    # test see the checkpoint before the kill. The producer pauses longer than the test
    # waits, so a checkpoint that only came with the rest of the input still fails.
    w = os.path.join(d, "killed")
    # Its own process group, so that killing it kills its sleep too (an orphaned sleep
    # would hold the test's stderr, and CTest would wait for it).
    slow = subprocess.Popen(["bash", "-c", 'head -n 150 "$0"; sleep 90; cat "$0"', gen], stdout=subprocess.PIPE,
                            start_new_session=True)
    p = subprocess.Popen([ZREC] + argv, stdin=slow.stdout, cwd=w, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    slow.stdout.close()
    deadline = time.monotonic() + 60
    while json.loads(must_out(["info", "--json", "tokens"], cwd=w))["length"] < n + 100:
        if p.poll() is not None:
            os.killpg(slow.pid, signal.SIGKILL)
            expect(False, "zrec exited (%d) before its first checkpoint: %s" % (p.returncode, p.stderr.read().decode()))
        expect(time.monotonic() < deadline, "no checkpoint within 60 s")
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    os.killpg(slow.pid, signal.SIGKILL)
    slow.wait()
    expect(json.loads(must_out(["info", "--json", "tokens"], cwd=w))["length"] == n + 100, "state after the kill")
    rc, err = zrec(argv, w, gen)
    expect(rc == 0 and "appended 2900 records" in err and "after skipping 100 already present" in err and
           "it now holds 3300" in err, err)
    expect(digest("tokens", w) == want, "the recipe's result differs from a clean build")
    FIGURES.append("README recipe: 300 + 3000 records, killed after 100: the rerun holds exactly a clean build's")


TESTS = [make_case(k) for k in KINDS] + [concurrent_append_tar, readme_resume_recipe]

if __name__ == "__main__":
    sys.exit(case_runner.run_cases(TESTS, "zrec-exactly-once-", figures=FIGURES))
