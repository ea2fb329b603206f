#!/usr/bin/python3
"""A stream of a root is written only through the root (issue 42, items 1, 5 and 6).

A root's streams hold one record per sample and grow together; its marker (zrec-root)
commits their common length. `zrec append-npy ds/quality q5.npy` used to exit 0, and
the next writer of the root (append-tar, adopt) then cut the five records away as an
"earlier run" that "stopped before committing the root"; appending a record to every
stream and running `zrec adopt` cut all of them and said "adopted none". Now:

- every per-store writer (append-npy, append-stream, append-files, append-h5,
  append-lmdb; concat --consume, which removes its sources) refuses a
  store the marker of the directory it lies in lists, naming the root and append-tar,
  exit 1, the root byte-identical (also through a symbolic link to the stream);
- a store made in the root that the marker does not list yet stays writable: verify
  calls it "not committed yet (zrec adopt ROOT ...)", a note, exit 0 (it used to be a
  problem, exit 1, "corrupt"), and info says the same; adopt lists it;
- adopt refuses a new store of another length naming both counts, cutting nothing;
  records past the commit in a listed stream (only a killed append to the root leaves
  them now) are cut back saying so;
- append-tar --stream-codec STREAM=CODEC gives a new stream its own codec, checked as
  --stream-dict is (an unknown stream, a stream given twice, zstd_dict, another codec
  than an existing stream's: usage errors, exit 2); the codec warning of a new stream
  names --stream-codec and is given once, in the run that creates the stream;
- the missing-member error leaves __key__ (no member) out of the members a sample
  needs; "1 shard", not "1 shards".

Needs: ZREC (path of the zrec binary), numpy, h5py, lmdb.
"""
import io
import json
import os
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import (  # noqa: E402  (tests/cli/cli_helpers.py)
    expect, fails, killed_append_leftovers, must, must_out, require_zrec, run_zrec, tree_digests)

ZREC = require_zrec("test_root_streams")
CASES, case = case_runner.case_registry()


