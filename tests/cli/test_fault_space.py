#!/usr/bin/python3
"""Out of space and write failures: a clear error, the published state intact, no
leftover temporary stores.

Two ways to make writes fail, both tried where the machine allows:
  - ENOSPC: a 3 MiB tmpfs mounted for the test (as root, or inside `unshare -rm` as a
    user); skipped, with a note, where neither works;
  - EFBIG: `prlimit --fsize` (RLIMIT_FSIZE; zrec ignores SIGXFSZ, so write(2) fails
    with "File too large" instead of the process dying). Always run.
For each writer (create, append-npy, append-files, append-stream, recompress, concat)
the command must exit 1 with one line naming the errno text, and afterwards:
  - an existing store is byte-for-byte as before, `zrec verify` passes, and with
    --checkpoint-every it holds exactly its last checkpoint (a prefix of the input);
  - no temporary store (".NAME.zrec-tmp-*") or new file is left in the directory.

Needs: ZREC (path of the zrec binary), python3-numpy, prlimit (util-linux).
"""
import hashlib
import os
import subprocess
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import (  # noqa: E402  (tests/cli/cli_helpers.py)
    expect, must_out as must, require_zrec, run_zrec as run)

ZREC = require_zrec("test_fault_space")

FIGURES = []


def tree(d):
    """name -> sha256 of every entry of d (recursively), hidden ones included."""
    out = {}
    for base, dirs, files in os.walk(d):
        for n in dirs:
            out[os.path.relpath(os.path.join(base, n), d) + "/"] = "dir"
        for n in files:
            p = os.path.join(base, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = hashlib.sha256(f.read()).hexdigest()
    return out


def npy_stream(arrays):
    import io
    b = io.BytesIO()
    for a in arrays:
        np.save(b, a)
    return b.getvalue()


def hashes(store):
    return must(["digest", "--per-record", store]).decode().split()  # ID, hash, ID, hash, ...


def check_failure(rc, err, words, what):
    expect(0 < rc < 128 and "internal error" not in err, "%s: rc %d, stderr %r" % (what, rc, err))
    expect(rc == 1, "%s: expected exit 1, got %d: %s" % (what, rc, err))
    expect(any(w in err for w in words), "%s: stderr does not say %r: %r" % (what, words, err))
    expect(err.startswith("zrec "), "%s: %r" % (what, err))


class Scenario:
    """Runs every writer against a directory where writes fail past some size."""

    def __init__(self, name, root, prefix, words, budget):
        self.name, self.root, self.prefix, self.words, self.budget = name, root, prefix, words, budget
        self.count = 0

    def failing(self, args, stdin=None, what=None):
        rc, out, err = run(args, stdin, prefix=self.prefix)
        check_failure(rc, err, self.words, "%s: %s" % (self.name, what or " ".join(args[:1])))
        self.count += 1
        return err

    def store(self, name, create, first):
        path = os.path.join(self.root, name)
        must(["create"] + create + [path])
        must(["-q", "append-npy", path, "-"], stdin=npy_stream(first))
        return path

    def run_all(self, big_npy, big_files, big_lines):
        root = self.root
        rng = np.random.default_rng(1)
        first = [rng.integers(0, 100, size=20, dtype="<i4") for _ in range(10)]
        s = self.store("s", ["--ragged", "--ndim", "1", "--dtype", "<i4", "--shards", "2"], first)
        before_tree, before = tree(root), hashes(s)
        # append-npy, all or nothing
        err = self.failing(["append-npy", s, "-"], stdin=big_npy, what="append-npy")
        expect(tree(root) == before_tree, "append-npy changed files: %s" % err)
        # append-npy with checkpoints: the store holds its last checkpoint, a prefix
        self.failing(["append-npy", "--checkpoint-every", "50", "--window-mib", "1", s, "-"], stdin=big_npy,
                     what="append-npy --checkpoint-every")
        got = hashes(s)
        expect(got[:len(before)] == before and (len(got) - len(before)) % 50 == 0,
               "checkpointed store is not a published prefix (%d records)" % len(got))
        rc, out, err = run(["verify", s])
        expect(rc == 0, "verify after the failure: %s %s" % (out, err))
        self.reset_extra(s, len(before))
        before_tree = tree(root)
        # append-files and append-stream (Ragged |u1)
        b = self.store("b", ["--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "raw"],
                       [np.frombuffer(b"first", dtype="|u1")])
        before_tree = tree(root)
        self.failing(["append-files", b, "-"], stdin=big_files, what="append-files")
        expect(tree(root) == before_tree, "append-files changed files")
        self.failing(["append-stream", b], stdin=big_lines, what="append-stream")
        expect(tree(root) == before_tree, "append-stream changed files")
        rc, _, err = run(["verify", b])
        expect(rc == 0, err)
        # recompress and concat: no DST, no temporary
        self.failing(["recompress", "--codec", "raw", "--shards", "1", s, os.path.join(root, "dst")],
                     what="recompress")
        self.failing(["concat", "--codec", "raw", s, s, os.path.join(root, "dst")], what="concat")
        expect(tree(root) == before_tree, "recompress/concat left something: %r" %
               sorted(set(tree(root)) - set(before_tree)))
        # create on a filesystem with no room at all
        if self.fill():
            before_tree = tree(root)
            self.failing(["create", "--dense", "--dtype", "<f8", "--shape", "3", "--shards", "255",
                          os.path.join(root, "new")], what="create")
            expect(tree(root) == before_tree, "create left %r" % sorted(set(tree(root)) - set(before_tree)))
        FIGURES.append("%s: %d failing writes, each refused cleanly" % (self.name, self.count))

    def reset_extra(self, store, n):
        pass

    def fill(self):
        return False  # this scenario can't make a small create fail


class Tmpfs(Scenario):
    def fill(self):
        # Fill the filesystem to the last byte (it may be full already).
        try:
            with open(os.path.join(self.root, "filler"), "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass
        return True


def inputs(root, budget):
    rng = np.random.default_rng(2)
    arrays = [rng.integers(0, 1 << 30, size=2048, dtype="<i4") for _ in range(budget // 8192 + 400)]
    big_npy = npy_stream(arrays)
    d = os.path.join(root, "files")
    os.makedirs(d)
    names = []
    for i in range(budget // 65536 + 40):
        p = os.path.join(d, "%04d" % i)
        with open(p, "wb") as f:
            f.write(rng.integers(0, 256, size=65536, dtype=np.uint8).tobytes())
        names.append(p)
    big_files = "".join(n + "\n" for n in names).encode()
    big_lines = b"".join(rng.integers(97, 123, size=1000, dtype=np.uint8).tobytes() + b"\n"
                         for _ in range(budget // 1000 + 2000))
    return big_npy, big_files, big_lines


def test_efbig_prlimit(root):
    """RLIMIT_FSIZE of 256 KiB: every write past it fails with EFBIG."""
    limit = 256 * 1024
    data = os.path.join(root, "inputs")
    os.makedirs(data)
    big = inputs(data, 2 * limit)
    work = os.path.join(root, "w")
    os.makedirs(work)
    sc = Scenario("EFBIG (prlimit --fsize=%d)" % limit, work, ["prlimit", "--fsize=%d" % limit], ["File too large"],
                  limit)
    # create can't fail on size here (its files are small); its no-leftover rule is
    # checked by the tmpfs scenario, and by a limit below one page:
    sc.run_all(*big)
    rc, _, err = run(["create", "--dense", "--dtype", "u1", "--shape", "1", os.path.join(work, "tiny")],
                     prefix=["prlimit", "--fsize=1000"])
    check_failure(rc, err, ["File too large"], "create under a 1000-byte limit")
    expect(not [n for n in os.listdir(work) if "tiny" in n], "create left %r" % os.listdir(work))


def try_mount(path, size):
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % size, "tmpfs", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return r.returncode == 0


def tmpfs_body(mnt, inputs_dir, size):
    big = inputs(inputs_dir, size)
    sc = Tmpfs("ENOSPC (tmpfs of %d KiB)" % (size // 1024), mnt, [], ["No space left on device"], size)
    sc.run_all(*big)


def test_enospc_tmpfs(root):
    size = 3 << 20
    mnt = os.path.join(root, "mnt")
    os.makedirs(mnt)
    data = os.path.join(root, "inputs")
    os.makedirs(data)
    if os.geteuid() == 0 and try_mount(mnt, size):
        try:
            tmpfs_body(mnt, data, size)
        finally:
            subprocess.run(["umount", mnt])
        return
    # Not root (or mount refused): a private mount namespace as an unprivileged user.
    r = subprocess.run(["unshare", "-rm", "/usr/bin/python3", os.path.abspath(__file__), "--inside", mnt, data,
                        str(size)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ))
    text = r.stdout.decode("utf-8", "replace")
    if r.returncode == 77:
        FIGURES.append("ENOSPC (tmpfs): skipped, this machine allows no tmpfs mount (%s)" % text.strip()[-200:])
        return
    for line in text.splitlines():
        if line.startswith("figure: "):
            FIGURES.append(line[len("figure: "):])
    expect(r.returncode == 0, "tmpfs scenario in a user namespace failed:\n" + text)


def inside(mnt, data, size):
    if not try_mount(mnt, int(size)):
        print("cannot mount a tmpfs")
        return 77
    try:
        tmpfs_body(mnt, data, int(size))
    except Exception as e:
        print("FAIL: %s" % e)
        traceback.print_exc()
        return 1
    finally:
        subprocess.run(["umount", mnt])
    for f in FIGURES:
        print("figure: " + f)
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--inside":
        return inside(*sys.argv[2:])

    def unmount(root):
        subprocess.run(["umount", os.path.join(root, "test_enospc_tmpfs", "mnt")], stderr=subprocess.DEVNULL)

    return case_runner.run_cases([test_efbig_prlimit, test_enospc_tmpfs], "zrec-fault-space-", figures=FIGURES,
                                 before_cleanup=unmount)


if __name__ == "__main__":
    sys.exit(main())
