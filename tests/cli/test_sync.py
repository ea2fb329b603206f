#!/usr/bin/python3
"""zrec sync (docs/remote.md, "Publishing to a bucket"), against moto's server with its
signature checks on (tests/cli/s3_server.py):

- a store and a root synced to s3:// read back with the local digest (the root's card
  with it); synced back to a local directory they are byte-equal to the source;
- a re-sync after an append sends only the changed files, an appended data file as its
  tail (UploadPartCopy of the object already there): fewer bytes, from --json;
- a sync killed (SIGKILL) after some parts, then rerun, ends equal, and the rerun sends
  no file the killed run completed;
- a wrong secret fails with one line naming the cause; DST holding another dataset is
  refused without -f; --dry-run writes nothing.

Needs: ZREC, moto_server with boto3 in its Python, NumPy (/usr/bin/python3).
"""
import filecmp
import hashlib
import json
import os
import re
import signal
import subprocess
import sys

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
        must(["card", root, "--license", "CC-BY-4.0", "--set", "description=two streams"])
        sync_json([root, "s3://zsync/root"], env)
        expect(digest("s3://zsync/root", env) == digest(root, env), "the bucket's root digests differently")
        card = json.loads(must_out(["card", "--json", "s3://zsync/root"], env=env))["card"]
        expect(card["license"] == "CC-BY-4.0", "the card did not travel to the bucket: %s" % card)
        # A card the source no longer has leaves the bucket with the next sync.
        must(["card", "--remove", root])
        plan = must_out(["sync", "--dry-run", root, "s3://zsync/root"], env=env).decode()
        expect("remove\t0\tzrec-card.json" in plan, "dry-run does not say the card goes: %r" % plan)
        sync_json([root, "s3://zsync/root"], env)
        gone = json.loads(must_out(["card", "--json", "s3://zsync/root"], env=env))["card"]
        expect(gone is None, "the bucket kept a card the source removed: %s" % gone)
        must(["card", root, "--license", "CC-BY-4.0", "--set", "description=two streams"])
        sync_json([root, "s3://zsync/root"], env)
        back_root = os.path.join(d, "back_root")
        sync_json(["s3://zsync/root", back_root], env)
        same_tree(root, back_root)
        local_copy = os.path.join(d, "local_copy")
        sync_json([root, local_copy], env)
        same_tree(root, local_copy)