def tar_of(path, n, exts=("png", "txt"), payload=None):
    with tarfile.open(path, "w") as t:
        for k in range(n):
            for ext in exts:
                data = payload(k, ext) if payload else b"%s %d" % (ext.encode(), k)
                info = tarfile.TarInfo("s%03d.%s" % (k, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return path


def refusal(path, root, name):
    return ("'%s' is the stream '%s' of the root '%s' (its zrec-root lists it): a root's streams grow together, "
            "one record per sample, so it is written only through the root (zrec append-tar '%s'); nothing was "
            "written" % (path, name, root, root))


def adopted_root(d):
    """A root of three streams of 12 records, one per kind of per-store writer."""
    root = os.path.join(d, "ds")
    os.makedirs(root)
    txt, npy, h5s = (os.path.join(root, n) for n in ("txt", "npy", "h5"))
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", txt])
    must(["append-stream", txt], stdin=b"".join(b"r%d\n" % i for i in range(12)))
    must(["create", "--dense", "--dtype", "<i4", "--shape", "3", npy])
    arr = os.path.join(d, "a.npy")
    np.save(arr, np.arange(36, dtype="<i4").reshape(12, 3))
    must(["append-npy", npy, arr])
    import h5py
    h5 = os.path.join(d, "rows.h5")
    with h5py.File(h5, "w") as hf:
        hf.create_dataset("x", data=np.arange(24, dtype="<f4").reshape(12, 2))
    must(["append-h5", "--create", h5s, h5, "x"])
    must(["adopt", root])
    return root, arr, h5


@case
def every_writer_refuses_a_committed_stream(d):
    root, arr, h5 = adopted_root(d)
    txt, npy, h5s = (os.path.join(root, n) for n in ("txt", "npy", "h5"))
    import lmdb
    envp = os.path.join(d, "env")
    env = lmdb.open(envp, map_size=1 << 22)
    with env.begin(write=True) as txn:
        txn.put(b"k", b"value")
    env.close()
    inp = os.path.join(d, "in-file")
    open(inp, "wb").write(b"file")
    other = os.path.join(d, "other")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", other])
    must(["append-stream", other], stdin=b"o\n")
    link = os.path.join(d, "link")
    os.symlink(txt, link)
    before = tree_digests(root)
    man, keys = os.path.join(d, "files.tsv"), os.path.join(d, "lmdb.keys")
    for args, path, name in [
            (["append-stream", txt], txt, "txt"),
            (["append-stream", txt + "/"], txt + "/", "txt"),
            (["append-npy", npy, arr], npy, "npy"),
            (["append-files", "--manifest", man, txt, inp], txt, "txt"),
            (["append-h5", h5s, h5, "x"], h5s, "h5"),
            (["append-lmdb", "--keys", keys, txt, envp], txt, "txt"),
            (["concat", "--consume", txt, other, os.path.join(d, "out1")], txt, "txt")]:
        rc, out, err = run_zrec(args, stdin=b"x\n")
        want = "zrec %s: %s\n" % (args[0], refusal(path, root, name))
        expect(rc == 1 and err == want, "%s: rc %d, stderr %r, want %r" % (args[0], rc, err, want))
        expect(tree_digests(root) == before, "%s changed the root" % args[0])
    # Through a link, the stream is the same stream (named by where it really lies).
    rc, _, err = run_zrec(["append-stream", link], stdin=b"x\n")
    real = os.path.realpath(root)
    expect(rc == 1 and err == "zrec append-stream: %s\n" % refusal(link, real, "txt"), err)
    expect(tree_digests(root) == before, "append-stream through a link changed the root")
    for made in (man, keys, os.path.join(d, "out1")):
        expect(not os.path.exists(made), "a refused writer left '%s'" % made)
    expect(os.path.exists(other), "concat --consume removed a source after refusing another")
    # The root's own writer still appends to every stream.
    out = json.loads(must_out(["verify", "--json", root]))
    expect(out["valid"] and out["length"] == 12 and out["unadopted"] == [], str(out))


@case
def a_new_stream_is_writable_until_adopted(d):
    root = os.path.join(d, "ds")
    must(["append-tar", root, tar_of(os.path.join(d, "a.tar"), 3)])
    q = os.path.join(root, "quality")
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", q])
    must(["append-stream", "--parse", "ints", q], stdin=b"1\n2\n")
    rc, out, err = run_zrec(["verify", root])
    note = ("%s: note: 'quality' is not committed yet: zrec-root does not list it, and it holds 2 records where the "
            "root committed 3 samples (zrec adopt '%s' takes a store of one record per sample)\n" % (root, root))
    expect(rc == 0 and note in out.decode() and "%s: OK: 2 streams of 3 records each\n" % root in out.decode() and
           err == "", out.decode() + err)
    j = json.loads(must_out(["verify", "--json", root]))
    expect(j["valid"] and j["unadopted"] == ["quality"] and j["root_problems"] == [], str(j))
    j = json.loads(must_out(["info", "--json", root]))
    expect(j["lengths_agree"] and j["unadopted"] == ["quality"], str(j))
    # The wrong length: adopt refuses naming both counts and cuts nothing.
    before = tree_digests(root)
    fails(["adopt", root], says=[
        "'%s' holds 2 records, but root '%s' committed 3 samples: a store joins a root's streams holding exactly one "
        "record per sample; nothing was changed" % (q, root)])
    expect(tree_digests(root) == before, "a refused adopt changed the root")
    # One more record (still writable: not listed), then adopt lists it, and it is closed.
    must(["append-stream", "--parse", "ints", q], stdin=b"3\n")
    out = must_out(["verify", root]).decode()
    expect("note: 'quality' is not committed yet: zrec-root does not list it (zrec adopt '%s' makes it a stream)"
           % root in out, out)
    _, err = must(["adopt", root])
    expect("adopted quality" in err and "cut" not in err, err)
    before = tree_digests(root)
    rc, _, err = run_zrec(["append-stream", "--parse", "ints", q], stdin=b"4\n")
    expect(rc == 1 and refusal(q, root, "quality") in err, err)
    expect(tree_digests(root) == before, "a refused append changed the adopted stream")


@case
def adopt_cuts_only_what_a_killed_append_left(d):
    root = os.path.join(d, "ds")
    must(["append-tar", root, tar_of(os.path.join(d, "a.tar"), 3)])
    killed_append_leftovers(root, ["append-stream", os.path.join(root, "txt")], stdin=b"past\n")
    rc, out, _ = run_zrec(["info", root])
    expect("problem: stream 'txt' holds 4 records, more than the 3 samples the root committed (an append to the root "
           "was killed before its commit; the root's next writer continues from sample 3)"
           in out.decode(), out.decode())
    _, err = must(["adopt", root])
    expect("warning: cut stream '%s/txt' back from 4 to 3 records, the root's committed count (an append to the root "
           "was killed before its commit and left them)" % root in err, err)


@case
def stream_codec_per_stream(d):
    # Incompressible png members: zstd stores them larger than they are.
    rnd = np.random.default_rng(5)
    blobs = [rnd.integers(0, 256, 300, dtype=np.uint8).tobytes() for _ in range(20)]
    tar = tar_of(os.path.join(d, "a.tar"), 20, payload=lambda k, e: blobs[k] if e == "png" else b"text %d " % k * 20)
    root = os.path.join(d, "ds")
    _, err = must(["append-tar", root, tar])
    expect("'%s/png': zstd stored" % root in err and "--stream-codec png=raw would store them smaller" in err, err)
    _, err = must(["append-tar", root, tar])
    expect("warning" not in err, "a later run repeated the codec warning: " + err)
    raw = os.path.join(d, "raw")
    _, err = must(["append-tar", "--stream-codec", "png=raw", raw, tar])
    expect("warning" not in err, err)
    j = json.loads(must_out(["info", "--json", raw]))
    expect(j["streams"]["png"]["codec"] == "raw" and j["streams"]["txt"]["codec"] == "zstd", str(j))
    # A rerun with the same options goes on; the checks of --stream-dict.
    must(["append-tar", "--stream-codec", "png=raw", raw, tar])
    before = tree_digests(raw)
    for args, says in [
            (["--stream-codec", "jpg=raw"], "--stream-codec 'jpg=raw': 'jpg' is not one of the streams (png, txt)"),
            (["--stream-codec", "png=raw", "--stream-codec", "png=zstd"],
             "--stream-codec 'png=zstd': the stream 'png' has a codec already (--stream-codec 'png=raw'); give one "
             "CODEC per STREAM"),
            (["--stream-codec", "txt=raw"],
             "--stream-codec 'txt=raw': the stream '%s/txt' exists with codec zstd; a stream keeps the codec it was "
             "made with" % raw),
            (["--stream-codec", "png=zstd_dict"],
             "--stream-codec 'png=zstd_dict': a zstd_dict stream needs its dictionary: give --stream-dict png=FILE"),
            (["--stream-codec", "png"], "--stream-codec 'png': expected STREAM=CODEC, e.g. --stream-codec png=raw")]:
        fails(["append-tar"] + args + [raw, tar], rc_want=2, says=[says])
        expect(tree_digests(raw) == before, "a refused --stream-codec changed the root: %s" % args)


@case
def wording(d):
    # The members a sample needs are those of the member streams: __key__ is none.
    root = os.path.join(d, "ds")
    must(["append-tar", "--keys-stream", root, tar_of(os.path.join(d, "a.tar"), 2)])
    fails(["append-tar", root, tar_of(os.path.join(d, "b.tar"), 1, exts=("png",))], says=[
        "sample 's000' has no 'txt' member (it has 's000.png'); every sample needs one member per stream (png, txt); "
        "--skip-incomplete skips such samples"])
    _, err = must(["-v", "create", "--shards", "1", "--ragged", "--dtype", "|u1", "--ndim", "1",
                   os.path.join(d, "one")])
    expect("codec zstd, 1 shard\n" in err, err)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-root-streams-"))
