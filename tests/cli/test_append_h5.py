#!/usr/bin/python3
"""zrec append-h5: the rows of an HDF5 dataset (written here with h5py) as records.

Every imported record is compared byte for byte with the array h5py reads back.
- Dense N-D datasets of 20 dtypes (every integer size signed and unsigned, float16/32/64,
  both byte orders) made with --create; the store's dtype keeps the file's byte order;
  a 1-D dataset becomes a Dense scalar store, an array element type extends the shape.
- Fixed-length strings (|S7, NUL-padded) and h5py's bool (|b1).
- Variable-length sequences (<i4, >f8, |u1) into Ragged ndim-1 stores, over many windows;
  an empty sequence is refused naming the row (with checkpoints: resumable).
- --start/--stop (Python slice rules), --skip-first within them; parts converted by row
  range and concatenated equal the whole conversion.
- --create with --codec/--shards/--level/--checksum/--dict; create options without
  --create; appending to an existing store; a schema mismatch.
- Refusals with their exact one-line messages and exit codes (compound, reference, enum,
  variable-length string, scalar dataset, group, missing dataset/file, not HDF5, an
  unavailable filter, 2-D variable-length, rows of no values): nothing created, an
  existing store unchanged byte for byte.
- A gzip+shuffle chunked 64 MiB dataset, 16x the window (chunks inside one window, a
  band of chunks as large as the window, and contiguous): byte-exact, bounded peak RSS;
  a band larger than the window is refused, naming the window that fits.
- SIGTERM mid-run: exit 143, the store holds the checkpointed prefix; resuming with
  --skip-first completes it. --json: one object with append-tar's key names.

Needs: ZREC (path of the zrec binary), python3-h5py, python3-numpy.
"""
import json
import os
import shutil
import signal
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import (SANITIZED, expect_failure, fails, must, must_out, records, require_zrec, run_zrec,  # noqa: E402
                         tree_hash)

ZREC = require_zrec("test_append_h5")
FIGURES = []
TAKES = ("; append-h5 takes integers, IEEE floats, h5py's bool, fixed-length strings, arrays of these, "
         "and variable-length sequences of numbers")
DTYPES = ["|i1", "|u1", "<i2", ">i2", "<u2", ">u2", "<i4", ">i4", "<u4", ">u4", "<i8", ">i8", "<u8", ">u8",
          "<f2", ">f2", "<f4", ">f4", "<f8", ">f8"]


def info(store):
    return json.loads(must_out(["info", "--json", store]))


def expect_dense(store, src, what):
    """The Dense store holds src's rows byte for byte, with src's dtype string."""
    got = records(store)[0]  # one .npy of every record
    assert got.dtype.str == src.dtype.str, "%s: dtype %s, want %s" % (what, got.dtype.str, src.dtype.str)
    assert got.shape == src.shape, "%s: shape %s, want %s" % (what, got.shape, src.shape)
    for i in range(len(src)):
        assert got[i].tobytes() == src[i].tobytes(), "%s: record %d differs" % (what, i)


def expect_ragged(store, rows, what):
    """The Ragged store holds `rows` (1-D arrays) byte for byte, with their dtype string."""
    got = records(store)
    assert len(got) == len(rows), "%s: %d records, want %d" % (what, len(got), len(rows))
    for i, (g, w) in enumerate(zip(got, rows)):
        assert g.dtype.str == w.dtype.str, "%s: record %d dtype %s, want %s" % (what, i, g.dtype.str, w.dtype.str)
        assert g.shape == w.shape and g.tobytes() == w.tobytes(), "%s: record %d differs" % (what, i)


def raw_bytes(store):
    return must_out(["cat", "--format", "raw", store])


CASES, case = case_runner.case_registry()


