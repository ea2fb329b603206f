#!/usr/bin/python3
"""Fault injection at every write-path syscall of every writing subcommand.

For each writer (create, append-npy, append-files, append-stream, recompress, concat
re-encoding, concat placing parts, train-dict -o) one small run is traced with
`strace -f -y` to list its write-path calls (openat, mkdir, write/pwrite64/pwritev,
ftruncate, fsync, rename, unlink, ...; tests/cli/strace_faults.py) that touch the
test's work directory. Then, from a fresh copy of the same "before" state, the command
is rerun once per call and fault: EIO, ENOSPC and EINTR injected into that one call,
and SIGKILL on entering it. After every run:
  - the fault landed (strace logged it), so no run passes vacuously;
  - every store in the work directory opens, in the independent reader
    (zrecord_ref.py) and in `zrec verify`, as exactly one published state: appends
    hold the records from before plus a prefix of the input ending at a publication
    (a --checkpoint-every boundary or the end), byte for byte, logical and stored;
    create/recompress/concat/train-dict -o leave DST absent or complete (equal to an
    uninjected run's result); everything else in the directory is byte-for-byte as
    before, and append-files' --manifest lists exactly the published records (after
    a SIGKILL it may go on with lines of unpublished ones, as documented);
  - the exit status and message are true: EINTR is retried (exit 0, new state);
    EIO/ENOSPC either fail (exit 1, one "zrec CMD: ..." line naming the errno text,
    and when checkpoints or a rename published something, a message that says so
    with the true record count or the DST name) or exit 0 with the new state
    published (only where the call was not one that writes, syncs or names data);
    exit 0 always means the new state;
  - no temporary is left, except after SIGKILL, where the next run of the same
    command (appends resume with --skip-first) must succeed and remove it, or
    leave it with a warning naming it.
Prints one figure line per writer and the total number of injected runs. With
ZREC_SANITIZED=1 (ASan) every call still gets a fault, but only one of the four, in
turn (ROTATE=1), so the pass costs a quarter.

Needs: ZREC (path of the zrec binary), strace, python3-numpy, python3-zstandard.
STRIDE (default 1: every call) and ROTATE may be set to sample,
CASES (comma-separated parts of case names) to run some writers only, MAX_LISTED to
print more of the broken runs.
"""
import collections
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import SANITIZED, expect, must_out, require_zrec  # noqa: E402  (tests/cli/cli_helpers.py)
import strace_faults  # noqa: E402  (tests/cli/strace_faults.py)
import zrecord_ref  # noqa: E402  (tests/cli/zrecord_ref.py)
from strace_faults import FAULTS, STRERROR  # noqa: E402

import subprocess  # noqa: E402

ZREC = require_zrec("test_fault_inject")
# Under ASan each site gets one of the four faults, in turn, instead of all four.
ROTATE = os.environ.get("ROTATE", "1" if SANITIZED else "0") == "1"
STRIDE = int(os.environ.get("STRIDE", "1"))

MAX_LISTED = int(os.environ.get("MAX_LISTED", "40"))  # broken runs printed per writer

# LeakSanitizer stops the process with ptrace at exit, which fails under strace.
TRACED_ENV = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))

FIGURES = []
TOTAL = collections.Counter()
ROOT = []  # the case's directory, while one runs


