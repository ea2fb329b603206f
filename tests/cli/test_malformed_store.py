#!/usr/bin/python3
"""Malformed-store tests for the read side of zrec (docs/format.md section 8, plus section 10).

Each case builds (by copying) a good small store that zrec itself wrote, damages exactly
one thing with struct/pwrite, and checks that `zrec cat` (and `zrec info`, and for
page/file damage also `zrec append-npy`) exits 1 with exactly one stderr line that
starts with "zrec <cmd>: " and names the offending file / field / record, never
crashes (no signal, no "internal error") and, for the writer, leaves the store as it was.
A few "accept" cases check the reader does not over-reject what docs/format.md allows
(any key order, signed ints, nonzero schema padding, frame checksums, gaps, extra files).

Needs: ZREC (path of the zrec binary), python3-numpy, python3-msgpack, python3-zstandard.
"""
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import traceback

import msgpack
import numpy as np
import zstandard

ZREC = os.environ.get("ZREC")
if not ZREC or not os.access(ZREC, os.X_OK):
    sys.exit("test_malformed_store: set ZREC to the zrec binary (got %r)" % ZREC)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import must, must_out  # noqa: E402  (tests/cli/cli_helpers.py)

VERBOSE = os.environ.get("VERBOSE") == "1"  # print each case's message
PAGE = 4096
TAILS = 16
SCHEMA = 2056
N_RECORDS = 12
DENSE_SHAPE = (2, 4)  # '<i4' -> width 32
DENSE_WIDTH = 32
BAD_ID = 3  # the record the record-level cases damage

# ---------------------------------------------------------------------------------------
# running zrec


