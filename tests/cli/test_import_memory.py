#!/usr/bin/python3
"""Every import path bounds its peak memory by its window, whatever sizes the input
claims or expands to (issue 20). Each case gives zrec a small input that claims, or
expands to, far more than the window, and checks that the run ends as it must (the
records byte-exact, or a one-line error) with peak RSS under the window's bound:

  append-tar     a .tar.gz of 0.7 MiB holding 128 MiB of members (decompressed chunks);
                 48 MiB of 256 KiB members into raw streams with the default 64 MiB
                 window (a raw window is flushed every 2 MiB: bound 40 MiB);
                 a member header claiming 2 GiB before 1 MiB of data (also within 1 GiB
                 of address space: no claim is reserved on trust); 128 MiB of "1 "
                 text into a Dense scalar stream (refused at the second number, not after
                 reading the text); 16 MiB of "1 " text that parses to a 64 MiB record
                 (the record held once: not its text besides; a 64 MiB window); 256 MiB of
                 it in a .tar.gz of a few hundred KiB (refused when its numbers outgrow
                 the window)
  append-lmdb    an environment of 192 MiB of values (its mapped pages handed back after
                 each batch); a value claiming 2 GiB past the end of the file (refused)
  append-h5      a few KiB of gzip holding a 128 MiB band of chunks (refused from the
                 metadata, before anything is decompressed); a gzip chunk of 127 KiB and
                 a bzip2 chunk of 0.1 KiB that decode to 128 MiB, where the chunk shape
                 declares 1 KiB (refused naming the chunk, decoded no further than that);
                 a chunk decoding to fewer bytes than its shape's
  append-stream  a u64le frame claiming 2 GiB before 1 MiB of data
  append-npy     a .npy header claiming 1 TB before 1 MiB of data

Bound: 2 x the window + 48 MiB (the process, a lane's scratch, libraries); for the
64 MiB record, the record + 20 MiB (the process; its text, held whole before, was 16 MiB). Peak RSS is not checked under ASan
(ZREC_SANITIZED=1: its shadow memory inflates it), the outcomes are.

Needs: ZREC, /usr/bin/python3 with numpy, h5py, lmdb.
"""
import io
import json
import os
import resource
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import hostile_inputs as hostile  # noqa: E402
from cli_helpers import SANITIZED, expect, must, require_zrec  # noqa: E402

ZREC = require_zrec("test_import_memory")
CASES, case = case_runner.case_registry()
FIGURES = []
WINDOW_MIB = 8
BOUND_MIB = 2 * WINDOW_MIB + 48
# append-tar into raw streams with the default window: windows of 2 MiB and the process.
RAW_WINDOW_BOUND_MIB = 40


def peak(args, stdin=None, address_space=None):
    """Runs zrec with `args` (two lanes): (exit status, stderr, peak RSS MiB). Measured by
    /usr/bin/time: a child forked from this test (which holds the inputs) would count the
    test's pages as its own until it execs. address_space: a limit of the process's
    virtual memory, in bytes (RLIMIT_AS: as strict overcommit, it refuses to reserve what
    is not there)."""
    def limit():
        if address_space:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    p = subprocess.run(["/usr/bin/time", "-f", "%M", ZREC, "--threads", "2"] + args, input=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600, preexec_fn=limit)
    lines = p.stderr.decode("utf-8", "replace").splitlines()
    rc = p.returncode
    if rc != 0 and lines and lines[-1].strip().isdigit() and len(lines) >= 2 and "exited with" in lines[-2]:
        del lines[-2]  # time's "Command exited with non-zero status N"
    return rc, "\n".join(lines[:-1]), int(lines[-1]) / 1024.0


def bounded(what, rss, bound=BOUND_MIB):
    FIGURES.append("%s: peak RSS %.1f MiB (bound %d MiB)" % (what, rss, bound))
    if not SANITIZED:
        expect(rss < bound, "%s: peak RSS %.1f MiB, over the bound of %d MiB" % (what, rss, bound))


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def length(store):
    return json.loads(must(["info", "--json", store])[0])["length"]


def record(store, i):
    """Record i's payload bytes."""
    return must(["cat", "--format", "raw", store, str(i)])[0]


W = ["--window-mib", str(WINDOW_MIB)]


@case
def tar_gz_expanding_to_many_members(d):
    # 2048 samples of a 64 KiB jpg (zeros but its first bytes) and a cls: 128 MiB from 0.5 MiB.
    members = []
    for i in range(2048):
        members.append(("%05d.jpg" % i, struct.pack("<I", i) + bytes(65532)))
        members.append(("%05d.cls" % i, b"%d" % (i % 10)))
    t = write(os.path.join(d, "t.tar.gz"), hostile.tar_bytes(members, compress="gz", level=1))
    root = os.path.join(d, "root")
    rc, err, rss = peak(["append-tar"] + W + [root, t])
    expect(rc == 0, err)
    expect(length(os.path.join(root, "jpg")) == 2048 and record(os.path.join(root, "jpg"), 2047) == members[4094][1],
           "records differ")
    bounded("append-tar, %.1f MiB .tar.gz of 128 MiB of members" % (os.path.getsize(t) / 2**20), rss)