def zrec(args, stdin=None, cwd=None, timeout=120):
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        p = subprocess.run([ZREC] + args, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                           timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def sha(b):
    return hashlib.sha256(b).hexdigest()


def tree(d, contents=True):
    """relative path -> (sha256 for a file, "dir" or "link"; permission bits), for
    everything under d, hidden included. contents=False leaves out the hashes."""
    out = {}
    for base, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(base, n)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode) or not contents:
                kind = "link" if stat.S_ISLNK(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else "file"
            else:
                with open(p, "rb") as f:
                    kind = sha(f.read())
            out[os.path.relpath(p, d)] = (kind, oct(stat.S_IMODE(st.st_mode)))
    return out


def mode(path):
    return oct(stat.S_IMODE(os.lstat(path).st_mode))


def under(rel, targets):
    return any(rel == t or rel.startswith(t + "/") for t in targets)


def tree_changes(before, after, targets):
    """(new paths, changed or missing paths) outside the targets."""
    strays = sorted(p for p in after if p not in before and not under(p, targets))
    changed = sorted(p for p in before if not under(p, targets) and after.get(p) != before[p])
    return strays, changed


class StoreImage:
    """What a store holds, read by the independent reader: page fields, its file names,
    and every record's logical and stored bytes (as hashes)."""

    def __init__(self, path):
        s = zrecord_ref.read_store(path)
        self.head = (s.codec, s.data_shards, s.schema_raw)
        self.files = sorted(os.listdir(path))
        self.logical = [sha(r) for r in s.logical]
        self.stored = [sha(r) for r in s.stored]
        self.dict = sha(s.dict_bytes) if s.dict_bytes is not None else None


def verified(store, where):
    rc, out, err = zrec(["verify", store])
    if rc != 0:
        lines = out.decode(errors="replace").splitlines() + err.splitlines()
        first = next((l for l in lines if "problem" in l), lines[0] if lines else "")
        raise AssertionError("%s: zrec verify fails on '%s' (rc %d): %s" % (where, os.path.basename(store), rc,
                                                                             first.strip()))


def read_image(store, where):
    try:
        return StoreImage(store)
    except (zrecord_ref.FormatError, OSError, ValueError) as e:
        raise AssertionError("%s: '%s' does not open as a store: %s" % (where, os.path.basename(store), e))


# ---------------------------------------------------------------------------------------
# Scenarios: one writer each. A scenario builds its "before" directory once (pristine),
# gives the command line, and says which published state a work directory holds.


class Scenario:
    command = ""          # the subcommand, for "zrec CMD: " messages
    targets = ()          # names in the work dir the command may change
    new = None            # label of the state a successful run publishes
    lanes = 1             # --threads: with one lane every call's index is the same in each run

    def build(self, pristine, work):
        """Makes the before state in `pristine`; runs will copy it to `work`."""
        raise NotImplementedError

    def argv(self, work):
        raise NotImplementedError

    def learn(self, work):
        """Called after the uninjected reference run: records what "new" looks like."""
        raise NotImplementedError

    def state(self, work, where, killed=False):
        """The published state `work` holds (a label); raises if it is not one.
        killed: a SIGKILL ended the run (side files may then be ahead of the store)."""
        raise NotImplementedError

    def check_success(self, err, label, where):
        pass

    def check_failure(self, err, label, where):
        pass

    def recovery(self, work, label):
        """The command that resumes after a SIGKILL left `label`, or None."""
        return self.argv(work) if label == "absent" else None


class AppendScenario(Scenario):
    """An append to an existing store S; states are record counts."""
    targets = ("s",)
    checkpoint = 0

    def __init__(self, command, create_args, first_records):
        self.command = command
        self.create_args = create_args
        self.first_records = first_records  # npy arrays appended before (the old state)

    def build(self, pristine, work):
        s = os.path.join(pristine, "s")
        must_out(["create"] + self.create_args + [s])
        first = os.path.join(pristine, "first.npy")
        with open(first, "wb") as f:
            for a in self.first_records:
                np.save(f, a)
        must_out(["-q", "append-npy", s, "-"], stdin_file=first)
        os.remove(first)
        self.old = len(self.first_records)
        self.expected = [sha(zrecord_ref.logical_record(a, dense=False)) for a in self.first_records]
        self.expected += [sha(r) for r in self.build_input(pristine, work)]
        self.new = len(self.expected)
        n_new = self.new - self.old
        step = self.checkpoint or n_new
        self.allowed = {self.old + k for k in range(0, n_new, step)} | {self.new}

    def build_input(self, pristine, work):
        """Writes the input under pristine (naming files by their path under work);
        returns the logical records it appends."""
        raise NotImplementedError

    def tail_args(self, work):
        raise NotImplementedError

    def argv(self, work, skip=0):
        opts = ["--checkpoint-every", str(self.checkpoint)] if self.checkpoint else []
        if skip:
            opts += ["--skip-first", str(skip)]
        return [ZREC, "--threads", str(self.lanes), self.command] + opts + self.tail_args(work)

    def learn(self, work):
        img = read_image(os.path.join(work, "s"), "reference run")
        expect(img.logical == self.expected, "reference run: the store does not hold the input's records")
        self.files = img.files
        self.head = img.head
        self.stored = img.stored

    def state(self, work, where, killed=False):
        store = os.path.join(work, "s")
        verified(store, where)
        img = read_image(store, where)
        n = len(img.logical)
        expect(img.head == self.head and img.files == self.files,
               "%s: the store's page or files changed: %r" % (where, img.files))
        expect(n in self.allowed, "%s: %d records is not a published state (%s)" % (where, n, sorted(self.allowed)))
        expect(img.logical == self.expected[:n], "%s: the %d records differ from the published prefix" % (where, n))
        expect(img.stored == self.stored[:n], "%s: stored frames differ from the uninjected run's" % where)
        return n

    def check_success(self, err, label, where):
        m = re.search(r"it now holds (\d+)", err)
        expect(m and int(m.group(1)) == label, "%s: exit 0 but the summary does not say it holds %d: %r" %
               (where, label, err))

    def check_failure(self, err, label, where):
        holds = [int(x) for x in re.findall(r"holds (\d+) records", err)]
        froms = [int(x) for x in re.findall(r"--from-length (\d+)", err)]
        if label != self.old:
            expect(holds, "%s: the store now holds %d records but the message does not say so: %r" %
                   (where, label, err))
        expect(all(h == label for h in holds), "%s: the message says the store holds %r, it holds %d: %r" %
               (where, holds, label, err))
        expect(all(k == self.old for k in froms), "%s: the message says --from-length %r, the input began at "
               "record %d: %r" % (where, froms, self.old, err))

    def recovery(self, work, label):
        return self.argv(work, skip=label - self.old)


def ragged_arrays(seed, n, dtype, lo, hi, vmax):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, vmax, size=int(rng.integers(lo, hi)), dtype=dtype) for _ in range(n)]