@case
def a_resync_after_an_append_sends_the_tail(d):
    with S3Server() as s3:
        s3.make_bucket("zsync")
        env = s3.env()
        store = os.path.join(d, "store")
        make_store(store, 200, 100_000, 4)  # two data files of 10 MB
        first = sync_json([store, "s3://zsync/store"], env)
        make_store(store, 2, 100_000, 5)  # 1% more records: each data file grows by one
        again = sync_json([store, "s3://zsync/store"], env)
        size = sum(os.path.getsize(os.path.join(store, f)) for f in os.listdir(store))
        FIGURES.append("re-sync after a 1%% append: %d bytes sent in %d requests (first sync: %d bytes in %d "
                       "requests; store %d bytes); copied in the bucket %d bytes" %
                       (again["bytes_sent"], again["requests"], first["bytes_sent"], first["requests"], size,
                        again["copied_bytes"]))
        expect(again["copied_bytes"] >= 2 * 9_000_000, "the data files' old bytes were not copied: %s" % again)
        expect(again["bytes_sent"] < first["bytes_sent"] // 10, "re-sync sent %d bytes" % again["bytes_sent"])
        expect(digest("s3://zsync/store", env) == digest(store, env), "after the append the digests differ")
        back = os.path.join(d, "back")
        sync_json(["s3://zsync/store", back], env)
        same_tree(store, back)


@case
def a_shard_published_empty_grows_like_any_other(d):
    with S3Server() as s3:
        s3.make_bucket("zsync")
        env = s3.env()
        store = os.path.join(d, "store")
        make_store(store, 1, 1000, 9, shards=4)  # one record: data_1..3.zr go up empty
        sync_json([store, "s3://zsync/store"], env)
        make_store(store, 8, 1000, 10, shards=4)
        again = sync_json([store, "s3://zsync/store"], env)  # no -f: the same store, grown
        expect(again["files"] == 5, "re-sync after the empty shards grew: %s" % again)
        expect(digest("s3://zsync/store", env) == digest(store, env), "the grown store digests differently")


@case
def a_killed_sync_resumes_without_resending_complete_files(d):
    with S3Server() as s3:
        s3.make_bucket("zsync")
        env = s3.env()
        store = os.path.join(d, "store")
        make_store(store, 300, 100_000, 6, shards=3)  # three data files of 10 MB: 2 parts each
        proc = subprocess.Popen([ZREC, "sync", "--part-mib", "5", "--lanes", "1", "--progress", store,
                                 "s3://zsync/store"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Killed once the meter shows 40% sent: data_0.zr whole (a third) and a part of data_1.zr.
        seen = b""
        while True:
            chunk = os.read(proc.stderr.fileno(), 4096)
            expect(chunk != b"", "the sync ended before it was killed: %r" % seen[-300:])
            seen += chunk
            done = [int(p) for p in re.findall(rb"\((\d+)%\)", seen)]
            if done and done[-1] >= 40:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        expect(not head_ok(s3, "store/meta.zr"), "meta.zr went up before the data files were whole")
        rerun = sync_json([store, "s3://zsync/store"], env)
        expect(rerun["skipped"] >= 1, "the rerun resent a complete file: %s" % rerun)
        expect(rerun["aborted_uploads"] == 0, "uploads left open: %s" % rerun)
        expect(rerun["bytes_sent"] < sum(os.path.getsize(os.path.join(store, f)) for f in os.listdir(store)),
               "the rerun sent everything: %s" % rerun)
        FIGURES.append("killed sync rerun: skipped %d files, kept %d parts, sent %d bytes" %
                       (rerun["skipped"], rerun["resumed_parts"], rerun["bytes_sent"]))
        expect(digest("s3://zsync/store", env) == digest(store, env), "after the rerun the digests differ")
        expect(not s3.uploads_open("zsync"), "multipart uploads left open after the rerun")


@case
def refusals_say_why_and_write_nothing(d):
    with S3Server() as s3:
        s3.make_bucket("zsync")
        env = s3.env()
        store, other = os.path.join(d, "store"), os.path.join(d, "other")
        make_store(store, 20, 1000, 7)
        make_store(other, 20, 1000, 8)
        # dry-run: the plan on stdout, nothing in the bucket
        rc, out, err = sync(["--dry-run", store, "s3://zsync/store"], env)
        expect(out.decode().splitlines()[0].split("\t")[0] == "new", "dry-run printed %r" % out)
        expect(not head_ok(s3, "store/data_0.zr") and not head_ok(s3, "store/meta.zr"), "dry-run wrote")
        local = os.path.join(d, "local")
        sync(["--dry-run", store, local], env)
        expect(not os.path.exists(local), "dry-run made the local copy")
        # a wrong secret: one line naming the cause
        rc, out, err = sync([store, "s3://zsync/store"], s3.env(AWS_SECRET_ACCESS_KEY="wrong" + s3.secret[5:]),
                            check=False)
        expect(rc == 1 and out == b"" and len(err.strip().splitlines()) == 1 and "SignatureDoesNotMatch" in err,
               "a wrong secret: rc %d, %r" % (rc, err))
        expect(s3.secret not in err, "the secret shows")
        # another dataset at DST: refused without -f, replaced with it
        sync([store, "s3://zsync/store"], env)
        rc, out, err = sync([other, "s3://zsync/store"], env, check=False)
        expect(rc != 0 and "holds another dataset" in err and "-f" in err and len(err.strip().splitlines()) == 1,
               "another dataset: rc %d, %r" % (rc, err))
        expect(digest("s3://zsync/store", env) == digest(store, env), "the refused sync changed DST")
        sync(["-f", other, "s3://zsync/store"], env)
        expect(digest("s3://zsync/store", env) == digest(other, env), "-f did not replace DST")
        # a local DST that exists: refused without -f, then replaced whole
        sync([store, local], env)
        rc, out, err = sync([other, local], env, check=False)
        expect(rc != 0 and "already exists" in err, "an existing local DST: rc %d, %r" % (rc, err))
        sync(["-f", other, local], env)
        same_tree(other, local)
        expect(sorted(os.listdir(d)) == ["local", "other", "store"], "leftovers: %s" % os.listdir(d))
        # an unsound source: refused before anything is written
        with open(os.path.join(other, "data_0.zr"), "r+b") as f:
            f.truncate(100)
        rc, out, err = sync([other, "s3://zsync/broken"], env, check=False)
        expect(rc != 0 and "is not sound" in err and not head_ok(s3, "broken/meta.zr"), "unsound: %r" % err)


@case
def an_open_upload_is_taken_up_and_stale_ones_aborted(d):
    with S3Server() as s3:
        s3.make_bucket("zsync")
        env = s3.env()
        store = os.path.join(d, "store")
        make_store(store, 100, 100_000, 9, shards=1)  # one data file of 10 MB: two 5 MiB parts
        data = os.path.join(store, "data_0.zr")
        with open(data, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        # What a sync killed after the first part leaves: its upload open with part 1;
        # and an upload of a key under DST that no sync will finish.
        code = "import boto3,sys; c=boto3.client('s3',endpoint_url=sys.argv[1],region_name='us-east-1'," \
               "aws_access_key_id=sys.argv[2],aws_secret_access_key=sys.argv[3])\n" \
               "u=c.create_multipart_upload(Bucket='zsync',Key='store/data_0.zr',Metadata={'zrec-sha256':sys.argv[5]})\n" \
               "c.upload_part(Bucket='zsync',Key='store/data_0.zr',UploadId=u['UploadId'],PartNumber=1," \
               "Body=open(sys.argv[4],'rb').read(5<<20))\n" \
               "c.create_multipart_upload(Bucket='zsync',Key='store/stale.zr')"
        subprocess.run([s3.python, "-c", code, s3.endpoint, s3.key, s3.secret, data, sha], check=True)
        up = sync_json([store, "s3://zsync/store"], env)
        expect(up["resumed_parts"] == 1 and up["parts"] == 1 and up["aborted_uploads"] == 1,
               "the open upload was not taken up: %s" % up)
        expect(not s3.uploads_open("zsync"), "an upload is left open")
        expect(digest("s3://zsync/store", env) == digest(store, env), "the digests differ")


@case
def an_empty_codec_auto_store_keeps_its_pending_choice(d):
    # zrec create --codec auto leaves zrec-codec-auto until the first append chooses;
    # a copy without it would be a plain empty zstd store that never chooses.
    store = os.path.join(d, "auto")
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", "--codec", "auto", store])
    with S3Server() as s3:
        s3.make_bucket("zsync")
        env = s3.env()
        sync_json([store, "s3://zsync/auto"], env)
        expect(head_ok(s3, "auto/zrec-codec-auto"), "zrec-codec-auto was not uploaded")
    copy = os.path.join(d, "copy")
    sync_json([store, copy], None)
    same_tree(store, copy)
    info = json.loads(must_out(["info", "--json", copy]))
    expect(info["codec"] == "auto", "the copy's codec is %r, not still to choose" % info["codec"])


def head_ok(s3, key):
    code = "import boto3,sys; c=boto3.client('s3',endpoint_url=sys.argv[1],region_name='us-east-1'," \
           "aws_access_key_id=sys.argv[2],aws_secret_access_key=sys.argv[3])\n" \
           "try:\n c.head_object(Bucket='zsync',Key=sys.argv[4]); print(1)\nexcept Exception: print(0)"
    out = subprocess.run([s3.python, "-c", code, s3.endpoint, s3.key, s3.secret, key], capture_output=True, text=True)
    return out.stdout.strip() == "1"


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-sync-", figures=FIGURES))