@case
def tar_raw_window_flushed_small(d):
    # A raw store's window is flushed every 2 MiB whatever --window-mib (the default 64
    # here): it is only copied into the store, so 48 MiB of 256 KiB members never fill
    # a window of their size (they did: peak RSS 60 MiB).
    members = []
    for i in range(192):
        members.append(("%05d.jpg" % i, struct.pack("<I", i) + bytes((256 << 10) - 4)))
        members.append(("%05d.cls" % i, b"%d" % (i % 10)))
    t = write(os.path.join(d, "t.tar"), hostile.tar_bytes(members))
    root = os.path.join(d, "root")
    rc, err, rss = peak(["append-tar", "--codec", "raw", root, t])
    expect(rc == 0, err)
    expect(length(os.path.join(root, "jpg")) == 192 and record(os.path.join(root, "jpg"), 191) == members[382][1],
           "records differ")
    bounded("append-tar --codec raw, the default window, 48 MiB of 256 KiB members", rss, RAW_WINDOW_BOUND_MIB)


@case
def tar_member_claiming_2gib(d):
    t = write(os.path.join(d, "t.tar"), hostile.claimed_size_tar((1 << 31) - 9, 1 << 20))
    # No claim is reserved on trust: within 1 GiB of address space (ASan needs far more).
    rc, err, rss = peak(["append-tar"] + W + [os.path.join(d, "root"), t], address_space=None if SANITIZED else 1 << 30)
    expect(rc == 1 and "(member '0.jpg'): Truncated tar archive" in err, "rc %d: %s" % (rc, err))
    bounded("append-tar, a member claiming 2 GiB (1 GiB of address space)", rss)


@case
def tar_parse_into_scalar_stream(d):
    sc = os.path.join(d, "sc")
    os.makedirs(sc)
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", os.path.join(sc, "cls")])
    t = write(os.path.join(d, "t.tar.gz"), hostile.parse_bomb(128 << 20, level=1))
    rc, err, rss = peak(["append-tar", "--adopt", "--parse", "cls=ints"] + W + [sc, t])
    expect(rc == 1 and "member '0.cls' holds more than one number" in err, "rc %d: %s" % (rc, err))
    bounded("append-tar --parse, %d KiB .tar.gz of 128 MiB of text into a scalar stream" % (os.path.getsize(t) >> 10),
            rss)


@case
def tar_parse_expanding_4x(d):
    t = write(os.path.join(d, "t.tar.gz"), hostile.parse_bomb(16 << 20, level=1))
    root = os.path.join(d, "root")
    # A record of numbers is bounded by the window: 64 MiB of <i8 needs a 64 MiB one.
    rc, err, rss = peak(["append-tar", "--parse", "cls=ints", "--codec", "raw", "--window-mib", "64", root, t])
    expect(rc == 0, err)
    cls = os.path.join(root, "cls")
    expect(length(cls) == 1 and record(cls, 0) == np.ones(8 << 20, "<i8").tobytes(), "the record differs")
    # The record and the process, not the record's 16 MiB of text besides (held whole before).
    bounded("append-tar --parse, 16 MiB of text parsed to one 64 MiB record", rss, 64 + 20)


@case
def tar_parse_beyond_the_window(d):
    # 256 MiB of "1 " text in a .tar.gz of a few hundred KiB: 1 GiB of <i8 once parsed.
    # The record would grow the window to it (~2 GiB peak for a 2.5 MB input before the
    # record limit refused it); it is refused once its numbers outgrow the 8 MiB window.
    t = write(os.path.join(d, "t.tar.gz"), hostile.parse_bomb(256 << 20, level=9))
    root = os.path.join(d, "root")
    rc, err, rss = peak(["append-tar", "--parse", "cls=ints"] + W + [root, t])
    expect(rc == 1 and "member '0.cls' holds more than 1048576 numbers, more than a 8 MiB window holds "
           "(--parse cls); raise --window-mib for larger records" in err, "rc %d: %s" % (rc, err))
    expect(not os.path.exists(root), "a failed first run left the root")
    bounded("append-tar --parse, %d KiB .tar.gz of 256 MiB of text (1 GiB of numbers)" % (os.path.getsize(t) >> 10),
            rss)


@case
def lmdb_environment_larger_than_the_window(d):
    env = os.path.join(d, "e.mdb")
    hostile.lmdb_env(env, [(b"k%04d" % i, bytes([i % 256]) * (1 << 20)) for i in range(192)], map_size=1 << 30)
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", s])
    rc, err, rss = peak(["append-lmdb"] + W + [s, env])
    expect(rc == 0, err)
    expect(length(s) == 192 and record(s, 191) == bytes([191]) * (1 << 20), "records differ")
    bounded("append-lmdb, 192 MiB of values", rss)


