#!/usr/bin/python3
"""One convention for every command (issue 10), with exact messages and exit codes:

- concat takes SRC... DST; the old DST SRC... order works, with a warning, only where it
  cannot mean anything else (first argument absent, last a store);
- --level N on every command that encodes (append-npy/-stream/-files/-lmdb/-tar,
  recompress, concat): the stored frames really use it (level 19 stores fewer bytes
  than level 1 on compressible data) and decode with python-zstandard (zrecord_ref);
  out-of-range levels and --level on a raw store are usage errors;
- one word, one meaning: append-npy/train-dict --split-axis0, train-dict
  --for-dense/--for-ragged; the old --batch/--dense/--ragged are hidden aliases that warn;
- -o of cat, digest and train-dict refuses an existing file unless -f/--force;
- SIGINT/SIGTERM stop every command even when the parent passed them ignored (as a shell
  does for `zrec ... &` without job control);
- `zrec cat` to a terminal writes text; an explicit binary --format there needs -f.
"""
import io
import os
import shutil
import signal
import stat
import subprocess
import tarfile
import threading
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import cli_helpers  # noqa: E402
from cli_helpers import expect, full_pipe, must, npy_bytes, wait_blocked_in_pipe_write  # noqa: E402

ZREC = cli_helpers.require_zrec("test_conventions")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zrecord_ref as ref  # noqa: E402

CASES, case = case_runner.case_registry()
FIGURES = []


