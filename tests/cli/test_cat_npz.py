#!/usr/bin/python3
"""Ragged exports that load (issue 34, problem 3): `zrec cat RAGGED 0:100 -o first100.npy`
wrote a stream of 100 .npy arrays into one file, and np.load returned record 0 alone,
silently.

- -o NAME.npy of a Ragged selection of more than one record is refused (exit 1, no
  file), naming the .npz and --format npy spellings; one record, a Dense selection, or
  an explicit --format npy (the stream) still write;
- -o NAME.npz (or --format npz, also to a pipe) writes NumPy's .npz: one array per
  record, named by its ID, each equal to the source record (np.load reads them all);
- a record selected twice, and --sample without --distinct, are refused for .npz (its
  names are IDs).

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import io
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, must, must_out, npy_bytes, records, require_zrec  # noqa: E402

ZREC = require_zrec("test_cat_npz")
CASES, case = case_runner.case_registry()


def ragged_store(d, arrays):
    s = os.path.join(d, "r")
    must(["create", "--ragged", "--ndim", "2", "--dtype", "<f4", s])
    must(["append-npy", s, "-"], stdin=b"".join(npy_bytes(a) for a in arrays))
    return s


ARRAYS = [np.arange(i * 3, dtype="<f4").reshape(i, 3) + i for i in range(1, 8)]


@case
def ragged_npy_of_many_is_refused(d):
    s = ragged_store(d, ARRAYS)
    out = os.path.join(d, "first.npy")
    fails(["cat", s, "0:5", "-o", out], says=[
        "-o '%s': a selection of 5 records of a Ragged store is 5 arrays, and a .npy file holds one (np.load would "
        "read only the first): write -o %s.npz (one array per record, named by its ID), or give --format npy for "
        "a stream of .npy arrays in one file" % (out, out[:-4])])
    expect(not os.path.exists(out), "a refused export left its file")
    # One record is one array; --format npy asks for the stream on purpose.
    must(["cat", s, "4", "-o", out])
    expect(np.array_equal(np.load(out), ARRAYS[4]), "record 4 as .npy")
    stream = os.path.join(d, "stream.npy")
    must(["cat", "--format", "npy", s, "0:3", "-o", stream])
    buf = io.BytesIO(open(stream, "rb").read())
    got = [np.lib.format.read_array(buf) for _ in range(3)]
    expect(all(np.array_equal(g, a) for g, a in zip(got, ARRAYS)), "the stream of .npy")


@case
def npz_holds_every_record_by_id(d):
    s = ragged_store(d, ARRAYS)
    out = os.path.join(d, "sel.npz")
    must(["cat", s, "1:7:2", "-o", out])
    with np.load(out) as z:
        expect(sorted(z.files, key=int) == ["1", "3", "5"], str(z.files))
        for k in z.files:
            expect(z[k].dtype == np.dtype("<f4") and np.array_equal(z[k], ARRAYS[int(k)]), "array %s" % k)
    # To a pipe, with --format npz; shuffled selections keep their IDs as names.
    data = must_out(["cat", "--format", "npz", "--shuffle", "--seed", "3", s])
    with np.load(io.BytesIO(data)) as z:
        expect(sorted(z.files, key=int) == [str(i) for i in range(7)], str(z.files))
        expect(all(np.array_equal(z[k], ARRAYS[int(k)]) for k in z.files), "piped npz arrays")
    # A Dense store too: one array per record.
    dense = os.path.join(d, "dense")
    must(["create", "--dense", "--shape", "2,2", "--dtype", "<i8", dense])
    must(["append-npy", dense, "-"], stdin=npy_bytes(np.arange(12, dtype="<i8").reshape(3, 2, 2)))
    dz = os.path.join(d, "dense.npz")
    must(["cat", dense, "-o", dz])
    with np.load(dz) as z:
        expect(np.array_equal(z["2"], np.arange(8, 12).reshape(2, 2)), "dense record 2")
    expect(len(records(dense)) == 1, "a Dense --format npy is still one array")


@case
def npz_names_must_be_unique(d):
    s = ragged_store(d, ARRAYS)
    out = os.path.join(d, "dup.npz")
    fails(["cat", s, "0:3,2", "-o", out],
          says=["record 2 is selected twice; an .npz names each array by its record ID (select each once)"])
    expect(not os.path.exists(out), "a refused .npz left its file")
    fails(["cat", s, "--sample", "3", "-o", out], rc_want=2, says=["--sample draws with replacement: add --distinct"])
    must(["cat", s, "--sample", "3", "--distinct", "-o", out])
    with np.load(out) as z:
        expect(len(z.files) == 3, str(z.files))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-cat-npz-"))
