#!/usr/bin/python3
"""zrec append-stream: records from lines, NUL-separated and length-prefixed streams.

- lines: newline stripped, a last unterminated line counts, CR of CRLF kept as a byte,
  empty lines refused (or dropped with --skip-empty); a 100 MB line; a million 10-byte
  lines through a pipe.
- nul, u32le, u64le framings, from printf and Python; binary bytes round-trip.
- --parse ints with a tokenizer-like generator into <i4 (and >u2, |i1), numbers
  checked against NumPy; overflow and garbage rejected naming the line number;
  --parse floats into <f2/<f4/<f8, equal to NumPy's conversion.
- A stream cut short by `head -c` inside a frame: exit 1, "truncated", store unchanged.
- Schema errors (Dense, wrong dtype) and usage errors (bad --framing, --parse with
  binary framing).
- `zrec cat --format npy a | zrec append-npy b -` copies records (Ragged and Dense).
- --skip-first resumes: the records already present are not appended twice.
- A regular file, cut from its mapping: the same store as through a pipe, over many
  batches; stdin redirected from a file mid-way; resumes and comparisons from a file.

Needs: ZREC (path of the zrec binary), python3-numpy, printf and head (coreutils).
"""
import io
import json
import os
import random
import shlex
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import byte_records, fails, must, must_out, records, require_zrec  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = require_zrec("test_append_stream")


def create(path, dtype="|u1", codec="raw", dense_shape=None):
    if dense_shape is not None:
        must(["create", "--dense", "--dtype", dtype, "--shape", dense_shape, "--codec", codec, path])
    else:
        must(["create", "--ragged", "--ndim", "1", "--dtype", dtype, "--codec", codec, path])
    return path


def length(store):
    return json.loads(must(["info", "--json", store])[0])["length"]


def store_files(store):
    return {name: open(os.path.join(store, name), "rb").read() for name in sorted(os.listdir(store))}


def verify(store):
    must(["verify", store])


CASES, case = case_runner.case_registry()


@case
def lines_basic(tmp):
    s = create(os.path.join(tmp, "s"), codec="zstd")
    # An unterminated last line counts; CRLF keeps the CR; bytes need not be UTF-8.
    must(["append-stream", s], stdin_from=r"printf 'hello\nworld\r\n\xff\xfe bin\nlast'")
    assert byte_records(s) == [b"hello", b"world\r", b"\xff\xfe bin", b"last"], byte_records(s)
    # Explicit --framing lines and -i FILE.
    path = os.path.join(tmp, "in.txt")
    open(path, "wb").write(b'{"a": 1}\n{"b": [2, 3]}\n')
    must(["append-stream", "--framing", "lines", "-i", path, s])
    assert byte_records(s)[4:] == [b'{"a": 1}', b'{"b": [2, 3]}']
    verify(s)


@case
def empty_lines(tmp):
    s = create(os.path.join(tmp, "s"))
    before = store_files(s)
    fails(["append-stream", s], stdin=b"a\n\nb\n", says=["line 2 is empty", "--skip-empty"])
    assert store_files(s) == before, "a refused stream changed the store"
    must(["append-stream", "--skip-empty", s], stdin=b"a\n\nb\n\n")
    assert byte_records(s) == [b"a", b"b"]
    # An empty stream appends nothing and succeeds.
    must(["append-stream", s], stdin=b"")
    assert length(s) == 2


@case
def nul_framing(tmp):
    s = create(os.path.join(tmp, "s"))
    must(["append-stream", "--framing", "nul", s], stdin_from=r"printf 'one\0two\nlines\0three'")
    fails(["append-stream", "--framing", "nul", s], stdin=b"x\0\0y", says=["record 2 is empty"])
    must(["append-stream", "--framing", "nul", "--skip-empty", s], stdin=b"x\0\0y\0")
    assert byte_records(s) == [b"one", b"two\nlines", b"three", b"x", b"y"], byte_records(s)


@case
def length_prefixed(tmp):
    rng = random.Random(7)
    payloads = [bytes(rng.randrange(256) for _ in range(n)) for n in (1, 5, 300, 70000, 2)]
    for width, fmt in ((4, "<I"), (8, "<Q")):
        s = create(os.path.join(tmp, "s%d" % width), codec="zstd")
        stream = b"".join(struct.pack(fmt, len(p)) + p for p in payloads)
        must(["append-stream", "--framing", "u%dle" % (width * 8), s], stdin=stream)
        assert byte_records(s) == payloads
        verify(s)
        # A zero-length frame is an empty record.
        fails(["append-stream", "--framing", "u%dle" % (width * 8), s], stdin=struct.pack(fmt, 0),
              says=["frame 1 (at byte 0) is empty"])


