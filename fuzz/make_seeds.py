#!/usr/bin/python3
"""Writes the seed corpora of the libFuzzer targets into fuzz/corpus/<target>/.

The seeds are committed; rerun this (with ZREC set to a zrec binary) only to change
them. Store seeds are small stores zrec wrote, of every codec, both geometries and a
few shard counts, packed in fuzz_store's layout (u32 LE length + bytes per file:
meta.zr, dict.zr, data_0.zr, ...). The import targets' seeds include every hostile
input of tests/cli/hostile_inputs.py.

Usage: ZREC=build/zrec /usr/bin/python3 fuzz/make_seeds.py [TARGET...]   (default: all)
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile

import msgpack
import numpy as np

ZREC = os.environ.get("ZREC")
if not ZREC:
    sys.exit("set ZREC to the zrec binary")
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
import hostile_inputs as hostile  # noqa: E402


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def pack_store(path):
    out = b""
    names = ["meta.zr", "dict.zr"]
    shards = struct.unpack_from("<B", open(os.path.join(path, "meta.zr"), "rb").read(), 10)[0]
    names += ["data_%d.zr" % s for s in range(shards)]
    for n in names:
        p = os.path.join(path, n)
        b = open(p, "rb").read() if os.path.exists(p) else b""
        out += struct.pack("<I", len(b)) + b
    return out


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def store_seeds(tmp):
    dict_path = os.path.join(tmp, "dict")
    with open(dict_path, "wb") as f:
        f.write(bytes(range(256)) * 4)
    for codec in ("raw", "zstd", "zstd_dict"):
        for kind, dtype in (("dense", "<i4"), ("ragged", "|u1"), ("ragged2", "<f2"), ("scalar", "<M8[ns]")):
            for shards in (1, 3):
                path = os.path.join(tmp, "%s_%s_%d" % (kind, codec, shards))
                args = [ZREC, "create", "--dtype", dtype, "--codec", codec, "--shards", str(shards)]
                if kind == "dense":
                    args += ["--dense", "--shape", "2,3"]
                elif kind == "scalar":
                    args += ["--dense", "--shape", "scalar"]
                else:
                    args += ["--ragged", "--ndim", "1" if kind == "ragged" else "2"]
                if codec == "zstd_dict":
                    args += ["--dict", dict_path]
                elif codec == "zstd" and shards == 3:
                    args += ["--checksum"]
                subprocess.run(args + [path], check=True)
                rng = np.random.default_rng(shards)
                if kind == "dense":
                    arrays = [rng.integers(0, 9, size=(7, 2, 3)).astype(dtype)]
                elif kind == "scalar":
                    arrays = [rng.integers(0, 10 ** 18, size=(5,)).astype(dtype)]
                elif kind == "ragged":
                    arrays = [rng.integers(0, 255, size=1 + i, dtype=np.uint8) for i in range(6)]
                else:
                    arrays = [rng.random(size=(1 + i % 2, 2 + i)).astype(dtype) for i in range(5)]
                subprocess.run([ZREC, "-q", "append-npy", path, "-"], input=b"".join(npy(a) for a in arrays),
                               check=True)
                put("fuzz_store", os.path.basename(path), pack_store(path))
    empty = os.path.join(tmp, "empty")
    subprocess.run([ZREC, "create", "--dense", "--dtype", "|u1", "--shape", "1", empty], check=True)
    put("fuzz_store", "empty", pack_store(empty))


def npy_seeds():
    arrays = {
        "i4_1d": np.arange(5, dtype="<i4"),
        "u1_3d": np.zeros((2, 3, 4), dtype="|u1"),
        "f8_scalar": np.array(3.5),
        "U_fortran": np.asfortranarray(np.array([["ab", "c"], ["d", "e"]])),
        "M8": np.array(["2024-01-02"], dtype="M8[D]"),
        "c16_be": np.arange(3, dtype=">c16"),
        "S_empty": np.zeros((0, 3), dtype="S4"),
        "b1": np.array([True, False]),
    }
    for name, a in arrays.items():
        put("fuzz_npy", name, npy(a))
    put("fuzz_npy", "stream", npy(np.arange(3, dtype="<i2")) + npy(np.arange(4, dtype="<i2")))
    b = io.BytesIO()
    np.lib.format.write_array(b, np.arange(3, dtype="<i4"), version=(2, 0))
    put("fuzz_npy", "v2", b.getvalue())
    b = io.BytesIO()
    np.lib.format.write_array(b, np.arange(3, dtype="<i4"), version=(3, 0))
    put("fuzz_npy", "v3", b.getvalue())
    put("fuzz_npy", "dict_only", b"{'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }")


def schema_seeds():
    schemas = {
        "dense": {"dtype": "<i4", "ndim": 2, "item_shape": [28, 28]},
        "scalar": {"dtype": "<f8", "ndim": 0, "item_shape": []},
        "ragged": {"dtype": "|u1", "ndim": 1},
        "datetime": {"dtype": "<M8[25s]", "ndim": 3},
        "unicode": {"dtype": "<U8", "ndim": 1, "item_shape": [4]},
    }
    for name, s in schemas.items():
        put("fuzz_schema", name, msgpack.packb(s))
    page = bytearray(4096)
    blob = msgpack.packb(schemas["dense"])
    struct.pack_into("<QHBB", page, 0, 7, len(blob), 3, 1)
    struct.pack_into("<3Q", page, 16, 100, 200, 300)
    page[2056:2056 + len(blob)] = blob
    put("fuzz_schema", "page", bytes(page))
    for text in ("<i4", "float32", "datetime64[ns]", "|S16", "U8", ">c16"):
        put("fuzz_schema", "dtype_" + text.replace("<", "lt").replace(">", "gt").replace("|", "na")
            .replace("[", "_").replace("]", ""), text.encode())


def selection_seeds():
    for i, (length, text) in enumerate([(100, "7"), (100, "-1"), (1000, "10:20"), (1000, "::100"),
                                        (50, "3,5,8"), (2 ** 63, "1:5,9,-3:"), (10, "::-1"), (7, "  2 : : -2 "),
                                        (5, "0\n-1\n\n3\n")]):
        # fuzz_selection: an odd first u64 means a small store of (u64 >> 1) % 1000 records.
        word = (length << 1 | 1) if length < 1000 else length & ~1
        put("fuzz_selection", "s%d" % i, struct.pack("<Q", word) + text.encode())


def record_format_seeds():
    rng = np.random.default_rng(0)
    for i in range(8):
        put("fuzz_record_format", "r%d" % i, bytes([i * 5, 3, 3]) + rng.integers(0, 256, size=400,
                                                                                  dtype=np.uint8).tobytes())


def tar_import_seeds(tmp):
    """fuzz_tar_import: a mode byte (bit 0: --parse cls=ints, else floats; bit 1: --ext
    jpg,cls, else --skip-incomplete; bit 2: --parse and --keys) then a tar."""
    good = hostile.samples(4)
    put("fuzz_tar_import", "plain", bytes([0]) + hostile.tar_bytes(good))
    put("fuzz_tar_import", "gz_parse_keys", bytes([5]) + hostile.tar_bytes(good, compress="gz"))
    put("fuzz_tar_import", "ext_floats", bytes([6]) + hostile.tar_bytes(good + [("s9999.f", b"1.5 -2e3 nan")]))
    put("fuzz_tar_import", "incomplete", bytes([4]) + hostile.tar_bytes(good[:3] + [("x/y.jpg", b"")]))
    for i, (_, name) in enumerate(hostile.BAD_EXTENSIONS):
        put("fuzz_tar_import", "bad_ext_%d" % i, bytes([i & 2]) + hostile.tar_bytes(good[:2] + [(name, b"x")]))
        put("fuzz_tar_import", "bad_ext_first_%d" % i, bytes([0]) + hostile.tar_bytes([(name, b"x")] + good[:2]))
    # Text that expands 4x when parsed (1 MiB of "1 " is 4 MiB of <i8, in a 1 MiB window).
    put("fuzz_tar_import", "parse_bomb", bytes([5]) + hostile.parse_bomb(1 << 20))
    put("fuzz_tar_import", "claims_2gib", bytes([0]) + hostile.claimed_size_tar((1 << 31) - 9, 4096))
    put("fuzz_tar_import", "claims_too_big", bytes([0]) + hostile.claimed_size_tar(1 << 33, 512))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, kind in (("d", tarfile.DIRTYPE), ("d/0.jpg", tarfile.SYMTYPE), ("d/1.jpg", tarfile.LNKTYPE)):
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "s0000.jpg" if kind != tarfile.DIRTYPE else ""
            tar.addfile(info)
        for name, data in good:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    put("fuzz_tar_import", "links", bytes([0]) + buf.getvalue())


def lmdb_import_seeds(tmp):
    """fuzz_lmdb_import: data files of environments made with MDB_NOSUBDIR."""
    def env(name, items, damage=None):
        path = os.path.join(tmp, name)
        hostile.lmdb_env(path, items)
        if damage:
            damage(path)
        put("fuzz_lmdb_import", name, open(path, "rb").read())
    small = [(b"k%03d" % i, bytes([i]) * (1 + i * 13 % 300)) for i in range(20)]
    big = small[:3] + [(b"big", bytes(range(256)) * 24)]  # 6 KiB: overflow pages
    env("small", small)
    env("overflow", big)
    env("value_beyond_file", big, lambda p: hostile.lmdb_value_beyond_file(p, b"big"))
    env("pages_beyond_file", big, hostile.lmdb_pages_beyond_file)
    env("node_outside_page", small, hostile.lmdb_node_outside_page)
    env("page_size_zero", small, lambda p: hostile.lmdb_page_size(p, 0))


SEEDERS = {
    "fuzz_store": store_seeds,
    "fuzz_npy": lambda tmp: npy_seeds(),
    "fuzz_schema": lambda tmp: schema_seeds(),
    "fuzz_selection": lambda tmp: selection_seeds(),
    "fuzz_record_format": lambda tmp: record_format_seeds(),
    "fuzz_tar_import": tar_import_seeds,
    "fuzz_lmdb_import": lmdb_import_seeds,
}


def main():
    targets = sys.argv[1:] or list(SEEDERS)
    tmp = tempfile.mkdtemp()
    try:
        for t in targets:
            shutil.rmtree(os.path.join(CORPUS, t), ignore_errors=True)
            SEEDERS[t](tmp)
    finally:
        shutil.rmtree(tmp)
    for t in sorted(os.listdir(CORPUS)):
        print("%s: %d seeds" % (t, len(os.listdir(os.path.join(CORPUS, t)))))


if __name__ == "__main__":
    main()