class AppendNpy(AppendScenario):
    """append-npy of three .npy batches into a 3-shard zstd store: all or nothing, or
    with checkpoints on several lanes."""

    def __init__(self, lanes=1, checkpoint=0):
        super().__init__("append-npy", ["--ragged", "--ndim", "1", "--dtype", "<i4", "--shards", "3"],
                         ragged_arrays(1, 7, "<i4", 3, 40, 1000))
        self.inputs = []
        self.lanes = lanes
        self.checkpoint = checkpoint

    def build_input(self, pristine, work):
        rng = np.random.default_rng(2)
        logical = []
        for i, rows in enumerate((9, 12, 5)):
            a = rng.integers(0, 300, size=(rows, 17 + 5 * i), dtype="<i4")
            name = "in_%d.npy" % i
            np.save(os.path.join(pristine, name), a)
            self.inputs.append(name)
            logical += [zrecord_ref.logical_record(row, dense=False) for row in a]
        return logical

    def tail_args(self, work):
        return ["--split-axis0", os.path.join(work, "s")] + [os.path.join(work, n) for n in self.inputs]


class AppendFiles(AppendScenario):
    """append-files with checkpoints and a --manifest, into a 2-shard raw store."""
    checkpoint = 5
    targets = ("s", "manifest.tsv")

    def __init__(self):
        first = [np.frombuffer(b"first record %d" % i, dtype="|u1") for i in range(3)]
        super().__init__("append-files", ["--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "raw",
                                          "--shards", "2"], first)

    def build_input(self, pristine, work):
        rng = np.random.default_rng(3)
        os.makedirs(os.path.join(pristine, "files"))
        names, logical = [], []
        for i in range(13):
            b = bytes(rng.integers(0, 256, size=int(rng.integers(1, 300)), dtype=np.uint8))
            name = os.path.join("files", "%02d.bin" % i)
            with open(os.path.join(pristine, name), "wb") as f:
                f.write(b)
            names.append(name)
            logical.append(zrecord_ref.logical_record(np.frombuffer(b, dtype="|u1"), dense=False))
        with open(os.path.join(pristine, "list.txt"), "w") as f:
            f.write("".join(os.path.join(work, n) + "\n" for n in names))
        return logical

    def tail_args(self, work):
        return ["--manifest", os.path.join(work, "manifest.tsv"), "--files-from", os.path.join(work, "list.txt"),
                os.path.join(work, "s")]

    def learn(self, work):
        super().learn(work)
        with open(os.path.join(work, "manifest.tsv")) as f:
            self.manifest = f.read().splitlines()
        expect(len(self.manifest) == self.new - self.old,
               "reference run: the manifest has %d lines for %d records" % (len(self.manifest), self.new - self.old))

    def state(self, work, where, killed=False):
        n = super().state(work, where, killed)
        path = os.path.join(work, "manifest.tsv")
        lines = []
        if os.path.exists(path):
            with open(path) as f:
                lines = f.read().splitlines()
        published = self.manifest[:n - self.old]
        if killed and lines[:len(published)] == published:
            # Documented (cmd_append_files.cc, man zrec-append-files): after a kill the
            # manifest lists every published record, possibly followed by lines of
            # unpublished ones, the last perhaps cut short; the next run removes them.
            rest = lines[len(published):]
            full = self.manifest[len(published):]
            if len(rest) <= len(full) and (rest == full[:len(rest)] or (
                    rest[:-1] == full[:len(rest) - 1] and full[len(rest) - 1].startswith(rest[-1]))):
                return n
        expect(lines == published, "%s: the manifest lists %d records, the store published %d of this input" %
               (where, len(lines), n - self.old))
        return n


