#!/usr/bin/python3
"""Malformed inputs to the append commands: a clear error, bounded memory, store unchanged.

Each case feeds one bad input to append-npy, append-files or append-stream on a store
that already holds records, and checks: exit 1 (never a signal or "internal error"),
one stderr line "zrec <cmd>: ..." naming the input and the rule, every store file
byte-for-byte as before, `zrec verify` still passing, and (without sanitizers) a peak
RSS under 100 MiB, however large the sizes the input declares (2^60 elements, 4 GiB
frames, 4 GiB .npy headers).

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import hashlib
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

ZREC = os.environ.get("ZREC")
if not ZREC or not os.access(ZREC, os.X_OK):
    sys.exit("test_bad_inputs: set ZREC to the zrec binary (got %r)" % ZREC)
SANITIZED = os.environ.get("ZREC_SANITIZED", "0") in ("1", "ON", "TRUE", "true")
RSS_LIMIT_KIB = 100 * 1024


def npy_header(header, version=1):
    h = header.encode("latin1")
    lenfield = 2 if version == 1 else 4
    pad = 64 - (6 + 2 + lenfield + len(h) + 1) % 64
    h = h + b" " * (pad % 64) + b"\n"
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H" if version == 1 else "<I", len(h)) + h


def good_npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def dict_text(descr, shape, fortran=False):
    return "{'descr': %r, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


G = good_npy(np.arange(8, dtype="<i4"))

# (name, command, store kind, input bytes on stdin or via a file, words the message holds)
NPY_CASES = [
    ("empty file", "ragged", b"", ["no .npy array"]),
    ("garbage", "ragged", bytes(range(256)) * 4, ["magic"]),
    ("truncated magic", "ragged", b"\x93NUM", ["truncated"]),
    ("truncated header", "dense", G[:40], ["truncated"]),
    ("truncated data", "ragged", G[:-3], ["truncated"]),
    ("unknown version", "ragged", b"\x93NUMPY\x07\x00" + G[8:], ["version"]),
    ("2^60 elements (Ragged record)", "ragged", npy_header(dict_text("<i4", "(%d,)" % 2 ** 60)) + b"\0" * 64,
     ["2 GiB"]),
    ("2^56 records of a Dense store, 64 bytes of data", "dense",
     npy_header(dict_text("<i4", "(%d, 2, 4)" % 2 ** 56)) + b"\0" * 64, ["truncated"]),
    ("2^60 records overflow the byte size", "dense", npy_header(dict_text("<i4", "(%d, 2, 4)" % 2 ** 60)),
     ["overflows"]),
    ("element count overflows", "ragged", npy_header(dict_text("<i4", "(%d, %d)" % (2 ** 40, 2 ** 40))),
     ["overflows"]),
    ("header length 4 GiB", "ragged", b"\x93NUMPY\x02\x00" + struct.pack("<I", 2 ** 32 - 1) + b"{", ["too long"]),
    ("negative dim", "ragged", npy_header(dict_text("<i4", "(-5,)")), ["shape"]),
    ("object dtype", "ragged", npy_header(dict_text("|O", "(3,)")), ["object"]),
    ("structured dtype", "ragged", npy_header("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (3,), }"),
     ["structured"]),
    ("unbalanced dict", "ragged", npy_header("{'descr': '<i4', 'shape': (3,"), ["shape"]),
    ("wrong dtype", "ragged", good_npy(np.arange(8, dtype="<i8")), ["dtype"]),
    ("long double", "ragged", npy_header(dict_text("<f16", "(3,)")) + b"\0" * 48, ["f16"]),
    ("zero elements", "ragged", good_npy(np.zeros(0, dtype="<i4")), ["no elements"]),
    ("good then garbage", "ragged", G + G + b"\x00garbage", ["byte %d" % (2 * len(G))]),
]

STREAM_CASES = [
    ("u32le frame of 4 GiB - 1", ["--framing", "u32le"], b"\xff\xff\xff\xff", ["4294967295 bytes"]),
    ("u64le frame of 2^63 - 1", ["--framing", "u64le"], b"\xff" * 7 + b"\x7f", ["9223372036854775807"]),
    ("u32le frame cut short", ["--framing", "u32le"], struct.pack("<I", 1000) + b"x" * 10, ["truncated"]),
    ("u64le length cut short", ["--framing", "u64le"], b"\x05\x00\x00", ["truncated"]),
    ("empty line", ["--framing", "lines"], b"a\n\nb\n", ["empty"]),
]


def run_rss(args, stdin_path):
    with open(stdin_path, "rb") as f:
        p = subprocess.Popen([ZREC] + args, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err.decode("utf-8", "replace"), ru.ru_maxrss


def claimed_sizes(passed, failed, peak):
    """A 20-byte edit of a table entry claims a 2 GiB record: cat, digest and verify must
    refuse it without filling 2 GiB of memory (they once did: the read window was
    zero-filled to the claimed size before the frame was checked)."""
    root = tempfile.mkdtemp(prefix="zrec-claims-")
    try:
        for codec in ("zstd", "zstd_dict"):
            store = os.path.join(root, codec)
            args = ["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", codec]
            if codec == "zstd_dict":
                with open(os.path.join(root, "d"), "wb") as f:
                    f.write(bytes(range(256)) * 4)
                args += ["--dict", os.path.join(root, "d")]
            subprocess.run([ZREC] + args + [store], check=True)
            subprocess.run([ZREC, "-q", "append-stream", store], input=b"hello\nworld\n", check=True)
            meta = os.path.join(store, "meta.zr")
            b = bytearray(open(meta, "rb").read())
            o, p, _ = struct.unpack_from("<QII", b, 4096)
            struct.pack_into("<QII", b, 4096, o, p, 2 ** 31 - 1)
            open(meta, "wb").write(b)
            empty = os.path.join(root, "empty")
            open(empty, "wb").close()
            for cmd in (["cat", store], ["digest", store], ["verify", store], ["cat", "--format", "jsonl", store]):
                try:
                    rc, err, rss = run_rss(cmd, empty)
                    peak = max(peak, rss)
                    assert rc == 1 and "internal error" not in err, "%s: rc %d %s" % (cmd, rc, err)
                    if not SANITIZED:
                        assert rss < RSS_LIMIT_KIB, "%s on a 2 GiB claim: peak RSS %d KiB" % (" ".join(cmd[:1]), rss)
                    passed += 1
                except Exception as e:
                    failed += 1
                    print("FAIL %s" % e)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return passed, failed, peak


def tree(store):
    return {n: hashlib.sha256(open(os.path.join(store, n), "rb").read()).hexdigest() for n in sorted(os.listdir(store))}


def main():
    root = tempfile.mkdtemp(prefix="zrec-bad-inputs-")
    passed = failed = 0
    peak = 0
    try:
        stores = {}
        for kind, create in (("ragged", ["--ragged", "--ndim", "1", "--dtype", "<i4"]),
                             ("dense", ["--dense", "--shape", "2,4", "--dtype", "<i4"]),
                             ("bytes", ["--ragged", "--ndim", "1", "--dtype", "|u1"])):
            path = os.path.join(root, kind)
            subprocess.run([ZREC, "create"] + create + [path], check=True)
            seed = good_npy(np.arange(8, dtype="<i4").reshape(1, 2, 4) if kind == "dense" else
                            np.arange(5, dtype="<i4" if kind == "ragged" else "|u1"))
            subprocess.run([ZREC, "-q", "append-npy", path, "-"], input=seed, check=True)
            stores[kind] = path

        cases = []
        for name, kind, data, words in NPY_CASES:
            cases.append(("append-npy: " + name, ["append-npy", stores[kind], "INPUT"], data, words, kind))
        for name, extra, data, words in STREAM_CASES:
            cases.append(("append-stream: " + name, ["append-stream"] + extra + ["-i", "INPUT", stores["bytes"]],
                          data, words, "bytes"))
        missing = os.path.join(root, "no-such-file")
        cases.append(("append-files: missing file", ["append-files", stores["bytes"], missing], None,
                      ["no-such-file"], "bytes"))
        cases.append(("append-files: a directory", ["append-files", stores["bytes"], root], None,
                      [os.path.basename(root)], "bytes"))
        cases.append(("append-files: a device", ["append-files", stores["bytes"], "/dev/zero"], None,
                      ["not a regular file"], "bytes"))
        cases.append(("append-npy: a directory", ["append-npy", stores["ragged"], root], None,
                      [os.path.basename(root)], "ragged"))
        for i, (name, args, data, words, kind) in enumerate(cases):
            try:
                input_path = os.path.join(root, "input%d" % i)
                with open(input_path, "wb") as f:
                    f.write(data or b"")
                args = [input_path if a == "INPUT" else a for a in args]
                store = stores[kind]
                before = tree(store)
                rc, err, rss = run_rss(args, input_path)
                peak = max(peak, rss)
                shown = "%s: rc %d, stderr %r" % (name, rc, err)
                assert rc == 1, "expected exit 1: " + shown
                assert "internal error" not in err and "Sanitizer" not in err, shown
                lines = [l for l in err.splitlines() if l.startswith("zrec ")]
                assert lines, "no 'zrec <cmd>:' line: " + shown
                assert any(w in err for w in words), "message lacks %r: %s" % (words, shown)
                assert tree(store) == before, "the store changed: " + name
                v = subprocess.run([ZREC, "verify", store], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                assert v.returncode == 0, "verify after %s: %s" % (name, v.stdout + v.stderr)
                if not SANITIZED:
                    assert rss < RSS_LIMIT_KIB, "%s: peak RSS %d KiB" % (name, rss)
                passed += 1
            except Exception as e:
                failed += 1
                print("FAIL %s" % e)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    passed, failed, peak = claimed_sizes(passed, failed, peak)
    print("figure: %d malformed inputs refused; peak RSS of any %d KiB%s" %
          (passed, peak, " (sanitized build: not bounded-checked)" if SANITIZED else ""))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