@case
def dense_dtypes_both_byte_orders(tmp):
    h5 = os.path.join(tmp, "d.h5")
    rng = np.random.default_rng(1)
    with h5py.File(h5, "w") as f:
        for dt in DTYPES:
            d = np.dtype(dt)
            if d.kind == "f":
                a = rng.standard_normal((37, 3, 2)).astype(dt)
            else:
                info_ = np.iinfo(d)
                a = rng.integers(info_.min, info_.max, (37, 3, 2), dtype=d.newbyteorder("="), endpoint=True).astype(dt)
            f.create_dataset("x" + dt.replace("<", "le").replace(">", "be").replace("|", ""), data=a)
        f["scalars"] = (np.arange(9) / 3).astype(">f8")
        # An array element type: rows (2,) of arrays (4,), read by h5py as (5, 2, 4).
        f.create_dataset("arr", (5, 2), dtype=np.dtype(("<i2", (4,))))[...] = np.arange(40, dtype="<i2").reshape(5, 2, 4)
    with h5py.File(h5, "r") as f:
        for dt in DTYPES:
            name = "x" + dt.replace("<", "le").replace(">", "be").replace("|", "")
            src = f[name][()]
            assert src.dtype.str == dt, (name, src.dtype.str)  # h5py kept the byte order
            s = os.path.join(tmp, name)
            must(["append-h5", "--create", s, h5, name])
            i = info(s)
            assert (i["kind"], i["dtype"], i["item_shape"], i["length"]) == ("dense", dt, [3, 2], 37), i
            expect_dense(s, src, name)
        s = os.path.join(tmp, "scalars")
        must(["append-h5", "--create", s, h5, "scalars"])
        assert (info(s)["dtype"], info(s)["item_shape"]) == (">f8", []), info(s)
        expect_dense(s, f["scalars"][()], "scalars")
        s = os.path.join(tmp, "arr")
        must(["append-h5", "--create", s, h5, "/arr"])
        src = f["arr"][()]
        assert src.shape == (5, 2, 4), src.shape
        assert info(s)["item_shape"] == [2, 4], info(s)
        expect_dense(s, src, "arr")
    FIGURES.append("append-h5: %d dense dtypes (both byte orders) byte-exact, scalar rows, an array element type"
                   % len(DTYPES))


@case
def strings_and_bool(tmp):
    h5 = os.path.join(tmp, "s.h5")
    words = np.array([b"a", b"abcdefg", b"", b"x\x00y", b"zrec"], dtype="|S7")
    with h5py.File(h5, "w") as f:
        f["words"] = words
        f["grid"] = np.array([[b"ab", b"c"], [b"", b"defg"]], dtype="|S4")
        f["flags"] = np.array([True, False, False, True, True])
        f["mask"] = np.random.default_rng(2).random((6, 4, 4)) > 0.5
    with h5py.File(h5, "r") as f:
        for name, dt, shape in (("words", "|S7", []), ("grid", "|S4", [2]), ("flags", "|b1", []),
                                ("mask", "|b1", [4, 4])):
            s = os.path.join(tmp, name)
            must(["append-h5", "--create", s, h5, name])
            assert (info(s)["dtype"], info(s)["item_shape"]) == (dt, shape), info(s)
            src = f[name][()]
            assert src.dtype.str == dt, (name, src.dtype.str)
            expect_dense(s, src, name)


