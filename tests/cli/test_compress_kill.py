#!/usr/bin/python3
"""SIGKILL in the middle of recompress and concat: no DST, SRC intact, next run fine.

A raw source is recompressed (and, separately, two raw parts concatenated) at zstd
level 19 on one thread, slow enough to be caught: the test waits until the hidden
temporary ".DST.zrec-tmp-XXXXXX" holds payload bytes, then SIGKILLs the process. After
that, DST must not exist (only the unpublished temporary may), every SRC file must be
byte-for-byte as before, and the next run of the same command must succeed, remove the
abandoned temporary and produce DST with SRC's digest. Also SIGINT: the command stops
at the next window, removes its temporary and exits 130.

Roots too: recompress ROOT DST and concat ROOT ROOT DST killed while the temporary (its
streams inside) holds payload; the next run removes it, while a temporary of that name
that a live process holds (its lock) is left alone, and one that holds a file no root
holds is left with a warning naming it.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import glob
import hashlib
import os
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import must  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = os.environ.get("ZREC")
if not ZREC or not os.access(ZREC, os.X_OK):
    sys.exit("test_compress_kill: set ZREC to the zrec binary (got %r)" % ZREC)




def hash_tree(store):
    """Relative path -> SHA-256 of every file under a store (or a root's streams)."""
    return {os.path.relpath(os.path.join(d, f), store): hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
            for d, _, files in os.walk(store) for f in files}


def make_raw_store(root, name, seed, records=64):
    """~12 MiB per store of compressible, image-like rows: slow at level 19."""
    store = os.path.join(root, name)
    must(["create", "--dense", "--dtype", "|u1", "--shape", "256,768", "--codec", "raw", "--shards", "2", store])
    rng = np.random.default_rng(seed)
    x = np.arange(768, dtype=np.int32)[None, None, :] + np.arange(256, dtype=np.int32)[None, :, None]
    a = ((x * rng.integers(1, 4, size=(records, 1, 1)) + rng.integers(0, 8, size=(records, 256, 768))) % 251)
    np.save(os.path.join(root, name + ".npy"), a.astype("|u1"))
    must(["append-npy", store, os.path.join(root, name + ".npy")])
    return store


def temporaries(dst):
    return glob.glob(os.path.join(os.path.dirname(dst), "." + os.path.basename(dst) + ".zrec-tmp-*"))


def data_files(tmp):
    """The data files under a temporary: a store's, or a root's streams' (hidden ones too)."""
    return [os.path.join(d, f) for d, _, files in os.walk(tmp) for f in files if f.startswith("data_")]


def wait_for_payload(proc, dst, timeout=60):
    """Waits until the temporary of dst holds payload bytes; returns False if proc ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        for t in temporaries(dst):
            try:
                if any(os.path.getsize(f) > 0 for f in data_files(t)):
                    return True
            except OSError:
                pass
        time.sleep(0.005)
    raise AssertionError("no payload appeared in the temporary of %s" % dst)


def interrupt_midway(args, dst, sig):
    proc = subprocess.Popen([ZREC, "--threads", "1"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    caught = wait_for_payload(proc, dst)
    if caught:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    if not caught:
        raise AssertionError("zrec %s finished before it could be interrupted (rc %d)" % (" ".join(args), proc.returncode))
    return proc.returncode, err.decode()


def check_killed_then_rerun(root, args, dst, sources, others=()):
    """`others`: temporaries of dst that are not the killed run's, which the rerun must leave."""
    before = [hash_tree(s) for s in sources]
    digests = [must(["digest", s])[0].split()[0] for s in sources]
    rc, err = interrupt_midway(args, dst, signal.SIGKILL)
    if rc != -signal.SIGKILL:
        raise AssertionError("expected death by SIGKILL, got rc %d: %s" % (rc, err))
    if os.path.exists(dst):
        raise AssertionError("%s exists after SIGKILL" % dst)
    left = [t for t in temporaries(dst) if t not in others]
    if len(left) != 1:
        raise AssertionError("expected the one abandoned temporary, found %s" % left)
    if [hash_tree(s) for s in sources] != before:
        raise AssertionError("SIGKILL changed a source")
    for s, d in zip(sources, digests):
        if must(["digest", s])[0].split()[0] != d:
            raise AssertionError("a source reads differently after SIGKILL")
    # The next run (at the default level: quick) removes the abandoned temporary.
    fast = [a for a in args if a not in ("--level", "19")]
    err = must(fast)[1]
    if sorted(temporaries(dst)) != sorted(others):
        raise AssertionError("the next run left temporaries: %s" % temporaries(dst))
    return must(["digest", dst])[0].split()[0], err


def test_sigkill_recompress(root):
    src = make_raw_store(root, "src", 1)
    dst = os.path.join(root, "dst")
    got, _ = check_killed_then_rerun(root, ["recompress", src, dst, "--codec", "zstd", "--level", "19",
                                            "--window-mib", "2"], dst, [src])
    if got != must(["digest", src])[0].split()[0]:
        raise AssertionError("the rerun's digest differs from SRC's")


def test_sigkill_concat(root):
    a = make_raw_store(root, "a", 2, records=40)
    b = make_raw_store(root, "b", 3, records=40)
    dst = os.path.join(root, "all")
    got, _ = check_killed_then_rerun(root, ["concat", a, b, dst, "--codec", "zstd", "--level", "19",
                                            "--window-mib", "2"], dst, [a, b])
    one = os.path.join(root, "one")
    must(["create", "--dense", "--dtype", "|u1", "--shape", "256,768", "--codec", "raw", one])
    must(["append-npy", one, os.path.join(root, "a.npy"), os.path.join(root, "b.npy")])
    if got != must(["digest", one])[0].split()[0]:
        raise AssertionError("the rerun's digest differs from a one-shot build")


def make_raw_root(root, name, seed):
    """A root of two raw streams: image-like rows (slow at level 19) and their labels."""
    r = os.path.join(root, name)
    os.mkdir(r)
    os.rename(make_raw_store(root, name + "-img", seed, records=40), os.path.join(r, "img"))
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", os.path.join(r, "label")])
    np.save(os.path.join(root, name + "-label.npy"), np.arange(40, dtype="<i8"))
    must(["append-npy", os.path.join(r, "label"), os.path.join(root, name + "-label.npy")])
    must(["adopt", r])
    return r


def digests(r):
    return [must(["digest", os.path.join(r, s)])[0].split()[0] for s in ("img", "label")]


def test_sigkill_root_recompress_and_concat(root):
    src = make_raw_root(root, "src", 5)
    for command, dst, sources in [("recompress", os.path.join(root, "dst"), [src]),
                                  ("concat", os.path.join(root, "both"), [src, src])]:
        # Not the killed run's: one a live process holds (its lock), and one that holds
        # what no root holds; the rerun leaves both.
        held = os.path.join(root, "." + os.path.basename(dst) + ".zrec-tmp-h3ld00")
        foreign = os.path.join(root, "." + os.path.basename(dst) + ".zrec-tmp-f0reig")
        for t in (held, foreign):
            os.mkdir(t)
            open(os.path.join(t, ".zrec-temporary"), "w").close()
        open(os.path.join(foreign, "notes.txt"), "w").write("mine")
        # Its own process group, its output not the test's: the sleep under flock must end
        # with it, or it would hold the test's stdout open (CTest waits for that) for 600 s.
        holder = subprocess.Popen(["flock", held, "sleep", "600"], start_new_session=True,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for = time.monotonic() + 10
            while subprocess.run(["flock", "-n", held, "true"]).returncode == 0:
                if time.monotonic() > wait_for:
                    raise AssertionError("flock never took the lock on %s" % held)
                time.sleep(0.01)
            got, err = check_killed_then_rerun(root, [command] + sources + [dst, "--codec", "zstd", "--level", "19",
                                                                          "--window-mib", "2"],
                                               dst, sources, others=[held, foreign])
        finally:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()
        if "leaving '%s' in place: it is named like a zrec temporary but it holds 'notes.txt'" % foreign not in err:
            raise AssertionError("%s: no warning about %s: %r" % (command, foreign, err))
        if os.listdir(held) != [".zrec-temporary"] or sorted(os.listdir(foreign)) != [".zrec-temporary", "notes.txt"]:
            raise AssertionError("%s: the temporaries it must leave changed" % command)
        want = digests(src) if command == "recompress" else None
        if want is not None and digests(dst) != want:
            raise AssertionError("the rerun's streams differ from SRC's")
        if command == "concat" and must(["info", "--json", dst])[0].count(b'"committed_length": 80') != 1:
            raise AssertionError("concat of the root with itself does not commit 80 samples")


def test_sigint_cleans_up(root):
    src = make_raw_store(root, "src", 4)
    dst = os.path.join(root, "dst")
    rc, err = interrupt_midway(["recompress", src, dst, "--codec", "zstd", "--level", "19", "--window-mib", "2"],
                               dst, signal.SIGINT)
    if rc != 130 or "interrupted" not in err:
        raise AssertionError("SIGINT: rc %d, stderr %r" % (rc, err))
    if os.path.exists(dst) or temporaries(dst):
        raise AssertionError("SIGINT left %s" % (temporaries(dst) or dst))


TESTS = [v for k, v in list(globals().items()) if k.startswith("test_")]


def main():
    return case_runner.run_cases(TESTS, "zrec-compress-kill-")


if __name__ == "__main__":
    sys.exit(main())