def zrec(args, stdin=None, timeout=120, cwd=None):
    p = subprocess.run([ZREC] + list(args), input=stdin, capture_output=True, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def refused(args, rc_want, message, stdin=None, cwd=None):
    """zrec ARGS must exit rc_want with exactly `message` as its first stderr line."""
    rc, out, err = zrec(args, stdin, cwd=cwd)
    first = err.splitlines()[0] if err else ""
    expect(rc == rc_want and first == message,
           "zrec %s: rc %d, stderr %r; want rc %d and %r" % (" ".join(args), rc, err.strip(), rc_want, message))
    return out


def records_of(store):
    return [bytes(r) for r in ref.read_store(store).records]


def ragged_u1(path, codec="zstd"):
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", codec, path])
    return path


def text_records(n=24, size=12000, seed=1):
    """Compressible records (words from a small vocabulary) on which level 19 clearly
    beats level 1."""
    rng = np.random.default_rng(seed)
    words = [("%s%d" % (w, i)).encode() for i, w in enumerate(
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi".split() * 4)]
    out = []
    for _ in range(n):
        b = b" ".join(words[k] for k in rng.integers(0, len(words), size // 6))
        out.append(b[:size])
    return out


def stored_bytes(store):
    return sum(os.path.getsize(os.path.join(store, f)) for f in os.listdir(store) if f not in ("meta.zr", "dict.zr"))


def tree(store):
    return {f: open(os.path.join(store, f), "rb").read() for f in sorted(os.listdir(store))}


# --- concat: SRC... DST ------------------------------------------------------------------


def two_parts(d):
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    ragged_u1(a)
    ragged_u1(b)
    must(["append-stream", a], stdin=b"one\ntwo\nthree\n")
    must(["append-stream", b], stdin=b"four\nfive\n")
    return a, b


WANT = [b"one", b"two", b"three", b"four", b"five"]
OLD_ORDER = ("zrec concat: warning: the order 'concat DST SRC...' is deprecated and will stop working in the "
             "next release; write 'zrec concat SRC... DST' (this call creates '%s')")


@case
def concat_takes_sources_then_destination(d):
    a, b = two_parts(d)
    all_ = os.path.join(d, "all")
    _, err = must(["concat", a, b, all_])
    expect(records_of(all_) == WANT, "concat A B DST: %r" % records_of(all_))
    expect("deprecated" not in err, "the new order warned: %r" % err)
    must(["concat", b, a, os.path.join(d, "ba")])  # the order of the sources is the records' order
    expect(records_of(os.path.join(d, "ba")) == WANT[3:] + WANT[:3], "concat B A DST")


@case
def concat_old_order_still_works_with_a_warning(d):
    a, b = two_parts(d)
    old = os.path.join(d, "old")
    _, err = must(["concat", old, a, b])
    expect(err.splitlines()[0] == OLD_ORDER % old, "old order's warning: %r" % err)
    expect(records_of(old) == WANT, "concat DST A B (old order): %r" % records_of(old))
    # -q silences the warning as every warning.
    _, err = must(["-q", "concat", os.path.join(d, "old2"), a, b])
    expect(err == "", "-q: %r" % err)


@case
def concat_ambiguous_orders_read_the_new_way(d):
    a, b = two_parts(d)
    # Both ends exist: the last is DST, which must not exist.
    refused(["concat", a, b], 1, "zrec concat: '%s' already exists; choose a new destination" % b)
    expect(records_of(b) == WANT[3:], "b changed")
    # Neither end exists: the last is DST, the first a missing source.
    rc, _, err = zrec(["concat", os.path.join(d, "nope"), a, os.path.join(d, "new")])
    expect(rc == 1 and "deprecated" not in err and os.path.join(d, "nope") in err.splitlines()[0],
           "missing first source: rc %d %r" % (rc, err))
    expect(not os.path.exists(os.path.join(d, "new")), "DST created")
    refused(["concat", a], 2, "zrec concat: give the stores to join and then the store to create: SRC... DST")


# --- --level on every command that encodes ----------------------------------------------


def append_at_level(d, command, level):
    """Appends text_records() with `command` at `level`; returns the store."""
    recs = text_records()
    store = os.path.join(d, "%s-%d" % (command, level))
    lv = ["--level", str(level)]
    if command == "append-tar":
        import io
        import tarfile
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            for i, r in enumerate(recs):
                info = tarfile.TarInfo("%06d.txt" % i)
                info.size = len(r)
                tf.addfile(info, io.BytesIO(r))
        must(["append-tar", "--shards", "1"] + lv + [store, "-"], stdin=buf.getvalue())
        return os.path.join(store, "txt"), recs
    ragged_u1(store)
    if command == "append-stream":
        must(["append-stream", "--framing", "nul"] + lv + [store], stdin=b"\0".join(recs) + b"\0")
    elif command == "append-npy":
        stream = b"".join(npy_bytes(np.frombuffer(r, dtype="|u1")) for r in recs)
        must(["append-npy"] + lv + [store, "-"], stdin=stream)
    elif command == "append-files":
        names = []
        for i, r in enumerate(recs):
            names.append(os.path.join(d, "f%d-%d" % (level, i)))
            open(names[-1], "wb").write(r)
        must(["append-files"] + lv + [store, "-"], stdin=("\n".join(names) + "\n").encode())
    elif command == "append-lmdb":
        import lmdb
        env_path = os.path.join(d, "env-%d" % level)
        env = lmdb.open(env_path, map_size=1 << 26)
        with env.begin(write=True) as txn:
            for i, r in enumerate(recs):
                txn.put(b"%06d" % i, r)
        env.close()
        must(["append-lmdb"] + lv + [store, env_path])
    return store, recs


@case
def level_is_used_by_every_encoding_command(d):
    for command in ("append-npy", "append-stream", "append-files", "append-lmdb", "append-tar"):
        got = {}
        for level in (1, 19):
            store, recs = append_at_level(d, command, level)
            expect(records_of(store) == recs, "%s --level %d: records differ (python-zstandard decode)" % (command, level))
            got[level] = stored_bytes(store)
        expect(got[19] < got[1] * 0.9, "%s: level 19 stored %d bytes, level 1 %d" % (command, got[19], got[1]))
        FIGURES.append("%s stored bytes: --level 1 %d, --level 19 %d" % (command, got[1], got[19]))
    os.mkdir(os.path.join(d, "source"))
    src, recs = append_at_level(os.path.join(d, "source"), "append-stream", 1)
    for command in ("recompress", "concat"):
        out = os.path.join(d, command + "-19")
        must([command, "--level", "19", src, out])
        expect(records_of(out) == recs, "%s --level 19: records differ" % command)
        expect(stored_bytes(out) < stored_bytes(src) * 0.9,
               "%s --level 19: %d bytes vs the level-1 source's %d" % (command, stored_bytes(out), stored_bytes(src)))
        FIGURES.append("%s --level 19 of a level-1 store: %d -> %d bytes" % (command, stored_bytes(src), stored_bytes(out)))


def one_sample_tar():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        info = tarfile.TarInfo("a/0.txt")
        info.size = 5
        t.addfile(info, io.BytesIO(b"hello"))
    return buf.getvalue()


@case
def level_outside_zstd_range_is_a_usage_error(d):
    store = ragged_u1(os.path.join(d, "s"))
    before = tree(store)
    for command in ("append-npy", "append-stream", "append-files", "append-lmdb", "append-tar"):
        for bad in ("0", "23", "-1", "3x"):
            rc, _, err = zrec([command, "--level", bad, store, "-"], stdin=b"")
            expect(rc == 2 and err.startswith("zrec %s: --level: %s is not a zstd level (1 to 22)" % (command, bad)),
                   "%s --level %s: rc %d %r" % (command, bad, rc, err))
    for command in ("recompress", "concat", "train-dict"):
        rc, _, err = zrec([command, "--level", "23", store, os.path.join(d, "out")])
        expect(rc == 2 and err.startswith("zrec %s: --level: 23 is not a zstd level (1 to 22)" % command),
               "%s --level 23: rc %d %r" % (command, rc, err))
    raw = ragged_u1(os.path.join(d, "raw"), codec="raw")
    refused(["append-stream", "--level", "5", raw], 2,
            "zrec append-stream: --level is for zstd and zstd_dict; '%s' is a raw store" % raw, stdin=b"x\n")
    expect(records_of(raw) == [], "the raw store changed")
    refused(["append-tar", "--codec", "raw", "--level", "5", os.path.join(d, "root"), "-"], 2,
            "zrec append-tar: --level is for zstd and zstd_dict, not raw", stdin=b"")
    # A root whose existing streams are raw: refused before the first sample.
    root = os.path.join(d, "raw-root")
    must(["-q", "append-tar", "--codec", "raw", root, "-"], stdin=one_sample_tar())
    stream = os.path.join(root, "txt")
    root_before = (sorted(os.listdir(root)), tree(stream))
    refused(["append-tar", "--level", "5", root, "-"], 2,
            "zrec append-tar: --level is for zstd and zstd_dict; stream '%s' is a raw store" % stream,
            stdin=one_sample_tar())
    expect((sorted(os.listdir(root)), tree(stream)) == root_before, "the raw root changed")
    expect(tree(store) == before, "the store changed")


# --- same word, same meaning ------------------------------------------------------------


def batch_npy(d):
    x = np.arange(12, dtype="<i4").reshape(3, 4)
    path = os.path.join(d, "x.npy")
    np.save(path, x)
    return path, [x[i].tobytes() for i in range(3)]


@case
def split_axis0_replaces_batch(d):
    path, rows = batch_npy(d)
    new, old = os.path.join(d, "new"), os.path.join(d, "old")
    for s in (new, old):
        must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", s])
    _, err = must(["append-npy", "--split-axis0", new, path])
    expect("deprecated" not in err, err)
    _, err = must(["append-npy", "--batch", old, path])
    expect(err.splitlines()[0] == "zrec append-npy: warning: --batch is deprecated and will be removed in the "
           "next release; use --split-axis0", "append-npy --batch: %r" % err)
    for s in (new, old):
        got = records_of(s)
        expect(got == rows, "%s: %r" % (s, got))
    # A Dense store always splits axis 0: the switch says what happens anyway.
    dense = os.path.join(d, "dense")
    must(["create", "--dense", "--dtype", "<i4", "--shape", "4", dense])
    must(["append-npy", "--split-axis0", dense, path])
    expect(records_of(dense) == rows, "dense --split-axis0")
    help_text = must(["append-npy", "--help"])[0].decode()
    expect("--split-axis0" in help_text and "--batch" not in help_text, "append-npy --help: %s" % help_text)


@case
def train_dict_says_which_store_npy_is_for(d):
    rng = np.random.default_rng(3)
    paths = []
    for i in range(40):
        p = os.path.join(d, "r%d.npy" % i)
        np.save(p, rng.integers(0, 4, (16, 64)).astype("|u1"))
        paths.append(p)
    common = ["--size", "1K", "--tier", "small"]
    outs = {}
    for flags, warns in ((["--for-ragged"], None), (["--ragged"], "--ragged"),
                         (["--for-ragged", "--split-axis0"], None), (["--ragged", "--batch"], "--ragged"),
                         (["--for-dense"], None), (["--dense"], "--dense")):
        out = os.path.join(d, "-".join(f.strip("-") for f in flags) + ".dict")
        _, err = must(["train-dict"] + flags + common + paths + ["-o", out])
        if warns:
            new = {"--ragged": "--for-ragged", "--dense": "--for-dense"}[warns]
            expect(err.splitlines()[0] == "zrec train-dict: warning: %s is deprecated and will be removed in the next "
                   "release; use %s" % (warns, new), "train-dict %s: %r" % (flags, err))
        else:
            expect("deprecated" not in err, err)
        outs[tuple(flags)] = open(out, "rb").read()
    # An old spelling trains exactly the dictionary its new one does.
    expect(outs[("--ragged",)] == outs[("--for-ragged",)], "--ragged != --for-ragged")
    expect(outs[("--ragged", "--batch")] == outs[("--for-ragged", "--split-axis0")], "--batch != --split-axis0")
    expect(outs[("--dense",)] == outs[("--for-dense",)], "--dense != --for-dense")
    refused(["train-dict"] + common + paths + ["-o", os.path.join(d, "x")], 2,
            "zrec train-dict: say which store the .npy arrays are records for: --for-dense (axis 0 indexes records) "
            "or --for-ragged (one record per array; add --split-axis0 for one per slice along axis 0)")
    refused(["train-dict", "--for-dense", "--for-ragged"] + common + paths + ["-o", os.path.join(d, "x")], 2,
            "zrec train-dict: give --for-dense or --for-ragged, not both")
    help_text = must(["train-dict", "--help"])[0].decode()
    for word in ("--dense", "--ragged", "--batch"):
        expect(word not in help_text.replace("--for-dense", "").replace("--for-ragged", ""),
               "train-dict --help lists %s" % word)
    completion = must(["completion", "bash"])[0].decode()
    expect("--split-axis0" in completion and "--for-ragged" in completion, "completion lacks the new names")
    # The hidden old spellings are not offered; bench's --batch (records per gather) is.
    offered = {line.split(")")[0].strip(): line for line in completion.splitlines() if ") words='" in line}
    for command, hidden in (("append-npy", "--batch"), ("train-dict", "--batch"), ("train-dict", "--dense"),
                            ("train-dict", "--ragged")):
        expect(hidden + " " not in offered[command], "completion offers %s %s" % (command, hidden))
    expect("--split-axis0" in offered["append-npy"] and "--for-dense" in offered["train-dict"],
           "completion lacks the new names: %r" % offered.get("train-dict"))
    expect("--batch" in offered["bench"], "bench --batch not offered")


# --- -o refuses an existing file unless -f/--force --------------------------------------

@case
def output_files_are_not_overwritten_without_force(d):
    store = ragged_u1(os.path.join(d, "s"))
    must(["append-stream", store], stdin=b"".join(b"record %d of some text to train on\n" % i for i in range(400)))
    out = os.path.join(d, "out")
    commands = {
        "cat": ["cat", store, "--format", "text", "-o", out],
        "digest": ["digest", store, "-o", out],
        "train-dict": ["train-dict", "--tier", "small", "--size", "1K", store, "-o", out],
    }
    for name, argv in commands.items():
        open(out, "wb").write(b"keep me")
        refused(argv, 1, "zrec %s: -o '%s' already exists; use -f/--force to overwrite it" % (name, out))
        expect(open(out, "rb").read() == b"keep me", "%s overwrote %s" % (name, out))
        for force in ("-f", "--force"):
            open(out, "wb").write(b"keep me")
            must(argv + [force])
            expect(open(out, "rb").read() != b"keep me", "%s %s did not overwrite" % (name, force))
        os.unlink(out)
        must(argv)  # a new file needs nothing
        expect(os.path.getsize(out) > 0, "%s wrote nothing" % name)
        os.unlink(out)
        # Not a regular file: never refused, and written in place (train-dict once
        # renamed its temporary file over it, replacing the FIFO or device itself).
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        must(argv[:-1] + [fifo])
        reader.join(30)
        expect(got and len(got[0]) > 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode),
               "%s -o FIFO: read %r, FIFO kept: %s" % (name, got, stat.S_ISFIFO(os.lstat(fifo).st_mode)))
        os.unlink(fifo)
        if name != "train-dict":
            must(argv[:-1] + [os.devnull])
            expect(stat.S_ISCHR(os.stat(os.devnull).st_mode), "%s -o /dev/null replaced it" % name)
    # A symlink to an existing file is that file.
    open(out, "wb").write(b"keep me")
    os.symlink(out, os.path.join(d, "link"))
    refused(["digest", store, "-o", os.path.join(d, "link")], 1,
            "zrec digest: -o '%s' already exists; use -f/--force to overwrite it" % os.path.join(d, "link"))
    must(["cat", "--format", "tar", store, "-o", os.path.join(d, "t.tar")])
    refused(["cat", "--format", "tar", store, "-o", os.path.join(d, "t.tar")], 1,
            "zrec cat: -o '%s' already exists; use -f/--force to overwrite it" % os.path.join(d, "t.tar"))


# --- signals: an inherited "ignore" does not make a command deaf ------------------------


def ignore_interrupts():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def ignored_mask(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("SigIgn:"):
            return int(line.split()[1], 16)
    return 0


@case
def signals_stop_commands_started_with_them_ignored(d):
    store = ragged_u1(os.path.join(d, "s"))
    must(["append-stream", store], stdin=b"".join(b"%d\n" % i for i in range(1000)))
    # Commands without handlers end by the signal (-N: a shell reports 128+N); those that
    # clean up exit 128+N themselves. Either way, the signal stops them.
    commands = [("cat", ["cat", "--format", "text", store], "killed"),
                ("info", ["info", store], "killed"),
                ("info --json --shards", ["info", "--json", "--shards", store], "killed"),
                ("verify", ["verify", store], "exits"),
                ("digest", ["digest", store], "exits")]
    checked = 0
    for label, argv, how in commands:
        for sig in (signal.SIGTERM, signal.SIGINT):
            r, w = full_pipe()
            p = subprocess.Popen([ZREC] + argv, stdout=w, stderr=subprocess.PIPE, preexec_fn=ignore_interrupts)
            os.close(w)
            try:
                # Blocked writing to the full pipe, so past the start of main(), where zrec
                # undoes the inherited ignoring.
                expect(wait_blocked_in_pipe_write(p.pid), "%s: never blocked writing to the full pipe" % label)
                mask = ignored_mask(p.pid)
                expect(not mask & (1 << (sig - 1)), "%s: %s still ignored (SigIgn %x)" % (label, sig.name, mask))
                p.send_signal(sig)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    raise AssertionError("%s: did not stop on %s sent while it was blocked" % (label, sig.name))
                want = -sig if how == "killed" else 128 + sig
                expect(p.returncode == want, "%s on %s: rc %d, want %d (%s)" %
                       (label, sig.name, p.returncode, want, p.stderr.read().decode().strip()))
                checked += 1
            finally:
                os.close(r)
                p.stderr.close()
    FIGURES.append("signals: %d command/signal pairs stopped with SIGINT/SIGTERM inherited as ignored" % checked)


# --- cat to a terminal ------------------------------------------------------------------


def on_terminal(cmd):
    p = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stdout.replace(b"\r\n", b"\n")


@case
def cat_to_a_terminal_prints_text(d):
    if shutil.which("script") is None:
        raise AssertionError("script(1) from util-linux is needed")
    store = os.path.join(d, "s")
    must(["create", "--dense", "--dtype", "<i2", "--shape", "3", store])
    must(["append-npy", store, "-"], stdin=npy_bytes(np.arange(6, dtype="<i2").reshape(2, 3)))
    rc, out = on_terminal("%s cat %s" % (ZREC, store))
    want = must(["cat", "--format", "text", store])[0]
    expect(rc == 0 and out == want, "cat to a terminal: rc %d %r, want %r" % (rc, out, want))
    expect(want == b"0\t[0 1 2]\n1\t[3 4 5]\n" or want.startswith(b"0\t"), "text format: %r" % want)
    rc, out = on_terminal("%s cat %s --format npy" % (ZREC, store))
    expect(rc == 2 and out.startswith(b"zrec cat: refusing to write binary data to a terminal (use -o FILE, a pipe, "
                                      b"--format text, or -f/--force)"), "cat --format npy: rc %d %r" % (rc, out))
    rc, out = on_terminal("%s cat %s --format raw -f" % (ZREC, store))
    expect(rc == 0 and len(out) == 12, "cat --format raw -f: rc %d %r" % (rc, out))
    # Not a terminal: npy, as always.
    out = must(["cat", store])[0]
    expect(out.startswith(b"\x93NUMPY"), "cat to a pipe: %r" % out[:10])


sys.exit(case_runner.run_cases(CASES, "zrec-conventions-", figures=FIGURES))
