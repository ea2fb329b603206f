"""Hostile inputs for the importers, shared by the tests (test_hostile_inputs.py,
test_import_memory.py) and the fuzz seed corpora (fuzz/make_seeds.py), so that the
fuzzers start from every case the tests pin down.

Tars: WebDataset shards whose member names make bad stream names, whose text expands when
parsed, whose headers claim more bytes than follow. LMDB: data files of small
environments, damaged the ways LMDB trusts blindly (a value's size beyond the file, a
meta page claiming more pages than the file holds, a node offset past its page).
"""
import gzip
import io
import os
import struct
import tarfile

# Member names whose extension (the part after the first dot of the basename) cannot
# name a stream: (label, name).
BAD_EXTENSIONS = [
    ("store file meta.zr", "0.meta.zr"),
    ("store file data_0.zr", "0.data_0.zr"),
    ("a lone dot", "0.."),
    ("hidden", "0..hid"),
    ("a temporary's pattern", "0.jpg.zrec-tmp-abcdef"),
    ("a newline", "0.a\nb"),
    ("an escape", "0.\x1b[2J"),
    ("a leading dash", "0.-rf"),
    ("a space", "0.a b"),
]


def tar_bytes(members, compress=None, level=9):
    """A tar of (name, bytes) members, in order; compress: None or "gz" (at `level`)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    return gzip.compress(raw, level, mtime=0) if compress == "gz" else raw


def samples(n, exts=("jpg", "cls"), prefix="s"):
    """Members of n complete samples: jpg bytes and a cls number."""
    out = []
    for i in range(n):
        for ext in exts:
            data = bytes((i * 7 + k) % 256 for k in range(50 + i)) if ext != "cls" else str(i % 10).encode()
            out.append(("%s%04d.%s" % (prefix, i, ext), data))
    return out


def parse_bomb(text_bytes, key="0", ext="cls", level=9):
    """A gzipped tar of one member holding text_bytes of "1 1 1 ...": each 2-byte token
    is 8 bytes once parsed as <i8, from a 1000:1 compressed input (at level 9)."""
    text = b"1 " * (text_bytes // 2)
    return tar_bytes([("%s.%s" % (key, ext), text)], compress="gz", level=level)


def claimed_size_tar(claim, sent, name="0.jpg"):
    """A tar whose one member's header claims `claim` bytes but only `sent` follow."""
    info = tarfile.TarInfo(name)
    info.size = claim
    info.mtime = 0
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    return header + b"\x5a" * sent


# --- LMDB -------------------------------------------------------------------------------

P_LEAF, P_OVERFLOW, F_BIGDATA = 0x02, 0x04, 0x01


def lmdb_env(path, items, map_size=1 << 20):
    """An environment made with MDB_NOSUBDIR at `path` (data file; `path`-lock beside
    it) holding `items` (key, value) pairs."""
    import lmdb
    env = lmdb.open(path, subdir=False, map_size=map_size, lock=True)
    with env.begin(write=True) as txn:
        for k, v in items:
            txn.put(k, v)
    env.close()


def _layout(data):
    """(page size, offset of the newer meta page, root page of the main database)."""
    psize = 4096
    metas = []
    for page in (0, 1):
        m = page * psize + 16
        magic, = struct.unpack_from("<I", data, m)
        assert magic == 0xBEEFC0DE, "not an LMDB data file"
        txnid, = struct.unpack_from("<Q", data, m + 128)
        metas.append((txnid, m))
    meta = max(metas)[1]
    root, = struct.unpack_from("<Q", data, meta + 72 + 40)
    return psize, meta, root


def _leaf_nodes(data, psize, pgno):
    """Offsets in `data` of the nodes of leaf page `pgno`."""
    page = pgno * psize
    flags, lower = struct.unpack_from("<HH", data, page + 10)
    assert flags & P_LEAF, "the main database's root is not a leaf (too many entries for these helpers)"
    return [page + struct.unpack_from("<H", data, page + 16 + 2 * i)[0] for i in range((lower - 16) // 2)]


def lmdb_value_beyond_file(path, key):
    """Makes the overflow value of `key` claim 2 GiB - 64 KiB: more than the file holds
    (append-lmdb once copied it straight from the map: SIGBUS)."""
    data = bytearray(open(path, "rb").read())
    psize, _, root = _layout(data)
    for node in _leaf_nodes(data, psize, root):
        flags, ksize = struct.unpack_from("<HH", data, node + 4)
        if bytes(data[node + 8:node + 8 + ksize]) == key:
            assert flags & F_BIGDATA, "the value of %r is not on overflow pages" % key
            struct.pack_into("<HH", data, node, 0x0000, 0x7fff)  # lo, hi: 0x7fff0000 bytes
            open(path, "wb").write(bytes(data))
            return
    raise AssertionError("no key %r" % key)


def lmdb_pages_beyond_file(path):
    """Cuts the data file's last page: the meta page then claims a page the file lacks."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size - 4096)


def lmdb_page_size(path, size, meta=0):
    """Sets the page size meta page 0 (or 1) claims (mdb_env_open divided by a 0 one:
    SIGFPE)."""
    data = bytearray(open(path, "rb").read())
    struct.pack_into("<I", data, meta * 4096 + 16 + 24, size)
    open(path, "wb").write(bytes(data))


def lmdb_node_outside_page(path):
    """Points the root leaf's first node 65520 bytes into its page, past the end of a
    small file: LMDB's own cursor code reads it (SIGBUS inside mdb_cursor_get)."""
    data = bytearray(open(path, "rb").read())
    psize, _, root = _layout(data)
    struct.pack_into("<H", data, root * psize + 16, 0xfff0)
    open(path, "wb").write(bytes(data))