@case
def lmdb_value_claiming_past_the_file(d):
    env = os.path.join(d, "e.mdb")
    hostile.lmdb_env(env, [(b"a", b"x"), (b"big", bytes(8000))])
    hostile.lmdb_value_beyond_file(env, b"big")
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    rc, err, rss = peak(["append-lmdb"] + W + [s, env])
    expect(rc == 1 and "the value of key 'big' (2147418112 bytes) lies outside its data file" in err,
           "rc %d: %s" % (rc, err))
    bounded("append-lmdb, a value claiming 2 GiB", rss)


@case
def h5_band_of_chunks_from_a_few_kib(d):
    import h5py
    h5 = os.path.join(d, "b.h5")
    with h5py.File(h5, "w") as f:
        dset = f.create_dataset("x", shape=(2048, 65536), dtype="u1", chunks=(2048, 65536), compression="gzip")
        dset[:] = 1
    rc, err, rss = peak(["append-h5", "--create"] + W + [os.path.join(d, "s"), h5, "x"])
    expect(rc == 1 and "134217728 bytes decompressed, more than the window" in err, "rc %d: %s" % (rc, err))
    bounded("append-h5, %d KiB of gzip holding a 128 MiB band of chunks" % (os.path.getsize(h5) >> 10), rss)


def zeros_compressed(compressor, mib):
    """`mib` MiB of zero bytes through `compressor` (zlib's or bz2's), a MiB at a time."""
    zero = bytes(1 << 20)
    return b"".join([compressor.compress(zero) for _ in range(mib)] + [compressor.flush()])


@case
def h5_chunks_decoding_past_their_shape(d):
    # A chunk is stored compressed, and libhdf5's gzip filter (and the bzip2 plugin)
    # decoded it whole, however far past the 1024 bytes its chunk shape declares: these
    # files of a few hundred KiB (gzip) and 0.3 KiB (bzip2) cost 270 MB of peak RSS each,
    # and the import succeeded with the chunk's first 1024 bytes. Now each chunk decodes
    # into its declared size: one line names the chunk, nothing is created.
    import bz2
    import zlib
    import h5py
    for name, filter_args, compressor, short in (
            ("gzip", {"compression": "gzip"}, zlib.compressobj(9), zlib.compress(bytes(10))),
            ("bzip2", {"compression": 307, "compression_opts": (9,)}, bz2.BZ2Compressor(9), bz2.compress(bytes(10)))):
        bomb = zeros_compressed(compressor, 128)
        h5 = os.path.join(d, name + ".h5")
        with h5py.File(h5, "w") as f:
            x = f.create_dataset("x", shape=(64, 64), dtype="u1", chunks=(32, 32), allow_unknown_filter=True,
                                 **filter_args)
            x[:] = np.arange(64 * 64).reshape(64, 64) % 251
            x.id.write_direct_chunk((32, 32), bomb)
            f.create_dataset("short", shape=(32, 32), dtype="u1", chunks=(32, 32), allow_unknown_filter=True,
                             **filter_args).id.write_direct_chunk((0, 0), short)
        s = os.path.join(d, "s-" + name)
        rc, err, rss = peak(["append-h5", "--create"] + W + [s, h5, "x"])
        expect(rc == 1 and err == (
            "zrec append-h5: cannot read rows 0..64 of dataset 'x' of '%s': its %s chunk [32, 32] (%d bytes stored) "
            "decodes to more than the 1024 bytes its chunk shape declares (a damaged file, or one made to exhaust "
            "memory)" % (h5, name, len(bomb))), "rc %d: %s" % (rc, err))
        expect(not os.path.exists(s), "%s: the failed run left the store it created" % name)
        bounded("append-h5, a %s chunk of %d bytes holding 128 MiB (its shape: 1 KiB)" % (name, len(bomb)), rss)
        rc, err, _ = peak(["append-h5", "--create"] + W + [s, h5, "short"])
        expect(rc == 1 and err == (
            "zrec append-h5: cannot read rows 0..32 of dataset 'short' of '%s': its %s chunk [0, 0] (%d bytes "
            "stored) decodes to 10 bytes, not the 1024 its chunk shape declares (a damaged file, or one made to "
            "exhaust memory)" % (h5, name, len(short))), "rc %d: %s" % (rc, err))


@case
def stream_frame_claiming_2gib(d):
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    data = struct.pack("<Q", (1 << 31) - 9) + b"\x02" * (1 << 20)
    rc, err, rss = peak(["append-stream", "--framing", "u64le"] + W + [s], stdin=data)
    expect(rc == 1 and "declares 2147483639 bytes, but the input ends after 1048576" in err, "rc %d: %s" % (rc, err))
    bounded("append-stream, a frame claiming 2 GiB", rss)


@case
def npy_header_claiming_1tb(d):
    s = os.path.join(d, "s")
    must(["create", "--dense", "--dtype", "|u1", "--shape", "1024", s])
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False, "shape": (10**9, 1024)})
    rc, err, rss = peak(["append-npy"] + W + [s, "-"], stdin=header.getvalue() + b"\x01" * (1 << 20))
    expect(rc == 1 and "the input ends inside record 1024 of the array's 1000000000" in err, "rc %d: %s" % (rc, err))
    bounded("append-npy, a header claiming 1 TB", rss)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-import-memory-", figures=FIGURES))
