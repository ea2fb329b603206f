#!/usr/bin/python3
"""SIGKILL in the middle of recompress and concat: no DST, SRC intact, next run fine.

A raw source is recompressed (and, separately, two raw parts concatenated) at zstd
level 19 on one thread, slow enough to be caught: the test waits until the hidden
temporary ".DST.zrec-tmp-XXXXXX" holds payload bytes, then SIGKILLs the process. After
that, DST must not exist (only the unpublished temporary may), every SRC file must be
byte-for-byte as before, and the next run of the same command must succeed, remove the
abandoned temporary and produce DST with SRC's digest. Also SIGINT: the command stops
at the next window, removes its temporary and exits 130.

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
    return {n: hashlib.sha256(open(os.path.join(store, n), "rb").read()).hexdigest() for n in sorted(os.listdir(store))}


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


def wait_for_payload(proc, dst, timeout=60):
    """Waits until the temporary of dst holds payload bytes; returns False if proc ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        for t in temporaries(dst):
            try:
                if any(os.path.getsize(f) > 0 for f in glob.glob(os.path.join(t, "data_*.zr"))):
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


def check_killed_then_rerun(root, args, dst, sources):
    before = [hash_tree(s) for s in sources]
    digests = [must(["digest", s])[0].split()[0] for s in sources]
    rc, err = interrupt_midway(args, dst, signal.SIGKILL)
    if rc != -signal.SIGKILL:
        raise AssertionError("expected death by SIGKILL, got rc %d: %s" % (rc, err))
    if os.path.exists(dst):
        raise AssertionError("%s exists after SIGKILL" % dst)
    left = temporaries(dst)
    if len(left) != 1:
        raise AssertionError("expected the one abandoned temporary, found %s" % left)
    if [hash_tree(s) for s in sources] != before:
        raise AssertionError("SIGKILL changed a source")
    for s, d in zip(sources, digests):
        if must(["digest", s])[0].split()[0] != d:
            raise AssertionError("a source reads differently after SIGKILL")
    # The next run (at the default level: quick) removes the abandoned temporary.
    fast = [a for a in args if a not in ("--level", "19")]
    must(fast)
    if temporaries(dst):
        raise AssertionError("the next run left temporaries: %s" % temporaries(dst))
    return must(["digest", dst])[0].split()[0]


def test_sigkill_recompress(root):
    src = make_raw_store(root, "src", 1)
    dst = os.path.join(root, "dst")
    got = check_killed_then_rerun(root, ["recompress", src, dst, "--codec", "zstd", "--level", "19",
                                         "--window-mib", "2"], dst, [src])
    if got != must(["digest", src])[0].split()[0]:
        raise AssertionError("the rerun's digest differs from SRC's")


def test_sigkill_concat(root):
    a = make_raw_store(root, "a", 2, records=40)
    b = make_raw_store(root, "b", 3, records=40)
    dst = os.path.join(root, "all")
    got = check_killed_then_rerun(root, ["concat", a, b, dst, "--codec", "zstd", "--level", "19",
                                         "--window-mib", "2"], dst, [a, b])
    one = os.path.join(root, "one")
    must(["create", "--dense", "--dtype", "|u1", "--shape", "256,768", "--codec", "raw", one])
    must(["append-npy", one, os.path.join(root, "a.npy"), os.path.join(root, "b.npy")])
    if got != must(["digest", one])[0].split()[0]:
        raise AssertionError("the rerun's digest differs from a one-shot build")


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
