#!/usr/bin/python3
"""Interoperability: NumPy -> zrec -> NumPy, and zrec <-> an independent reader/writer.

For Dense and Ragged stores over many dtypes, every codec (raw, zstd, zstd_dict) and
shard counts 1, 4, 7 and 255, each case checks that:
  - arrays NumPy saves and `zrec append-npy` appends come back from `zrec cat --format npy`
    with the same dtype, shape and bytes;
  - zrecord_ref.py (a separate implementation of docs/format.md) reads the zrec-written
    store to the same arrays, its schema is exactly msgpack.packb's bytes, and its
    static page, tails, frames and dict.zr follow the format;
  - a store zrecord_ref.py writes (as loaderx would) reads back identically in `zrec cat`.
Plus: scalar Dense stores, Ragged --split-axis0, cat | append-npy pipes, dtype aliases, and
the raw / jsonl / text outputs.

Run by CTest with $ZREC set to the zrec binary.
"""

import json
import math
import os
import struct
import subprocess
import sys

import msgpack
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zrecord_ref as ref  # noqa: E402
from cli_helpers import SANITIZED  # noqa: E402
from interop_harness import (Suite, check, check_same_array, check_same_arrays,  # noqa: E402
                             load_npy_stream, npy_bytes, run, run_full, stack)

suite = Suite("interop_roundtrip")

# Every dtype is used once per geometry; the codec x shards combinations rotate under
# them, so each combination also runs several times per geometry.
DTYPES = [
    "|u1", "<i4", ">i8", "<f2", ">f4", "<f8", "<c8", ">c16", "|b1", "|S5", "<U3", ">U2",
    "|V3", "<M8[ns]", ">m8[25s]", "|i1", "<u2", ">u4", "<u8", ">i2", ">f2", "<f4", ">c8",
    "<c16", ">M8[D]", "<m8[us]", "|S1", "<U1", "|V1", ">u2", "<i8", ">f8", "<M8", ">M8[2h]",
]
CODECS = ["raw", "zstd", "zstd_dict"]
SHARDS = [1, 4, 7, 255]
COMBOS = [(c, s) for c in CODECS for s in SHARDS]
DENSE_SHAPES = [(3,), (2, 3), (), (1, 4, 2), (7,), (2, 1)]
PHYSICAL_ORDERS = ["sequential", "reversed", "shuffled"]

_dict_path = None


def trained_dict():
    """A zstd-format dictionary trained once per run with `zstd --train`."""
    global _dict_path
    if _dict_path is None:
        d = suite.tempdir("dict")
        rng = np.random.default_rng(12345)
        samples = []
        for i in range(200):
            p = os.path.join(d, f"sample_{i}")
            with open(p, "wb") as f:
                f.write(np.repeat(rng.integers(0, 6, 300), 3).astype("<i4").tobytes())
            samples.append(p)
        _dict_path = os.path.join(d, "trained.dict")
        subprocess.run(["zstd", "--train", "-q", "--maxdict=4096", "-o", _dict_path, *samples],
                       check=True)
        with open(_dict_path, "rb") as f:
            check(struct.unpack("<I", f.read(4))[0] == ref.ZSTD_DICT_MAGIC,
                  "zstd --train did not write a zstd-format dictionary")
    return _dict_path


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


# ---- test data ----------------------------------------------------------------------------


