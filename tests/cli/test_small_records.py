#!/usr/bin/python3
"""Small records (issue 21): stores that zrec makes without --codec (create, append-h5
--create, append-lmdb --create, append-tar's new streams) are raw for Dense records of
32 bytes or fewer, where every zstd frame stores more than it holds; an explicit
--codec is kept; and any append whose first window stores more bytes than it read warns
once, with the ratio and the codec that would store them smaller."""
import io
import json
import os
import sys
import tarfile
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import must, npy_bytes, require_zrec, run_all  # noqa: E402

require_zrec("test_small_records")
root = tempfile.mkdtemp(prefix="zrec_small_records.")


def codec(store):
    return json.loads(must(["info", "--json", store])[0])["codec"]


def warnings(err):
    return [l for l in err.splitlines() if "warning" in l]


def create_picks_raw_for_tiny_dense_records():
    cases = [("<i8", "scalar", "raw"), ("|S2", "scalar", "raw"), ("<f4", "8", "raw"), ("<f4", "9", "zstd"),
             ("|u1", "3,224,224", "zstd")]
    for i, (dtype, shape, want) in enumerate(cases):
        store = f"{root}/c{i}"
        must(["create", "--dense", "--dtype", dtype, "--shape", shape, store])
        assert codec(store) == want, (dtype, shape, codec(store), want)
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i8", f"{root}/ragged"])
    assert codec(f"{root}/ragged") == "zstd"
    # An explicit codec is kept, and --checksum (zstd's alone) keeps zstd.
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", "--codec", "zstd", f"{root}/explicit"])
    assert codec(f"{root}/explicit") == "zstd"
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", "--checksum", f"{root}/checked"])
    assert codec(f"{root}/checked") == "zstd"


def append_warns_once_with_the_ratio():
    store = f"{root}/labels"
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", "--codec", "zstd", store])
    before = os.path.getsize(f"{store}/meta.zr")
    # Ten windows (a checkpoint every 100 records): one warning, for the first.
    _, err = must(["append-stream", "--parse", "ints", "--checkpoint-every", "100", store],
                  stdin=b"".join(b"%d\n" % (i % 10) for i in range(1000)))
    assert warnings(err) == [
        f"zrec append-stream: warning: '{store}': zstd stored 2.12x the bytes it read in the first 100 records; "
        "a raw store would hold them smaller (zrec recompress --codec raw makes one)"], err
    assert os.path.getsize(f"{store}/meta.zr") >= before
    # A raw store never warns; nor does a store whose records shrink.
    raw = f"{root}/labels_raw"
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", raw])
    _, err = must(["append-stream", "--parse", "ints", raw], stdin=b"1\n2\n3\n")
    assert warnings(err) == [], err
    images = f"{root}/zeros"
    must(["create", "--dense", "--dtype", "|u1", "--shape", "64,64", images])
    _, err = must(["append-npy", images, "-"], stdin=npy_bytes(np.zeros((10, 64, 64), "|u1")))
    assert warnings(err) == [], err


def created_stores_name_codec_raw():
    # append-h5 --create of int64 labels: raw.
    import h5py
    h5 = f"{root}/labels.h5"
    with h5py.File(h5, "w") as f:
        f["y"] = np.arange(50, dtype="<i8")
    must(["append-h5", "--create", f"{root}/h5labels", h5, "/y"])
    assert codec(f"{root}/h5labels") == "raw"
    # append-tar: cls parsed as one int is a Dense scalar stream, raw; the same members
    # kept as bytes (Ragged) are zstd, and its first window warns, naming --codec raw.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for i in range(20):
            for ext, data in (("cls", b"%d" % (i % 3)), ("txt", b"sample %d" % i)):
                info = tarfile.TarInfo(f"s{i:03d}.{ext}")
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    _, err = must(["append-tar", "--parse", "cls=int", f"{root}/ds1", "-"], stdin=buf.getvalue())
    assert codec(f"{root}/ds1/cls") == "raw" and codec(f"{root}/ds1/txt") == "zstd"
    _, err = must(["append-tar", f"{root}/ds2", "-"], stdin=buf.getvalue())
    assert codec(f"{root}/ds2/cls") == "zstd"
    want = [f"zrec append-tar: warning: '{root}/ds2/cls': zstd stored 18.00x the bytes it read in the first 20 records; "
            "--stream-codec cls=raw would store them smaller",
            f"zrec append-tar: warning: '{root}/ds2/txt': zstd stored 3.00x the bytes it read in the first 20 records; "
            "--stream-codec txt=raw would store them smaller"]
    assert sorted(warnings(err)) == want, err
    # --codec zstd given: still zstd for the parsed labels.
    must(["append-tar", "--parse", "cls=int", "--codec", "zstd", f"{root}/ds3", "-"], stdin=buf.getvalue())
    assert codec(f"{root}/ds3/cls") == "zstd"


sys.exit(run_all((create_picks_raw_for_tiny_dense_records, append_warns_once_with_the_ratio,
                  created_stores_name_codec_raw), root, "small-record cases"))