class AppendStream(AppendScenario):
    """append-stream lines with checkpoints into a checksummed 2-shard zstd store
    (issue 9 defect 1: a failed fsync after a checkpoint's page write)."""
    checkpoint = 15

    def __init__(self):
        first = [np.frombuffer(b"first line %d" % i, dtype="|u1") for i in range(5)]
        super().__init__("append-stream", ["--ragged", "--ndim", "1", "--dtype", "|u1", "--checksum",
                                           "--shards", "2"], first)

    def build_input(self, pristine, work):
        rng = np.random.default_rng(4)
        words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon"]
        lines = [b" ".join(words[j] for j in rng.integers(0, 5, size=int(rng.integers(1, 12)))) for _ in range(40)]
        with open(os.path.join(pristine, "lines.txt"), "wb") as f:
            f.write(b"".join(l + b"\n" for l in lines))
        return [zrecord_ref.logical_record(np.frombuffer(l, dtype="|u1"), dense=False) for l in lines]

    def tail_args(self, work):
        return ["-i", os.path.join(work, "lines.txt"), os.path.join(work, "s")]


class NewStoreScenario(Scenario):
    """A command that makes DST (absent before): DST is absent or complete after."""
    targets = ("dst",)
    new = "new"

    def check_failure(self, err, label, where):
        if label == "new":
            expect("'%s" % self.dst_path in err or "/dst'" in err,
                   "%s: exit 1 although DST was published, and the message does not name it: %r" % (where, err))


def build_source(pristine, name, seed, n, shards, codec="zstd"):
    path = os.path.join(pristine, name)
    must_out(["create", "--dense", "--dtype", "<i4", "--shape", "6", "--codec", codec, "--shards", str(shards), path])
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 50, size=(n, 6), dtype="<i4")
    buf = os.path.join(pristine, name + ".npy")
    np.save(buf, a)
    must_out(["-q", "append-npy", path, buf])
    os.remove(buf)
    return path