def run(args, stdin=None, timeout=20):
    try:
        p = subprocess.run([ZREC] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError("zrec %s hung (killed after %d s)" % (" ".join(args), timeout))
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")




def check_one_line_error(cmd, args, keys, stdin=None):
    """Runs zrec and asserts: exit 1, exactly one stderr line 'zrec <cmd>: ...' holding every key."""
    rc, _, err = run(args, stdin)
    shown = "zrec %s -> rc %d, stderr %r" % (" ".join(args), rc, err)
    if rc < 0 or rc >= 128:
        raise AssertionError("crashed: " + shown)
    if "internal error" in err:
        raise AssertionError("internal error: " + shown)
    if rc != 1:
        raise AssertionError("expected exit 1: " + shown)
    lines = err.splitlines()
    if len(lines) != 1:
        raise AssertionError("expected exactly one stderr line: " + shown)
    if not lines[0].startswith("zrec %s: " % cmd):
        raise AssertionError("stderr does not start with 'zrec %s: ': %s" % (cmd, shown))
    missing = [k for k in keys if k not in lines[0]]
    if missing:
        raise AssertionError("message lacks %r: %s" % (missing, shown))
    return lines[0]


# ---------------------------------------------------------------------------------------
# byte-level helpers (all integers little-endian, docs/format.md sections 2 and 3)


def pwrite(path, data, offset):
    fd = os.open(path, os.O_WRONLY)
    try:
        assert os.pwrite(fd, data, offset) == len(data)
    finally:
        os.close(fd)


def pread(path, n, offset):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(n)


def meta(store):
    return os.path.join(store, "meta.zr")


def page(store):
    b = pread(meta(store), PAGE, 0)
    length, schema_length, shards, codec = struct.unpack_from("<QHBB", b, 0)
    tails = list(struct.unpack_from("<255Q", b, TAILS))
    return dict(length=length, schema_length=schema_length, shards=shards, codec=codec, tails=tails)


def set_u64(store, off, v):
    pwrite(meta(store), struct.pack("<Q", v), off)


def set_tail(store, shard, v):
    set_u64(store, TAILS + 8 * shard, v)


def get_loc(store, i):
    return struct.unpack("<QII", pread(meta(store), 16, PAGE + 16 * i))


def set_loc(store, i, offset=None, phys=None, logic=None):
    o, p, l = get_loc(store, i)
    o = o if offset is None else offset
    p = p if phys is None else phys
    l = l if logic is None else logic
    pwrite(meta(store), struct.pack("<QII", o, p, l), PAGE + 16 * i)


def set_schema(store, blob, declared=None):
    """Replaces the schema bytes (zero padded) and sets schema_length."""
    assert len(blob) <= 2040
    pwrite(meta(store), blob + b"\0" * (2040 - len(blob)), SCHEMA)
    pwrite(meta(store), struct.pack("<H", len(blob) if declared is None else declared), 8)


def data_file(store, shard):
    return os.path.join(store, "data_%d.zr" % shard)


def shard_of(store, i):
    return i % page(store)["shards"]


def record_bytes(store, i):
    o, p, _ = get_loc(store, i)
    return pread(data_file(store, shard_of(store, i)), p, o)


def rewrite_in_place(store, i, blob, logic=None):
    """Overwrites record i's stored bytes with blob (which must fit) and sets phys_length."""
    o, p, _ = get_loc(store, i)
    assert len(blob) <= p, (len(blob), p)
    pwrite(data_file(store, shard_of(store, i)), blob, o)
    set_loc(store, i, phys=len(blob), logic=logic)


def relocate(store, i, blob, logic=None):
    """Stores blob as record i at its shard's tail (advancing the tail, as a writer would)."""
    s = shard_of(store, i)
    tail = page(store)["tails"][s]
    path = data_file(store, s)
    assert os.path.getsize(path) == tail
    with open(path, "ab") as f:
        f.write(blob)
    set_tail(store, s, tail + len(blob))
    set_loc(store, i, offset=tail, phys=len(blob), logic=logic)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def packb(obj):
    return msgpack.packb(obj, use_bin_type=True)


def fixstr(s):
    b = s.encode()
    return bytes([0xA0 | len(b)]) + b


def hash_tree(store):
    out = {}
    for name in sorted(os.listdir(store)):
        path = os.path.join(store, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                out[name] = hashlib.sha256(f.read()).hexdigest()
        else:
            out[name] = "<non-file>"
    return out


# ---------------------------------------------------------------------------------------
# good stores


def npy_stream(arrays):
    import io
    buf = io.BytesIO()
    for a in arrays:
        np.save(buf, a)
    return buf.getvalue()


def dense_arrays():
    return [np.arange(N_RECORDS * 8, dtype="<i4").reshape((N_RECORDS,) + DENSE_SHAPE) * 7 + 1]


def ragged_arrays():
    return [np.arange(i + 1, dtype="<i4") + 100 * i for i in range(N_RECORDS)]


DICT_BYTES = (bytes(range(256)) * 8) + np.arange(512, dtype="<i4").tobytes()  # raw-content dict


def build_good(root, kind, codec, shards):
    name = "%s_%s_%d" % (kind, codec, shards)
    path = os.path.join(root, "good", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    args = ["create", "--dtype", "<i4", "--codec", codec, "--shards", str(shards)]
    if kind == "dense":
        args += ["--dense", "--shape", "2,4"]
    else:
        args += ["--ragged", "--ndim", "1"]
    if codec == "zstd_dict":
        dict_path = os.path.join(root, "dict.bin")
        with open(dict_path, "wb") as f:
            f.write(DICT_BYTES)
        args += ["--dict", dict_path]
    must(args + [path])
    must(["-q", "append-npy", path, "-"], stdin=npy_stream(dense_arrays() if kind == "dense" else ragged_arrays()))
    # Sanity: the record table is as the tests assume (one chunk per shard, in ID order).
    p = page(path)
    assert p["length"] == N_RECORDS and p["shards"] == shards, p
    return path


# ---------------------------------------------------------------------------------------
# the cases

# Categories decide which commands must fail:
#   page: the static page, schema or store files -> cat, info and append-npy fail at open
#   loc:  a RecordLoc breaks a table rule        -> cat and info (which reads the table) fail
#   data: a record's stored bytes are bad        -> cat fails; info must not crash
CASES = []


def case(name, store, category, keys, cat_args=None, info_keys=None, append_keys=None):
    def deco(fn):
        CASES.append(dict(name=name, store=store, category=category, keys=keys, fn=fn,
                          cat_args=cat_args or [], info_keys=info_keys, append_keys=append_keys))
        return fn
    return deco


def accept(name, store):
    """A damage docs/format.md allows: cat must succeed with the original output."""
    return case(name, store, "accept", [])


# --- meta.zr size ------------------------------------------------------------------------
@case("meta.zr shorter than 4096", "dense_zstd_3", "page", ["meta.zr", "4000 bytes", "4096"])
def _(s): os.truncate(meta(s), 4000)


@case("meta.zr empty", "dense_raw_1", "page", ["meta.zr", "0 bytes", "4096"])
def _(s): os.truncate(meta(s), 0)


@case("meta.zr shorter than table (truncated by 1)", "dense_zstd_3", "page",
      ["meta.zr", "12 records", str(PAGE + 16 * 12)])
def _(s): os.truncate(meta(s), PAGE + 16 * 12 - 1)


@case("length one past the table", "ragged_raw_3", "page", ["meta.zr", "13 records", str(PAGE + 16 * 13)])
def _(s): set_u64(s, 0, 13)


@case("length 2^59 (table fits in u64, file too short)", "dense_zstd_1", "page",
      ["meta.zr", str(2 ** 59) + " records"])
def _(s): set_u64(s, 0, 2 ** 59)


@case("length so large 4096+16*length overflows", "dense_zstd_3", "page", ["length", str(2 ** 60), "overflow"])
def _(s): set_u64(s, 0, 2 ** 60)


@case("length 2^64-1", "ragged_zstd_3", "page", ["length", str(2 ** 64 - 1), "overflow"])
def _(s): set_u64(s, 0, 2 ** 64 - 1)


@case("length just past the u64 table limit", "dense_raw_3", "page", ["length", "overflow"])
def _(s): set_u64(s, 0, (2 ** 64 - 1 - PAGE) // 16 + 1)


# info treats a directory without meta.zr as a possible parent of named streams.
@case("meta.zr missing", "dense_zstd_3", "page", ["meta.zr"], info_keys=["not a zrecord store"])
def _(s): os.remove(meta(s))


@case("meta.zr is a symlink", "dense_zstd_3", "page", ["meta.zr", "symbolic link"])
def _(s):
    os.rename(meta(s), meta(s) + ".real")
    os.symlink("meta.zr.real", meta(s))


# --- static page fields ------------------------------------------------------------------
@case("schema_length 0", "dense_zstd_3", "page", ["schema_length 0"])
def _(s): pwrite(meta(s), struct.pack("<H", 0), 8)


@case("schema_length 2041", "dense_zstd_3", "page", ["schema_length 2041"])
def _(s): pwrite(meta(s), struct.pack("<H", 2041), 8)


@case("schema_length 65535", "ragged_raw_1", "page", ["schema_length 65535"])
def _(s): pwrite(meta(s), struct.pack("<H", 65535), 8)


@case("data_shards 0", "dense_zstd_3", "page", ["data_shards"])
def _(s): pwrite(meta(s), b"\0", 10)


@case("data_shards 4 where only 3 data files exist", "dense_zstd_3", "page", ["data_3.zr", "missing"])
def _(s): pwrite(meta(s), b"\x04", 10)


@case("data_shards 2 leaves tail slot 2 nonzero", "dense_zstd_3", "page", ["tail slot 2"])
def _(s): pwrite(meta(s), b"\x02", 10)


for _codec in (3, 255):
    @case("codec %d" % _codec, "dense_raw_3", "page", ["codec", str(_codec)])
    def _(s, c=_codec): pwrite(meta(s), bytes([c]), 11)

for _byte in (12, 13, 15):
    @case("nonzero reserved byte %d" % _byte, "ragged_zstd_3", "page", ["reserved byte", str(_byte)])
    def _(s, b=_byte): pwrite(meta(s), b"\x01", b)


@case("nonzero tail slot 3 with 3 shards", "dense_zstd_3", "page", ["tail slot 3"])
def _(s): set_tail(s, 3, 1)


@case("nonzero tail slot 254 with 1 shard", "dense_zstd_1", "page", ["tail slot 254"])
def _(s): set_tail(s, 254, 2 ** 63)


# --- schema (docs/format.md section 4) --------------------------------------------------------
def schema_case(name, blob, keys, store="dense_zstd_3", declared=None):
    @case("schema " + name, store, "page", ["meta.zr", "schema"] + keys)
    def _(s): set_schema(s, blob, declared)


GOOD_DENSE = {"dtype": "<i4", "ndim": 2, "item_shape": [2, 4]}
GOOD_RAGGED = {"dtype": "<i4", "ndim": 1}

schema_case("not msgpack (0xc1)", b"\xc1\xc1\xc1", ["MsgPack"])
schema_case("truncated msgpack map", packb(GOOD_DENSE)[:-2], ["MsgPack"])
schema_case("trailing bytes after the map", packb(GOOD_DENSE) + b"\x00", ["trailing"])
schema_case("trailing bytes via schema_length into padding", packb(GOOD_DENSE), ["trailing"],
            declared=len(packb(GOOD_DENSE)) + 1)
schema_case("not a map (array)", packb([1, 2, 3]), ["map"])
schema_case("not a map (str)", packb("<i4"), ["map"])
schema_case("not a map (nil)", b"\xc0", ["map"])
schema_case("unknown key", packb(dict(GOOD_DENSE, foo=1)), ["unknown key", "foo"])
schema_case("unknown key only in Ragged", packb(dict(GOOD_RAGGED, shape=[3])), ["unknown key", "shape"],
            store="ragged_zstd_3")
schema_case("non-string key", packb({"dtype": "<i4", "ndim": 1, 7: 1}), ["key"], store="ragged_zstd_3")
schema_case("missing dtype", packb({"ndim": 2, "item_shape": [2, 4]}), ["dtype"])
schema_case("missing ndim", packb({"dtype": "<i4", "item_shape": [2, 4]}), ["ndim"])
schema_case("missing ndim (Ragged)", packb({"dtype": "<i4"}), ["ndim"], store="ragged_raw_3")
schema_case("empty map", b"\x80", ["dtype"])
schema_case("duplicate key dtype",
            b"\x83" + fixstr("dtype") + fixstr("<i4") + fixstr("ndim") + b"\x01" + fixstr("dtype") + fixstr("<i4"),
            ["duplicate", "dtype"], store="ragged_zstd_3")
schema_case("duplicate key ndim",
            b"\x84" + fixstr("dtype") + fixstr("<i4") + fixstr("ndim") + b"\x02" + fixstr("ndim") + b"\x02"
            + fixstr("item_shape") + b"\x92\x02\x04", ["duplicate", "ndim"])
schema_case("dtype is an int", packb(dict(GOOD_DENSE, dtype=4)), ["dtype"])
schema_case("dtype is bin, not str", packb(dict(GOOD_DENSE, dtype=b"<i4")), ["dtype"])
schema_case("ndim is a str", packb(dict(GOOD_DENSE, ndim="2")), ["ndim"])
schema_case("ndim is negative", packb(dict(GOOD_RAGGED, ndim=-1)), ["ndim"], store="ragged_zstd_3")
schema_case("ndim is a float", packb(dict(GOOD_DENSE, ndim=2.0)), ["ndim"])
schema_case("ndim is a bool", packb(dict(GOOD_RAGGED, ndim=True)), ["ndim"], store="ragged_zstd_3")
schema_case("ndim is nil", packb(dict(GOOD_DENSE, ndim=None)), ["ndim"])
schema_case("ndim 2^32 (Ragged)", packb(dict(GOOD_RAGGED, ndim=2 ** 32)), ["ndim"], store="ragged_zstd_3")
schema_case("ndim 2^28 (Ragged, record would pass 2 GiB)", packb(dict(GOOD_RAGGED, ndim=2 ** 28)), ["ndim"],
            store="ragged_zstd_3")
schema_case("item_shape is an int", packb(dict(GOOD_DENSE, item_shape=8)), ["item_shape"])
schema_case("item_shape is a map", packb(dict(GOOD_DENSE, item_shape={"a": 1})), ["item_shape"])
schema_case("item_shape entry is a str", packb(dict(GOOD_DENSE, item_shape=[2, "4"])), ["item_shape"])
schema_case("item_shape entry is negative", packb(dict(GOOD_DENSE, item_shape=[2, -4])), ["item_shape"])
schema_case("item_shape length != ndim (2 vs 3)", packb(dict(GOOD_DENSE, ndim=3)), ["item_shape", "ndim"])
schema_case("item_shape length != ndim (3 vs 2)", packb(dict(GOOD_DENSE, item_shape=[2, 2, 2])),
            ["item_shape", "ndim"])
schema_case("item_shape entry 0", packb(dict(GOOD_DENSE, item_shape=[0, 4])), ["item_shape"])
schema_case("item_shape product overflows u64", packb(dict(GOOD_DENSE, item_shape=[2 ** 32, 2 ** 32])),
            ["2 GiB"])
schema_case("Ragged ndim 0", packb({"dtype": "<i4", "ndim": 0}), ["ndim"], store="ragged_zstd_3")
for _dtype, _why in [("=i4", "canonical"), ("i4", "canonical"), ("<u1", "canonical"), ("|i4", ""),
                     ("int32", "canonical"), ("O", "object"), ("|O", "object"), ("|S0", "zero itemsize"),
                     ("<U0", "zero itemsize"), ("|V0", "zero itemsize"), ("<f16", ""), ("<f12", ""),
                     ("<c32", ""), ("(2,)<i4", "subarray"), ("[('a', '<i4')]", "structured"),
                     ("<M8[xs]", "unit"), ("", ""), ("<x4", "")]:
    schema_case("dtype %r" % _dtype, packb(dict(GOOD_DENSE, dtype=_dtype)), ["dtype"] + ([_why] if _why else []))


# --- store files ------------------------------------------------------------------------
@case("data file missing", "dense_zstd_3", "page", ["data_1.zr", "missing"])
def _(s): os.remove(data_file(s, 1))


@case("data file missing (1 shard)", "ragged_raw_1", "page", ["data_0.zr", "missing"])
def _(s): os.remove(data_file(s, 0))


@case("data file shorter than its tail", "dense_zstd_3", "page", ["data_2.zr", "shorter", "tail"])
def _(s): os.truncate(data_file(s, 2), os.path.getsize(data_file(s, 2)) - 1)


@case("data file empty with nonzero tail", "ragged_zstd_dict_1", "page", ["data_0.zr", "shorter", "tail"])
def _(s): os.truncate(data_file(s, 0), 0)


@case("tail raised past the data file", "dense_raw_3", "page", ["data_0.zr", "shorter", "tail"])
def _(s): set_tail(s, 0, page(s)["tails"][0] + 1)


@case("data file is a symlink", "dense_zstd_3", "page", ["data_1.zr", "symbolic link"])
def _(s):
    os.rename(data_file(s, 1), data_file(s, 1) + ".real")
    os.symlink("data_1.zr.real", data_file(s, 1))


# Anything but a regular file is refused; a FIFO must not block open() (reader or writer).
for _name, _store in (("meta.zr", "dense_zstd_3"), ("data_1.zr", "dense_zstd_3"), ("dict.zr", "ragged_zstd_dict_1")):
    @case("%s is a FIFO" % _name, _store, "page", [_name, "not a regular file"])
    def _(s, n=_name):
        os.remove(os.path.join(s, n))
        os.mkfifo(os.path.join(s, n))

    # A writer's O_RDWR open of a directory fails first, with EISDIR.
    @case("%s is a directory" % _name, _store, "page", [_name, "not a regular file"], append_keys=[_name])
    def _(s, n=_name):
        os.remove(os.path.join(s, n))
        os.mkdir(os.path.join(s, n))


@case("dict.zr missing for zstd_dict", "dense_zstd_dict_3", "page", ["dict.zr", "missing"])
def _(s): os.remove(os.path.join(s, "dict.zr"))


@case("dict.zr present for zstd", "dense_zstd_3", "page", ["dict.zr", "zstd"])
def _(s): write_file(os.path.join(s, "dict.zr"), DICT_BYTES)


@case("dict.zr present for raw", "ragged_raw_3", "page", ["dict.zr", "raw"])
def _(s): write_file(os.path.join(s, "dict.zr"), DICT_BYTES)


@case("dict.zr shorter than 8 bytes", "dense_zstd_dict_3", "page", ["dict.zr", "8"])
def _(s): os.truncate(os.path.join(s, "dict.zr"), 7)


@case("dict.zr empty", "ragged_zstd_dict_1", "page", ["dict.zr"])
def _(s): os.truncate(os.path.join(s, "dict.zr"), 0)


@case("dict.zr with zstd dictionary magic but garbage", "dense_zstd_dict_3", "page", ["dict.zr"])
def _(s):
    with open(os.path.join(s, "dict.zr"), "wb") as f:
        f.write(struct.pack("<I", 0xEC30A437) + b"\xff" * 60)


@case("codec byte set to zstd_dict on a zstd store", "dense_zstd_3", "page", ["dict.zr", "missing"])
def _(s): pwrite(meta(s), b"\x02", 11)


# --- RecordLoc rules ----------------------------------------------------------------------
def rec_keys(shard_name, *more):
    return ["record %d" % BAD_ID, shard_name] + list(more)


@case("phys_length 0", "dense_zstd_3", "loc", rec_keys("data_0.zr", "phys_length 0"))
def _(s): set_loc(s, BAD_ID, phys=0)


@case("phys_length 0 (raw)", "ragged_raw_1", "loc", rec_keys("data_0.zr", "phys_length 0"))
def _(s): set_loc(s, BAD_ID, phys=0, logic=0)


@case("logic_length 0", "dense_zstd_3", "loc", rec_keys("data_0.zr", "logic_length 0"))
def _(s): set_loc(s, BAD_ID, logic=0)


@case("logic_length 2^31", "ragged_zstd_3", "loc", rec_keys("data_0.zr", "2 GiB"))
def _(s): set_loc(s, BAD_ID, logic=2 ** 31)


@case("phys_length 2^31", "ragged_zstd_3", "loc", rec_keys("data_0.zr", "2 GiB"))
def _(s): set_loc(s, BAD_ID, phys=2 ** 31)


@case("offset+phys one past the tail", "dense_zstd_3", "loc", rec_keys("data_0.zr", "past tail"))
def _(s):
    _, p, _ = get_loc(s, BAD_ID)
    set_loc(s, BAD_ID, offset=page(s)["tails"][0] - p + 1)


@case("offset at the tail", "dense_raw_1", "loc", rec_keys("data_0.zr", "past tail"))
def _(s): set_loc(s, BAD_ID, offset=page(s)["tails"][0])


@case("offset near 2^64 (offset+phys wraps)", "dense_raw_3", "loc", rec_keys("data_0.zr", "past tail"))
def _(s): set_loc(s, BAD_ID, offset=2 ** 64 - 16)


@case("offset 2^64-1", "ragged_zstd_3", "loc", rec_keys("data_0.zr", "past tail"))
def _(s): set_loc(s, BAD_ID, offset=2 ** 64 - 1)


@case("phys_length 2^31-1 past the tail", "dense_zstd_1", "loc", rec_keys("data_0.zr", "past tail"))
def _(s): set_loc(s, BAD_ID, phys=2 ** 31 - 1)


@case("raw phys != logic", "dense_raw_3", "loc", rec_keys("data_0.zr", "raw"))
def _(s): set_loc(s, BAD_ID, phys=DENSE_WIDTH - 1)


@case("raw phys != logic (Ragged)", "ragged_raw_3", "loc", rec_keys("data_0.zr", "raw"))
def _(s):
    _, p, l = get_loc(s, BAD_ID)
    set_loc(s, BAD_ID, logic=l + 4)


@case("Dense logic_length != width (zstd)", "dense_zstd_3", "loc", rec_keys("data_0.zr", "Dense width 32"))
def _(s): set_loc(s, BAD_ID, logic=DENSE_WIDTH + 4)


@case("Dense logic_length != width (raw, phys == logic)", "dense_raw_3", "loc",
      rec_keys("data_0.zr", "Dense width 32"))
def _(s): set_loc(s, BAD_ID, phys=DENSE_WIDTH - 4, logic=DENSE_WIDTH - 4)


@case("Dense logic_length != width (zstd_dict)", "dense_zstd_dict_3", "loc", rec_keys("data_0.zr", "Dense width"))
def _(s): set_loc(s, BAD_ID, logic=DENSE_WIDTH - 1)


@case("Ragged logic_length 8*ndim (no element)", "ragged_zstd_3", "loc", rec_keys("data_0.zr", "too short"))
def _(s): set_loc(s, BAD_ID, logic=8)


@case("Ragged logic_length < 8*ndim + itemsize (raw)", "ragged_raw_3", "loc",
      rec_keys("data_0.zr", "too short"))
def _(s): set_loc(s, BAD_ID, phys=11, logic=11)


@case("record reached through a non-consecutive selection", "dense_zstd_3", "loc",
      rec_keys("data_0.zr", "phys_length 0"), cat_args=["7,3,1"])
def _(s): set_loc(s, BAD_ID, phys=0)


@case("record reached through a negative selection", "ragged_raw_3", "loc", rec_keys("data_0.zr", "past tail"),
      cat_args=["-9"])
def _(s): set_loc(s, BAD_ID, offset=2 ** 63)


# --- record bytes -------------------------------------------------------------------------
@case("Ragged shape prefix inconsistent (dim edited, raw)", "ragged_raw_3", "data", rec_keys("data_0.zr", "shape prefix"))
def _(s):
    o, _, _ = get_loc(s, BAD_ID)
    pwrite(data_file(s, 0), struct.pack("<Q", 5), o)


@case("Ragged shape prefix dim 0 (raw)", "ragged_raw_1", "data", rec_keys("data_0.zr", "shape prefix"))
def _(s):
    o, _, _ = get_loc(s, BAD_ID)
    pwrite(data_file(s, 0), struct.pack("<Q", 0), o)


@case("Ragged shape prefix product overflows (raw)", "ragged_raw_3", "data", rec_keys("data_0.zr", "shape prefix"))
def _(s):
    o, _, _ = get_loc(s, BAD_ID)
    pwrite(data_file(s, 0), struct.pack("<Q", 2 ** 62 + 1), o)


@case("Ragged table shortened one element (raw)", "ragged_raw_3", "data", rec_keys("data_0.zr", "shape prefix"))
def _(s):
    _, p, _ = get_loc(s, BAD_ID)
    set_loc(s, BAD_ID, phys=p - 4, logic=p - 4)


@case("Ragged shape prefix inconsistent (zstd)", "ragged_zstd_3", "data", rec_keys("data_0.zr", "shape prefix"))
def _(s):
    logical = struct.pack("<Q", 5) + (np.arange(4, dtype="<i4") + 300).tobytes()  # 4 elements, dim says 5
    rewrite_in_place(s, BAD_ID, zstandard.ZstdCompressor(level=19).compress(logical), logic=len(logical))


@case("Ragged shape prefix inconsistent (zstd_dict)", "ragged_zstd_dict_1", "data", rec_keys("data_0.zr", "shape prefix"))
def _(s):
    logical = struct.pack("<Q", 3) + (np.arange(4, dtype="<i4") + 300).tobytes()
    relocate(s, BAD_ID, zstandard.ZstdCompressor().compress(logical), logic=len(logical))


@case("zstd frame garbage (bad magic)", "dense_zstd_3", "data", rec_keys("data_0.zr", "zstd"))
def _(s):
    _, p, _ = get_loc(s, BAD_ID)
    rewrite_in_place(s, BAD_ID, b"\x5a" * p)


@case("zstd frame garbage after the header", "dense_zstd_3", "data", rec_keys("data_0.zr", "zstd"))
def _(s):
    b = bytearray(record_bytes(s, BAD_ID))
    for k in range(6, len(b)):
        b[k] = 0xFF
    rewrite_in_place(s, BAD_ID, bytes(b))


@case("zstd_dict frame garbage", "dense_zstd_dict_3", "data", rec_keys("data_0.zr", "zstd"))
def _(s):
    b = bytearray(record_bytes(s, BAD_ID))
    for k in range(4, len(b)):
        b[k] ^= 0xA5
    rewrite_in_place(s, BAD_ID, bytes(b))


@case("zstd frame truncated by one byte", "ragged_zstd_3", "data", rec_keys("data_0.zr", "zstd"))
def _(s):
    _, p, _ = get_loc(s, BAD_ID)
    set_loc(s, BAD_ID, phys=p - 1)


@case("zstd frame of 3 bytes", "ragged_zstd_3", "data", rec_keys("data_0.zr", "zstd"))
def _(s): set_loc(s, BAD_ID, phys=3)


@case("second frame after the frame (phys_length extended over the next record)", "dense_zstd_3", "data",
      rec_keys("data_0.zr", "after the zstd frame"))
def _(s):
    o, p, _ = get_loc(s, BAD_ID)
    o2, p2, _ = get_loc(s, BAD_ID + 3)  # next record of shard 0, written right after it
    assert o2 == o + p, "shard 0 is not in ID order"
    set_loc(s, BAD_ID, phys=p + p2)


@case("second frame after the frame (zstd_dict, copy of itself)", "dense_zstd_dict_3", "data",
      rec_keys("data_0.zr", "after the zstd frame"))
def _(s):
    b = record_bytes(s, BAD_ID)
    relocate(s, BAD_ID, b + b)


@case("skippable frame after the frame", "ragged_zstd_3", "data", rec_keys("data_0.zr", "after the zstd frame"))
def _(s): relocate(s, BAD_ID, record_bytes(s, BAD_ID) + struct.pack("<II", 0x184D2A50, 4) + b"abcd")


@case("skippable frame before the frame", "dense_zstd_1", "data", rec_keys("data_0.zr", "zstd"))
def _(s): relocate(s, BAD_ID, struct.pack("<II", 0x184D2A50, 4) + b"abcd" + record_bytes(s, BAD_ID))


@case("trailing garbage byte after the frame", "dense_zstd_3", "data", rec_keys("data_0.zr", "zstd"))
def _(s): relocate(s, BAD_ID, record_bytes(s, BAD_ID) + b"\0")


@case("frame declares a different size", "dense_zstd_3", "data", rec_keys("data_0.zr", "logic_length"))
def _(s): relocate(s, BAD_ID, zstandard.ZstdCompressor().compress(b"\x01" * (DENSE_WIDTH - 4)))


@case("frame without content size decompresses to fewer bytes", "dense_zstd_3", "data",
      rec_keys("data_0.zr", "logic_length"))
def _(s):
    c = zstandard.ZstdCompressor(write_content_size=False)
    relocate(s, BAD_ID, c.compress(b"\x01" * (DENSE_WIDTH - 4)))


@case("frame without content size decompresses to more bytes", "dense_zstd_3", "data",
      rec_keys("data_0.zr", "zstd"))
def _(s):
    c = zstandard.ZstdCompressor(write_content_size=False)
    relocate(s, BAD_ID, c.compress(b"\x01" * (DENSE_WIDTH + 40)))


@case("frame declares a different size (zstd_dict)", "ragged_zstd_dict_1", "data",
      rec_keys("data_0.zr", "logic_length"))
def _(s):
    _, _, l = get_loc(s, BAD_ID)
    relocate(s, BAD_ID, zstandard.ZstdCompressor().compress(b"\x02" * (l + 8)))


@case("frame content checksum wrong", "ragged_zstd_3", "data", rec_keys("data_0.zr", "zstd"))
def _(s):
    _, _, l = get_loc(s, BAD_ID)
    raw = zstandard.ZstdDecompressor().decompress(record_bytes(s, BAD_ID))
    frame = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(raw))
    frame[-1] ^= 0xFF
    relocate(s, BAD_ID, bytes(frame))


# --- what a reader must accept ------------------------------------------------------------
@accept("schema keys in another order", "dense_zstd_3")
def _(s): set_schema(s, packb({"item_shape": [2, 4], "ndim": 2, "dtype": "<i4"}))


@accept("schema ints in signed and wide formats", "dense_raw_3")
def _(s):
    blob = (b"\x83" + fixstr("dtype") + b"\xd9\x03<i4" + fixstr("ndim") + b"\xd0\x02"
            + fixstr("item_shape") + b"\xdc\x00\x02\xd3" + struct.pack(">q", 2) + b"\xcf" + struct.pack(">Q", 4))
    set_schema(s, blob)


@accept("schema as map16 with str16 dtype", "ragged_zstd_3")
def _(s):
    set_schema(s, b"\xde\x00\x02" + fixstr("dtype") + b"\xda\x00\x03<i4" + fixstr("ndim") + b"\xcd\x00\x01")


@accept("nonzero schema padding", "dense_zstd_3")
def _(s): pwrite(meta(s), b"\xff" * 16, PAGE - 16)


@accept("table entries past length", "ragged_zstd_3")
def _(s):
    with open(meta(s), "ab") as f:
        f.write(b"\xff" * 64)


@accept("data bytes past the tail", "dense_zstd_3")
def _(s):
    with open(data_file(s, 1), "ab") as f:
        f.write(b"\xee" * 100)


@accept("extra files in the store", "ragged_raw_3")
def _(s):
    for name in ("README", "data_7.zr", ".hidden"):
        with open(os.path.join(s, name), "wb") as f:
            f.write(b"x")


@accept("frame with content checksum", "ragged_zstd_3")
def _(s):
    raw = zstandard.ZstdDecompressor().decompress(record_bytes(s, BAD_ID))
    relocate(s, BAD_ID, zstandard.ZstdCompressor(write_checksum=True).compress(raw))


@accept("frame without content size", "dense_zstd_3")
def _(s):
    raw = zstandard.ZstdDecompressor().decompress(record_bytes(s, BAD_ID))
    relocate(s, BAD_ID, zstandard.ZstdCompressor(write_content_size=False).compress(raw))


@accept("frame with dictionary ID (zstd_dict)", "dense_zstd_dict_3")
def _(s):
    raw = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
        DICT_BYTES, dict_type=zstandard.DICT_TYPE_RAWCONTENT)).decompress(record_bytes(s, BAD_ID))
    relocate(s, BAD_ID, zstandard.ZstdCompressor(level=15, dict_data=zstandard.ZstdCompressionDict(
        DICT_BYTES, dict_type=zstandard.DICT_TYPE_RAWCONTENT)).compress(raw))


@accept("records in another physical order within a shard", "dense_raw_3")
def _(s):
    o3, p3, _ = get_loc(s, 3)
    o6, p6, _ = get_loc(s, 6)
    b3, b6 = record_bytes(s, 3), record_bytes(s, 6)
    pwrite(data_file(s, 0), b6, o3)
    pwrite(data_file(s, 0), b3, o3 + p6)
    set_loc(s, 6, offset=o3)
    set_loc(s, 3, offset=o3 + p6)


# ---------------------------------------------------------------------------------------


def run_case(root, goods, expected_out, c, index):
    src = goods[c["store"]]
    store = os.path.join(root, "cases", "%03d" % index, os.path.basename(src))
    shutil.copytree(src, store, symlinks=True)
    before_good = hash_tree(store)
    c["fn"](store)
    damaged = hash_tree(store)
    assert damaged != before_good or c["category"] == "accept" or not os.path.exists(store), \
        "the damage changed nothing"

    if c["category"] == "accept":
        rc, out, err = run(["cat", store, "--format", "npy"])
        if rc != 0 or out != expected_out[c["store"]]:
            raise AssertionError("reader must accept this store: rc %d, stderr %r, output %s" %
                                 (rc, err, "same" if out == expected_out[c["store"]] else "different"))
        return

    line = check_one_line_error("cat", ["cat", store] + c["cat_args"], c["keys"])
    if VERBOSE:
        print("  %-60s %s" % (c["name"][:60], line.replace(store, "S")))
    check_one_line_error("cat", ["cat", "--format", "jsonl", store] + c["cat_args"], c["keys"])
    if c["category"] in ("page", "loc"):
        check_one_line_error("info", ["info", store], c["info_keys"] or c["keys"])
        check_one_line_error("info", ["info", "--json", store], c["info_keys"] or c["keys"])
    else:
        rc, _, err = run(["info", store])
        if rc < 0 or rc >= 128 or "internal error" in err or rc not in (0, 1):
            raise AssertionError("zrec info misbehaved: rc %d, stderr %r" % (rc, err))
        # Damage confined to record 3: the records before it still read.
        rc, _, err = run(["cat", store, "0:%d" % BAD_ID])
        if rc != 0:
            raise AssertionError("records 0..2 should still read: rc %d, stderr %r" % (rc, err))
    if c["category"] == "page":
        # A writer refuses the store at open, before reading its input, and changes nothing.
        npy = npy_stream(dense_arrays()[:1] if c["store"].startswith("dense") else ragged_arrays()[:1])
        check_one_line_error("append-npy", ["append-npy", store, "-"], c["append_keys"] or c["keys"],
                             stdin=npy)
        if hash_tree(store) != damaged:
            raise AssertionError("a failed append-npy changed the store")


def main():
    root = tempfile.mkdtemp(prefix="zrec-malformed-")
    passed = failed = 0
    try:
        needed = sorted({c["store"] for c in CASES})
        goods, expected_out = {}, {}
        for name in needed:
            kind, rest = name.split("_", 1)
            codec, shards = rest.rsplit("_", 1)
            goods[name] = build_good(root, kind, codec, int(shards))
            expected_out[name] = must_out(["cat", goods[name], "--format", "npy"])
        for i, c in enumerate(CASES):
            try:
                run_case(root, goods, expected_out, c, i)
                passed += 1
            except Exception as e:  # report every failing case, not just the first
                failed += 1
                print("FAIL [%s] %s: %s" % (c["store"], c["name"], e))
                if not isinstance(e, AssertionError):
                    traceback.print_exc()
            finally:
                shutil.rmtree(os.path.join(root, "cases", "%03d" % i), ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