@case
def vlen_ragged(tmp):
    h5 = os.path.join(tmp, "v.h5")
    rng = np.random.default_rng(3)
    rows = {"ints": [rng.integers(-1000, 1000, rng.integers(1, 300)).astype("<i4") for _ in range(700)],
            "floats": [rng.standard_normal(rng.integers(1, 50)).astype(">f8") for _ in range(300)],
            # Rows of up to 256 KiB, with a 1 MiB window: a few rows per window.
            "bytes": [rng.integers(0, 256, rng.integers(1, 256 << 10)).astype("|u1") for _ in range(60)]}
    with h5py.File(h5, "w") as f:
        for name, rs in rows.items():
            d = f.create_dataset(name, (len(rs),), dtype=h5py.vlen_dtype(rs[0].dtype), chunks=(16,))
            for i, r in enumerate(rs):
                d[i] = r
    with h5py.File(h5, "r") as f:
        for name, rs in rows.items():
            s = os.path.join(tmp, name)
            must(["append-h5", "--create", "--window-mib", "1", s, h5, name])
            i = info(s)
            assert (i["kind"], i["dtype"], i["ndim"], i["length"]) == ("ragged", rs[0].dtype.str, 1, len(rs)), i
            read = f[name][()]
            for k, (r, w) in enumerate(zip(read, rs)):
                # h5py 3.7 labels the rows of a big-endian sequence type native ('<f8'),
                # but their bytes are the file's ('>f8'): compare bytes, and values as written.
                assert r.tobytes() == w.tobytes(), "%s: h5py read row %d back as other bytes" % (name, k)
            expect_ragged(s, rs, name)
    FIGURES.append("append-h5: vlen <i4, >f8, |u1 (%d rows, up to 256 KiB each) byte-exact as Ragged ndim 1"
                   % sum(len(r) for r in rows.values()))


@case
def empty_sequence_and_resume(tmp):
    h5 = os.path.join(tmp, "v.h5")
    rs = [np.arange(i % 7 + 1, dtype="<i8") for i in range(50)]
    with h5py.File(h5, "w") as f:
        d = f.create_dataset("v", (50,), dtype=h5py.vlen_dtype(np.dtype("<i8")), chunks=(8,))
        for i, r in enumerate(rs):
            d[i] = r if i != 37 else np.zeros(0, dtype="<i8")
    s = os.path.join(tmp, "s")
    must(["create", "--ragged", "--dtype", "<i8", "--ndim", "1", s])
    before = tree_hash(s)
    fails(["append-h5", s, h5, "v"],
          says=["zrec append-h5: row 37 of dataset 'v' of '%s' is an empty sequence (records are nonempty)\n" % h5])
    assert tree_hash(s) == before
    err = fails(["append-h5", "--checkpoint-every", "10", s, h5, "v"])
    assert err == ("zrec append-h5: row 37 of dataset 'v' of '%s' is an empty sequence (records are nonempty); "
                   "'%s' holds 30 records, as of the last checkpoint (resume: the same command with --from-length 0)\n"
                   % (h5, s)), err
    expect_ragged(s, rs[:30], "checkpointed")
    with h5py.File(h5, "a") as f:
        f["v"][37] = rs[37]
    must(["append-h5", "--from-length", "0", s, h5, "v"])
    expect_ragged(s, rs, "resumed")


@case
def start_stop_and_parts(tmp):
    h5 = os.path.join(tmp, "r.h5")
    src = np.arange(100 * 6, dtype="<u2").reshape(100, 6)
    with h5py.File(h5, "w") as f:
        f.create_dataset("x", data=src, chunks=(7, 6), compression="gzip")
    for args, want in ((["--start", "10", "--stop", "25"], src[10:25]),
                       (["--start", "90", "--stop", "1000"], src[90:]),
                       (["--stop", "3"], src[:3]),
                       (["--start", "10", "--stop", "25", "--skip-first", "4"], src[14:25])):
        s = os.path.join(tmp, "s-" + "-".join(args))
        must(["append-h5", "--create"] + args + [s, h5, "x"])
        expect_dense(s, want, " ".join(args))
    s = os.path.join(tmp, "past")
    _, err = must(["append-h5", "--create", "--start", "200", s, h5, "x"])
    assert "warning: appended 0 records: the input was empty" in err, err
    assert info(s)["length"] == 0
    fails(["append-h5", "--start", "5", "--stop", "2", s, h5, "x"], rc_want=2,
          says=["zrec append-h5: --start 5 is past --stop 2\n"])
    # Row ranges converted apart and concatenated: the whole conversion.
    whole = os.path.join(tmp, "whole")
    must(["append-h5", "--create", whole, h5, "x"])
    parts = []
    for k in range(4):
        part = os.path.join(tmp, "part-%d" % k)
        must(["append-h5", "--create", "--start", str(k * 30), "--stop", str((k + 1) * 30), part, h5, "x"])
        parts.append(part)
    joined = os.path.join(tmp, "joined")
    must(["concat", joined] + parts)
    assert must_out(["digest", joined]).split()[0] == must_out(["digest", whole]).split()[0]
    expect_dense(joined, src, "joined")


