#!/usr/bin/python3
"""Frame copy checks every record as a read would (issue 9, defect 7).

Same-codec `recompress` (a reshard, 3 -> 2 data files, and the same shard count) and
`concat` copy stored frames without re-encoding them. Each case damages one record of
a source that `cat` rejects, then asserts that recompress and concat both:
  - exit 1 with a message naming the source store and the record ID,
  - leave no DST (nor a hidden temporary beside it),
  - leave the source as it was.
Damage: a flipped byte inside a checksummed zstd frame's compressed block; a flipped
byte without a checksum that breaks decoding; a RecordLoc whose logic_length
disagrees with the frame's content size; a frame cut short by one byte; a raw record
whose lengths disagree; a zstd frame, well formed and of the right size, whose
decoded Ragged shape prefix is wrong (only a decode sees it). A clean source still
copies, byte for byte.

Needs: ZREC (path of the zrec binary), python3-zstandard.
"""
import os
import random
import struct
import subprocess
import sys

import zstandard

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)

ZREC = os.environ.get("ZREC")
if not ZREC or not os.access(ZREC, os.X_OK):
    sys.exit("test_frame_copy_checks: set ZREC to the zrec binary (got %r)" % ZREC)
PAGE, LOC = 4096, 16
N = 40
VICTIM = 17  # the record damaged (shard 17 % 3 == 2)
FIGURES = []


