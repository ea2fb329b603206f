#!/usr/bin/python3
"""zrec writes only inside the store it was asked to write; symlinks are handled as documented.

Decisions (docs/verify.md, "Symbolic links"):
  - A symbolic link INSIDE a store directory, where meta.zr, data_N.zr or dict.zr
    belongs, is refused by every command, readers and writers alike (O_NOFOLLOW):
    "... is a symbolic link; zrec only opens regular files inside a store". Nothing is
    read or written through it. FIFOs, devices and directories there are refused too.
  - A STORE path that is itself a symbolic link to a directory is followed, as any
    program follows the path it is given: reads and appends go to the directory it
    points at (and only there).
  - create, recompress and concat never create a store through a symbolic link: a
    target path that is a symlink (dangling, or to an empty directory) is refused as
    existing, and nothing is made at either end.
Checked here: every writer (create, append-npy, append-files, append-stream, recompress,
concat) run in a sandbox changes nothing but its store (and, while it runs, its hidden
temporary sibling); $TMPDIR and the working directory stay untouched; symlinked store
files are refused by cat, info, verify, digest and every writer, and their targets are
untouched.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import hashlib
import io
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)

import cli_helpers  # noqa: E402  (tests/cli/cli_helpers.py)
from cli_helpers import must_out as must  # noqa: E402

ZREC = cli_helpers.require_zrec("test_security")

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run(args, stdin=None, cwd=None, env=None):
    p = subprocess.run([ZREC] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                       env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def npy_stream(arrays):
    b = io.BytesIO()
    for a in arrays:
        np.save(b, a)
    return b.getvalue()


def snapshot(root):
    """Every path under root (symlinks not followed) -> (kind, content hash or target, mtime)."""
    out = {}
    for base, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(base, n)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir", None)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[rel] = ("file", hashlib.sha256(f.read()).hexdigest(), st.st_mtime_ns)
            else:
                out[rel] = ("other", None)
    return out


def changed(before, after):
    keys = set(before) | set(after)
    return sorted(k for k in keys if before.get(k) != after.get(k))


def only_under(paths, prefixes):
    return [p for p in paths if not any(p == x or p.startswith(x + os.sep) for x in prefixes)]


@test
def test_writers_touch_only_their_store(root):
    sandbox = os.path.join(root, "sandbox")
    tmpdir = os.path.join(root, "tmp")
    cwd = os.path.join(root, "cwd")
    for d in (sandbox, tmpdir, cwd):
        os.makedirs(d)
    env = dict(os.environ, TMPDIR=tmpdir)
    inputs = os.path.join(root, "inputs")
    os.makedirs(inputs)
    for i in range(5):
        with open(os.path.join(inputs, "f%d" % i), "wb") as f:
            f.write(b"file %d\n" % i * (i + 1))
    npy = os.path.join(inputs, "a.npy")
    np.save(npy, np.arange(40, dtype="<i4").reshape(5, 8))
    # Bystanders: other stores and files in the same parent directory.
    must(["create", "--dense", "--dtype", "<i4", "--shape", "8", os.path.join(sandbox, "other")], env=env)
    with open(os.path.join(sandbox, "note.txt"), "w") as f:
        f.write("bystander\n")
    steps = [
        ("create", ["create", "--dense", "--dtype", "<i4", "--shape", "8", "--checksum", "s"], "s"),
        ("append-npy", ["append-npy", "s", npy], "s"),
        ("create blobs", ["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "b"], "b"),
        ("append-files", ["append-files", "b"] + [os.path.join(inputs, "f%d" % i) for i in range(5)], "b"),
        ("append-stream", ["append-stream", "-i", os.path.join(inputs, "f4"), "b"], "b"),
        ("recompress", ["recompress", "--codec", "raw", "s", "r"], "r"),
        ("concat", ["concat", "s", "s", "c"], "c"),
    ]
    for name, args, target in steps:
        before = (snapshot(sandbox), snapshot(tmpdir), snapshot(cwd), snapshot(inputs))
        must(args, cwd=sandbox, env=env)
        after = (snapshot(sandbox), snapshot(tmpdir), snapshot(cwd), snapshot(inputs))
        stray = only_under(changed(before[0], after[0]), [target])
        expect(not stray, "%s changed %r outside its store %r" % (name, stray, target))
        for label, b, a in (("$TMPDIR", before[1], after[1]), ("the inputs", before[3], after[3])):
            expect(not changed(b, a), "%s changed %s: %r" % (name, label, changed(b, a)))
        # Readers change nothing at all.
        for reader in (["verify", target], ["cat", "--format", "jsonl", target], ["info", target],
                       ["digest", target]):
            b = snapshot(sandbox)
            must(reader, cwd=sandbox, env=env)
            expect(not changed(b, snapshot(sandbox)), "%s changed files" % reader[0])
    expect(not os.listdir(tmpdir) and not os.listdir(cwd), "files left in $TMPDIR or the cwd")


def good_store(root, name, codec="zstd"):
    path = os.path.join(root, name)
    args = ["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", codec, "--shards", "2"]
    if codec == "zstd_dict":
        d = os.path.join(root, "dict.bin")
        with open(d, "wb") as f:
            f.write(bytes(range(256)) * 4)
        args += ["--dict", d]
    must(args + [path])
    must(["-q", "append-npy", path, "-"], stdin=npy_stream([np.arange(i + 1, dtype="<i4") for i in range(6)]))
    return path


def expect_refused(args, words, stdin=None):
    rc, out, err = run(args, stdin=stdin)
    expect(rc in (1, 2) and all(w in err + out.decode("utf-8", "replace") for w in words),
           "zrec %s: expected a refusal naming %r, got rc %d: %s %s" % (" ".join(args), words, rc, out[:300], err))


@test
def test_symlinks_inside_a_store_are_refused(root):
    outside = os.path.join(root, "outside")
    os.makedirs(outside)
    for victim in ("meta.zr", "data_1.zr", "dict.zr"):
        store = good_store(root, "s_" + victim.replace(".", "_"), codec="zstd_dict" if victim == "dict.zr" else "zstd")
        real = os.path.join(outside, victim + ".real")
        shutil.move(os.path.join(store, victim), real)
        os.symlink(real, os.path.join(store, victim))
        before = snapshot(outside)
        npy = npy_stream([np.arange(3, dtype="<i4")])
        for args in (["cat", store], ["info", store], ["digest", store], ["verify", store],
                     ["verify", "--quick", store], ["append-npy", store, "-"],
                     ["recompress", store, os.path.join(root, "dst_" + victim)]):
            expect_refused(args, [victim, "symbolic link"], stdin=npy if "append-npy" in args else None)
        expect(not changed(before, snapshot(outside)), "a symlink target was changed: %s" % victim)
        expect(not os.path.exists(os.path.join(root, "dst_" + victim)), "recompress made a DST")


@test
def test_store_path_symlink_is_followed(root):
    real = good_store(root, "real")
    link = os.path.join(root, "link")
    os.symlink(real, link)
    for args in (["verify", link], ["cat", "--format", "jsonl", link], ["info", link]):
        must(args)
    before = snapshot(root)
    must(["-q", "append-npy", link, "-"], stdin=npy_stream([np.arange(4, dtype="<i4")]))
    ch = changed(before, snapshot(root))
    expect(ch and not only_under(ch, ["real"]), "append through a linked path changed %r" % ch)
    expect(os.path.islink(link) and os.readlink(link) == real, "the link itself changed")
    rc, out, err = run(["verify", "--json", link])
    expect(rc == 0 and b'"length": 7' in out, out)


@test
def test_create_never_goes_through_a_symlink(root):
    empty = os.path.join(root, "empty_target")
    os.makedirs(empty)
    cases = {"to_empty_dir": empty, "dangling": os.path.join(root, "nowhere")}
    for name, target in cases.items():
        link = os.path.join(root, name)
        os.symlink(target, link)
        before = snapshot(root)
        for args in (["create", "--dense", "--dtype", "u1", "--shape", "1", link],
                     ["recompress", good_store(root, "src_" + name), link]):
            rc, out, err = run(args)
            expect(rc != 0 and "internal error" not in err, "%s through %s: rc %d %s" % (args[0], name, rc, err))
            after = snapshot(root)
            stray = [p for p in changed(before, after) if not p.startswith("src_")]
            expect(not stray, "%s through a %s symlink changed %r" % (args[0], name, stray))
            before = after
        expect(os.listdir(empty) == [] and not os.path.exists(os.path.join(root, "nowhere")), "made something")


@test
def test_non_regular_store_files_do_not_hang(root):
    store = good_store(root, "fifo")
    os.remove(os.path.join(store, "data_0.zr"))
    os.mkfifo(os.path.join(store, "data_0.zr"))
    for args in (["cat", store], ["verify", store], ["append-npy", store, "-"]):
        expect_refused(args, ["data_0.zr", "not a regular file"], stdin=b"")


def main():
    return case_runner.run_cases(TESTS, "zrec-security-")


if __name__ == "__main__":
    sys.exit(main())