@case
def create_options_and_existing_stores(tmp):
    h5 = os.path.join(tmp, "c.h5")
    a = np.random.default_rng(4).integers(0, 50, (2000, 8)).astype("<f4")
    b = np.arange(16, dtype="<f4").reshape(2, 8)
    with h5py.File(h5, "w") as f:
        f["a"] = a
        f["b"] = b
        f["ints"] = np.zeros((3, 8), dtype="<i4")
        f["wide"] = np.zeros((3, 9), dtype="<f4")
    s = os.path.join(tmp, "raw")
    must(["append-h5", "--create", "--codec", "raw", "--shards", "2", s, h5, "a"])
    assert (info(s)["codec"], info(s)["shards"]) == ("raw", 2), info(s)
    expect_dense(s, a, "raw")
    s = os.path.join(tmp, "sum")
    must(["append-h5", "--create", "--level", "19", "--checksum", s, h5, "a"])
    assert (info(s)["codec"], info(s)["checksum"]) == ("zstd", True), info(s)
    expect_dense(s, a, "checksum")
    dict_path = os.path.join(tmp, "dict.zr")
    must(["train-dict", "--size", "2K", os.path.join(tmp, "raw"), "-o", dict_path])
    s = os.path.join(tmp, "dict")
    must(["append-h5", "--create", "--codec", "zstd_dict", "--dict", dict_path, s, h5, "a"])
    assert info(s)["codec"] == "zstd_dict"
    expect_dense(s, a, "zstd_dict")
    fails(["append-h5", "--create", "--codec", "raw", "--checksum", os.path.join(tmp, "x"), h5, "a"], rc_want=2,
          says=["zrec append-h5: --checksum sets zstd frame checksums; a raw store has none (use --codec zstd, "
                "or keep per-record digests with 'zrec digest --per-record')\n"])
    fails(["append-h5", "--codec", "raw", os.path.join(tmp, "x"), h5, "a"], rc_want=2,
          says=["zrec append-h5: --codec needs --create\n"])
    assert not os.path.exists(os.path.join(tmp, "x"))
    # An existing store: made by zrec create, appended to twice (--create appends too).
    s = os.path.join(tmp, "existing")
    must(["create", "--dense", "--dtype", "<f4", "--shape", "8", s])
    must(["append-h5", s, h5, "a"])
    must(["append-h5", "--create", s, h5, "b"])
    expect_dense(s, np.concatenate([a, b]), "existing")
    before = tree_hash(s)
    fails(["append-h5", s, h5, "ints"],
          says=["zrec append-h5: '%s' is dense <f4 (8,) but the rows of dataset 'ints' of '%s' are dense <i4 (8,) "
                "records (dtype '<f4' vs '<i4')\n" % (s, h5)])
    fails(["append-h5", "--create", s, h5, "wide"],
          says=["zrec append-h5: '%s' is dense <f4 (8,) but the rows of dataset 'wide' of '%s' are dense <f4 (9,) "
                "records (item_shape (8,) vs (9,))\n" % (s, h5)])
    assert tree_hash(s) == before
    missing = os.path.join(tmp, "missing")
    err = fails(["append-h5", missing, h5, "a"])
    assert err.startswith("zrec append-h5: cannot open store '%s'" % missing) and \
        err.endswith(" (--create makes it from the dataset)\n"), err
    assert not os.path.exists(missing)


