#!/usr/bin/python3
"""Exactly-once appends without kills (issue 19): --from-length, --expect-length, marked
roots, adoption, and what a failed run leaves.

- A rerun with --from-length appends nothing twice (append-tar twice over the same
  shards: 1800 samples, each once; the summary and --json say how many were present).
- --expect-length that does not match, --from-length past the length, and an input
  shorter than the records --from-length says are present: exit 1, and for every append
  command every file (stores, keys file, manifest) byte-identical.
- A directory of unrelated stores (lengths 30, 30, 31) is no root: append-tar exits 1
  and changes no byte; info and verify judge each store alone and never recommend a
  repair that deletes records; --adopt refuses unequal lengths and adopts equal ones.
- A marked root: info/verify check its streams against the committed count; streams
  past it are reported, and the next append-tar cuts them back to it; a store the
  marker does not list is refused; each stream still reads as a plain store (the
  independent reader of zrecord_ref.py) with the marker beside it.
- A run that fails before its first publication leaves nothing it created: no empty
  streams, no marker, no root directory (a truncated tar; --from-length past an empty
  root; append-h5 --create); the next run with other extensions then works.

Needs: ZREC (path of the zrec binary), python3-numpy, h5py, lmdb.
"""
import io
import json
import os
import subprocess
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
import zrecord_ref  # noqa: E402  (tests/cli/zrecord_ref.py)
from cli_helpers import (  # noqa: E402  (tests/cli/cli_helpers.py)
    byte_records, expect, expect_failure, in_lock_wait, killed_append_leftovers, must, require_zrec, run_zrec,
    tree_digests, wait_blocked_in_pipe_read, wait_until)

ZREC = require_zrec("test_append_roots")
CASES, case = case_runner.case_registry()
FIGURES = []


def make_tar(path, samples, exts=("txt", "cls"), truncate_in=None):
    """samples: list of keys; member data derived from the key. truncate_in=k: the file
    ends inside the data of sample k's first member (a truncated tar)."""
    cut = None
    with tarfile.open(path, "w") as t:
        for k, key in enumerate(samples):
            for ext in exts:
                data = (b"%d" % (sum(key.encode()) % 10)) if ext == "cls" else \
                    (b"%s of %s " % (ext.encode(), key.encode())) * 3
                ti = tarfile.TarInfo("%s.%s" % (key, ext))
                ti.size = len(data)
                if k == truncate_in and cut is None:
                    cut = t.offset + 512 + 2  # past the member's header, inside its data
                t.addfile(ti, io.BytesIO(data))
    if cut is not None:
        with open(path, "r+b") as f:
            f.truncate(cut)
    return path


def keys(prefix, n, start=0):
    return ["%s/%05d" % (prefix, i) for i in range(start, start + n)]


def info(path):
    return json.loads(must(["info", "--json", path])[0])


def digest(store):
    return must(["digest", store])[0].split()[0]


