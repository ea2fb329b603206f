#!/usr/bin/python3
"""zrec append-tar: WebDataset tar shards into aligned named streams.

- Tars written by Python's tarfile: plain, gzip, zstd (zstd CLI), xz; GNU and PAX
  formats, long names, PAX headers, members in subdirectories; several TAR operands
  and concatenated tars on stdin. Every record of every stream is compared byte for
  byte with its tar member, and the --keys file with the samples' keys.
- --ext selects (others ignored and counted), --parse cls=ints / floats, an existing
  Dense scalar store used as it is.
- Alignment: a missing extension fails naming the key and the members; --skip-incomplete
  skips the sample in every stream; a duplicate extension fails; an empty member;
  a refused run leaves every stream and the keys file unchanged.
- Checkpoints and --skip-first resume; --json summary.
- cat --format tar: exported roots re-imported rebuild streams with equal digests;
  keys from --keys or zero-padded IDs; a selection; a single store.
- Bounded memory: 80000 tiny members and a 48 MiB member with a 2 MiB window (peak RSS).
- Random kills (>= 20, bounded): afterwards the next run (the same command with
  --from-length 0) cuts the streams back to the root's committed count, and each stream
  holds exactly the samples of the input, once.

Needs: ZREC (path of the zrec binary), python3-numpy, zstd and xz CLIs.
"""
import io
import json
import os
import random
import signal
import subprocess
import sys
import tarfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import SANITIZED, byte_records, fails, must, records, require_zrec, run_zrec  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = require_zrec("test_append_tar")
FIGURES = []


def info(root):
    return json.loads(must(["info", "--json", root])[0])


def tree_bytes(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def make_tar(path, members, fmt=tarfile.PAX_FORMAT, mode="w", pax_headers=None):
    """members: list of (name, bytes); None bytes makes a directory."""
    with tarfile.open(path, mode, format=fmt, pax_headers=pax_headers or {}) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            if data is None:
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
                continue
            ti.size = len(data)
            ti.mtime = 1700000000
            t.addfile(ti, io.BytesIO(data))
    return path


def samples(n, seed, start=0, prefix="shard/", exts=("jpg", "cls", "seg.png")):
    """n samples of WebDataset members: key -> {ext: bytes}, in order."""
    rng = random.Random(seed)
    out = []
    for i in range(start, start + n):
        key = "%s%06d" % (prefix, i)
        s = {}
        for e in exts:
            if e == "cls":
                s[e] = b"%d" % rng.randrange(1000)
            else:
                s[e] = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 300)))
        out.append((key, s))
    return out


def members_of(smp):
    return [("%s.%s" % (k, e), d) for k, s in smp for e, d in s.items()]