class Create(NewStoreScenario):
    """create of a zstd_dict store with checksums: meta.zr, data files and dict.zr."""
    command = "create"

    def build(self, pristine, work):
        with open(os.path.join(pristine, "bystander.txt"), "w") as f:
            f.write("not zrec's\n")
        make_dictionary(pristine, "d.zr")

    def argv(self, work):
        self.dst_path = os.path.join(work, "dst")
        return [ZREC, "--threads", "1", "create", "--ragged", "--ndim", "2", "--dtype", "<f8", "--codec", "zstd_dict",
                "--dict", os.path.join(work, "d.zr"), "--checksum", "--shards", "3", self.dst_path]

    def learn(self, work):
        dst = os.path.join(work, "dst")
        img = read_image(dst, "reference run")
        expect(img.logical == [] and img.head[:2] == ("zstd_dict", 3),
               "reference run: DST is not the empty store asked for")
        self.files = tree(dst)
        self.mode = mode(dst)

    def state(self, work, where, killed=False):
        dst = os.path.join(work, "dst")
        if not os.path.lexists(dst):
            return "absent"
        verified(dst, where)
        read_image(dst, where)
        got = tree(dst)
        diff = {k: got.get(k) for k in set(got) | set(self.files) if got.get(k) != self.files.get(k)}
        expect(not diff and mode(dst) == self.mode, "%s: DST exists but differs from the uninjected run's: "
               "mode %s (not %s), files %r" % (where, mode(dst), self.mode, diff))
        return "new"


class Transfer(NewStoreScenario):
    """recompress or concat: DST gets the sources' records, absent or complete."""

    def __init__(self, command, sources, options, lanes=1, dictionary=None):
        self.command = command
        self.sources = sources  # (name, seed, records, shards, codec)
        self.options = options  # a dictionary file's name among them means its path in the work dir
        self.lanes = lanes
        self.dictionary = dictionary

    def build(self, pristine, work):
        if self.dictionary:
            make_dictionary(pristine, self.dictionary)
        self.expected = []
        for name, seed, n, shards, codec in self.sources:
            build_source(pristine, name, seed, n, shards, codec)
            self.expected += StoreImage(os.path.join(pristine, name)).logical

    def argv(self, work):
        self.dst_path = os.path.join(work, "dst")
        srcs = [os.path.join(work, s[0]) for s in self.sources]
        tail = srcs + [self.dst_path]  # both take SRC... DST
        options = [os.path.join(work, o) if o == self.dictionary else o for o in self.options]
        return [ZREC, "--threads", str(self.lanes), self.command] + options + tail

    def learn(self, work):
        self.image = read_image(os.path.join(work, "dst"), "reference run")
        expect(self.image.logical == self.expected, "reference run: DST does not hold the sources' records")
        self.modes = (mode(os.path.join(work, "dst")), tree(os.path.join(work, "dst"), contents=False))

    def state(self, work, where, killed=False):
        dst = os.path.join(work, "dst")
        if not os.path.lexists(dst):
            return "absent"
        verified(dst, where)
        img = read_image(dst, where)
        expect(img.logical == self.expected, "%s: DST exists with %d records, not the sources' %d" %
               (where, len(img.logical), len(self.expected)))
        expect((img.head, img.files, img.stored, img.dict) ==
               (self.image.head, self.image.files, self.image.stored, self.image.dict),
               "%s: DST differs from the uninjected run's (files %r)" % (where, img.files))
        modes = (mode(dst), tree(dst, contents=False))
        expect(modes == self.modes, "%s: DST's permissions differ from the uninjected run's: %r, not %r" %
               (where, modes, self.modes))
        return "new"


