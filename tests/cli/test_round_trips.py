#!/usr/bin/python3
"""Round trips and labels without Python (issue 21).

- `append-stream --framing X` then `cat --framing X` gives back the same bytes, for
  lines, nul, u32le and u64le (binary payloads, CRLF, long records); lines refuses a
  record holding a newline and nul one holding a NUL, naming the record and the byte;
  --framing with another --format is a usage error.
- Ragged 1-D '|u1' records are strings in `cat --format text` (control bytes as \\xNN)
  and jsonl (a JSON string: UTF-8 kept, other bytes U+FFFD); --bytes-as-numbers keeps
  the byte values.
- `append-stream --parse ints|floats` into Dense stores: a scalar store takes one
  number per line, a (3,) store three; another count fails naming the line, the store
  unchanged; the schema error for a Ragged ndim-2 store suggests a Dense scalar store.
- `append-tar --parse cls=int` makes a Dense scalar '<i8' stream; a member with two
  numbers is refused; cls=int into an existing Ragged stream is refused.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import io
import json
import os
import struct
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, must, must_out, records, require_zrec, tree_hash  # noqa: E402

require_zrec("test_round_trips")

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def create(path, *args):
    must(["create", *args, path])
    return path


def byte_store(path):
    return create(path, "--ragged", "--ndim", "1", "--dtype", "|u1")


def frame(framing, payloads):
    if framing == "lines":
        return b"".join(p + b"\n" for p in payloads)
    if framing == "nul":
        return b"".join(p + b"\0" for p in payloads)
    width = "<I" if framing == "u32le" else "<Q"
    return b"".join(struct.pack(width, len(p)) + p for p in payloads)


@case
def framings_round_trip(tmp):
    text = [b'{"k": 1, "text": "caf\xc3\xa9"}', b"crlf line\r", b"x" * 300000, b"\xff\xfe\x01 binary-ish"]
    binary = text + [b"a\nb", b"\0\0\n", bytes(range(256)) * 17]
    for framing, payloads in (("lines", text), ("nul", [p for p in text]), ("u32le", binary), ("u64le", binary)):
        data = frame(framing, payloads)
        s = byte_store(os.path.join(tmp, framing))
        must(["append-stream", "--framing", framing, s], stdin=data)
        out = must_out(["cat", "--framing", framing, s])
        expect(out == data, "%s: cat --framing gives %d bytes, not the %d appended" % (framing, len(out), len(data)))
        # A selection frames only its records; -o writes the same bytes to a file.
        out = must_out(["cat", "--framing", framing, s, "1:3"])
        expect(out == frame(framing, payloads[1:3]), "%s: the selection 1:3 is framed wrong" % framing)
        f = os.path.join(tmp, framing + ".out")
        must(["cat", "--framing", framing, s, "-o", f])
        expect(open(f, "rb").read() == data, "%s: -o differs from stdout" % framing)


@case
def delimiter_inside_a_record_is_refused(tmp):
    s = byte_store(os.path.join(tmp, "s"))
    must(["append-stream", "--framing", "u32le", s], stdin=frame("u32le", [b"one", b"two\nlines", b"t\0"]))
    fails(["cat", "--framing", "lines", s], 1,
          ["zrec cat: record 1 holds a newline at byte 3: --framing lines cannot delimit it "
           "(use --framing u32le or u64le)"])
    fails(["cat", "--framing", "nul", s], 1, ["record 2 holds a NUL byte at byte 1: --framing nul cannot delimit it"])
    fails(["cat", "--framing", "lines", "--format", "jsonl", s], 2,
          ["--framing writes payload bytes (--format raw), not --format jsonl"])
    fails(["cat", "--framing", "crlf", s], 2, ["unknown --framing 'crlf' (use lines, nul, u32le or u64le)"])


@case
def byte_records_print_as_strings(tmp):
    s = byte_store(os.path.join(tmp, "s"))
    docs = [b'{"a": "caf\xc3\xa9"}', b"tab\there \\ \xff"]
    must(["append-stream", "--framing", "nul", s], stdin=frame("nul", docs))
    out = must_out(["cat", "--format", "jsonl", s]).decode()
    expect(out.splitlines() == ['"{\\"a\\": \\"caf\u00e9\\"}"', '"tab\\there \\\\ \\ufffd"'], "jsonl: %r" % out)
    expect(json.loads(out.splitlines()[0]) == docs[0].decode(), "jsonl does not parse back to the text")
    out = must_out(["cat", "--format", "text", s]).decode()
    expect(out == '0\t{"a": "caf\u00e9"}\n1\ttab\\x09here \\ \\xff\n', "text: %r" % out)
    out = must_out(["cat", "--format", "jsonl", "--bytes-as-numbers", s, "1"]).decode()
    expect(out == "[" + ",".join(str(b) for b in docs[1]) + "]\n", "--bytes-as-numbers: %r" % out)
    fails(["cat", "--format", "npy", "--bytes-as-numbers", s], 2,
          ["--bytes-as-numbers is used with --format text or jsonl only"])


@case
def parse_into_dense_stores(tmp):
    labels = create(os.path.join(tmp, "labels"), "--dense", "--shape", "scalar", "--dtype", "<i8")
    must(["append-stream", "--parse", "ints", labels], stdin=b"3\n-1\n  7  \n")
    expect(records(labels)[0].tolist() == [3, -1, 7], "labels: %r" % records(labels))
    xyz = create(os.path.join(tmp, "xyz"), "--dense", "--dtype", "<f4", "--shape", "3")
    must(["append-stream", "--parse", "floats", xyz], stdin=b"1 2 3\n0.5 -1e3 inf\n")
    got = records(xyz)[0]
    expect(np.array_equal(got, np.array([[1, 2, 3], [0.5, -1e3, np.inf]], dtype="<f4")), "xyz: %r" % got)
    before = tree_hash(xyz)
    fails(["append-stream", "--parse", "floats", xyz], 1,
          ["zrec append-stream: stdin line 2 holds 2 numbers; each record of '%s' (dense <f4 (3,)) is exactly 3 "
           "numbers" % xyz], stdin=b"1 2 3\n4 5\n")
    fails(["append-stream", "--parse", "ints", labels], 1,
          ["stdin line 1 holds 2 numbers; each record of '%s' (dense <i8 ()) is exactly 1 number" % labels],
          stdin=b"1 2\n")
    expect(tree_hash(xyz) == before, "a refused append changed the store")
    grid = create(os.path.join(tmp, "grid"), "--ragged", "--ndim", "2", "--dtype", "<i8")
    fails(["append-stream", "--parse", "ints", grid], 1,
          ["(for one number per line, e.g. labels: zrec create --dense --shape scalar --dtype '<i8' STORE; "
           "for lines of any length: "
           "zrec create --ragged --ndim 1 --dtype '<i8' STORE)"], stdin=b"1\n")


def tar_of(path, members):
    with tarfile.open(path, "w") as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


@case
def append_tar_parse_one_number(tmp):
    shard = tar_of(os.path.join(tmp, "a.tar"),
                   [("s0.jpg", b"JPEG0"), ("s0.cls", b"4\n"), ("s1.jpg", b"JPEG1"), ("s1.cls", b" 11")])
    ds = os.path.join(tmp, "ds")
    must(["append-tar", "--ext", "jpg,cls", "--parse", "cls=int", ds, shard])
    info = json.loads(must_out(["info", "--json", os.path.join(ds, "cls")]))
    expect(info["kind"] == "dense" and info["dtype"] == "<i8" and info["item_shape"] == [],
           "cls=int made %r" % info)
    expect(records(os.path.join(ds, "cls"))[0].tolist() == [4, 11], "cls values")
    two = tar_of(os.path.join(tmp, "b.tar"), [("s2.jpg", b"J"), ("s2.cls", b"1 2\n")])
    fails(["append-tar", "--parse", "cls=int", ds, two], 1,
          ["member 's2.cls' holds more than one number; stream '%s' is a Dense scalar store" % os.path.join(ds, "cls")])
    ragged = os.path.join(tmp, "ragged")
    must(["append-tar", "--ext", "jpg,cls", "--parse", "cls=ints", ragged, shard])
    fails(["append-tar", "--parse", "cls=int", ragged, shard], 1,
          ["--parse cls=int needs a Dense scalar store of an integer dtype (--parse cls=ints reads a Ragged ndim-1 one)"])
    fails(["append-tar", "--parse", "cls=integer", ds, shard], 2,
          ["--parse 'cls=integer': expected EXT=int or EXT=float (one number per member, e.g. --parse cls=int)"])


def main():
    return case_runner.run_cases(CASES, "zrec_round_trips_")


if __name__ == "__main__":
    sys.exit(main())
