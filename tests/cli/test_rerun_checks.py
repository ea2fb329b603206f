#!/usr/bin/python3
"""Reruns check what they skip (issue 36, weak point 5): with --from-length, the input
records a rerun finds already in the store are compared with the stored ones, and the
first that differs fails the run naming both, the store byte-identical. Before, a rerun
over another input (a regenerated glob, a generator with another seed) appended that
input's tail after the first input's head, exit 0.

- append-stream: lines from a pipe and from a file, --parse ints, u32le frames (from a
  pipe compared by default; from a file only with --check-present, as they are seeked
  past); --no-check-present keeps the old behaviour;
- append-npy: a .npy stream on stdin (compared by default), a .npy file (with
  --check-present), a Ragged store whose records differ in shape only;
- append-files: the files found present, with --check-present; without it, their sizes
  (issue 45: a regenerated list got its tail appended);
- the same input run again passes, and --json counts records_compared.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import io
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, must, must_out, npy_bytes, tree_digests  # noqa: E402
from cli_helpers import require_zrec  # noqa: E402

ZREC = require_zrec("test_rerun_checks")
CASES, case = case_runner.case_registry()


def lines(values):
    return b"".join(b"%d\n" % v for v in values)


def unchanged_after(store, args, says, stdin=None, stdin_file=None):
    """`zrec ARGS` fails (exit 1) saying each of `says`, and `store` is byte-identical."""
    before = tree_digests(store)
    fails(args, 1, says, stdin=stdin, stdin_file=stdin_file)
    expect(tree_digests(store) == before, "a refused rerun changed '%s'" % store)


@case
def append_stream_lines(d):
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", s])
    must(["append-stream", s], stdin=lines(range(10)))
    # The same input again appends its tail once, and counts what it compared.
    out = must_out(["append-stream", "--json", "--from-length", "0", s], stdin=lines(range(15)))
    got = json.loads(out)
    expect((got["records_present"], got["records_compared"], got["records_appended"]) == (10, 10, 5), out)
    # Another input: its line 8 (record 7 of the store) is "70", not "7".
    other = lines(list(range(7)) + [70] + list(range(8, 20)))
    unchanged_after(s, ["append-stream", "--from-length", "0", s], [
        "stdin line 8 differs from record 7 of '%s' (shape (2,), the stored one (1,)), which it should equal: "
        "the store holds another input from --from-length 0 (--no-check-present skips this check); "
        "nothing was appended" % s], stdin=other)
    # Same length, other bytes; from a file, which lines framing reads anyway.
    f = os.path.join(d, "other.txt")
    with open(f, "wb") as fh:
        fh.write(lines(list(range(12)) + [13] + list(range(13, 20))))
    unchanged_after(s, ["append-stream", "--from-length", "0", "-i", f, s],
                    ["'%s' line 13 differs from record 12 of '%s' (first difference at byte 1)" % (f, s)])
    # --from-length past the input's first records: only the records from there compare.
    unchanged_after(s, ["append-stream", "--from-length", "5", s], ["stdin line 3 differs from record 7 of"],
                    stdin=lines([5, 6, 99, 8]))
    # --no-check-present: the old behaviour, the tail appended.
    must(["append-stream", "--no-check-present", "--from-length", "0", s], stdin=other)
    expect(json.loads(must_out(["info", "--json", s]))["length"] == 20, "length after --no-check-present")


@case
def append_stream_numbers_and_frames(d):
    s = os.path.join(d, "n")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i8", s])
    must(["append-stream", "--parse", "ints", s], stdin=b"1 2 3\n4 5\n")
    unchanged_after(s, ["append-stream", "--parse", "ints", "--from-length", "0", s],
                    ["stdin line 2 differs from record 1 of '%s' (first difference at byte 8)" % s],
                    stdin=b"1 2 3\n4 6\n7\n")
    must(["append-stream", "--parse", "ints", "--from-length", "0", s], stdin=b"1 2 3\n4 5\n7\n")

    b = os.path.join(d, "b")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "raw", b])

    def frames(payloads):
        return b"".join(len(p).to_bytes(4, "little") + p for p in payloads)

    must(["append-stream", "--framing", "u32le", b], stdin=frames([b"ab", b"cd"]))
    other = frames([b"ab", b"cX", b"ef"])
    unchanged_after(b, ["append-stream", "--framing", "u32le", "--from-length", "0", b],
                    ["stdin frame 2 (at byte 6) differs from record 1 of '%s'" % b], stdin=other)
    # From a file the present frames are seeked past: compared only with --check-present.
    f = os.path.join(d, "frames.bin")
    with open(f, "wb") as fh:
        fh.write(other)
    unchanged_after(b, ["append-stream", "--framing", "u32le", "--from-length", "0", "--check-present", "-i", f, b],
                    ["'%s' frame 2 (at byte 6) differs from record 1 of '%s'" % (f, b)])
    out = json.loads(must_out(["append-stream", "--framing", "u32le", "--from-length", "0", "--json", "-i", f, b]))
    expect((out["records_compared"], out["records_appended"]) == (0, 1), str(out))


@case
def append_npy(d):
    s = os.path.join(d, "dense")
    must(["create", "--dense", "--shape", "4", "--dtype", "<f4", s])
    a = np.arange(40, dtype="<f4").reshape(10, 4)
    must(["append-npy", s, "-"], stdin=npy_bytes(a))
    b = a.copy()
    b[6, 3] = -1
    b = np.concatenate([b, np.ones((2, 4), "<f4")])
    unchanged_after(s, ["append-npy", "--from-length", "0", s, "-"],
                    ["'-': array at byte 0: record 6 differs from record 6 of '%s' (first difference at byte 14)" % s],
                    stdin=npy_bytes(b))
    f = os.path.join(d, "b.npy")
    np.save(f, b)
    unchanged_after(s, ["append-npy", "--from-length", "0", "--check-present", s, f],
                    ["'%s': array at byte 0: record 6 differs from record 6 of '%s'" % (f, s)])
    # Without --check-present a file's present records are seeked past, as before.
    must(["append-npy", "--from-length", "0", s, f])
    expect(json.loads(must_out(["info", "--json", s]))["length"] == 12, "length")

    r = os.path.join(d, "ragged")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", r])
    must(["append-npy", r, "-"], stdin=npy_bytes(np.arange(6, dtype="<i4")))
    unchanged_after(r, ["append-npy", "--from-length", "0", r, "-"],
                    ["record 0 differs from record 0 of '%s' (shape (5,), the stored one (6,))" % r],
                    stdin=npy_bytes(np.arange(5, dtype="<i4")))


@case
def append_files(d):
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", s])
    names = []
    for i in range(6):
        p = os.path.join(d, "f%d" % i)
        with open(p, "wb") as fh:
            fh.write(b"file %d" % i)
        names.append(p)
    must(["append-files", s] + names[:4])
    # A regenerated file list: f2 replaced by f5.
    other = names[:2] + [names[5], names[3], names[4]]
    unchanged_after(s, ["append-files", "--from-length", "0", "--check-present", s] + other,
                    ["'%s' differs from record 2 of '%s' (first difference at byte 5)" % (names[5], s)])
    out = json.loads(must_out(["append-files", "--json", "--from-length", "0", "--check-present", s] + names))
    expect((out["records_compared"], out["records_appended"]) == (4, 2), str(out))



@case
def append_files_sizes(d):
    # Without --check-present the files found present are not read, but their sizes are
    # compared with the stored records' (from the store's table): a regenerated list whose
    # file at a present record differs in size is refused there, the store unchanged (it
    # used to get the list's tail appended, exit 0).
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", s])
    names = []
    for i in range(6):
        p = os.path.join(d, "f%d" % i)
        with open(p, "wb") as fh:
            fh.write(b"file %d" % i)
        names.append(p)
    must(["append-files", s] + names[:4])
    longer = os.path.join(d, "longer")
    with open(longer, "wb") as fh:
        fh.write(b"another file 2")
    other = names[:2] + [longer] + names[3:5]
    unchanged_after(s, ["append-files", "--from-length", "0", s] + other, [
        "'%s' is 14 bytes, but record 2 of '%s', which it should equal, holds 6: the store holds another input "
        "from --from-length 0 (--no-check-present skips this check); nothing was appended" % (longer, s)])
    # From a list file (-0 --files-from, as the Slurm part tasks run it) and after --skip-first.
    with open(os.path.join(d, "list"), "wb") as fh:
        fh.write(b"".join(n.encode() + b"\0" for n in [names[0]] + other))
    unchanged_after(s, ["append-files", "--skip-first", "1", "--from-length", "0", "-0", "--files-from",
                        os.path.join(d, "list"), s], ["'%s' is 14 bytes, but record 2 of '%s'" % (longer, s)])
    # The right list appends its tail; --no-check-present passes over the present files unopened.
    out = json.loads(must_out(["append-files", "--json", "--from-length", "0", s] + names[:5]))
    expect((out["records_present"], out["records_compared"], out["records_appended"]) == (4, 0, 1), str(out))
    out = json.loads(must_out(["append-files", "--json", "--from-length", "0", "--no-check-present", s] +
                              names[:2] + [longer] + names[3:6]))
    expect((out["records_present"], out["records_appended"]) == (5, 1), str(out))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-rerun-checks-"))