@case
def rerun_with_from_length_never_duplicates(d):
    # Issue 19, problem 2: the same command twice (a requeue, a retried cron job).
    s0 = make_tar(os.path.join(d, "shard-0000.tar"), keys("a", 900))
    s1 = make_tar(os.path.join(d, "shard-0001.tar"), keys("b", 900))
    root, kf = os.path.join(d, "ds"), os.path.join(d, "ds.keys")
    cmd = ["append-tar", "--from-length", "0", "--parse", "cls=ints", "--keys", kf, root, s0, s1]
    _, err = must(cmd)
    expect("appended 1800 samples" in err and "it now holds 1800" in err, err)
    want_keys = open(kf, "rb").read()
    want = {e: digest(os.path.join(root, e)) for e in ("txt", "cls")}
    out, err = must(cmd + ["--json"])
    j = json.loads(out)
    expect(j["samples_appended"] == 0 and j["samples_present"] == 1800 and j["samples_skipped"] == 0 and
           j["length"] == 1800, j)
    _, err = must(cmd)
    expect("appended 0 samples" in err and "after skipping 1800 already present" in err and "warning" not in err, err)
    expect(info(root)["streams"]["txt"]["length"] == 1800, "the rerun appended again")
    expect(open(kf, "rb").read() == want_keys and len(want_keys.splitlines()) == 1800, "keys changed")
    expect({e: digest(os.path.join(root, e)) for e in ("txt", "cls")} == want, "streams changed")
    # A run that did only the first shard, then the full command: the second shard once.
    root2, kf2 = os.path.join(d, "ds2"), os.path.join(d, "ds2.keys")
    must(["append-tar", "--from-length", "0", "--parse", "cls=ints", "--keys", kf2, root2, s0])
    _, err = must(["append-tar", "--from-length", "0", "--parse", "cls=ints", "--keys", kf2, root2, s0, s1])
    expect("appended 900 samples" in err and "after skipping 900 already present" in err, err)
    expect({e: digest(os.path.join(root2, e)) for e in ("txt", "cls")} == want and open(kf2, "rb").read() == want_keys,
           "a resumed run differs from one clean run")
    # The same for a single store: append-stream twice, and --skip-first with --from-length.
    s = os.path.join(d, "lines")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    lines = b"".join(b"line %d\n" % i for i in range(50))
    must(["append-stream", s], stdin=b"old\n" * 7)
    for _ in range(2):
        _, err = must(["append-stream", "--from-length", "7", s], stdin=lines)
    expect("appended 0 records" in err and "after skipping 50 already present" in err, err)
    expect(byte_records(s) == [b"old"] * 7 + [b"line %d" % i for i in range(50)], "the store is not old + lines once")
    # --skip-first K drops K input records first; --from-length counts what follows them.
    t = os.path.join(d, "lines2")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", t])
    must(["append-stream", t], stdin=b"old\n" * 7)
    for want in (40, 0):
        out, _ = must(["append-stream", "--json", "--skip-first", "10", "--from-length", "7", t], stdin=lines)
        j = json.loads(out)
        expect(j["records_appended"] == want and j["records_skipped"] == 10 and j["records_present"] == 40 - want, j)
    expect(byte_records(t) == [b"old"] * 7 + [b"line %d" % i for i in range(10, 50)], "--skip-first with --from-length")
    FIGURES.append("rerun: append-tar of 2 shards x 900 samples run 3 times holds 1800 samples, keys byte-equal")


def build_all(d):
    """One store (or root) per append command, each holding records, with keys file or
    manifest where the command writes one. Returns {name: (argv without the length
    options, paths whose bytes must not change, length, stdin bytes or None)}."""
    out = {}
    # append-stream
    s = os.path.join(d, "stream")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    lines = b"".join(b"r%d\n" % i for i in range(12))
    must(["append-stream", s], stdin=lines)
    out["append-stream"] = (["append-stream", s], [s], 12, lines)
    # append-npy
    n = os.path.join(d, "npy")
    must(["create", "--dense", "--dtype", "<i4", "--shape", "3", n])
    arr = os.path.join(d, "a.npy")
    np.save(arr, np.arange(36, dtype="<i4").reshape(12, 3))
    must(["append-npy", n, arr])
    out["append-npy"] = (["append-npy", n, arr], [n], 12, None)
    # append-files, with a manifest
    f = os.path.join(d, "files")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", f])
    names = []
    for i in range(12):
        p = os.path.join(d, "in-%02d" % i)
        open(p, "wb").write(b"file %d" % i)
        names.append(p)
    man = os.path.join(d, "files.tsv")
    must(["append-files", "--manifest", man, f] + names)
    out["append-files"] = (["append-files", "--manifest", man, f] + names, [f, man], 12, None)
    # append-h5
    import h5py
    h5 = os.path.join(d, "rows.h5")
    with h5py.File(h5, "w") as hf:
        hf.create_dataset("x", data=np.arange(24, dtype="<f4").reshape(12, 2))
    h = os.path.join(d, "h5")
    must(["append-h5", "--create", h, h5, "x"])
    out["append-h5"] = (["append-h5", h, h5, "x"], [h], 12, None)
    # append-lmdb, with a keys file
    import lmdb
    envp = os.path.join(d, "env")
    env = lmdb.open(envp, map_size=1 << 22)
    with env.begin(write=True) as txn:
        for i in range(12):
            txn.put(b"k%02d" % i, b"value %d" % i)
    env.close()
    lm, lk = os.path.join(d, "lmdb"), os.path.join(d, "lmdb.keys")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", lm])
    must(["append-lmdb", "--keys", lk, lm, envp])
    out["append-lmdb"] = (["append-lmdb", "--keys", lk, lm, envp], [lm, lk], 12, None)
    # append-tar, a root with a keys file
    t = make_tar(os.path.join(d, "t.tar"), keys("t", 12))
    r, rk = os.path.join(d, "root"), os.path.join(d, "root.keys")
    must(["append-tar", "--keys", rk, r, t])
    out["append-tar"] = (["append-tar", "--keys", rk, r, t], [r, rk], 12, None)
    return out