@case
def refusals(tmp):
    h5 = os.path.join(tmp, "bad.h5")
    with h5py.File(h5, "w") as f:
        f["comp"] = np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")])
        f.create_dataset("ref", (2,), dtype=h5py.ref_dtype)
        f.create_dataset("enum", (2,), dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype="i1"))
        f.create_dataset("vstr", (2,), dtype=h5py.string_dtype())
        f["scalar"] = 5
        f.create_group("grp/inner")
        f.create_dataset("lzf", data=np.arange(100), compression="lzf")
        f.create_dataset("vlen2d", (2, 2), dtype=h5py.vlen_dtype(np.dtype("<i4")))
        f.create_dataset("empty_rows", (4, 0), dtype="<f4")
        f["ok"] = np.zeros((3, 2), dtype="<f4")
    not_h5 = os.path.join(tmp, "plain.txt")
    with open(not_h5, "w") as f:
        f.write("not hdf5\n")
    cases = [
        ("comp", 1, "dataset 'comp' of '%s' has a compound type" % h5 + TAKES),
        ("ref", 1, "dataset 'ref' of '%s' has a reference type" % h5 + TAKES),
        ("enum", 1, "dataset 'enum' of '%s' has an enum type (not h5py's bool)" % h5 + TAKES),
        ("vstr", 1, "dataset 'vstr' of '%s' has a variable-length string type" % h5 + TAKES),
        ("scalar", 1, "dataset 'scalar' of '%s' is a scalar (or empty) dataset; append-h5 appends the rows along "
                      "the first axis of a dataset of rank 1 or more" % h5),
        ("grp", 1, "'grp' in '%s' is a group, not a dataset" % h5),
        ("nope", 1, "'%s' has no dataset 'nope'" % h5),
        ("/grp/x/y", 1, "'%s' has no dataset '/grp/x/y' (no '/grp/x')" % h5),
        ("vlen2d", 1, "dataset 'vlen2d' of '%s' holds variable-length sequences in 2 dimensions (2, 2); append-h5 "
                      "takes them from a 1-D dataset (one Ragged record per row)" % h5),
        ("empty_rows", 1, "dataset 'empty_rows' of '%s' has rows of shape (0,), with no values (records are "
                          "nonempty)" % h5),
    ]
    existing = os.path.join(tmp, "existing")
    must(["create", "--dense", "--dtype", "<f4", "--shape", "2", existing])
    must(["append-h5", existing, h5, "ok"])
    before = tree_hash(existing)
    for name, rc, message in cases:
        new = os.path.join(tmp, "new")
        fails(["append-h5", "--create", new, h5, name], rc_want=rc, says=["zrec append-h5: " + message + "\n"])
        assert not os.path.exists(new), name
        fails(["append-h5", existing, h5, name], rc_want=rc, says=["zrec append-h5: " + message + "\n"])
    for path, message in ((os.path.join(tmp, "none.h5"), "HDF5 file '%s' does not exist"),
                          (not_h5, "'%s' is not an HDF5 file")):
        fails(["append-h5", existing, path, "ok"], says=["zrec append-h5: " + message % path + "\n"])
    # A filter whose plugin libhdf5 cannot find (HDF5_PLUGIN_PATH replaces its default
    # directory): the message names the Debian package that provides it.
    no_plugins = dict(os.environ, HDF5_PLUGIN_PATH=os.path.join(tmp, "no-plugins"))
    args = ["append-h5", existing, h5, "lzf"]
    rc, _, err = run_zrec(args, env=no_plugins)
    expect_failure(args, rc, err, 1, [
        "zrec append-h5: dataset 'lzf' of '%s' is compressed with lzf (filter 32000), which this libhdf5 cannot "
        "decode: install its HDF5 plugin (Debian: hdf5-plugin-lzf (h5py's lzf) and liblzf1), or set "
        "HDF5_PLUGIN_PATH to the directory that holds it\n" % h5])
    assert tree_hash(existing) == before
    FIGURES.append("append-h5: %d refusals with exact messages, nothing created, existing store unchanged"
                   % (len(cases) + 3))