def make_record(dt, shape, rng, compressible):
    """One array of `shape` and `dt`: any bit pattern for most kinds (NaN payloads, NaT,
    embedded NULs included); valid values for bool and unicode."""
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        arr = rng.integers(0, 2, n).astype(dt)
    elif dt.kind == "U":
        chars = dt.itemsize // 4
        if compressible:
            cps = rng.integers(0x61, 0x64, n * chars)
        else:
            cps = rng.integers(0x20, 0xD7FF, n * chars)
            cps[rng.random(n * chars) < 0.1] = 0x1F600  # beyond the BMP
        cps[rng.random(n * chars) < 0.2] = 0  # NULs, trailing ones shorten the string
        arr = cps.astype(np.dtype("u4").newbyteorder(dt.byteorder)).view(dt)
    else:
        nbytes = n * dt.itemsize
        if compressible:
            raw = np.repeat(rng.integers(0, 4, nbytes // 8 + 1, dtype=np.uint8), 8)[:nbytes]
        else:
            raw = rng.integers(0, 256, nbytes, dtype=np.uint8)
        arr = np.frombuffer(raw.tobytes(), dtype=dt)
    return arr.reshape(shape).copy()


def shape_arg(shape, style):
    if shape == ():
        return ["scalar", "()"][style % 2]
    inner = ",".join(str(d) for d in shape)
    return [inner, f"({inner})"][style % 2]


# ---- checks -------------------------------------------------------------------------------


def check_cat_npy(store, records, dense, item_shape, dt, selection=None):
    """`zrec cat --format npy` of `store` equals the expected records (optionally a
    selection, given as (cli_text, list_of_ids))."""
    args = ["cat", store, "--format", "npy"]
    ids = list(range(len(records)))
    if selection is not None:
        args.append(selection[0])
        ids = selection[1]
    out = run(args)
    want = [records[i] for i in ids]
    if dense:
        arrays = load_npy_stream(out)
        check(len(arrays) == 1, f"cat of a Dense store wrote {len(arrays)} .npy arrays, not 1")
        check_same_array(arrays[0], stack(want, item_shape, dt), f"cat {store} {args[3:]}")
    else:
        check_same_arrays(load_npy_stream(out), want, f"cat {store} {args[3:]}")


def check_info(store, *, dense, dt, ndim, item_shape, codec, shards, records, contents):
    info = json.loads(run(["info", "--json", store]))
    want = {
        "kind": "dense" if dense else "ragged",
        "dtype": dt.str,
        "ndim": ndim,
        "codec": codec,
        "shards": shards,
        "length": len(records),
        "logical_bytes": sum(loc[2] for loc in contents.locs),
        "payload_bytes": sum(loc[1] for loc in contents.locs),
        "dict_bytes": len(contents.dict_bytes) if contents.dict_bytes else 0,
    }
    if dense:
        want["item_shape"] = list(item_shape)
    for key, value in want.items():
        check(info.get(key) == value, f"info --json {store}: {key} = {info.get(key)!r}, "
                                      f"expected {value!r}")


def check_zrec_store_layout(store, *, dense, dt, ndim, item_shape, codec, shards, records,
                            dict_bytes):
    """Reads a zrec-written store with the reference reader and checks it byte-level."""
    s = ref.read_store(store)
    want_schema = ref.schema_bytes(dt, ndim, item_shape if dense else None)
    check(s.schema_raw == want_schema,
          f"{store}: schema bytes {s.schema_raw.hex()} != msgpack.packb {want_schema.hex()}")
    check(s.page[ref.SCHEMA_OFFSET + s.schema_length:] == bytes(ref.SCHEMA_MAX - s.schema_length),
          f"{store}: schema padding is not zero")
    check((s.codec, s.data_shards, s.length) == (codec, shards, len(records)),
          f"{store}: page says codec {s.codec}, shards {s.data_shards}, length {s.length}; "
          f"expected {codec}, {shards}, {len(records)}")
    check_same_arrays(s.records, records, f"{store} via zrecord_ref")
    logical = [ref.logical_record(r, dense) for r in records]
    check(s.logical == logical, f"{store}: logical records differ from docs/format.md §5 encoding")
    # The store directory holds exactly the files of docs/format.md §1.
    want_files = {"meta.zr", *(f"data_{i}.zr" for i in range(shards))}
    if codec == "zstd_dict":
        want_files.add("dict.zr")
        check(s.dict_bytes == dict_bytes, f"{store}: dict.zr is not the --dict file's bytes")
    check(set(os.listdir(store)) == want_files,
          f"{store}: files {sorted(os.listdir(store))}, expected {sorted(want_files)}")
    # A published store: data files truncated to their tails, table exactly `length` long.
    for i in range(shards):
        size = os.path.getsize(os.path.join(store, f"data_{i}.zr"))
        check(size == s.tails[i], f"{store}: data_{i}.zr is {size} bytes, tail {s.tails[i]}")
    meta_size = os.path.getsize(os.path.join(store, "meta.zr"))
    check(meta_size == ref.PAGE_SIZE + ref.LOC_SIZE * len(records),
          f"{store}: meta.zr is {meta_size} bytes, expected {ref.PAGE_SIZE + 16 * len(records)}")
    # Every shard is densely packed (a correct writer leaves no gaps, docs/format.md §10).
    for shard in range(shards):
        used = sum(s.locs[i][1] for i in range(shard, len(records), shards))
        check(used == s.tails[shard], f"{store}: data_{shard}.zr holds {used} record bytes "
                                      f"but its tail is {s.tails[shard]}")
    if codec == "raw":
        # Tails are fixed by the record sizes, so the whole page is determined.
        tails = [sum(len(logical[i]) for i in range(sh, len(records), shards))
                 for sh in range(shards)]
        page = ref.encode_page(len(records), shards, codec, tails, want_schema)
        check(s.page == page, f"{store}: static page differs from the reference encoding")
    else:
        for i, (frame, (_, _, logic)) in enumerate(zip(s.stored, s.locs)):
            h = ref.parse_frame_header(frame)
            check(h["content_size"] == logic,
                  f"{store}: record {i}: frame content size {h['content_size']}, expected "
                  f"{logic} (writers set it, docs/format.md §10)")
    return s


# ---- the geometry x dtype x codec x shards cases ---------------------------------------------


def roundtrip_case(idx, dense, dtype, codec, shards):
    rng = np.random.default_rng(1000 * idx + (7 if dense else 3))
    dt = np.dtype(dtype)
    n = 300 if shards == 255 else int(rng.integers(8, 40))
    if dense:
        item_shape = DENSE_SHAPES[idx % len(DENSE_SHAPES)]
        ndim = len(item_shape)
        records = [make_record(dt, item_shape, rng, i % 3 != 0) for i in range(n)]
    else:
        item_shape = None
        ndim = 1 + idx % 3
        records = [make_record(dt, tuple(int(d) for d in rng.integers(1, 6, ndim)), rng, i % 3 != 0)
                   for i in range(n)]

    root = suite.tempdir(f"rt{idx}")
    store = os.path.join(root, "zrec_store")
    create = ["create", "--dtype", dtype, "--codec", codec, "--shards", shards]
    if codec == "zstd_dict" and idx % 4 == 1:
        create[4] = "zstdict"  # the upstream enum's spelling is an accepted alias
    if dense:
        create += ["--dense", "--shape", shape_arg(item_shape, idx)]
    else:
        create += ["--ragged", "--ndim", ndim]
    dict_bytes = None
    if codec == "zstd_dict":
        create += ["--dict", trained_dict()]
        dict_bytes = read_file(trained_dict())
    run(create + [store])

    # Three ways to feed append-npy: files, a .npy stream on stdin, two invocations.
    def arrays_for(recs):
        if not dense:
            return recs
        cut = [0, len(recs) // 3, len(recs) // 3 + 1, len(recs)]  # includes a 1-record batch
        return [stack(recs[a:b], item_shape, dt) for a, b in zip(cut, cut[1:]) if b > a]

    def append_files(recs, tag):
        paths = []
        for k, a in enumerate(arrays_for(recs)):
            p = os.path.join(root, f"in_{tag}_{k}.npy")
            np.save(p, a)
            paths.append(p)
        run(["append-npy", store, *paths])

    def append_stdin(recs):
        run(["append-npy", store, "-"], input=npy_bytes(*arrays_for(recs)))

    mode = idx % 3
    if mode == 0:
        append_stdin(records)
    elif mode == 1:
        append_files(records, "a")
    else:
        half = len(records) // 2
        append_files(records[:half], "a")
        append_stdin(records[half:])

    check_cat_npy(store, records, dense, item_shape, dt)
    contents = check_zrec_store_layout(store, dense=dense, dt=dt, ndim=ndim, item_shape=item_shape,
                                       codec=codec, shards=shards, records=records,
                                       dict_bytes=dict_bytes)
    check_info(store, dense=dense, dt=dt, ndim=ndim, item_shape=item_shape, codec=codec,
               shards=shards, records=records, contents=contents)

    # The other direction: a store written by the reference writer, read by zrec.
    other = os.path.join(root, "ref_store")
    order = PHYSICAL_ORDERS[idx % 3]
    ref.write_store(other, records, dt, dense=dense, ndim=ndim, item_shape=item_shape,
                    codec=codec, data_shards=shards, dict_bytes=dict_bytes,
                    physical_order=order, seed=idx, checksum=idx % 2 == 1,
                    write_dict_id=idx % 4 != 3)
    check_cat_npy(other, records, dense, item_shape, dt)
    sel = [("::3", list(range(0, n, 3))), ("-1", [n - 1]), ("2,0,1", [2, 0, 1]),
           ("5:", list(range(5, n)))][idx % 4]
    check_cat_npy(other, records, dense, item_shape, dt, selection=sel)
    check_info(other, dense=dense, dt=dt, ndim=ndim, item_shape=item_shape, codec=codec,
               shards=shards, records=records, contents=ref.read_store(other))
    if codec == "raw" and order == "sequential":
        # In ID order with raw records every byte is determined: zrec must agree.
        for name in ["meta.zr", *(f"data_{i}.zr" for i in range(shards))]:
            check(read_file(os.path.join(store, name)) == read_file(os.path.join(other, name)),
                  f"{name} of the zrec store differs from the reference writer's")


def combo_for(k, dense):
    """The codec x shards of the k-th dtype: the first len(COMBOS) dtypes of a geometry
    take every combination once; the rest skip 255 shards, whose create/publish (an
    fsync per data file) is the slow part of a case."""
    shift = 0 if dense else 5
    if k < len(COMBOS):
        return COMBOS[(k + shift) % len(COMBOS)]
    small = [c for c in COMBOS if c[1] != 255]
    return small[(k + shift) % len(small)]


def register_roundtrips():
    idx = 0
    for dense in (True, False):
        kinds = set()
        for k, dtype in enumerate(DTYPES):
            # Under ASan a case costs ~10x; there every combination still runs once per
            # geometry, and every dtype kind (the letter after the byte order) once.
            if SANITIZED and k >= len(COMBOS) and dtype[1] in kinds:
                continue
            kinds.add(dtype[1])
            codec, shards = combo_for(k, dense)
            name = f"{'dense' if dense else 'ragged'} {dtype} {codec} shards={shards}"
            suite.add(name, roundtrip_case, idx, dense, dtype, codec, shards)
            idx += 1
    # Every codec x shards combination at least once per geometry.
    covered = {(d, combo_for(k, d)) for d in (True, False) for k in range(len(DTYPES))}
    assert all((d, c) in covered for d in (True, False) for c in COMBOS)


register_roundtrips()


# ---- special cases -------------------------------------------------------------------------


@suite.case("dense scalar store fed 1-D arrays")
def scalar_store():
    root = suite.tempdir("scalar")
    store = os.path.join(root, "labels")
    run(["create", "--dense", "--dtype", "float32", "--shape", "scalar", "--shards", 3, store])
    a = np.arange(10, dtype="<f4") / 4
    b = np.array([-1.5], dtype="<f4")
    c = np.array([7, 8, 9], dtype="<f4")
    np.save(os.path.join(root, "a.npy"), a)
    np.save(os.path.join(root, "b.npy"), b)
    run(["append-npy", store, os.path.join(root, "a.npy"), os.path.join(root, "b.npy")])
    run(["append-npy", store, "-"], input=npy_bytes(c))
    want = np.concatenate([a, b, c])
    got = load_npy_stream(run(["cat", store]))
    check(len(got) == 1, "cat of a scalar store wrote more than one array")
    check_same_array(got[0], want, "cat of the scalar store")
    s = ref.read_store(store)
    check(s.schema_raw == msgpack.packb({"dtype": "<f4", "ndim": 0, "item_shape": []}),
          f"scalar schema bytes {s.schema_raw.hex()}")
    check_same_arrays(s.records, [np.array(v, dtype="<f4") for v in want], "zrecord_ref records")
    check(all(r.shape == () for r in s.records), "scalar records are not 0-d")
    got = load_npy_stream(run(["cat", store, "-1"]))[0]
    check_same_array(got, want[-1:], "cat -1 of the scalar store")


@suite.case("ragged --split-axis0 takes axis 0 as records")
def ragged_batch():
    root = suite.tempdir("batch")
    store = os.path.join(root, "rows")
    run(["create", "--ragged", "--dtype", "<i4", "--ndim", 2, "--codec", "zstd", "--shards", 4,
         store])
    rng = np.random.default_rng(5)
    x = rng.integers(-1000, 1000, (5, 3, 4)).astype("<i4")
    y = rng.integers(-1000, 1000, (2, 1, 6)).astype("<i4")
    np.save(os.path.join(root, "x.npy"), x)
    run(["append-npy", "--split-axis0", store, os.path.join(root, "x.npy")])
    run(["append-npy", "--split-axis0", store, "-"], input=npy_bytes(y))
    z = rng.integers(-1000, 1000, (2, 9)).astype("<i4")  # without --split-axis0: one record
    run(["append-npy", store, "-"], input=npy_bytes(z))
    want = list(x) + list(y) + [z]
    check_same_arrays(load_npy_stream(run(["cat", store])), want, "cat after --split-axis0 appends")
    check_same_arrays(ref.read_store(store).records, want, "zrecord_ref after --split-axis0 appends")


@suite.case("cat --format npy | append-npy - copies a store")
def cat_pipe():
    root = suite.tempdir("pipe")
    rng = np.random.default_rng(9)
    for dense in (True, False):
        a, b = os.path.join(root, f"a{dense}"), os.path.join(root, f"b{dense}")
        if dense:
            records = [make_record(np.dtype(">c8"), (2, 2), rng, False) for _ in range(20)]
            ref.write_store(a, records, ">c8", dense=True, item_shape=(2, 2), codec="zstd",
                            data_shards=3, physical_order="shuffled")
            run(["create", "--dense", "--dtype", ">c8", "--shape", "2,2", "--codec", "raw", b])
        else:
            records = [make_record(np.dtype("<U3"), (int(rng.integers(1, 9)),), rng, False)
                       for _ in range(20)]
            ref.write_store(a, records, "<U3", dense=False, codec="raw", data_shards=5)
            run(["create", "--ragged", "--dtype", "<U3", "--ndim", 1, "--shards", 2, b])
        run(["append-npy", b, "-"], input=run(["cat", "--format", "npy", a]))
        check_same_arrays(ref.read_store(b).records, records, f"copy of {'Dense' if dense else 'Ragged'}")


@suite.case("dtype aliases are stored as the canonical numpy.dtype.str")
def dtype_aliases():
    root = suite.tempdir("alias")
    for k, alias in enumerate(["float32", "uint8", "=i4", "i8", "bool", "S5", "U3", "V3",
                               "datetime64[ns]", "m8[25s]", ">u1", "<b1", "complex64", "f2",
                               "<M8[2D]", ">i1", "|f8"]):
        want = np.dtype(alias).str
        for dense in (True, False):
            store = os.path.join(root, f"s{k}{dense}")
            geometry = ["--dense", "--shape", "2"] if dense else ["--ragged", "--ndim", 1]
            run(["create", "--dtype", alias, *geometry, store])
            raw = ref.read_store(store).schema_raw
            packed = ref.schema_bytes(want, 1, [2] if dense else None)
            check(raw == packed, f"--dtype {alias}: schema {msgpack.unpackb(raw)} ({raw.hex()}), "
                                 f"expected {want!r} ({packed.hex()})")
            # And arrays saved with the canonical dtype append to it.
            arr = np.zeros((3, 2) if dense else (2,), dtype=want)
            run(["append-npy", store, "-"], input=npy_bytes(arr))


@suite.case("zstd_dict with a raw-content dictionary, both directions")
def raw_content_dict():
    root = suite.tempdir("rawdict")
    dict_path = os.path.join(root, "content.dict")
    content = b"".join(np.arange(i, i + 64, dtype="<i2").tobytes() for i in range(0, 2048, 64))
    with open(dict_path, "wb") as f:
        f.write(content)  # no 0xEC30A437 magic: a raw-content dictionary (docs/format.md §10)
    rng = np.random.default_rng(3)
    records = [np.arange(int(s), int(s) + int(rng.integers(1, 200)), dtype="<i2")
               for s in rng.integers(0, 1800, 50)]
    store = os.path.join(root, "z")
    run(["create", "--ragged", "--dtype", "<i2", "--ndim", 1, "--codec", "zstd_dict", "--dict",
         dict_path, "--shards", 7, store])
    run(["append-npy", store, "-"], input=npy_bytes(*records))
    s = ref.read_store(store)
    check(s.dict_bytes == content, "dict.zr is not the raw-content dictionary")
    check_same_arrays(s.records, records, "zrecord_ref read of the raw-content-dict store")
    check(sum(l[1] for l in s.locs) < sum(l[2] for l in s.locs) / 2,
          "records did not compress against the content dictionary")
    other = os.path.join(root, "r")
    ref.write_store(other, records, "<i2", dense=False, codec="zstd_dict", data_shards=7,
                    dict_bytes=content, physical_order="reversed")
    check_same_arrays(load_npy_stream(run(["cat", other])), records, "zrec cat of the ref store")


@suite.case("fortran-order input is refused or read in C order")
def fortran_input():
    root = suite.tempdir("fortran")
    store = os.path.join(root, "f")
    run(["create", "--dense", "--dtype", "<i4", "--shape", "3", "--codec", "raw", store])
    x = np.asfortranarray(np.arange(12, dtype="<i4").reshape(4, 3))
    r = run_full(["append-npy", store, "-"], input=npy_bytes(x))
    got = load_npy_stream(run(["cat", store]))[0]
    if r.returncode == 0:
        check_same_array(got, np.ascontiguousarray(x), "fortran-order append")
    else:
        check(r.returncode == 1 and b"fortran" in r.stderr.lower(),
              f"fortran-order append: exit {r.returncode}, stderr {r.stderr!r}")
        check(got.shape == (0, 3), "a refused append changed the store")


@suite.case("zrec reads schemas in any valid MsgPack encoding, gaps, nonzero padding")
def lenient_reader():
    root = suite.tempdir("lenient")
    rng = np.random.default_rng(31)
    be = lambda fmt, *v: struct.pack(">" + fmt, *v)  # MsgPack is big-endian inside
    dense_variants = [
        # map16, keys reordered, str8/str16 strings, ndim as int64, item_shape as array16
        # of uint32 / int16 / uint64.
        b"\xde" + be("H", 3) + b"\xda" + be("H", 10) + b"item_shape" + b"\xdc" + be("H", 2)
        + b"\xce" + be("I", 2) + b"\xd1" + be("h", 3) + b"\xd9\x04ndim" + b"\xd3" + be("q", 2)
        + b"\xd9\x05dtype" + b"\xda" + be("H", 3) + b">i4",
        msgpack.packb({"ndim": 2, "item_shape": [2, 3], "dtype": ">i4"}),
        b"\x83\xa4ndim\xcf" + be("Q", 2) + b"\xa5dtype\xa3>i4\xaaitem_shape\x92\xcc\x02\xcd\x00\x03",
    ]
    for k, schema in enumerate(dense_variants):
        check(msgpack.unpackb(schema) == {"dtype": ">i4", "ndim": 2, "item_shape": [2, 3]},
              f"test bug: variant {k} does not decode to the schema")
        records = [rng.integers(-9, 9, (2, 3)).astype(">i4") for _ in range(11)]
        store = os.path.join(root, f"d{k}")
        ref.write_store(store, records, ">i4", dense=True, item_shape=(2, 3), codec="zstd",
                        data_shards=3, schema_override=schema, gap=k * 5,
                        schema_padding=b"\xff" if k == 1 else b"\0")
        check_same_array(load_npy_stream(run(["cat", store]))[0], stack(records, (2, 3), np.dtype(">i4")),
                         f"dense schema variant {k}")
    ragged_schema = b"\x82\xa4ndim\xd0\x01\xa5dtype\xd9\x03<u2"  # ndim as int8
    records = [rng.integers(0, 9, (int(rng.integers(1, 9)),)).astype("<u2") for _ in range(13)]
    store = os.path.join(root, "r")
    ref.write_store(store, records, "<u2", dense=False, codec="raw", data_shards=2,
                    schema_override=ragged_schema, gap=3)
    with open(os.path.join(store, "README.txt"), "w") as f:
        f.write("extra files in a store directory are ignored\n")
    check_same_arrays(load_npy_stream(run(["cat", store])), records, "ragged schema variant")


@suite.case(".npy format versions 1.0, 2.0 and 3.0 are accepted")
def npy_versions():
    import io
    root = suite.tempdir("npyver")
    store = os.path.join(root, "v")
    run(["create", "--dense", "--dtype", ">U2", "--shape", "2", "--codec", "zstd", store])
    buf = io.BytesIO()
    parts = []
    for k, version in enumerate([(1, 0), (2, 0), (3, 0)]):
        a = np.array([["ab", "c"], ["\u00e9", "\U0001F600z"]][: k + 1], dtype=">U2")
        np.lib.format.write_array(buf, a, version=version)
        parts.append(a)
    run(["append-npy", store, "-"], input=buf.getvalue())
    want = stack([r for a in parts for r in a], (2,), np.dtype(">U2"))
    check_same_array(load_npy_stream(run(["cat", store]))[0], want, "cat after v1/v2/v3 input")


@suite.case("empty stores, both directions")
def empty_stores():
    root = suite.tempdir("empty")
    for dense, codec in ((True, "zstd_dict"), (False, "raw"), (True, "raw"), (False, "zstd")):
        tag = f"{'dense' if dense else 'ragged'}-{codec}"
        store, other = os.path.join(root, f"z-{tag}"), os.path.join(root, f"r-{tag}")
        geometry = ["--dense", "--shape", "2,5"] if dense else ["--ragged", "--ndim", 2]
        extra = ["--dict", trained_dict()] if codec == "zstd_dict" else []
        run(["create", "--dtype", "<U2", "--codec", codec, "--shards", 7, *geometry, *extra, store])
        dict_bytes = read_file(trained_dict()) if codec == "zstd_dict" else None
        ref.write_store(other, [], "<U2", dense=dense, ndim=2, item_shape=(2, 5) if dense else None,
                        codec=codec, data_shards=7, dict_bytes=dict_bytes)
        for path in (store, other):
            out = run(["cat", path])
            if dense:
                check_same_array(load_npy_stream(out)[0], np.empty((0, 2, 5), dtype="<U2"),
                                 f"cat of empty {path}")
            else:
                check(out == b"", f"cat of empty Ragged {path} wrote {len(out)} bytes")
        for name in ["meta.zr", *(f"data_{i}.zr" for i in range(7))]:
            check(read_file(os.path.join(store, name)) == read_file(os.path.join(other, name)),
                  f"{tag}: {name} of the empty zrec store differs from the reference writer's")


@suite.case("many windows, records larger than the window, 4 threads")
def windows_and_threads():
    root = suite.tempdir("windows")
    rng = np.random.default_rng(41)
    records = [rng.integers(0, 50, int(rng.integers(1, 2000))).astype("<u4") for _ in range(1500)]
    records[17] = rng.integers(0, 50, 600_000).astype("<u4")  # 2.4 MB > 1 MiB window
    records[1200] = np.repeat(np.arange(700_000, dtype="<u4"), 2)  # 5.6 MB
    for codec in ("raw", "zstd"):
        store = os.path.join(root, codec)
        run(["create", "--ragged", "--dtype", "<u4", "--ndim", 1, "--codec", codec, "--shards", 7,
             store])
        run(["--threads", 4, "append-npy", "--window-mib", 1, store, "-"],
            input=npy_bytes(*records))
        check_same_arrays(ref.read_store(store).records, records, f"{codec}: zrecord_ref read")
        got = load_npy_stream(run(["--threads", 4, "cat", "--window-mib", 1, store]))
        check_same_arrays(got, records, f"{codec}: zrec cat --window-mib 1")
        got = load_npy_stream(run(["--threads", 3, "cat", "--window-mib", 1, store, "1200,17,::497"]))
        check_same_arrays(got, [records[i] for i in [1200, 17, *range(0, 1500, 497)]],
                          f"{codec}: selection with large records")


@suite.case("--format jsonl: strings, bytes, void, datetimes")
def jsonl_strings():
    root = suite.tempdir("jsonls")
    u = np.array([["a\0b", "\U0001F600\"\\", ""], ["\u00e9\n\t", "xyz", "q\0\0"]], dtype=">U3")
    sb = np.array([b"ab\0c\x80", b"\xff\x00\x00\x00\x00", b"\"x\\"], dtype="|S5")
    v = np.frombuffer(bytes(range(250, 256)) + b"\0\1\2", dtype="|V3")
    def counts(a):  # integer count of the unit; NaT (int64 min) as null
        ints = a.view(a.dtype.str[0] + "i8").tolist()
        return [None if n == np.iinfo(np.int64).min else n for n in ints]

    t = np.array([0, -1, np.iinfo(np.int64).min, 1234567890123], dtype="<i8").view("<M8[ns]")
    td = np.array([5, np.iinfo(np.int64).min], dtype=">i8").view(">m8[25s]")
    expected = {
        ">U3": (u, [[s for s in row] for row in u.tolist()]),
        "|S5": (sb, [b.decode("latin-1") for b in sb.tolist()]),
        "|V3": (v, [bytes(x).hex() for x in v.tolist()]),
        "<M8[ns]": (t, counts(t)),
        ">m8[25s]": (td, counts(td)),
    }
    for k, (dtype, (arr, want)) in enumerate(expected.items()):
        store = os.path.join(root, f"s{k}")
        run(["create", "--ragged", "--dtype", dtype, "--ndim", arr.ndim, store])
        run(["append-npy", store, "-"], input=npy_bytes(arr, arr))
        lines = run(["cat", store, "--format", "jsonl"]).decode("utf-8").splitlines()
        check(len(lines) == 2, f"{dtype}: {len(lines)} jsonl lines")
        for line in lines:
            check(json.loads(line) == want, f"{dtype}: jsonl {line!r} != {want!r}")


# ---- --format raw / jsonl / text ------------------------------------------------------------


def compact_json(value):
    return json.dumps(value, separators=(",", ":"))


def make_format_store(root, name, records, dtype, dense, item_shape=None, codec="zstd"):
    store = os.path.join(root, name)
    geometry = (["--dense", "--shape", ",".join(map(str, item_shape)) or "scalar"] if dense
                else ["--ragged", "--ndim", records[0].ndim])
    run(["create", "--dtype", dtype, "--codec", codec, "--shards", 3, *geometry, store])
    arrays = [stack(records, item_shape, np.dtype(dtype))] if dense else records
    run(["append-npy", store, "-"], input=npy_bytes(*arrays))
    return store


SPECIAL_F8 = [0.1, 1e16, 1e-5, -0.0, math.nan, math.inf, -math.inf, 5e-324,
              1.7976931348623157e308, 123456.789, 1.0, 2.5, -3e-7, 1e22, 0.3333333333333333]


@suite.case("--format jsonl: ints and float64 equal json.dumps(tolist())")
def jsonl_exact():
    root = suite.tempdir("jsonl")
    rng = np.random.default_rng(21)
    cases = [
        ("<i8", True, (2, 3), lambda: rng.integers(-2**63, 2**63 - 1, (2, 3), dtype=np.int64)),
        (">u8", False, None, lambda: rng.integers(0, 2**64 - 1, (int(rng.integers(1, 5)),),
                                                   dtype=np.uint64, endpoint=True)),
        ("|i1", False, None, lambda: rng.integers(-128, 128, (2, int(rng.integers(1, 4))))),
        (">i2", True, (), lambda: rng.integers(-2**15, 2**15, ())),
        ("|u1", True, (4,), lambda: rng.integers(0, 256, (4,))),
        ("|b1", False, None, lambda: rng.integers(0, 2, (int(rng.integers(1, 6)),))),
        (">f8", False, None, lambda: rng.choice(SPECIAL_F8, int(rng.integers(1, 6)))),
        ("<f8", True, (3,), lambda: rng.standard_normal(3) * 10.0 ** rng.integers(-30, 30)),
    ]
    for k, (dtype, dense, item_shape, gen) in enumerate(cases):
        records = [np.asarray(gen()).astype(dtype) for _ in range(12)]
        store = make_format_store(root, f"j{k}", records, dtype, dense, item_shape)
        lines = run(["cat", store, "--format", "jsonl"]).decode().split("\n")
        check(lines[-1] == "", f"{dtype}: jsonl output does not end with a newline")
        want = [compact_json(r.tolist()) for r in records]
        for i, (got, w) in enumerate(zip(lines, want)):
            check(got == w, f"{dtype} record {i}: jsonl {got!r} != json.dumps {w!r}")
        check(len(lines) - 1 == len(records), f"{dtype}: {len(lines) - 1} jsonl lines")


@suite.case("--format jsonl: float32/float16/complex values read back exactly")
def jsonl_floats():
    root = suite.tempdir("jsonlf")
    rng = np.random.default_rng(22)
    for k, dtype in enumerate(["<f4", ">f2", "<c8", ">c16"]):
        dt = np.dtype(dtype)
        records = [(rng.standard_normal(int(rng.integers(1, 6))) * 100).astype(dt)
                   for _ in range(10)]
        records[0][0] = np.nan if dt.kind == "f" else complex(np.inf, -0.5)
        store = make_format_store(root, f"f{k}", records, dtype, dense=False)
        lines = run(["cat", store, "--format", "jsonl"]).decode().splitlines()
        check(len(lines) == len(records), f"{dtype}: {len(lines)} lines")
        for i, (line, rec) in enumerate(zip(lines, records)):
            value = json.loads(line)
            if dt.kind == "c":
                back = np.array([complex(re, im) for re, im in value], dtype=dt)
            else:
                back = np.array(value, dtype=dt)
            check(back.tobytes() == rec.tobytes() or
                  (np.array_equal(back, rec, equal_nan=True)),
                  f"{dtype} record {i}: jsonl {line!r} reads back as {back!r}, not {rec!r}")


@suite.case("--format raw: payload bytes only, in selection order")
def raw_format():
    root = suite.tempdir("raw")
    rng = np.random.default_rng(23)
    ragged = [make_record(np.dtype(">m8[25s]"), tuple(int(d) for d in rng.integers(1, 4, 2)),
                          rng, False) for _ in range(17)]
    store = make_format_store(root, "r", ragged, ">m8[25s]", dense=False, codec="raw")
    out = run(["cat", store, "--format", "raw"])
    check(out == b"".join(r.tobytes() for r in ragged), "Ragged raw output != payload bytes")
    out = run(["cat", store, "--format", "raw", "5,0,5"])
    check(out == b"".join(ragged[i].tobytes() for i in (5, 0, 5)), "Ragged raw selection")
    dense = [make_record(np.dtype("|V3"), (2,), rng, False) for _ in range(9)]
    store = make_format_store(root, "d", dense, "|V3", dense=True, item_shape=(2,))
    out = run(["cat", store, "--format", "raw"])
    check(out == b"".join(r.tobytes() for r in dense), "Dense raw output != record bytes")
    out = run(["cat", store, "--format", "raw", "::-2"])
    check(out == b"".join(r.tobytes() for r in dense[::-2]), "Dense raw selection ::-2")


def text_of(a):
    """The documented text rendering for 1-D and 2-D int/float records."""
    def item(v):
        return repr(float(v)) if a.dtype.kind == "f" else str(int(v))
    if a.ndim == 1:
        return "[" + " ".join(item(v) for v in a) + "]"
    return "[" + "\n ".join("[" + " ".join(item(v) for v in row) + "]" for row in a) + "]"


@suite.case("--format text: '<id>TAB<values>' with store ids")
def text_format():
    root = suite.tempdir("text")
    rng = np.random.default_rng(24)
    records = [rng.integers(-50, 50, (int(rng.integers(1, 4)), 3)).astype(">i4")
               for _ in range(8)]
    store = make_format_store(root, "t", records, ">i4", dense=False)
    out = run(["cat", store, "--format", "text", "6,1,3"]).decode()
    want = "".join(f"{i}\t{text_of(records[i])}\n" for i in (6, 1, 3))
    check(out == want, f"text output {out!r} != {want!r}")
    floats = [np.array(rng.choice(SPECIAL_F8, 4), dtype="<f8") for _ in range(5)]
    store = make_format_store(root, "f", floats, "<f8", dense=True, item_shape=(4,))
    out = run(["cat", store, "--format", "text"]).decode()
    want = "".join(f"{i}\t{text_of(r)}\n" for i, r in enumerate(floats))
    check(out == want, f"float text output {out!r} != {want!r}")


if __name__ == "__main__":
    suite.main()