@case
def expect_and_from_length_refusals_change_nothing(d):
    kinds = build_all(d)
    checked = 0
    for name, (argv, paths, length, stdin) in kinds.items():
        unit = "samples" if name == "append-tar" else "records"
        where = ("root '%s'" if name == "append-tar" else "'%s'") % (paths[0])
        before = {p: tree_digests(p) for p in paths}
        refusals = [
            (["--expect-length", str(length + 1)],
             "%s holds %d %s, not the %d that --expect-length expects; nothing was appended" %
             (where, length, unit, length + 1)),
            (["--expect-length", str(length - 1)], "not the %d that --expect-length expects" % (length - 1)),
            (["--from-length", str(length + 1)],
             "%s holds %d %s, fewer than --from-length %d: %s before this input's first are missing, or it is not "
             "the store this input belongs to; nothing was appended" % (where, length, unit, length + 1, unit)),
            # The input holds 12; the store says 12 + 12 would be present past 0. append-tar
            # (with --keys) finds sooner that the samples it skips are not the root's,
            # append-stream, which reads them anyway, that its records are not the store's,
            # and append-files, which compares the sizes of the files it skips, that in-10
            # (7 bytes, one shifted) is not record 9 (in-09, 6 bytes).
            (["--from-length", "0", "--skip-first", "1"],
             "sample 't/00001' is not sample 0 of %s" % where if name == "append-tar" else
             "stdin line 2 differs from record 0 of %s" % where if name == "append-stream" else
             "'%s' is 7 bytes, but record 9 of %s, which it should equal, holds 6" % (os.path.join(d, "in-10"), where)
             if name == "append-files" else
             "the input holds 11 %s after --skip-first, but %s holds 12 past --from-length 0" % (unit, where)),
        ]
        for opts, says in refusals:
            args = argv[:1] + opts + argv[1:]
            rc, _, err = run_zrec(args, stdin=stdin)
            expect_failure(args, rc, err, 1, [says])
            for p in paths:
                expect(tree_digests(p) == before[p], "%s %s changed %s" % (name, opts, p))
            checked += 1
        # The right expectation appends (and a rerun with --from-length appends nothing).
        args = argv[:1] + ["--expect-length", str(length), "--from-length", "0"] + argv[1:]
        _, err = must(args, stdin=stdin)
        expect(("appended 0 %s" % unit) in err and "after skipping 12 already present" in err, (name, err))
        for p in paths:
            expect(tree_digests(p) == before[p], "%s: a run that found everything present changed %s" % (name, p))
    FIGURES.append("refusals: %d refused runs over 6 append commands, every file byte-identical" % checked)


def bytes_stores(d, name, lengths):
    root = os.path.join(d, name)
    os.makedirs(root)
    for ext, n in lengths.items():
        s = os.path.join(root, ext)
        must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
        must(["append-stream", s], stdin=b"".join(b"%s %d\n" % (ext.encode(), i) for i in range(n)))
    return root