@case
def cut_short_mid_frame(tmp):
    """head -c cuts the stream inside a frame: error, and the store is unchanged."""
    s = create(os.path.join(tmp, "s"), codec="zstd")
    must(["append-stream", s], stdin=b"existing\n")
    gen = os.path.join(tmp, "gen.py")
    open(gen, "w").write(
        "import sys, struct\n"
        "for i in range(2000):\n"
        "    p = (b'record %d ' % i) * 50\n"
        "    sys.stdout.buffer.write(struct.pack('<I', len(p)) + p)\n")
    before = store_files(s)
    full = subprocess.run(["/usr/bin/python3", gen], stdout=subprocess.PIPE, check=True).stdout
    # Inside a payload, inside a length prefix, and after the whole stream but one byte.
    for cut in (len(full) // 2 + 3, 2, len(full) - 1):
        err = fails(["append-stream", "--framing", "u32le", s],
                    stdin_from="/usr/bin/python3 %s | head -c %d" % (shlex.quote(gen), cut), says=["truncated"])
        assert store_files(s) == before, "a cut-short stream changed the store (cut at %d)" % cut
    # With checkpoints, the store holds the checkpointed prefix, and says so.
    err = fails(["append-stream", "--framing", "u32le", "--checkpoint-every", "500", s],
                stdin_from="/usr/bin/python3 %s | head -c %d" % (shlex.quote(gen), len(full) // 2 + 3),
                says=["truncated", "holds 1001 records", "(resume: the same command with --from-length 1)"])
    assert length(s) == 1001
    verify(s)


@case
def long_line_100mb(tmp):
    s = create(os.path.join(tmp, "s"), codec="zstd")
    big = b"0123456789abcdef" * (100 * 1000 * 1000 // 16)
    must(["append-stream", "--window-mib", "8", s], stdin=b"first\n" + big + b"\nlast\n")
    assert length(s) == 3
    got = must(["cat", "--format", "raw", s, "1"])[0]
    assert got == big, "the 100 MB line did not round-trip"
    assert must(["cat", "--format", "raw", s, "0"])[0] == b"first"
    assert must(["cat", "--format", "raw", s, "2"])[0] == b"last"


@case
def million_short_lines(tmp):
    s = create(os.path.join(tmp, "s"))
    n = 1000000
    # Lines of 10 bytes: 9 digits and the newline, which is dropped.
    gen = "/usr/bin/python3 -c 'import sys; sys.stdout.buffer.write(b\"\".join(b\"%%09d\\n\" %% i for i in range(%d)))'" % n
    must(["append-stream", s], stdin_from=gen)
    assert length(s) == n
    raw = must(["cat", "--format", "raw", s])[0]
    assert raw == b"".join(b"%09d" % i for i in range(n)), "concatenated records differ"
    # Record boundaries, on a sample.
    sample = list(range(0, n, 9973))[:50] + [n - 1]
    got = must(["cat", "--format", "raw", s, ",".join(map(str, sample))])[0]
    assert got == b"".join(b"%09d" % i for i in sample)
    lines = must(["cat", "--format", "jsonl", s, "::99991"])[0].splitlines()
    assert len(lines) == 11 and all(len(json.loads(line)) == 9 for line in lines)


@case
def memory_stays_bounded(tmp):
    """A 50 MB stream through a 4 MiB window: peak RSS stays near the window."""
    if os.environ.get("ZREC_SANITIZED", "0") not in ("0", "", "FALSE", "OFF") or not os.access("/usr/bin/time", os.X_OK):
        return  # peak RSS means nothing under ASan; /usr/bin/time comes from the 'time' package
    s = create(os.path.join(tmp, "s"))
    gen = "/usr/bin/python3 -c 'import sys; [sys.stdout.buffer.write((b\"y\" * 99 + b\"\\n\") * 10000) for _ in range(50)]'"
    cmd = "%s | /usr/bin/time -f 'maxrss=%%M' %s append-stream --window-mib 4 %s" % (gen, shlex.quote(ZREC), shlex.quote(s))
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    rss_kb = int(err.rsplit("maxrss=", 1)[1].split()[0])
    assert rss_kb < 64 * 1024, "peak RSS %d KiB for a 4 MiB window" % rss_kb
    assert length(s) == 500000


TOKENIZER = r"""
import random, sys
rng = random.Random(int(sys.argv[1]))
out = sys.stdout
for doc in range(int(sys.argv[2])):
    ids = [rng.randrange(0, 50257) for _ in range(rng.randrange(1, 60))]
    if doc % 7 == 0:
        ids[0] = -rng.randrange(1, 1000)  # some negatives
    out.write(" ".join(map(str, ids)) + ("\r\n" if doc % 11 == 0 else "\n"))
"""


@case
def parse_ints_tokenizer(tmp):
    gen = os.path.join(tmp, "tok.py")
    open(gen, "w").write(TOKENIZER)
    s = create(os.path.join(tmp, "tokens"), dtype="<i4", codec="zstd")
    must(["append-stream", "--parse", "ints", "--checkpoint-every", "1000", s],
         stdin_from="/usr/bin/python3 %s 5 3000" % shlex.quote(gen))
    text = subprocess.run(["/usr/bin/python3", gen, "5", "3000"], stdout=subprocess.PIPE, check=True).stdout
    want = [np.array(line.split(), dtype="<i4") for line in text.decode().splitlines()]
    got = records(s)
    assert len(got) == len(want) == 3000
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == np.dtype("<i4") and np.array_equal(g, w), "record %d differs" % i
    verify(s)
    # Other integer dtypes, byte orders and spacing.
    for dtype, line, values in ((">u2", b"  65535\t0 +7 \n", [65535, 0, 7]),
                                ("|i1", b"-128 127\n", [-128, 127]),
                                ("<u8", b"18446744073709551615\n", [18446744073709551615]),
                                ("<i8", b"-9223372036854775808 9223372036854775807\n",
                                 [-9223372036854775808, 9223372036854775807])):
        t = create(os.path.join(tmp, "t" + dtype.replace("<", "l").replace(">", "b").replace("|", "n")), dtype=dtype)
        must(["append-stream", "--parse", "ints", t], stdin=line)
        (r,) = records(t)
        assert r.dtype == np.dtype(dtype) and r.tolist() == values, (dtype, r)


@case
def parse_ints_rejects(tmp):
    s = create(os.path.join(tmp, "s"), dtype="<i4")
    must(["append-stream", "--parse", "ints", s], stdin=b"1 2\n")
    before = store_files(s)
    for text, says in ((b"1 2\n3 4\n5 2147483648\n", ["line 3", "'2147483648' is out of range for <i4"]),
                       (b"1\n-2147483649\n", ["line 2", "out of range"]),
                       (b"1 2\n3 four 5\n", ["line 2", "'four' is not an integer"]),
                       (b"1.5\n", ["line 1", "'1.5' is not an integer"]),
                       (b"1\n\n2\n", ["line 2", "no numbers"]),
                       (b"7 8\n9 0x10\n", ["line 2", "'0x10'"])):
        fails(["append-stream", "--parse", "ints", s], stdin=text, says=says)
        assert store_files(s) == before
    u = create(os.path.join(tmp, "u"), dtype="|u1")
    fails(["append-stream", "--parse", "ints", u], stdin=b"1 256\n", says=["line 1", "'256' is out of range for |u1 (0..255)"])
    fails(["append-stream", "--parse", "ints", u], stdin=b"-1\n", says=["'-1' is out of range"])
    # --skip-empty drops lines without numbers.
    must(["append-stream", "--parse", "ints", "--skip-empty", s], stdin=b"\n  \n3\n")
    assert [r.tolist() for r in records(s)] == [[1, 2], [3]]


@case
def parse_floats(tmp):
    text = b"1 -2.5 1e-3 inf -inf\n3.14159265358979 65504 1e-8 6e-8\n0.1 0.2 0.3\n-0 nan\n"
    lines = text.decode().splitlines()
    for dtype in ("<f2", "<f4", "<f8", ">f4"):
        s = create(os.path.join(tmp, "f" + dtype[1:] + ("b" if dtype[0] == ">" else "")), dtype=dtype)
        must(["append-stream", "--parse", "floats", s], stdin=text)
        got = records(s)
        for g, line in zip(got, lines):
            w = np.array([float(x) for x in line.split()], dtype=np.float64).astype(dtype)
            assert g.dtype == np.dtype(dtype)
            assert g.tobytes() == w.tobytes(), (dtype, g, w)
    f2 = create(os.path.join(tmp, "h"), dtype="<f2")
    fails(["append-stream", "--parse", "floats", f2], stdin=b"1\n65520\n", says=["line 2", "'65520' overflows <f2"])
    f4 = create(os.path.join(tmp, "g"), dtype="<f4")
    fails(["append-stream", "--parse", "floats", f4], stdin=b"1e39\n", says=["line 1", "overflows <f4"])
    fails(["append-stream", "--parse", "floats", f4], stdin=b"1 x\n", says=["line 1", "'x' is not a number"])
    # Floats into an integer store, ints into a float store: refused before reading.
    i4 = create(os.path.join(tmp, "i"), dtype="<i4")
    fails(["append-stream", "--parse", "floats", i4], stdin=b"1\n", says=["float dtype"])
    fails(["append-stream", "--parse", "ints", f4], stdin=b"1\n", says=["integer dtype"])


@case
def wrong_schema_and_usage(tmp):
    d = create(os.path.join(tmp, "d"), dtype="|u1", dense_shape="4")
    fails(["append-stream", d], stdin=b"abcd\n", says=["must be Ragged with ndim 1", "zrec create --ragged"])
    i4 = create(os.path.join(tmp, "i4"), dtype="<i4")
    fails(["append-stream", i4], stdin=b"abcd\n", says=["'|u1'", "--parse ints"])
    u = create(os.path.join(tmp, "u"))
    fails(["append-stream", "--framing", "crlf", u], stdin=b"x\n", rc_want=2, says=["unknown --framing"])
    fails(["append-stream", "--parse", "ints", "--framing", "u32le", u], stdin=b"", rc_want=2,
          says=["--parse reads text"])
    fails(["append-stream", "--parse", "hex", u], stdin=b"", rc_want=2, says=["unknown --parse"])


@case
def cat_npy_into_append_npy(tmp):
    """The .npy stream of `cat --format npy` feeds `append-npy -`."""
    a = create(os.path.join(tmp, "a"), codec="zstd")
    must(["append-stream", a], stdin=b"alpha\nbeta\ngamma delta\n")
    b = create(os.path.join(tmp, "b"), codec="raw")
    cmd = "%s cat --format npy %s" % (shlex.quote(ZREC), shlex.quote(a))
    must(["append-npy", b, "-"], stdin_from=cmd)
    assert byte_records(b) == byte_records(a) == [b"alpha", b"beta", b"gamma delta"]
    da = create(os.path.join(tmp, "da"), dtype="<f4", dense_shape="2,3")
    x = np.arange(24, dtype="<f4").reshape(4, 2, 3)
    buf = io.BytesIO()
    np.save(buf, x)
    must(["append-npy", da, "-"], stdin=buf.getvalue())
    db = create(os.path.join(tmp, "db"), dtype="<f4", dense_shape="2,3", codec="zstd")
    must(["append-npy", db, "-"], stdin_from="%s cat --format npy %s" % (shlex.quote(ZREC), shlex.quote(da)))
    (got,) = records(db)
    assert np.array_equal(got, x)


@case
def skip_first_resumes(tmp):
    s = create(os.path.join(tmp, "s"))
    lines = b"".join(b"row %d\n" % i for i in range(100))
    # A first run that published 40 of them (as an interrupted checkpointed run would).
    must(["append-stream", s], stdin=b"".join(b"row %d\n" % i for i in range(40)))
    _, err = must(["append-stream", "--skip-first", "40", s], stdin=lines)
    assert "after skipping 40" in err, err
    assert byte_records(s) == [b"row %d" % i for i in range(100)]
    # --skip-first counts records, not empty lines dropped by --skip-empty.
    t = create(os.path.join(tmp, "t"))
    must(["append-stream", "--skip-empty", "--skip-first", "2", t], stdin=b"a\n\nb\n\nc\nd\n")
    assert byte_records(t) == [b"c", b"d"]
    # Length-prefixed and parsed streams skip the same way.
    u = create(os.path.join(tmp, "u"))
    frames = b"".join(struct.pack("<I", len(p)) + p for p in (b"x", b"yy", b"zzz"))
    must(["append-stream", "--framing", "u32le", "--skip-first", "2", u], stdin=frames)
    assert byte_records(u) == [b"zzz"]
    v = create(os.path.join(tmp, "v"), dtype="<i4")
    must(["append-stream", "--parse", "ints", "--skip-first", "1", v], stdin=b"1 2\n3\n")
    assert [r.tolist() for r in records(v)] == [[3]]


@case
def regular_file_is_mapped(tmp):
    """A regular file (-i FILE, or stdin redirected from one) is cut from its mapping in
    batches of the window's size: the store holds what the same bytes through a pipe
    give, across many batches, with --skip-empty, --skip-first, a resumed run's
    comparison, an unterminated last line and stdin not at the file's start."""
    rng = random.Random(3)
    # 40 MiB of lines from 1 to 300 bytes: more records (16384) and bytes (2 MiB) than
    # a raw store's batch holds, and past the 8 MiB steps in which pages are let go.
    pool = [bytes(rng.choice(b"abcdefgh \t{}:,0123456789") for _ in range(rng.randrange(1, 300))) for _ in range(997)]
    lines = []
    total = 0
    while total < 40 << 20:
        line = pool[rng.randrange(len(pool))] + b"%d" % len(lines)
        lines.append(line)
        total += len(line) + 1
    lines[7] = lines[50000] = b""  # dropped by --skip-empty
    lines[-1] = b"unterminated"
    path = os.path.join(tmp, "in.jsonl")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
    want = [line for line in lines if line]
    for codec in ("raw", "zstd"):
        piped = create(os.path.join(tmp, "piped_" + codec), codec=codec)
        must(["append-stream", "--skip-empty", piped], stdin_from="cat " + shlex.quote(path))
        mapped = create(os.path.join(tmp, "mapped_" + codec), codec=codec)
        must(["append-stream", "--skip-empty", "-i", path, mapped])
        assert length(mapped) == len(want)
        assert must_out(["cat", "--format", "raw", mapped]) == b"".join(want)
        # The data files hold each record's length before its bytes: the same files are
        # the same records.
        for name in os.listdir(piped):
            if name.startswith("data_"):
                assert open(os.path.join(piped, name), "rb").read() == \
                    open(os.path.join(mapped, name), "rb").read(), name
    # stdin redirected from the file, some lines already read off it by `head`, which
    # leaves the file's offset just past them: the append starts there.
    s = create(os.path.join(tmp, "offset"))
    p = subprocess.run(["bash", "-c", "{ head -n 3 >/dev/null; %s -q append-stream --skip-empty %s; } < %s"
                        % (shlex.quote(ZREC), shlex.quote(s), shlex.quote(path))], stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr
    assert must_out(["cat", "--format", "raw", s]) == b"".join(line for line in lines[3:] if line)
    assert length(s) == len([line for line in lines[3:] if line])
    assert must_out(["cat", "--format", "raw", s, "0"]) == lines[3]
    # An empty line refused names the file and the line.
    t = create(os.path.join(tmp, "t"))
    fails(["append-stream", "-i", path, t], says=["'%s' line 8 is empty" % path, "--skip-empty"])
    assert length(t) == 0
    # --skip-first from a file; then a rerun that finds them present compares them.
    half = len(want) // 2
    u = create(os.path.join(tmp, "u"))
    must(["append-stream", "--skip-empty", u], stdin=b"\n".join(want[:half]) + b"\n")
    _, err = must(["append-stream", "--skip-empty", "--skip-first", str(half), "-i", path, u])
    assert "after skipping %d" % half in err, err
    assert length(u) == len(want) and must_out(["cat", "--format", "raw", u]) == b"".join(want)
    _, err = must(["append-stream", "--skip-empty", "--from-length", "0", "--check-present", "-i", path, u])
    assert "already present" in err and length(u) == len(want), err
    altered = os.path.join(tmp, "altered.jsonl")
    with open(altered, "wb") as f:
        f.write(b"\n".join(want[:100] + [b"not the stored line"] + want[101:]))
    fails(["append-stream", "--from-length", "0", "--check-present", "-i", altered, u], says=["line 101"])
    assert length(u) == len(want)


@case
def summary_line(tmp):
    s = create(os.path.join(tmp, "s"), codec="zstd")
    _, err = must(["append-stream", s], stdin=b"a\nb\n")
    assert "zrec append-stream: appended 2 records (4 B in, " in err and "stored) to" in err, err
    assert "records/s" in err and "it now holds 2" in err, err
    _, err = must(["-q", "append-stream", s], stdin=b"c\n")
    assert err == "", err


def main():
    return case_runner.run_cases(CASES, "zrec_append_stream_")


if __name__ == "__main__":
    sys.exit(main())