def zrec(*args, stdin=b"", rc_want=0):
    p = subprocess.run([ZREC] + list(args), input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != rc_want:
        raise AssertionError("zrec %s: rc %d (want %d): %s" % (" ".join(args), p.returncode, rc_want,
                                                                p.stderr.decode("utf-8", "replace")))
    return p.stdout, p.stderr.decode("utf-8", "replace")


def make_store(d, codec, checksum):
    store = os.path.join(d, "src")
    args = ["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", codec, "--shards", "3", store]
    zrec(*(args + (["--checksum"] if checksum else [])))
    rng = random.Random(5)
    # Half random bytes, half text: frames with real compressed blocks.
    lines = [(bytes(rng.randrange(256) for _ in range(600)).hex() + " word" * 50).encode() for _ in range(N)]
    zrec("append-stream", store, stdin=b"\n".join(lines) + b"\n")
    return store


def loc(store, i):
    with open(os.path.join(store, "meta.zr"), "rb") as f:
        f.seek(PAGE + LOC * i)
        return struct.unpack("<QII", f.read(LOC))


def set_loc(store, i, offset, phys, logic):
    with open(os.path.join(store, "meta.zr"), "r+b") as f:
        f.seek(PAGE + LOC * i)
        f.write(struct.pack("<QII", offset, phys, logic))


def patch_data(store, i, at, data):
    offset, _, _ = loc(store, i)
    with open(os.path.join(store, "data_%d.zr" % (i % 3)), "r+b") as f:
        f.seek(offset + at)
        f.write(data)


def flip(store, i, at):
    offset, _, _ = loc(store, i)
    with open(os.path.join(store, "data_%d.zr" % (i % 3)), "r+b") as f:
        f.seek(offset + at)
        b = f.read(1)
        f.seek(offset + at)
        f.write(bytes([b[0] ^ 0x5A]))


def snapshot(store):
    out = {}
    for name in sorted(os.listdir(store)):
        with open(os.path.join(store, name), "rb") as f:
            out[name] = f.read()
    return out


def expect_copies_refused(d, store, says, what):
    before = snapshot(store)
    _, err = zrec("cat", "--format", "raw", store, rc_want=1)
    if "record %d" % VICTIM not in err:
        raise AssertionError("%s: cat does not reject record %d: %s" % (what, VICTIM, err))
    runs = [("recompress (reshard)", lambda dst: ["recompress", "--shards", "2", store, dst]),
            ("recompress", lambda dst: ["recompress", store, dst]),
            ("concat", lambda dst: ["concat", store, store, dst])]
    for name, args in runs:
        dst = os.path.join(d, "dst_" + name.split()[0])
        _, err = zrec(*args(dst), rc_want=1)
        for s in says + ["record %d" % VICTIM, store]:
            if s not in err:
                raise AssertionError("%s, %s: %r not in the message: %s" % (what, name, s, err))
        left = [n for n in os.listdir(d) if n.startswith("dst_") or n.startswith(".dst_")]
        if left:
            raise AssertionError("%s, %s: left behind %s" % (what, name, left))
        FIGURES.append("%s, %s: %s" % (what, name, err.strip().splitlines()[-1]))
    if snapshot(store) != before:
        raise AssertionError("%s: the source changed" % what)


def test_clean_source_copies(d):
    store = make_store(d, "zstd", True)
    want, _ = zrec("cat", "--format", "raw", store)
    dst = os.path.join(d, "out")
    for args in (["recompress", "--shards", "2", store, dst], ["concat", store, store, dst]):
        zrec(*args)
        got, _ = zrec("cat", "--format", "raw", dst)
        if got != want * (2 if args[0] == "concat" else 1):
            raise AssertionError("%s changed the records" % args[0])
        zrec("verify", dst)
        subprocess.run(["rm", "-rf", dst], check=True)


def test_payload_flip_with_checksum(d):
    store = make_store(d, "zstd", True)
    _, phys, _ = loc(store, VICTIM)
    flip(store, VICTIM, phys // 2)  # inside the compressed block: decodes, checksum differs
    expect_copies_refused(d, store, ["zstd frame does not decode"], "payload byte flipped (checksum)")


def test_payload_flip_breaks_decoding(d):
    store = make_store(d, "zstd", False)
    flip(store, VICTIM, 8)  # the first block's header: no checksum needed to see it
    expect_copies_refused(d, store, ["zstd frame"], "block header flipped (no checksum)")


def test_content_size_mismatch(d):
    store = make_store(d, "zstd", False)
    offset, phys, logic = loc(store, VICTIM)
    set_loc(store, VICTIM, offset, phys, logic + 1)
    expect_copies_refused(d, store, ["declares %d bytes but logic_length is %d" % (logic, logic + 1)],
                          "content size != logic_length")


def test_truncated_frame(d):
    store = make_store(d, "zstd", True)
    offset, phys, logic = loc(store, VICTIM)
    set_loc(store, VICTIM, offset, phys - 1, logic)
    expect_copies_refused(d, store, ["zstd frame is damaged"], "frame cut short by a byte")


def test_raw_size_mismatch(d):
    store = make_store(d, "raw", False)
    offset, phys, logic = loc(store, VICTIM)
    set_loc(store, VICTIM, offset, phys - 3, logic)
    expect_copies_refused(d, store, ["(offset %d, %d bytes) is raw but its logic_length is %d" % (offset, phys - 3, logic)],
                          "raw phys_length != logic_length")


def test_wrong_shape_prefix_inside_frame(d):
    store = make_store(d, "zstd", False)
    offset, phys, logic = loc(store, VICTIM)
    # A well-formed frame of exactly logic_length bytes whose prefix claims one element
    # fewer than it holds: header and content size are right; only decoding shows it.
    content = struct.pack("<Q", logic - 8 - 1) + b"\0" * (logic - 8)
    frame = zstandard.ZstdCompressor(write_content_size=True).compress(content)
    assert len(frame) < phys, (len(frame), phys)
    patch_data(store, VICTIM, 0, frame)
    set_loc(store, VICTIM, offset, len(frame), logic)
    expect_copies_refused(d, store, ["shape prefix"], "wrong shape prefix inside a valid frame")


TESTS = [test_clean_source_copies, test_payload_flip_with_checksum, test_payload_flip_breaks_decoding,
         test_content_size_mismatch, test_truncated_frame, test_raw_size_mismatch,
         test_wrong_shape_prefix_inside_frame]

if __name__ == "__main__":
    sys.exit(case_runner.run_cases(TESTS, "zrec-framecopy-", figures=FIGURES))