@case
def unmarked_directory_is_untouched(d):
    # Issue 19, problem 3: three unrelated stores, lengths 30, 30, 31.
    root = bytes_stores(d, "stores_copy", {"cap-nock": 30, "cap-zstd": 30, "cap-raw": 31})
    t = make_tar(os.path.join(d, "shard-0000.tar"), keys("s", 5), exts=("cap-nock", "cap-zstd", "cap-raw"))
    before = tree_digests(root)
    args = ["append-tar", root, t]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 1, [
        "'%s' holds stores (cap-nock, cap-raw, cap-zstd) but no zrec-root marker: it is not a root that append-tar "
        "built, and append-tar changes nothing in it" % root,
        "run again with --adopt, which needs their lengths to agree (now: cap-nock 30, cap-raw 31, cap-zstd 30)"])
    expect(tree_digests(root) == before, "append-tar changed an unmarked directory")
    for args in (["append-tar", "--adopt", root, t], ["append-tar", "--from-length", "0", root, t]):
        rc, _, err = run_zrec(args)
        expect_failure(args, rc, err, 1, ["nothing was changed" if "--adopt" in args else "no zrec-root marker"])
        expect(tree_digests(root) == before, "%s changed an unmarked directory" % args)
    expect("cannot adopt '%s' as a root: its stores hold different numbers of records (cap-nock 30, cap-raw 31, "
           "cap-zstd 30)" % root in run_zrec(["append-tar", "--adopt", root, t])[2], "adopt message")
    # info and verify: one verdict per store, no alignment, no repair that deletes records.
    rc, out, err = run_zrec(["info", root])
    text = out.decode()
    expect(rc == 0 and "not a root (no zrec-root marker): its 3 stores are unrelated, and their lengths are not "
           "compared" in text, text + err)
    rc, out, err = run_zrec(["verify", root])
    vtext = out.decode()
    expect(rc == 0 and "OK: 3 stores, each valid" in vtext, vtext + err)
    for t_ in (text, vtext, err):
        for word in ("DISAGREE", "cut", "back to", "drop"):
            expect(word not in t_, "a message on an unmarked directory says %r: %s" % (word, t_))
    j = info(root)
    expect(j["marked"] is False and "lengths_agree" not in j, j)
    j = json.loads(run_zrec(["verify", "--json", "--quick", root])[1])
    expect(j["marked"] is False and j["valid"] is True and "lengths_agree" not in j, j)
    # Equal lengths: --adopt makes it a root, and the samples append to every stream.
    os.rename(os.path.join(root, "cap-raw"), os.path.join(d, "moved-away"))
    t2 = make_tar(os.path.join(d, "two.tar"), keys("s", 5), exts=("cap-nock", "cap-zstd"))
    _, err = must(["append-tar", "--adopt", root, t2])
    expect("appended 5 samples" in err and "it now holds 35" in err, err)
    expect(open(os.path.join(root, "zrec-root")).read() == "zrec-root 1\nlength 35\nstream cap-nock\nstream cap-zstd\n",
           "the adopted root's marker")
    rc, out, err = run_zrec(["verify", root])
    expect(rc == 0 and "OK: 2 streams of 35 records each" in out.decode(), out.decode() + err)
    # Once marked, --adopt changes nothing more.
    must(["append-tar", "--adopt", "--from-length", "30", root, t2])
    expect(info(root)["committed_length"] == 35, "--from-length 30 appended again")