def build_samples(pristine):
    """A store of 120 text lines to train dictionaries from."""
    path = os.path.join(pristine, "samples")
    must_out(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--shards", "2", path])
    rng = np.random.default_rng(5)
    words = [b"record", b"field", b"value", b"zrec", b"sample", b"dictionary", b"train"]
    lines = os.path.join(pristine, "lines")
    with open(lines, "wb") as f:
        for _ in range(120):
            f.write(b" ".join(words[j] for j in rng.integers(0, 7, size=int(rng.integers(8, 30)))) + b"\n")
    must_out(["-q", "append-stream", "-i", lines, path])
    os.remove(lines)
    return path


TRAIN_ARGS = ["--tier", "small", "--size", "1K", "--samples", "100"]


def make_dictionary(pristine, name):
    samples = build_samples(pristine)
    must_out(["-q", "train-dict"] + TRAIN_ARGS + [samples, "-o", os.path.join(pristine, name)])
    shutil.rmtree(samples)


class TrainDict(NewStoreScenario):
    """train-dict -o F: F is absent or the whole dictionary; or, when F existed
    (replace=True), F is the old file or the whole new dictionary."""
    command = "train-dict"
    targets = ("dict.zr",)

    def __init__(self, replace=False):
        self.replace = replace

    def build(self, pristine, work):
        build_samples(pristine)
        if self.replace:
            self.old = b"an older dictionary, to be replaced whole or not at all\n"
            with open(os.path.join(pristine, "dict.zr"), "wb") as f:
                f.write(self.old)

    def argv(self, work):
        self.dst_path = os.path.join(work, "dict.zr")
        # -f: replacing an existing dict.zr (and a rerun after a kill) is what is tested.
        return [ZREC, "--threads", "1", "train-dict"] + TRAIN_ARGS + [os.path.join(work, "samples"), "-o", self.dst_path,
                                                                     "-f"]

    def learn(self, work):
        path = os.path.join(work, "dict.zr")
        with open(path, "rb") as f:
            self.dict = f.read()
        self.mode = mode(path)
        expect(self.dict[:4] == b"\x37\xa4\x30\xec", "reference run: dict.zr is not a zstd dictionary")

    def state(self, work, where, killed=False):
        path = os.path.join(work, "dict.zr")
        if not os.path.lexists(path):
            expect(not self.replace, "%s: the existing dict.zr is gone" % where)
            return "absent"
        with open(path, "rb") as f:
            got = f.read()
        if self.replace and got == self.old:
            return "old"
        expect(got == self.dict, "%s: dict.zr holds %d bytes, neither the old file nor the uninjected run's %d" %
               (where, len(got), len(self.dict)))
        expect(mode(path) == self.mode, "%s: dict.zr has mode %s, the uninjected run's has %s" %
               (where, mode(path), self.mode))
        return "new"

    def recovery(self, work, label):
        return self.argv(work) if label in ("absent", "old") else None

    def check_failure(self, err, label, where):
        if label == "new":
            expect("dict.zr" in err, "%s: exit 1 although dict.zr was written, and the message does not "
                   "name it: %r" % (where, err))


# ---------------------------------------------------------------------------------------
# The loop: reference run, sites, one injected run per site and fault, and the judge.


class Tally:
    def __init__(self):
        self.runs = collections.Counter()      # fault -> injected runs
        self.failed = collections.Counter()    # fault -> runs that exited 1
        self.states = collections.Counter()    # state label -> runs that left it
        self.recovered = 0
        self.missed = 0                        # runs on several lanes where no thread made call N
        self.must_fail = collections.Counter()  # fault -> landed on a call whose failure must fail the run


def reset(pristine, work):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work, symlinks=True)


def strip_root(text):
    """Messages name paths relative to the scratch root, to stay readable."""
    return text.replace(os.path.dirname(os.path.dirname(ROOT[0])) + "/", "") if ROOT else text


