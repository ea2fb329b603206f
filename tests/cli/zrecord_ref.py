"""An independent reference implementation of the zrecord store format, for tests.

This module reads and writes stores exactly as docs/format.md describes them (the
format loaderx 2.3.3 writes), using only NumPy, msgpack-python and zstd (the python
`zstandard` binding when it is installed, otherwise the `zstd` command-line tool).
It shares no code with zrec, so the CLI tests can check that stores zrec writes open
here and that stores written here open in zrec.

It is deliberately simple and serial: it reads whole files into memory and is meant
for small test stores.

    schema_bytes(dtype, ndim, item_shape=None)  -> the exact MsgPack writers emit (§4, §10)
    logical_record(array, dense)                -> the logical record bytes (§5)
    read_store(path)                            -> StoreContents (validated per §8)
    write_store(path, records, ...)             -> writes page, table, data files, dict.zr
    parse_frame_header(frame)                   -> the zstd frame header fields (RFC 8878)
"""

import os
import shutil
import struct
import subprocess
import tempfile

import msgpack
import numpy as np

try:  # optional: fall back to the zstd CLI without it
    import zstandard
except ImportError:  # pragma: no cover - depends on the machine
    zstandard = None

# ---- layout (docs/format.md §2, §3) --------------------------------------------------------

PAGE_SIZE = 4096
MAX_SHARDS = 255
TAILS_OFFSET = 16  # 255 x u64 at 16..2055
SCHEMA_OFFSET = 2056  # 16 + 255*8
SCHEMA_MAX = 2040  # 2056 + 2040 = 4096
LOC_SIZE = 16  # RecordLoc: u64 offset, u32 phys_length, u32 logic_length
MAX_RECORD = 2**31 - 1  # §10: 1 <= length < 2^31

CODECS = {"raw": 0, "zstd": 1, "zstd_dict": 2}
CODEC_NAMES = {v: k for k, v in CODECS.items()}
ZSTD_LEVEL = {"zstd": 3, "zstd_dict": 15}

ZSTD_FRAME_MAGIC = 0xFD2FB528
ZSTD_DICT_MAGIC = 0xEC30A437


class FormatError(Exception):
    """The store breaks a rule of docs/format.md (what zrec calls `malformed`)."""


# ---- schema (docs/format.md §4, §10) -----------------------------------------------------------


def canonical_dtype(dtype):
    """The canonical NumPy dtype string (`numpy.dtype.str`) docs/format.md §4 stores."""
    dt = np.dtype(dtype)
    if dt.fields is not None or dt.subdtype is not None or dt.kind == "O" or dt.itemsize == 0:
        raise ValueError(f"dtype {dt!r} cannot be stored")
    return dt.str


def schema_bytes(dtype, ndim, item_shape=None):
    """Exactly what msgpack-python's packb produces for the schema map, keys in writer
    order dtype, ndim, item_shape (item_shape only for Dense)."""
    schema = {"dtype": canonical_dtype(dtype), "ndim": int(ndim)}
    if item_shape is not None:
        item_shape = [int(d) for d in item_shape]
        if len(item_shape) != ndim:
            raise ValueError("len(item_shape) must equal ndim")
        schema["item_shape"] = item_shape
    return msgpack.packb(schema)


def _reject_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise FormatError(f"schema has duplicate keys {keys}")
    return dict(pairs)


def decode_schema(raw):
    """Decodes and checks the schema map; returns {"dtype", "ndim"[, "item_shape"]}."""
    try:
        schema = msgpack.unpackb(raw, object_pairs_hook=_reject_duplicate_keys, raw=False,
                                 strict_map_key=True)
    except FormatError:
        raise
    except Exception as e:  # msgpack raises several types
        raise FormatError(f"schema is not valid MsgPack: {e}") from e
    if not isinstance(schema, dict):
        raise FormatError("schema is not a MsgPack map")
    keys = set(schema)
    if keys not in ({"dtype", "ndim"}, {"dtype", "ndim", "item_shape"}):
        raise FormatError(f"schema keys {sorted(keys)} are not dtype, ndim[, item_shape]")
    dtype, ndim = schema["dtype"], schema["ndim"]
    if not isinstance(dtype, str):
        raise FormatError("schema dtype is not a string")
    if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < 0:
        raise FormatError("schema ndim is not an unsigned int")
    try:
        if canonical_dtype(dtype) != dtype:
            raise FormatError(f"schema dtype {dtype!r} is not canonical")
    except (TypeError, ValueError) as e:
        raise FormatError(f"schema dtype {dtype!r}: {e}") from e
    if "item_shape" in schema:
        shape = schema["item_shape"]
        if not isinstance(shape, list) or len(shape) != ndim:
            raise FormatError("schema item_shape is not an array of ndim ints")
        for d in shape:
            if not isinstance(d, int) or isinstance(d, bool) or d < 1:
                raise FormatError(f"schema item_shape entry {d!r} is not an int >= 1")
    elif ndim < 1:
        raise FormatError("Ragged schema needs ndim >= 1")
    return schema