def check_streams(root, smp, exts=None):
    """Every stream of root holds exactly the samples `smp`, byte for byte."""
    exts = exts or list(smp[0][1].keys())
    for e in exts:
        got = byte_records(os.path.join(root, e))
        want = [s[e] for _, s in smp]
        assert len(got) == len(want), "stream %s: %d records, want %d" % (e, len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, "stream %s record %d differs from member %s.%s" % (e, i, smp[i][0], e)


CASES, case = case_runner.case_registry()


@case
def compressions_and_formats(tmp):
    smp = samples(60, 1)
    mem = members_of(smp)
    plain = make_tar(os.path.join(tmp, "a.tar"), mem[:60], fmt=tarfile.GNU_FORMAT)
    gz = make_tar(os.path.join(tmp, "b.tar.gz"), mem[60:120], mode="w:gz")
    xz = make_tar(os.path.join(tmp, "c.tar.xz"), mem[120:], mode="w:xz")
    root = os.path.join(tmp, "ds")
    # Named by misleading suffixes: the compression is detected by content.
    os.rename(gz, os.path.join(tmp, "b.tar"))
    _, err = must(["append-tar", "--keys", os.path.join(tmp, "keys"), root, plain, os.path.join(tmp, "b.tar"), xz])
    assert "appended 60 samples" in err and "it now holds 60" in err, err
    check_streams(root, smp)
    assert open(os.path.join(tmp, "keys")).read().splitlines() == [k for k, _ in smp]
    # zstd through stdin, two concatenated tars.
    smp2 = samples(30, 2, start=60)
    mem2 = members_of(smp2)
    t1 = make_tar(os.path.join(tmp, "d.tar"), mem2[:45])
    t2 = make_tar(os.path.join(tmp, "e.tar"), mem2[45:])
    subprocess.run(["bash", "-c", "cat '%s' '%s' | zstd -q -o '%s'" % (t1, t2, os.path.join(tmp, "de.tar.zst"))],
                   check=True)
    must(["append-tar", "--keys", os.path.join(tmp, "keys"), root, "-"], stdin_file=os.path.join(tmp, "de.tar.zst"))
    check_streams(root, smp + smp2)
    assert open(os.path.join(tmp, "keys")).read().splitlines() == [k for k, _ in smp + smp2]
    i = info(root)
    assert i["lengths_agree"] and sorted(i["streams"]) == ["cls", "jpg", "seg.png"], i
    for e in ("jpg", "cls", "seg.png"):
        st = i["streams"][e]
        assert st["kind"] == "ragged" and st["dtype"] == "|u1" and st["ndim"] == 1 and st["length"] == 90, st
    FIGURES.append("append-tar: plain GNU, gzip, xz, zstd+concatenated stdin: 90 samples x 3 streams byte-exact")


@case
def long_names_pax_subdirs(tmp):
    # Keys longer than 100 bytes (GNU longname / PAX path), non-ASCII, deep subdirectories,
    # a directory entry, dots in directory names (the key ends at the basename's first dot).
    smp = []
    for i in range(12):
        key = "d.ir/%s/sub-%d/%s%03d" % ("x" * 120, i % 3, "ключ-", i)
        smp.append((key, {"txt": ("text %d é" % i).encode(), "json": b'{"i": %d}' % i}))
    mem = [("d.ir/", None)] + members_of(smp)
    for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
        root = os.path.join(tmp, "ds%d" % fmt)
        t = make_tar(os.path.join(tmp, "t%d.tar" % fmt), mem, fmt=fmt, pax_headers={"comment": "x" * 300})
        keys = os.path.join(tmp, "keys%d" % fmt)
        must(["append-tar", "--keys", keys, root, t])
        check_streams(root, smp)
        assert open(keys, encoding="utf-8").read().splitlines() == [k for k, _ in smp]


@case
def ext_selection_and_parse(tmp):
    smp = samples(40, 3, exts=("jpg", "cls", "txt"))
    for k, s in smp:
        s["f"] = b" %.6g  -1.5e3 \n" % (len(s["jpg"]) / 7)
    # A member without an extension in the middle of a sample neither joins nor ends it.
    mem = members_of(smp)
    t = make_tar(os.path.join(tmp, "t.tar"), mem[:1] + [("README", b"no extension")] + mem[1:])
    root = os.path.join(tmp, "ds")
    _, err = must(["append-tar", "--ext", "jpg,cls,f", "--parse", "cls=ints", "--parse", "f=floats", root, t])
    assert "ignored 41 members" in err, err  # 40 txt + README
    assert sorted(os.listdir(root)) == ["cls", "f", "jpg", "zrec-root"]
    check_streams(root, smp, ["jpg"])
    cls = records(os.path.join(root, "cls"))
    assert all(r.dtype == np.dtype("<i8") and r.tolist() == [int(s["cls"])] for r, (_, s) in zip(cls, smp))
    f = records(os.path.join(root, "f"))
    assert all(r.dtype == np.dtype("<f8") and r.tolist() == [float(x) for x in s["f"].split()] for r, (_, s) in zip(f, smp))
    # An existing Dense scalar |u2 store is used as it is (adopted: a directory of stores
    # append-tar did not build is no root until --adopt makes it one).
    root2 = os.path.join(tmp, "ds2")
    os.makedirs(root2)
    must(["create", "--dense", "--dtype", "<u2", "--shape", "()", os.path.join(root2, "cls")])
    fails(["append-tar", "--ext", "cls,jpg", "--parse", "cls=ints", root2, t], says=["no zrec-root marker", "--adopt"])
    must(["append-tar", "--adopt", "--ext", "cls,jpg", "--parse", "cls=ints", root2, t])
    got = records(os.path.join(root2, "cls"))  # one .npy for a Dense store
    assert got[0].dtype == np.dtype("<u2") and got[0].tolist() == [int(s["cls"]) for _, s in smp]
    # A bytes stream that is not Ragged |u1 is refused, naming it.
    root3 = os.path.join(tmp, "ds3")
    os.makedirs(root3)
    must(["create", "--dense", "--dtype", "<u2", "--shape", "()", os.path.join(root3, "jpg")])
    # (Without --parse, an existing stream of numbers continues as the --parse that made
    # it: the first member says it is no number, naming the stream.)
    fails(["append-tar", "--adopt", "--ext", "jpg", root3, t],
          says=["member 'shard/000000.jpg'", "stream '%s/jpg' is a Dense scalar store" % root3])
    fails(["append-tar", "--parse", "cls=words", root, t], rc_want=2, says=["expected EXT=int or EXT=float (one number per member"])


@case
def mixed_image_extensions_share_a_stream(tmp):
    # Samples with a .png or a .jpg image (real image datasets mix them). Without an
    # alias the .jpg samples are incomplete, and the error used to hide the .jpg member
    # ("it has 's1.cls', 's1.json'"); --ext 'png;jpg;jpeg=image' imports all of them.
    mem, images = [], []
    for k in range(10):
        e = "png" if k % 3 else "jpg"
        img = b"IMG-%s-%d" % (e.encode(), k)
        images.append(img)
        mem += [("s%02d.%s" % (k, e), img), ("s%02d.cls" % k, b"%d" % (k % 4)), ("s%02d.json" % k, b"{}")]
    t = make_tar(os.path.join(tmp, "t.tar"), mem)
    fails(["append-tar", "--ext", "png,cls", os.path.join(tmp, "bad"), t],
          says=["sample 's00' has no 'png' member (it has 's00.jpg', 's00.cls', 's00.json')"])
    root = os.path.join(tmp, "ds")
    _, err = must(["append-tar", "--ext", "png;jpg;jpeg=image,cls", "--parse", "cls=int", root, t])
    assert sorted(os.listdir(root)) == ["cls", "image", "zrec-root"], os.listdir(root)
    assert byte_records(os.path.join(root, "image")) == images
    assert records(os.path.join(root, "cls"))[0].tolist() == [k % 4 for k in range(10)]
    assert "ignored 10 members" in err, err  # the .json ones
    # Without '=NAME' the stream is named after the first alternative; a rerun repeats --ext.
    must(["append-tar", "--ext", "png;jpg,cls", os.path.join(tmp, "ds2"), t])
    assert sorted(os.listdir(os.path.join(tmp, "ds2"))) == ["cls", "png", "zrec-root"]
    must(["append-tar", "--ext", "png;jpg;jpeg=image,cls", "--from-length", "0", root, t])
    assert info(os.path.join(root, "image"))["length"] == 10
    # Two alternatives in one sample, and one extension for two streams, are refused.
    both = make_tar(os.path.join(tmp, "both.tar"), [("a.png", b"p"), ("a.jpg", b"j"), ("a.cls", b"1")])
    fails(["append-tar", "--ext", "png;jpg=image,cls", os.path.join(tmp, "ds3"), both],
          says=["sample 'a' has two 'image' members: 'a.png' and 'a.jpg' (a duplicate extension within a sample, "
                "or two of its alternatives)"])
    fails(["append-tar", "--ext", "png;jpg=image,jpg", os.path.join(tmp, "ds4"), t], rc_want=2,
          says=["--ext 'jpg': the extension 'jpg' already goes to the stream 'image'"])
    assert not os.path.exists(os.path.join(tmp, "ds3")) and not os.path.exists(os.path.join(tmp, "ds4"))


@case
def keys_inside_the_root(tmp):
    # --keys-stream keeps each sample's key as a record of the root's stream __key__, so
    # cat --format tar (and anything reading the root) finds them without a side file; a
    # later run into the root keeps writing it, also without the option.
    def tar_of(name, keys):
        return make_tar(os.path.join(tmp, name), [m for k in keys for m in ((k + ".jpg", b"J" + k.encode()),
                                                                                 (k + ".cls", b"1"))])
    root = os.path.join(tmp, "ds")
    first = ["shard/a%02d" % i for i in range(5)]
    more = ["shard/b%02d" % i for i in range(3)]
    must(["append-tar", "--keys-stream", root, tar_of("a.tar", first)])
    assert sorted(os.listdir(root)) == ["__key__", "cls", "jpg", "zrec-root"], os.listdir(root)
    must(["append-tar", root, tar_of("b.tar", more)])
    assert byte_records(os.path.join(root, "__key__")) == [k.encode() for k in first + more]
    assert info(os.path.join(root, "__key__"))["codec"] == "raw"
    out = subprocess.run([ZREC, "cat", "--format", "tar", root], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(out)) as t:
        names = t.getnames()
    assert names == [n for k in first + more for n in (k + ".cls", k + ".jpg")], names
    # --keys FILE still names them when given.
    kf = os.path.join(tmp, "other.keys")
    open(kf, "w").write("".join("k%d\n" % i for i in range(8)))
    out = subprocess.run([ZREC, "cat", "--format", "tar", "--keys", kf, root], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(out)) as t:
        assert t.getnames()[:2] == ["k0.cls", "k0.jpg"], t.getnames()[:2]
    # A key that would extract outside the directory is refused before anything is written.
    bad_root = os.path.join(tmp, "bad")
    must(["append-tar", "--keys-stream", bad_root, tar_of("c.tar", ["/abs/x"])])
    out_tar = os.path.join(tmp, "out.tar")
    fails(["cat", "--format", "tar", "-o", out_tar, bad_root], says=[
        "stream '__key__' of root '%s' record 0: the key '/abs/x' would be a member name that extracts outside the "
        "directory (it is absolute); --absolute-names keeps such names" % bad_root])
    assert not os.path.exists(out_tar)


@case
def alignment_rules(tmp):
    smp = samples(20, 4, exts=("jpg", "cls"))
    root = os.path.join(tmp, "ds")
    keys = os.path.join(tmp, "keys")
    good = make_tar(os.path.join(tmp, "good.tar"), members_of(smp[:10]))
    must(["append-tar", "--keys", keys, root, good])
    before = tree_bytes(root), open(keys, "rb").read()
    # Sample 13 lacks its cls member.
    mem = members_of(smp[10:])
    missing_name = "%s.cls" % smp[13][0]
    mem_missing = [m for m in mem if m[0] != missing_name]
    bad = make_tar(os.path.join(tmp, "missing.tar"), mem_missing)
    fails(["append-tar", "--keys", keys, root, bad],
          says=["sample '%s' has no 'cls' member (it has '%s.jpg')" % (smp[13][0], smp[13][0]), "--skip-incomplete"])
    assert (tree_bytes(root), open(keys, "rb").read()) == before, "a refused run changed the root"
    # A duplicate extension within a sample.
    dup = make_tar(os.path.join(tmp, "dup.tar"), mem[:5] + [mem[4]] + mem[5:])
    fails(["append-tar", root, dup], says=["sample '%s' has two 'jpg' members: '%s.jpg' and '%s.jpg'" % ((smp[12][0],) * 3),
                                     "duplicate extension"])
    # An empty member.
    empty = make_tar(os.path.join(tmp, "empty.tar"), [(n, b"" if i == 3 else d) for i, (n, d) in enumerate(mem)])
    fails(["append-tar", root, empty], says=["member '%s.cls' is empty" % smp[11][0]])
    assert (tree_bytes(root), open(keys, "rb").read()) == before, "a refused run changed the root"
    # --skip-incomplete skips the sample in every stream and counts it.
    _, err = must(["append-tar", "--skip-incomplete", "--keys", keys, root, bad])
    assert "skipped 1 incomplete sample" in err, err
    kept = smp[:13] + smp[14:]
    check_streams(root, kept)
    assert open(keys).read().splitlines() == [k for k, _ in kept]
    # A stream the root has but --ext leaves out; a new stream in a nonempty root.
    fails(["append-tar", "--ext", "jpg", root, good], says=["has a stream 'cls' that --ext leaves out"])
    fails(["append-tar", "--ext", "jpg,cls,txt", root, good], says=["a new stream 'txt' would not line up"])
    fails(["append-tar", os.path.join(root, "jpg"), good], says=["is a store; append-tar appends to a directory"])


@case
def checkpoints_resume_json(tmp):
    smp = samples(50, 5, exts=("jpg", "cls"))
    t = make_tar(os.path.join(tmp, "t.tar"), members_of(smp))
    root = os.path.join(tmp, "ds")
    keys = os.path.join(tmp, "keys")
    # Fails at sample 37 (a duplicate) after checkpoints at 10, 20, 30.
    mem = members_of(smp)
    broken = make_tar(os.path.join(tmp, "b.tar"), mem[:75] + [mem[74]] + mem[75:])
    err = fails(["append-tar", "--checkpoint-every", "10", "--keys", keys, root, broken],
                says=["root '%s' holds 30 samples, as of the last checkpoint (resume: the same command with "
                      "--from-length 0)" % root])
    check_streams(root, smp[:30])
    assert open(keys).read().splitlines() == [k for k, _ in smp[:30]]
    out, err = must(["append-tar", "--json", "--skip-first", "30", "--keys", keys, root, t])
    j = json.loads(out)
    assert j["samples_appended"] == 20 and j["samples_skipped"] == 30 and j["length"] == 50, j
    assert sorted(j["streams"]) == ["cls", "jpg"] and j["members_ignored"] == 0, j
    check_streams(root, smp)
    assert open(keys).read().splitlines() == [k for k, _ in smp]


@case
def large_member_small_window(tmp):
    # A member 8x the window (1 MiB) and thousands of tiny ones around it.
    big = os.urandom(8 << 20)
    smp = [("k%05d" % i, {"bin": (big if i == 500 else b"%d" % i)}) for i in range(3000)]
    t = make_tar(os.path.join(tmp, "t.tar"), members_of(smp))
    root = os.path.join(tmp, "ds")
    must(["append-tar", "--window-mib", "1", root, t])
    check_streams(root, smp)


def peak_rss_kib(args):
    """Runs zrec under /usr/bin/time; its peak RSS in KiB."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M", ZREC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    return int(err.strip().splitlines()[-1])


@case
def bounded_memory(tmp):
    # Many tiny members cost the windows only; a member larger than the window costs
    # about its own size once (raw codec: no compression buffer on top).
    if SANITIZED:
        return  # ASan's shadow memory makes RSS meaningless
    n = 40000
    tiny = make_tar(os.path.join(tmp, "tiny.tar"), [("%07d.%s" % (i, e), b"%d" % i) for i in range(n) for e in "ab"])
    rss_tiny = peak_rss_kib(["append-tar", "-q", "--window-mib", "2", os.path.join(tmp, "ds"), tiny])
    os.remove(tiny)
    assert rss_tiny < 48 * 1024, "peak RSS %d KiB for %d tiny members" % (rss_tiny, 2 * n)
    assert len(byte_records(os.path.join(tmp, "ds", "b"))) == n
    big = os.urandom(48 << 20)
    bt = make_tar(os.path.join(tmp, "big.tar"), [("0.bin", big)])
    rss_big = peak_rss_kib(["append-tar", "-q", "--codec", "raw", "--window-mib", "2", os.path.join(tmp, "ds2"), bt])
    assert rss_big < (48 + 32) * 1024, "peak RSS %d KiB for a 48 MiB member" % rss_big
    assert byte_records(os.path.join(tmp, "ds2", "bin")) == [big]
    FIGURES.append("append-tar memory: %d tiny members in %.1f MiB peak RSS (window 2 MiB x 2 streams); "
                   "a 48 MiB member in %.1f MiB" % (2 * n, rss_tiny / 1024, rss_big / 1024))


def digest(store):
    return must(["digest", store])[0].split()[0]


@case
def export_round_trip(tmp):
    # cat --format tar of a root, imported again, rebuilds streams with equal digests;
    # keys come from --keys, or are zero-padded record IDs; a selection and one store.
    smp = samples(70, 8, prefix="p/q/", exts=("jpg", "cls", "seg.png"))
    t = make_tar(os.path.join(tmp, "t.tar"), members_of(smp))
    root = os.path.join(tmp, "ds")
    keys = os.path.join(tmp, "keys")
    must(["append-tar", "--parse", "cls=ints", "--keys", keys, "--codec", "raw", root, t])
    out = os.path.join(tmp, "out.tar")
    must(["cat", "--format", "tar", "--keys", keys, root, "-o", out])
    with tarfile.open(out) as tf:
        names = tf.getnames()
        assert names[:3] == ["%s.cls" % smp[0][0], "%s.jpg" % smp[0][0], "%s.seg.png" % smp[0][0]], names[:3]
        assert tf.extractfile("%s.seg.png" % smp[5][0]).read() == smp[5][1]["seg.png"]
    root2 = os.path.join(tmp, "ds2")
    must(["append-tar", "--parse", "cls=ints", "--keys", os.path.join(tmp, "keys2"), root2, out])
    for e in ("jpg", "cls", "seg.png"):
        assert digest(os.path.join(root, e)) == digest(os.path.join(root2, e)), e
    assert open(keys).read() == open(os.path.join(tmp, "keys2")).read()
    # Without keys: zero-padded IDs; a selection.
    data, _ = must(["cat", "--format", "tar", root, "10:13"])
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        assert tf.getnames() == ["%06d.%s" % (i, e) for i in (10, 11, 12) for e in ("cls", "jpg", "seg.png")]
        assert tf.extractfile("000011.jpg").read() == smp[11][1]["jpg"]
        assert tf.extractfile("000012.cls").read() == smp[12][1]["cls"]
    # One store: ext = its directory name.
    data, _ = must(["cat", "--format", "tar", os.path.join(root, "jpg"), "-1"])
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        assert tf.getnames() == ["000069.jpg"] and tf.extractfile("000069.jpg").read() == smp[69][1]["jpg"]
    # Streams of unequal length are refused.
    os.makedirs(os.path.join(tmp, "uneq"))
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", os.path.join(tmp, "uneq", "a")])
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", os.path.join(tmp, "uneq", "b")])
    must(["append-stream", os.path.join(tmp, "uneq", "a")], stdin=b"x\n")
    fails(["cat", "--format", "tar", os.path.join(tmp, "uneq")], says=["hold different numbers of records"])
    FIGURES.append("cat --format tar: 70 samples x 3 streams exported and re-imported with equal digests")


@case
def random_kills(tmp):
    # Kills at random moments of a run with frequent checkpoints (each publishes three
    # streams, one after another, then commits the root). After each kill the next run
    # of the same command recovers: streams past the committed count are cut back to it,
    # and --from-length 0 skips what the root holds and completes the import.
    n = 400
    smp = samples(n, 6, exts=("jpg", "cls", "txt"))
    t = make_tar(os.path.join(tmp, "t.tar"), members_of(smp))
    kills = 12 if SANITIZED else 24
    rng = random.Random(7)
    unequal = cut_back = 0
    deadline = time.monotonic() + (240 if SANITIZED else 120)
    done = 0
    for k in range(kills):
        if time.monotonic() > deadline:
            break
        root = os.path.join(tmp, "ds%d" % k)
        keys = root + ".keys"
        cmd = [ZREC, "append-tar", "--from-length", "0", "--checkpoint-every", "3", "--keys", keys, root, t]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.02, 0.6))
        p.send_signal(signal.SIGKILL)
        p.wait()
        done += 1
        if os.path.exists(os.path.join(root, "zrec-root")):
            i = info(root)
            if not i["lengths_agree"]:
                unequal += 1
                _, text, _ = run_zrec(["info", root])
                assert b"samples the root committed (an append to the root was killed before its commit" in text, text
        # The same command, less its frequent checkpoints (one publication is quicker).
        _, err = must(["append-tar", "--from-length", "0", "--keys", keys, root, t])
        if "cut stream" in err:
            cut_back += 1
        check_streams(root, smp)
        assert open(keys).read().splitlines() == [k2 for k2, _ in smp]
    assert done >= (10 if SANITIZED else 20), "only %d kills in the time budget" % done
    FIGURES.append("append-tar kills: %d random SIGKILLs, %d left streams past the root's commit, %d runs cut back; "
                   "all recovered to the first samples" % (done, unequal, cut_back))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-append-tar-", figures=FIGURES))