@case
def marked_root_checks_and_recovery(d):
    t = make_tar(os.path.join(d, "t.tar"), keys("m", 40))
    root, kf = os.path.join(d, "ds"), os.path.join(d, "ds.keys")
    cmd = ["append-tar", "--from-length", "0", "--keys", kf, root, t]
    must(cmd)
    want = {e: digest(os.path.join(root, e)) for e in ("txt", "cls")}
    want_keys = open(kf, "rb").read()
    rc, out, _ = run_zrec(["info", root])
    expect("root (zrec-root): 2 streams, 40 samples committed; lengths agree" in out.decode(), out.decode())
    j = info(root)
    expect(j["marked"] and j["committed_length"] == 40 and j["lengths_agree"] and j["problems"] == [], j)
    j = json.loads(run_zrec(["verify", "--json", root])[1])
    expect(j["valid"] and j["length"] == 40 and j["committed_length"] == 40, j)
    # A loaderx-style reader opening each stream never notices the marker.
    for e in ("txt", "cls"):
        contents = zrecord_ref.read_store(os.path.join(root, e))
        expect(len(contents.records) == 40, "the reference reader sees %d records in %s" % (len(contents.records), e))
    # A run killed between the streams' publication and the root's commit: records past
    # the committed count in one stream (made here by appending to it directly).
    killed_append_leftovers(root, ["append-stream", os.path.join(root, "txt")], stdin=b"uncommitted\n")
    rc, out, err = run_zrec(["info", root])
    text = out.decode()
    expect("problem: stream 'txt' holds 41 records, more than the 40 samples the root committed (an append to the "
           "root was killed before its commit; the root's next writer continues from sample 40)" in text,
           text)
    rc, out, err = run_zrec(["verify", root])
    expect(rc == 1 and "[root_length]" in out.decode() and "do not match the root's committed samples" in err,
           out.decode() + err)
    for t_ in (text, out.decode(), err):
        expect("cut" not in t_ and "delete" not in t_, t_)
    # The same command again: the uncommitted record goes, nothing is appended twice.
    _, err = must(cmd)
    expect("cut stream '%s/txt' back from 41 to 40 records, the root's committed count" % root in err, err)
    expect("after skipping 40 already present" in err, err)
    expect({e: digest(os.path.join(root, e)) for e in ("txt", "cls")} == want and open(kf, "rb").read() == want_keys,
           "recovery did not restore the committed state")
    # Keys written for samples that were never committed are cut back too.
    with open(kf, "ab") as f:
        f.write(b"m/never\n")
    _, err = must(cmd)
    expect("cut keys file '%s' back from 41 to 40 lines" % kf in err and open(kf, "rb").read() == want_keys, err)
    # A store the marker does not list is no stream: refused, nothing changed.
    extra = os.path.join(root, "extra")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", extra])
    before = tree_digests(root), open(kf, "rb").read()
    rc, _, err = run_zrec(cmd)
    expect_failure(cmd, rc, err, 1, ["'%s' is a store in root '%s' but not one of its streams (zrec-root lists cls, "
                                     "txt); it is left alone" % (extra, root)])
    expect((tree_digests(root), open(kf, "rb").read()) == before, "a refused run changed the root")
    # For verify it is a stream not committed yet: a note, the committed samples are whole.
    rc, out, _ = run_zrec(["verify", root])
    expect(rc == 0 and "note: 'extra' is not committed yet: zrec-root does not list it, and it holds 0 records where "
           "the root committed 40 samples" in out.decode(), out.decode())
    os.rename(extra, os.path.join(d, "extra"))
    # A stream short of the committed count: damaged, refused.
    os.remove(os.path.join(root, "zrec-root"))
    with open(os.path.join(root, "zrec-root"), "w") as f:
        f.write("zrec-root 1\nlength 41\nstream cls\nstream txt\n")
    before = tree_digests(root)
    rc, _, err = run_zrec(cmd)
    expect_failure(cmd, rc, err, 1, ["stream '%s/cls' holds 40 records, fewer than the 41 samples root '%s' "
                                     "committed" % (root, root)])
    expect(tree_digests(root) == before, "a refused run changed a damaged root")
    # A malformed marker: refused by append-tar, reported by info and verify.
    with open(os.path.join(root, "zrec-root"), "w") as f:
        f.write("zrec-root 1\nlength many\n")
    for args, rc_want in ((cmd, 1), (["info", root], 1), (["verify", root], 1)):
        rc, _, err = run_zrec(args)
        expect_failure(args, rc, err, rc_want, ["malformed root marker '%s/zrec-root'" % root])