# ---- records (docs/format.md §5) ---------------------------------------------------------------


def logical_record(array, dense):
    """The logical record of one item: C-order bytes, after `ndim` u64 dims for Ragged."""
    array = np.asarray(array)
    data = np.ascontiguousarray(array).tobytes()
    if dense:
        return data
    if array.ndim < 1 or array.size == 0:
        raise ValueError("a Ragged record needs ndim >= 1 and at least one element")
    return struct.pack(f"<{array.ndim}Q", *array.shape) + data


def _decode_logical(record, schema):
    dt = np.dtype(schema["dtype"])
    if "item_shape" in schema:
        shape = tuple(schema["item_shape"])
        if len(record) != dt.itemsize * int(np.prod(shape, dtype=object)):
            raise FormatError(f"Dense record is {len(record)} bytes, expected "
                              f"{dt.itemsize * int(np.prod(shape, dtype=object))}")
        return np.frombuffer(record, dtype=dt).reshape(shape)
    ndim = schema["ndim"]
    prefix = 8 * ndim
    if len(record) < prefix + dt.itemsize:
        raise FormatError(f"Ragged record of {len(record)} bytes is shorter than its shape prefix")
    shape = struct.unpack_from(f"<{ndim}Q", record)
    count = 1
    for d in shape:
        if d < 1:
            raise FormatError(f"Ragged dimension {d} < 1")
        count *= d
        if count >= 2**64:
            raise FormatError("Ragged dimension product overflows")
    if len(record) - prefix != count * dt.itemsize:
        raise FormatError(f"Ragged record of {len(record)} bytes does not match dims {shape}")
    return np.frombuffer(record, dtype=dt, offset=prefix).reshape(shape)


# ---- zstd -------------------------------------------------------------------------------


def parse_frame_header(frame):
    """Parses a zstd frame header (RFC 8878 §3.1.1.1) without any zstd library.

    Returns dict(content_size (None when absent), dict_id (None when absent), checksum,
    single_segment, header_size)."""
    if len(frame) < 6:
        raise FormatError("zstd frame shorter than its header")
    (magic,) = struct.unpack_from("<I", frame)
    if magic != ZSTD_FRAME_MAGIC:
        raise FormatError(f"not a zstd frame (magic {magic:#010x})")
    fhd = frame[4]
    fcs_flag, single_segment, checksum, did_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
    if fhd & 0x08:
        raise FormatError("zstd frame header reserved bit set")
    pos = 5 + (0 if single_segment else 1)  # window descriptor
    did_size = (0, 1, 2, 4)[did_flag]
    dict_id = int.from_bytes(frame[pos:pos + did_size], "little") if did_size else None
    pos += did_size
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    content_size = None
    if fcs_size:
        content_size = int.from_bytes(frame[pos:pos + fcs_size], "little")
        if fcs_size == 2:
            content_size += 256
    pos += fcs_size
    if pos > len(frame):
        raise FormatError("zstd frame header truncated")
    return {"content_size": content_size, "dict_id": dict_id, "checksum": bool(checksum),
            "single_segment": bool(single_segment), "header_size": pos}