def judge(sc, work, before, site, fault, out, tally):
    where = "%s: %s at %s #%d [%s]" % (sc.command, fault, site.syscall, site.index,
                                       strip_root(out.call or "missed; traced run: " + site.call))
    expect(out.rc is not None, "%s: still running after 60 s (killed): %r" % (where, out.stderr.strip()))
    label = sc.state(work, where, killed=fault == "SIGKILL")
    if not out.injected:
        # Lanes claim work dynamically, so on several lanes a thread's Nth call differs
        # from run to run and may not happen at all: then the run must simply succeed.
        expect(sc.lanes > 1, "%s: the fault was never injected (strace log ends %r)" % (where, out.log[-300:]))
        expect(out.rc == 0 and label == sc.new, "%s: no fault landed, yet exit %d and state %r: %r" %
               (where, out.rc, label, out.stderr.strip()))
        tally.missed += 1
        return
    if strace_faults.must_fail(site):
        tally.must_fail[fault] += 1
    strays, changed = tree_changes(before, tree(work), sc.targets)
    expect(not changed, "%s: files the command does not own changed: %r" % (where, changed))
    tally.runs[fault] += 1
    tally.states[label] += 1
    err = out.stderr.strip()
    if fault == "SIGKILL":
        expect(out.rc == -9, "%s: expected death by SIGKILL, got exit %d: %r" % (where, out.rc, err))
        recover(sc, work, before, label, strays, where, tally)
        return
    if fault == "EINTR":
        expect(out.rc == 0, "%s: EINTR was not retried (exit %d): %r" % (where, out.rc, err))
    expect(out.rc in (0, 1), "%s: exit %d (expected 0 or 1): %r" % (where, out.rc, err))
    expect(not strays, "%s: left %r behind (exit %d): %r" % (where, strays, out.rc, err))
    if out.rc == 0:
        expect(label == sc.new, "%s: exit 0 but the store holds state %r, not the new one" % (where, label))
        expect(fault == "EINTR" or not strace_faults.must_fail(site),
               "%s: exit 0 although a call that writes or syncs what it publishes failed: %r" % (where, err))
        sc.check_success(err, label, where)
        return
    tally.failed[fault] += 1
    last = err.splitlines()[-1] if err else ""
    expect(last.startswith("zrec %s: " % sc.command), "%s: the failure does not end with a 'zrec %s: ' line: %r" %
           (where, sc.command, err))
    expect(STRERROR[fault] in err, "%s: the message does not say %r: %r" % (where, STRERROR[fault], err))
    sc.check_failure(err, label, where)


def recover(sc, work, before, label, strays, where, tally):
    """After a SIGKILL: the next run of the command succeeds and leaves no temporary
    (or names the one it leaves in a warning)."""
    argv = sc.recovery(work, label)
    if argv is None:
        expect(not strays, "%s: the killed run left %r beside a complete DST" % (where, strays))
        return
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                       cwd=os.path.dirname(work))
    err = p.stderr.decode("utf-8", "replace").strip()
    expect(p.returncode == 0, "%s: after the kill (state %r), the next run fails (exit %d): %r" %
           (where, label, p.returncode, err))
    after = sc.state(work, where + " then rerun")
    expect(after == sc.new, "%s: the rerun after the kill holds state %r" % (where, after))
    left, changed = tree_changes(before, tree(work), sc.targets)
    expect(not changed, "%s: the rerun changed files it does not own: %r" % (where, changed))
    # A leftover is explained when a warning names it or a directory holding it.
    unexplained = [p for p in left if not any(part in err for part in p.split(os.sep))]
    expect(not unexplained, "%s: the rerun after the kill left %r without a warning" % (where, unexplained))
    tally.recovered += 1