@case
def failed_first_run_leaves_nothing(d):
    # Issue 19, problem 6: a truncated tar into a new root, then a run with other extensions.
    good = make_tar(os.path.join(d, "good.tar"), keys("g", 30), exts=("jpg", "cls"))
    bad = make_tar(os.path.join(d, "bad.tar"), keys("g", 30), exts=("txt", "json"), truncate_in=15)
    root = os.path.join(d, "ds")
    for extra in ([], ["--ext", "txt,json"], ["--checkpoint-every", "1000"]):
        args = ["append-tar"] + extra + [root, bad]
        rc, _, err = run_zrec(args)
        expect_failure(args, rc, err, 1, ["runcated"])
        expect(not os.path.exists(root), "a failed first run %s left %r" % (extra, os.path.exists(root) and
                                                                            sorted(os.listdir(root))))
    # An existing empty directory stays, and stays empty.
    os.makedirs(root)
    rc, _, err = run_zrec(["append-tar", root, bad])
    expect(rc == 1 and os.listdir(root) == [], "left %r" % os.listdir(root))
    # --from-length past an empty new root: refused before anything exists.
    args = ["append-tar", "--from-length", "5", os.path.join(d, "new"), good]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 1, ["root '%s' holds 0 samples, fewer than --from-length 5" % os.path.join(d, "new")])
    expect(not os.path.exists(os.path.join(d, "new")), "a refused run made the root")
    # The next run, with other extensions, builds the root it asks for.
    _, err = must(["append-tar", root, good])
    expect(sorted(os.listdir(root)) == ["cls", "jpg", "zrec-root"], sorted(os.listdir(root)))
    expect(info(root)["committed_length"] == 30, "root after the good run")
    # A failure after a checkpoint keeps what it committed, and says how to resume.
    root2 = os.path.join(d, "ds2")
    bad2 = make_tar(os.path.join(d, "bad2.tar"), keys("h", 30), truncate_in=15)
    args = ["append-tar", "--checkpoint-every", "10", root2, bad2]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 1, ["root '%s' holds 10 samples, as of the last checkpoint (resume: the same "
                                      "command with --from-length 0)" % root2])
    # append-h5 --create that fails before publishing takes the store back.
    import h5py
    h5 = os.path.join(d, "rows.h5")
    with h5py.File(h5, "w") as hf:
        hf.create_dataset("x", data=np.arange(20, dtype="<i8"))
    s = os.path.join(d, "h5store")
    for opts, says in ((["--from-length", "3"], "holds 0 records, fewer than --from-length 3"),
                       (["--expect-length", "2"], "holds 0 records, not the 2 that --expect-length expects"),
                       (["--from-length", "0", "--skip-first", "25"], "the input holds 0 records after --skip-first")):
        args = ["append-h5", "--create"] + opts + [s, h5, "x"]
        rc, _, err = run_zrec(args)
        expect_failure(args, rc, err, 1, [says])
        expect(not os.path.exists(s), "append-h5 --create %s left the store it created" % opts)
    must(["append-h5", "--create", "--from-length", "0", s, h5, "x"])
    must(["append-h5", "--create", "--from-length", "0", s, h5, "x"])
    expect(info(s)["length"] == 20, "append-h5 --create --from-length 0 twice")


@case
def wait_for_a_held_root(d):
    # Issue 19, problem 5: `zrec --wait append-tar ROOT` while another writer holds ROOT.
    # The writer holding it here reads its tar from a pipe this test keeps open.
    t = make_tar(os.path.join(d, "a.tar"), keys("a", 20))
    u = make_tar(os.path.join(d, "b.tar"), keys("b", 5))
    root, kf = os.path.join(d, "ds"), os.path.join(d, "keys")
    must(["append-tar", "--keys", kf, root, make_tar(os.path.join(d, "first.tar"), keys("f", 10))])
    holder = subprocess.Popen([ZREC, "append-tar", "--keys", kf, root, "-"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    data = open(t, "rb").read()
    holder.stdin.write(data[:2048])
    holder.stdin.flush()
    # The holder takes its locks before it reads any input: once it waits for more, it holds them.
    expect(wait_blocked_in_pipe_read(holder.pid), "the holder never waited for its input")
    # Without --wait: busy at once, nothing changed.
    args = ["append-tar", "--keys", kf, root, u]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 75, ["is locked by another process"])
    waiter = subprocess.Popen([ZREC, "--wait", "append-tar", "--keys", kf, root, u], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    # It waits: asleep on the root's lock (the marker open, the lock not its own), and it
    # has not exited when the holder is let go.
    wait_until(lambda: in_lock_wait(waiter.pid, os.path.join(root, "zrec-root")),
               "zrec --wait append-tar waiting for the root's lock", proc=waiter)
    if waiter.poll() is not None:
        raise AssertionError("zrec --wait append-tar did not wait: %s" % waiter.communicate()[1].decode())
    holder.stdin.write(data[2048:])
    holder.stdin.close()
    expect(holder.wait(timeout=60) == 0, "holder: %s" % holder.stderr.read().decode())
    expect(waiter.wait(timeout=60) == 0, "waiter: %s" % waiter.stderr.read().decode())
    # Problem 4: the waiter read the root after it got the locks: 10 + 20 + 5 everywhere.
    got = open(kf).read().splitlines()
    expect(got == keys("f", 10) + keys("a", 20) + keys("b", 5), "keys %d lines: %r" % (len(got), got[-3:]))
    for e in ("txt", "cls"):
        expect(info(root)["streams"][e]["length"] == 35, "stream %s" % e)
    expect(info(root)["committed_length"] == 35, "root")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-append-roots-", figures=FIGURES))