def _zstd_cli(args, data, dict_bytes=None):
    with tempfile.TemporaryDirectory(prefix="zrecord_ref_") as tmp:
        src = os.path.join(tmp, "in")
        with open(src, "wb") as f:
            f.write(data)
        cmd = ["zstd", "-q", "-c", *args]
        if dict_bytes is not None:
            dpath = os.path.join(tmp, "dict")
            with open(dpath, "wb") as f:
                f.write(dict_bytes)
            cmd += ["-D", dpath]
        r = subprocess.run(cmd + [src], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise FormatError(f"zstd {' '.join(args)} failed: {r.stderr.decode(errors='replace')}")
        return r.stdout


class ZstdCodec:
    """Compresses/decompresses single records the way docs/format.md §6 and §10 require."""

    def __init__(self, codec, dict_bytes=None, checksum=False, write_dict_id=True, level=None):
        self.codec = codec
        self.dict_bytes = dict_bytes
        self.level = level if level is not None else ZSTD_LEVEL.get(codec, 3)
        self.checksum = checksum
        self.write_dict_id = write_dict_id
        self._cctx = self._dctx = None
        if zstandard is not None:
            zdict = zstandard.ZstdCompressionDict(dict_bytes) if dict_bytes is not None else None
            self._zdict = zdict
            self._cctx = zstandard.ZstdCompressor(
                level=self.level, dict_data=zdict, write_content_size=True,
                write_checksum=checksum, write_dict_id=write_dict_id)
            self._dctx = zstandard.ZstdDecompressor(dict_data=zdict)

    def compress(self, data):
        if self._cctx is not None:
            return self._cctx.compress(data)
        args = [f"-{self.level}", "--check" if self.checksum else "--no-check"]
        if self.level > 19:
            args.insert(0, "--ultra")
        if not self.write_dict_id:
            args.append("--no-dictID")
        return _zstd_cli(args, data, self.dict_bytes)

    def decompress(self, frame, logic_length):
        """Decompresses exactly one frame to exactly `logic_length` bytes, or raises."""
        header = parse_frame_header(frame)
        if header["content_size"] is not None and header["content_size"] != logic_length:
            raise FormatError(f"frame content size {header['content_size']} != logic_length "
                              f"{logic_length}")
        if self._dctx is not None:
            dobj = self._dctx.decompressobj()
            try:
                out = dobj.decompress(frame)
            except zstandard.ZstdError as e:
                raise FormatError(f"zstd frame does not decompress: {e}") from e
            if not dobj.eof:
                raise FormatError("zstd frame is truncated")
            if dobj.unused_data:
                raise FormatError(f"{len(dobj.unused_data)} bytes follow the zstd frame")
        else:
            out = _zstd_cli(["-d"], frame, self.dict_bytes)
            # The CLI also decodes concatenated frames, so without python zstandard a
            # second frame is caught only through the length check below.
        if len(out) != logic_length:
            raise FormatError(f"frame decompresses to {len(out)} bytes, logic_length is "
                              f"{logic_length}")
        return out


# ---- reading (docs/format.md §2, §3, §8) -----------------------------------------------------


class StoreContents:
    """Everything read from one store. `records` holds one NumPy array per record."""

    def __init__(self):
        self.length = 0
        self.schema_length = 0
        self.data_shards = 0
        self.codec = None  # "raw" | "zstd" | "zstd_dict"
        self.tails = []  # data_shards entries
        self.schema = None  # dict
        self.schema_raw = b""
        self.page = b""
        self.locs = []  # (offset, phys_length, logic_length) per record
        self.logical = []  # logical record bytes per record
        self.stored = []  # stored (codec) bytes per record
        self.records = []  # numpy arrays
        self.dict_bytes = None

    @property
    def dense(self):
        return "item_shape" in self.schema

    @property
    def dtype(self):
        return np.dtype(self.schema["dtype"])

    def array(self):
        """Dense: all records stacked as one (length, *item_shape) array."""
        assert self.dense
        shape = (self.length, *self.schema["item_shape"])
        return np.frombuffer(b"".join(self.logical), dtype=self.dtype).reshape(shape)


def read_page(page):
    """Decodes and checks the 4096-byte static page; returns a StoreContents."""
    if len(page) < PAGE_SIZE:
        raise FormatError(f"meta.zr is {len(page)} bytes, shorter than the {PAGE_SIZE}-byte page")
    s = StoreContents()
    s.page = bytes(page[:PAGE_SIZE])
    s.length, s.schema_length, s.data_shards, codec = struct.unpack_from("<QHBB", page, 0)
    if page[12:16] != b"\0\0\0\0":
        raise FormatError("reserved bytes 12..15 are not zero")
    if not 1 <= s.schema_length <= SCHEMA_MAX:
        raise FormatError(f"schema_length {s.schema_length} not in 1..{SCHEMA_MAX}")
    if not 1 <= s.data_shards <= MAX_SHARDS:
        raise FormatError(f"data_shards {s.data_shards} not in 1..{MAX_SHARDS}")
    if codec not in CODEC_NAMES:
        raise FormatError(f"codec {codec} not in 0..2")
    s.codec = CODEC_NAMES[codec]
    tails = struct.unpack_from(f"<{MAX_SHARDS}Q", page, TAILS_OFFSET)
    if any(tails[s.data_shards:]):
        raise FormatError("a tail slot at or past data_shards is not zero")
    s.tails = list(tails[:s.data_shards])
    s.schema_raw = bytes(page[SCHEMA_OFFSET:SCHEMA_OFFSET + s.schema_length])
    s.schema = decode_schema(s.schema_raw)
    return s


def read_store(path, check_overlap=True):
    """Reads and fully validates a store; returns its StoreContents."""
    meta_path = os.path.join(path, "meta.zr")
    with open(meta_path, "rb") as f:
        meta = f.read()
    s = read_page(meta)
    if len(meta) < PAGE_SIZE + LOC_SIZE * s.length:
        raise FormatError(f"meta.zr is {len(meta)} bytes, the table of {s.length} records needs "
                          f"{PAGE_SIZE + LOC_SIZE * s.length}")
    dict_path = os.path.join(path, "dict.zr")
    has_dict = os.path.exists(dict_path)
    if has_dict != (s.codec == "zstd_dict"):
        raise FormatError(f"dict.zr {'present' if has_dict else 'missing'} for codec {s.codec}")
    if has_dict:
        with open(dict_path, "rb") as f:
            s.dict_bytes = f.read()
        if len(s.dict_bytes) < 8:
            raise FormatError("dict.zr is shorter than 8 bytes")
    shards = []
    for i in range(s.data_shards):
        with open(os.path.join(path, f"data_{i}.zr"), "rb") as f:
            data = f.read()
        if len(data) < s.tails[i]:
            raise FormatError(f"data_{i}.zr is {len(data)} bytes, its tail is {s.tails[i]}")
        shards.append(data)
    codec = None if s.codec == "raw" else ZstdCodec(s.codec, s.dict_bytes)
    ranges = [[] for _ in range(s.data_shards)]
    for i in range(s.length):
        off, phys, logic = struct.unpack_from("<QII", meta, PAGE_SIZE + LOC_SIZE * i)
        shard = i % s.data_shards
        where = f"record {i} (data_{shard}.zr offset {off}, {phys} bytes)"
        if not 1 <= phys <= MAX_RECORD or not 1 <= logic <= MAX_RECORD:
            raise FormatError(f"{where}: lengths {phys}/{logic} out of 1..2^31-1")
        if off + phys > s.tails[shard]:
            raise FormatError(f"{where}: ends past tail {s.tails[shard]}")
        if s.codec == "raw" and phys != logic:
            raise FormatError(f"{where}: raw record with phys {phys} != logic {logic}")
        stored = shards[shard][off:off + phys]
        logical = stored if codec is None else codec.decompress(stored, logic)
        try:
            arr = _decode_logical(logical, s.schema)
        except FormatError as e:
            raise FormatError(f"{where}: {e}") from e
        s.locs.append((off, phys, logic))
        s.stored.append(stored)
        s.logical.append(logical)
        s.records.append(arr)
        ranges[shard].append((off, off + phys))
    if check_overlap:
        for shard, rs in enumerate(ranges):
            rs.sort()
            for (a0, a1), (b0, b1) in zip(rs, rs[1:]):
                if b0 < a1:
                    raise FormatError(f"data_{shard}.zr: stored ranges [{a0},{a1}) and "
                                      f"[{b0},{b1}) overlap")
    return s


# ---- writing (what loaderx writes) --------------------------------------------------------


def encode_page(length, data_shards, codec, tails, schema):
    """The 4096-byte static page."""
    if not 1 <= len(schema) <= SCHEMA_MAX:
        raise ValueError(f"schema of {len(schema)} bytes does not fit")
    tails = list(tails) + [0] * (MAX_SHARDS - len(tails))
    page = struct.pack("<QHBB4x", length, len(schema), data_shards, CODECS[codec])
    page += struct.pack(f"<{MAX_SHARDS}Q", *tails) + schema
    return page + b"\0" * (PAGE_SIZE - len(page))


def write_store(path, records, dtype, *, dense, ndim=None, item_shape=None, codec="zstd",
                data_shards=4, dict_bytes=None, physical_order="sequential", seed=0,
                checksum=False, write_dict_id=True, schema_override=None, gap=0,
                schema_padding=b"\0"):
    """Writes a published store at `path` (created; must not exist or be empty).

    records: one array per record (Dense: each of item_shape; Ragged: each of ndim dims).
    physical_order: "sequential" (ID order inside each shard), "reversed" or "shuffled";
    docs/format.md §3 lets parallel writers place records in any physical order.
    checksum / write_dict_id: optional zstd frame fields a reader must accept (§10).
    Deviations a reader must tolerate, for tests: schema_override (other valid MsgPack
    bytes for the schema), gap (unreferenced bytes before each record in its shard),
    schema_padding (a byte repeated after the schema instead of zeros).
    """
    dt = np.dtype(dtype)
    if dense:
        item_shape = tuple(int(d) for d in item_shape)
        ndim = len(item_shape)
        schema = schema_bytes(dt, ndim, item_shape)
    else:
        if ndim is None:
            ndim = np.asarray(records[0]).ndim
        schema = schema_bytes(dt, ndim)
    if schema_override is not None:
        schema = schema_override
    if (codec == "zstd_dict") != (dict_bytes is not None):
        raise ValueError("dict_bytes goes with codec zstd_dict, and only with it")
    os.makedirs(path, exist_ok=True)
    if os.listdir(path):
        raise ValueError(f"{path} is not empty")

    zc = None if codec == "raw" else ZstdCodec(codec, dict_bytes, checksum, write_dict_id)
    stored = []
    logic_lengths = []
    for rec in records:
        rec = np.asarray(rec)
        if rec.dtype != dt:
            raise ValueError(f"record dtype {rec.dtype.str} != {dt.str}")
        if dense and rec.shape != item_shape:
            raise ValueError(f"record shape {rec.shape} != {item_shape}")
        if not dense and rec.ndim != ndim:
            raise ValueError(f"record ndim {rec.ndim} != {ndim}")
        logical = logical_record(rec, dense)
        if not 1 <= len(logical) <= MAX_RECORD:
            raise ValueError("record size out of range")
        logic_lengths.append(len(logical))
        stored.append(logical if zc is None else zc.compress(logical))

    rng = np.random.default_rng(seed)
    offsets = [0] * len(records)
    tails = []
    for shard in range(data_shards):
        ids = list(range(shard, len(records), data_shards))
        if physical_order == "reversed":
            ids.reverse()
        elif physical_order == "shuffled":
            ids = [int(i) for i in rng.permutation(ids)]
        elif physical_order != "sequential":
            raise ValueError(f"unknown physical_order {physical_order!r}")
        pos = 0
        with open(os.path.join(path, f"data_{shard}.zr"), "wb") as f:
            for i in ids:
                f.write(bytes([0xA5]) * gap)
                pos += gap
                offsets[i] = pos
                f.write(stored[i])
                pos += len(stored[i])
        tails.append(pos)
    if dict_bytes is not None:
        with open(os.path.join(path, "dict.zr"), "wb") as f:
            f.write(dict_bytes)
    table = b"".join(struct.pack("<QII", offsets[i], len(stored[i]), logic_lengths[i])
                     for i in range(len(records)))
    with open(os.path.join(path, "meta.zr"), "wb") as f:
        page = encode_page(len(records), data_shards, codec, tails, schema)
        if schema_padding != b"\0":
            end = SCHEMA_OFFSET + len(schema)
            page = page[:end] + schema_padding * (PAGE_SIZE - end)
        f.write(page)
        f.write(table)
    return stored


def remove_store(path):
    shutil.rmtree(path, ignore_errors=True)