def exercise(sc, name, root):
    ROOT[:] = [os.path.join(root, "x")]
    pristine = os.path.join(root, "pristine")
    work = os.path.join(root, "w")
    os.makedirs(pristine)
    sc.build(pristine, work)
    reset(pristine, work)
    before = tree(work)
    argv = sc.argv(work)
    sites, rc, err = strace_faults.enumerate_sites(argv, work, cwd=root, env=TRACED_ENV)
    expect(rc == 0, "the uninjected run under strace fails (exit %d): %s" % (rc, err))
    sc.learn(work)
    expect(sc.state(work, "reference run") == sc.new, "the uninjected run does not publish the new state")
    expect(not tree_changes(before, tree(work), sc.targets)[0], "the uninjected run leaves stray files")
    expect(len(sites) >= 3, "only %d write-path calls found: %r" % (len(sites), sites))
    chosen = sites[::STRIDE]
    tally = Tally()
    problems = []
    t0 = time.monotonic()
    attempted = 0
    for i, site in enumerate(chosen):
        for fault in [FAULTS[i % len(FAULTS)]] if ROTATE else FAULTS:
            attempted += 1
            reset(pristine, work)
            out = strace_faults.inject(sc.argv(work), site, fault, cwd=root, env=TRACED_ENV)
            try:
                judge(sc, work, before, site, fault, out, tally)
            except AssertionError as e:  # keep going: one report lists every broken run
                problems.append(strip_root(str(e)))
    secs = time.monotonic() - t0
    runs = attempted - tally.missed
    TOTAL["runs"] += runs
    by_call = collections.Counter(s.syscall for s in chosen)
    FIGURES.append("%s (%s, %d lane%s): %d of %d write-path calls (%s) x %s = %d injected runs (%d missed) in "
                   "%.1f s; exit 1 after EIO %d, ENOSPC %d; states left %s; %d reruns after SIGKILL; %d runs broke "
                   "a rule" %
                   (name, sc.command, sc.lanes, "s" if sc.lanes > 1 else "", len(chosen), len(sites),
                    " ".join("%s:%d" % kv for kv in sorted(by_call.items())),
                    "1 fault in turn" if ROTATE else "%d faults" % len(FAULTS), runs, tally.missed, secs,
                    tally.failed["EIO"], tally.failed["ENOSPC"],
                    dict(sorted(tally.states.items(), key=str)), tally.recovered, len(problems)))
    if problems:
        raise AssertionError("%d of %d injected runs broke a rule:\n  %s" %
                             (len(problems), runs, "\n  ".join(problems[:MAX_LISTED])) +
                             ("\n  ... and %d more" % (len(problems) - MAX_LISTED) if len(problems) > MAX_LISTED else ""))
    # Not vacuous: a write or sync that fails must be seen to fail.
    expect(tally.missed * 4 <= attempted, "%d of %d faults never landed" % (tally.missed, attempted))
    for fault in ("EIO", "ENOSPC"):
        musts = tally.must_fail[fault]
        expect(musts > 0, "no %s landed on a call that writes or syncs" % fault)
        expect(tally.failed[fault] >= musts, "%s: only %d of %d runs failed" % (fault, tally.failed[fault], musts))


def case(sc, name):
    def t(root):
        exercise(sc, name[len("test_"):], root)
    t.__name__ = name
    return t


TESTS = [
    case(Create(), "test_create"),
    case(AppendNpy(), "test_append_npy"),
    case(AppendFiles(), "test_append_files"),
    case(AppendStream(), "test_append_stream"),
    case(Transfer("recompress", [("src", 11, 40, 3, "zstd")], ["--shards", "2", "--window-mib", "1"]),
         "test_recompress_frame_copy"),
    case(Transfer("concat", [("a", 12, 25, 2, "zstd"), ("b", 13, 17, 3, "zstd")], ["--codec", "raw"]),
         "test_concat_recode"),
    # One layout: the parts are placed (zrec/join.h), each data file copied as one run.
    case(Transfer("concat", [("a", 15, 25, 3, "zstd"), ("b", 16, 17, 3, "zstd")], []), "test_concat_placed"),
    # Several lanes: a failure in a worker thread must stop the run just the same.
    case(AppendNpy(lanes=3, checkpoint=10), "test_append_npy_lanes"),
    case(Transfer("recompress", [("src", 14, 90, 3, "zstd")], ["--dict", "d.zr", "--checksum"], lanes=3,
                  dictionary="d.zr"),
         "test_recompress_dict_lanes"),
    case(TrainDict(), "test_train_dict"),
    case(TrainDict(replace=True), "test_train_dict_replace"),
]


def main():
    strace_faults.strace_path()
    # fsync on tmpfs costs nothing; hundreds of runs on a disk would spend most of
    # their time in it.
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        tempfile.tempdir = "/dev/shm"
    t0 = time.monotonic()

    def figures():
        return FIGURES + ["fault injection: %d injected runs (every %s call, %s) in %.0f s" %
                          (TOTAL["runs"], "%dth" % STRIDE if STRIDE > 1 else "single", "one fault each in turn" if ROTATE
                           else "EIO, ENOSPC, EINTR and SIGKILL each", time.monotonic() - t0)]
    only = [c for c in os.environ.get("CASES", "").split(",") if c]
    tests = [t for t in TESTS if not only or any(c in t.__name__ for c in only)]
    return case_runner.run_cases(tests, "zrec-fault-inject-", figures=figures)


if __name__ == "__main__":
    sys.exit(main())