# What h5py writes with a filter of a plugin: h5py's own lzf, and the filters of Debian's
# hdf5-filter-plugin* packages (written in a child, whose libhdf5 reads HDF5_PLUGIN_PATH
# when it starts).
WRITE_FILTERED = r"""
import sys, h5py, numpy as np
data = (np.arange(4000, dtype='<i4') % 97).reshape(400, 10)
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('lzf', data=data, chunks=(40, 10), compression='lzf')
    for name, fid in (('lz4', 32004), ('bzip2', 307), ('blosc', 32001)):
        f.create_dataset(name, data=data, chunks=(40, 10), compression=fid)
    f.create_dataset('zfp', data=data.astype('<f4'), chunks=(40, 10), compression=32013)
"""


@case
def filter_plugins_decode(tmp):
    # h5py's lzf and the Debian filter plugins used to be refused ("install its HDF5
    # plugin"), also with the plugin installed and HDF5_PLUGIN_PATH set: a plugin calls the
    # HDF5 API of the process that loads it, which the static libhdf5 did not export, and
    # Debian's lzf plugin also needs liblzf's functions from it.
    plugins = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
    h5 = os.path.join(tmp, "filtered.h5")
    subprocess.run(["/usr/bin/python3", "-c", WRITE_FILTERED, h5], check=True,
                   env=dict(os.environ, HDF5_PLUGIN_PATH=plugins))
    data = (np.arange(4000, dtype="<i4") % 97).reshape(400, 10)
    # Under ASan: the blosc plugin keeps buffers it allocates once (posix_memalign) until
    # the process ends, which LeakSanitizer reports after libhdf5 unloaded the plugin. The
    # leak is the plugin's, not zrec's: leaks are not checked for these runs.
    base = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    if SANITIZED:
        base["ASAN_OPTIONS"] = (base.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    for name in ("lzf", "lz4", "bzip2", "blosc", "zfp"):
        for env in (base, dict(base, HDF5_PLUGIN_PATH=plugins)):  # the default directory, then the variable
            s = os.path.join(tmp, "%s-%s" % (name, "env" if "HDF5_PLUGIN_PATH" in env else "default"))
            rc, _, err = run_zrec(["append-h5", "--create", s, h5, name], env=env)
            assert rc == 0, (name, err)
            got = records(s)[0]  # a Dense store: one array (400, 10)
            want = data.astype("<f4") if name == "zfp" else data
            assert got.dtype == want.dtype and np.array_equal(got, want), name
    FIGURES.append("append-h5: lzf, lz4, bzip2, blosc and zfp datasets h5py wrote read byte-exact, from libhdf5's "
                   "default plugin directory and from HDF5_PLUGIN_PATH")


def make_big(h5):
    """64 MiB of compressible float32 rows (16384 x 1024) three ways: gzip+shuffle chunks
    of 64 rows (256 KiB), chunks of 512 rows (a 2 MiB band), contiguous."""
    a = np.random.default_rng(5).integers(0, 16, (16384, 1024)).astype("<f4")
    with h5py.File(h5, "w") as f:
        f.create_dataset("x", data=a, chunks=(64, 1024), compression="gzip", shuffle=True)
        f.create_dataset("band", data=a, chunks=(512, 1024), compression="gzip", shuffle=True)
        f.create_dataset("flat", data=a)
    return a


def run_rss(args):
    """Peak RSS of zrec in MiB, measured by /usr/bin/time: a child forked from this test
    (which holds the array) would start with the test's pages."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M", ZREC] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=600)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    return int(err.strip().splitlines()[-1]) / 1024.0


@case
def big_chunked_bounded_memory(tmp):
    h5 = os.path.join(tmp, "big.h5")
    a = make_big(h5)
    with h5py.File(h5, "r") as f:
        dcpl = f["x"]
        assert (dcpl.compression, dcpl.shuffle, dcpl.chunks) == ("gzip", True, (64, 1024))
    figures = []
    # Window 4 MiB (the dataset is 16x that); 2 MiB bands of chunks need a window of 2 MiB:
    # a band is decompressed whole, so a smaller window is refused before anything is read.
    fails(["append-h5", "--create", "--window-mib", "1", os.path.join(tmp, "b1"), h5, "band"], says=[
        "dataset 'band' of '%s' is stored in chunks of 512 rows, and the chunks of those rows (all other axes) are "
        "2097152 bytes decompressed, more than the window (1048576 bytes): give --window-mib 2 or more" % h5])
    assert not os.path.exists(os.path.join(tmp, "b1"))
    for name, window in (("x", 4), ("band", 2), ("flat", 4)):
        s = os.path.join(tmp, name)
        rss = run_rss(["append-h5", "-q", "--create", "--window-mib", str(window), s, os.path.abspath(h5), name])
        with h5py.File(h5, "r") as f:
            assert raw_bytes(s) == f[name][()].tobytes(), name
        assert info(s)["length"] == 16384
        figures.append("%s %.1f MiB (window %d MiB)" % (name, rss, window))
        # The dataset is 64 MiB: holding it (or a good part of it) would show.
        if not SANITIZED:  # ASan's shadow memory makes RSS meaningless
            assert rss < 44, "%s: peak RSS %.1f MiB for a 64 MiB dataset, window %d MiB" % (name, rss, window)
        shutil.rmtree(s)
    del a
    FIGURES.append("append-h5 memory, 64 MiB gzip+shuffle dataset, peak RSS: " + ", ".join(figures))


@case
def sigterm_and_json(tmp):
    h5 = os.path.join(tmp, "big.h5")
    a = make_big(h5)
    s = os.path.join(tmp, "s")
    must(["create", "--dense", "--dtype", "<f4", "--shape", "1024", s])
    # -vv logs each checkpoint ("debug: checkpoint: 'S' holds N records"): the signal
    # comes after the first (polling the store would race the writer for its lock).
    p = subprocess.Popen([ZREC, "-vv", "append-h5", "--checkpoint-every", "256", "--window-mib", "1", s, h5, "x"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = p.stderr.readline().decode()
    assert "debug: checkpoint: '%s' holds 256 records" % s in first, first
    p.send_signal(signal.SIGTERM)
    err = p.stderr.read().decode()
    p.wait()
    assert p.returncode == 143, (p.returncode, err)
    held = info(s)["length"]
    assert 0 < held < 16384 and held % 256 == 0, held
    assert err.splitlines()[-1] == ("zrec append-h5: interrupted; '%s' holds %d records (resume: the same command "
                                    "with --from-length 0)" % (s, held)), err
    assert raw_bytes(s) == a[:held].tobytes()
    rc, out, err = run_zrec(["append-h5", "--json", "--skip-first", str(held), s, h5, "x"])
    assert rc == 0, err
    j = json.loads(out)
    assert list(j) == ["path", "records_appended", "records_skipped", "records_present", "records_compared",
                       "bytes_in", "stored_bytes", "length", "elapsed_s"], j
    assert (j["path"], j["records_appended"], j["records_skipped"], j["bytes_in"], j["length"]) == \
        (s, 16384 - held, held, (16384 - held) * 4096, 16384), j
    assert j["stored_bytes"] > 0 and j["elapsed_s"] >= 0
    assert raw_bytes(s) == a.tobytes()
    FIGURES.append("append-h5: SIGTERM after %d of 16384 rows: exit 143, resumed to a byte-exact store" % held)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-append-h5-", figures=FIGURES))
