#!/usr/bin/python3
"""Tar members that keep their shape (issue 42, item 4). `cat --format tar` used to write
a Dense (4,) '<f4' record as the text "0.0 1.0 2.0 3.0", a (2,2,3) '|u1' array as 12 raw
bytes and tokens as a line of numbers: the shape and the dtype were lost, and append-tar
read nothing of them back. Now:

- cat --format tar writes each stream that is neither bytes (Ragged ndim-1 '|u1') nor
  --parse numbers ('<i8'/'<f8' Dense scalars and Ragged ndim-1 vectors) as members
  KEY.STREAM.npy holding a .npy file of the record; Python's tarfile + np.load (what
  WebDataset's default decoder does for a name ending in ".npy") gets each array back
  with its shape and dtype; bytes and labels stay as they were (KEY.image, KEY.label);
- append-tar reads KEY.STREAM.npy members back into the stream STREAM: a new stream is
  Ragged of the first array's ndim, Dense with --dense STREAM (a 0-d array: Dense
  scalar); the exported root re-imported equals the source in every stream (zrec digest
  of each stream, zrec info schemas);
- --arrays text keeps the old text members;
- bad arrays (a dtype or shape the stream does not hold, a member that is no .npy of an
  array stream, a size that disagrees with the header, bad magic) are refused in one
  line naming the member and the rule, exit 1, the root byte-identical;
- --ext on a new root makes each selected stream from its first member (an array stream
  from a .npy member);
- two streams whose members would take one name (vec's arrays and a stream vec.npy) are
  refused by the export, nothing written.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import io
import os
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, must, must_out, npy_bytes, require_zrec, tree_digests  # noqa: E402

ZREC = require_zrec("test_tar_arrays")
CASES, case = case_runner.case_registry()

N = 5
IMAGES = [bytes([k]) * (10 + k) for k in range(N)]
LABELS = [3, 1, 4, 1, 5]
VECS = np.arange(N * 4, dtype="<f4").reshape(N, 4) / 4
TOKENS = [np.arange(k + 1, dtype="<i4") * 7 - 3 for k in range(N)]


def write_tar(path, samples):
    """samples: [(key, {ext: bytes})] in order."""
    with tarfile.open(path, "w") as t:
        for key, members in samples:
            for ext, data in members.items():
                info = tarfile.TarInfo("%s.%s" % (key, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return path


def tar_members(path):
    with tarfile.open(path) as t:
        return [(m.name, t.extractfile(m).read()) for m in t.getmembers()]


def npy_stream_store(path, create_args, arrays):
    """A store made by create, filled one .npy array per record (append-npy from stdin)."""
    must(["create", *create_args, path])
    must(["append-npy", path, "-"], stdin=b"".join(npy_bytes(a) for a in arrays))


def source_root(d):
    """image (|u1 bytes) and label (<i8 scalar, --parse int) by append-tar; vec (Dense
    (4,) <f4) and tok (Ragged <i4 ndim 1) made beside them and adopted."""
    root = os.path.join(d, "src")
    samples = [("s%03d" % k, {"image": IMAGES[k], "label": b"%d" % LABELS[k]}) for k in range(N)]
    must(["append-tar", "--parse", "label=int", root, write_tar(os.path.join(d, "in.tar"), samples)])
    must(["create", "--dense", "--shape", "4", "--dtype", "<f4", os.path.join(root, "vec")])
    must(["append-npy", os.path.join(root, "vec"), "-"], stdin=npy_bytes(VECS))
    npy_stream_store(os.path.join(root, "tok"), ["--ragged", "--ndim", "1", "--dtype", "<i4"], TOKENS)
    must(["adopt", root])
    return root


def stream_digest(root, name):
    return must_out(["digest", os.path.join(root, name)]).decode().replace(root, "ROOT")


def schema_line(root, name):
    info = must_out(["info", os.path.join(root, name)]).decode()
    return [line for line in info.splitlines() if line.split(" ")[0] in ("kind", "dtype", "ndim", "item_shape")]


def expect_same_streams(a, b, names):
    for name in names:
        expect(stream_digest(a, name) == stream_digest(b, name), "stream %s differs:\n%s\n%s" %
               (name, stream_digest(a, name), stream_digest(b, name)))
        expect(schema_line(a, name) == schema_line(b, name), "schema of %s differs: %s / %s" %
               (name, schema_line(a, name), schema_line(b, name)))


@case
def arrays_round_trip_and_load_in_python(d):
    src = source_root(d)
    out = os.path.join(d, "out.tar")
    must(["cat", src, "--format", "tar", "-o", out])
    members = tar_members(out)
    names = [n for n, _ in members[:4]]
    expect(names == ["000000.image", "000000.label", "000000.tok.npy", "000000.vec.npy"], str(names))
    # WebDataset-style reading: group by key, np.load the .npy members.
    by_key = {}
    for name, data in members:
        key, ext = name.split(".", 1)
        by_key.setdefault(key, {})[ext] = data
    expect(len(by_key) == N, str(sorted(by_key)))
    for k, key in enumerate(sorted(by_key)):
        m = by_key[key]
        expect(m["image"] == IMAGES[k] and m["label"] == b"%d" % LABELS[k], str(m))
        vec, tok = np.load(io.BytesIO(m["vec.npy"])), np.load(io.BytesIO(m["tok.npy"]))
        expect(vec.dtype == np.dtype("<f4") and vec.shape == (4,) and (vec == VECS[k]).all(), repr(vec))
        expect(tok.dtype == np.dtype("<i4") and tok.shape == (k + 1,) and (tok == TOKENS[k]).all(), repr(tok))
    # Back into a new root: every stream equal (--dense vec keeps vec Dense).
    copy = os.path.join(d, "copy")
    must(["append-tar", "--parse", "label=int", "--dense", "vec", copy, out])
    expect_same_streams(src, copy, ["image", "label", "tok", "vec"])
    # Without --dense, the arrays land in a Ragged stream of their ndim, bytes equal.
    ragged = os.path.join(d, "ragged")
    must(["append-tar", "--parse", "label=int", ragged, out])
    expect(schema_line(ragged, "vec") == ["kind          ragged", "dtype         <f4", "ndim          1",
                                          "item_shape    -"], str(schema_line(ragged, "vec")))
    got = must_out(["cat", "--format", "jsonl", os.path.join(ragged, "vec")]).decode().split("\n")[:N]
    want = must_out(["cat", "--format", "jsonl", os.path.join(src, "vec")]).decode().split("\n")[:N]
    expect(got == want, "%s\n%s" % (got, want))
    # A second export of the copy writes the same tar, byte for byte.
    again = os.path.join(d, "again.tar")
    must(["cat", copy, "--format", "tar", "-o", again])
    expect(open(again, "rb").read() == open(out, "rb").read(), "re-export differs")


@case
def other_shapes_and_dtypes(d):
    """A Dense (2,2,3) |u1 image, a Ragged <f4 ndim-2 array and a Dense scalar <i4:
    all .npy members, all back as they were (the scalar Dense without --dense)."""
    root = os.path.join(d, "src")
    os.makedirs(root)
    cubes = [np.arange(12, dtype="|u1").reshape(2, 2, 3) + k for k in range(3)]
    mats = [np.full((k + 1, 2), k / 3, dtype="<f4") for k in range(3)]
    must(["create", "--dense", "--shape", "2,2,3", "--dtype", "|u1", os.path.join(root, "cube")])
    must(["append-npy", os.path.join(root, "cube"), "-"], stdin=npy_bytes(np.stack(cubes)))
    npy_stream_store(os.path.join(root, "mat"), ["--ragged", "--ndim", "2", "--dtype", "<f4"], mats)
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i4", os.path.join(root, "cls")])
    must(["append-npy", os.path.join(root, "cls"), "-"], stdin=npy_bytes(np.array([7, -8, 9], dtype="<i4")))
    must(["adopt", root])
    out = os.path.join(d, "out.tar")
    must(["cat", root, "--format", "tar", "-o", out])
    members = dict(tar_members(out))
    cube = np.load(io.BytesIO(members["000001.cube.npy"]))
    expect(cube.shape == (2, 2, 3) and cube.dtype == np.uint8 and (cube == cubes[1]).all(), repr(cube))
    mat = np.load(io.BytesIO(members["000002.mat.npy"]))
    expect(mat.shape == (3, 2) and (mat == mats[2]).all(), repr(mat))
    cls = np.load(io.BytesIO(members["000001.cls.npy"]))
    expect(cls.shape == () and cls.dtype == np.dtype("<i4") and int(cls) == -8, repr(cls))
    copy = os.path.join(d, "copy")
    must(["append-tar", "--dense", "cube", copy, out])
    expect_same_streams(root, copy, ["cube", "mat", "cls"])
    # --ext selects the streams of a new root: each is made by its first member, so an
    # array stream takes the array's schema (made before its members, it was Ragged '|u1'
    # and refused them).
    chosen = os.path.join(d, "chosen")
    must(["append-tar", "--dense", "cube", "--ext", "cube,mat", chosen, out])
    expect_same_streams(root, chosen, ["cube", "mat"])
    expect(sorted(os.listdir(chosen)) == ["cube", "mat", "zrec-root"], str(os.listdir(chosen)))
    # A selected stream the first sample lacks is named, and nothing is made.
    lacking = os.path.join(d, "lacking")
    err = fails(["append-tar", "--ext", "cube,box", lacking, out])
    expect("sample '000000' has no 'box' member" in err and "every sample needs one member per stream (cube, box)"
           in err, err)
    expect(not os.path.exists(lacking), "a failed first run left %s" % lacking)


@case
def arrays_text_keeps_the_old_members(d):
    src = source_root(d)
    out = os.path.join(d, "out.tar")
    must(["cat", src, "--format", "tar", "--arrays", "text", "-o", out])
    members = dict(tar_members(out))
    expect(members["000001.vec"] == b"1.0 1.25 1.5 1.75" and members["000002.tok"] == b"-3 4 11",
           str(sorted(members.items())[:8]))
    expect(not any(n.endswith(".npy") for n in members), str(sorted(members)))
    fails(["cat", src, "--arrays", "text"], 2, ["--arrays is used with --format tar only"])
    fails(["cat", src, "--format", "tar", "--arrays", "json"], 2, ["unknown --arrays 'json' (use npy or text)"])


@case
def bad_arrays_are_refused_and_change_nothing(d):
    src = source_root(d)
    out = os.path.join(d, "out.tar")
    must(["cat", src, "0:2", "--format", "tar", "-o", out])
    copy = os.path.join(d, "copy")
    must(["append-tar", "--parse", "label=int", "--dense", "vec", copy, out])
    before = tree_digests(copy)
    good = {"image": b"x", "label": b"1", "tok.npy": npy_bytes(np.array([1], dtype="<i4"))}
    cases = [
        ({"vec.npy": npy_bytes(np.zeros(4, dtype="<f8"))},
         "member 'k.vec.npy' holds an array (4,) <f8; stream '%s/vec' is dense <f4 (4,): the dtypes differ" % copy),
        ({"vec.npy": npy_bytes(np.zeros(5, dtype="<f4"))},
         "member 'k.vec.npy' holds an array (5,) <f4; stream '%s/vec' is dense <f4 (4,): a Dense stream's records "
         "all have its item shape" % copy),
        ({"vec": b"1 2 3 4"},
         "member 'k.vec' is no .npy array; stream '%s/vec' is dense <f4 (4,), and its members are arrays named "
         "KEY.vec.npy" % copy),
        ({"vec.npy": npy_bytes(np.zeros(4, dtype="<f4"))[:-1]},
         "member 'k.vec.npy' is 143 bytes, but its .npy header says 128 + 16 (an array (4,) <f4)"),
        ({"vec.npy": b"not an array at all"}, "member 'k.vec.npy': not a .npy array (bad magic bytes)"),
    ]
    for i, (member, says) in enumerate(cases):
        bad = write_tar(os.path.join(d, "bad%d.tar" % i), [("k", {**good, **member})])
        err = fails(["append-tar", copy, bad], 1, [says])
        expect(len(err.strip().splitlines()) == 1, err)
        expect(tree_digests(copy) == before, "root changed by a refused run %d" % i)
    # A tok array of another ndim: Ragged keeps its ndim.
    bad = write_tar(os.path.join(d, "ndim.tar"), [("k", {**good, "vec.npy": npy_bytes(np.zeros(4, dtype="<f4")),
                                                         "tok.npy": npy_bytes(np.zeros((1, 1), dtype="<i4"))})])
    fails(["append-tar", copy, bad], 1, ["member 'k.tok.npy' holds an array (1, 1) <i4; stream '%s/tok' is ragged "
                                          "<i4 ndim=1: a Ragged stream's records all have its ndim" % copy])
    expect(tree_digests(copy) == before, "root changed by the ndim refusal")


@case
def members_of_one_name_are_refused(d):
    root = os.path.join(d, "src")
    os.makedirs(root)
    must(["create", "--dense", "--shape", "2", "--dtype", "<f4", os.path.join(root, "vec")])
    must(["append-npy", os.path.join(root, "vec"), "-"], stdin=npy_bytes(np.zeros((1, 2), dtype="<f4")))
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", os.path.join(root, "vec.npy")])
    must(["append-stream", os.path.join(root, "vec.npy")], stdin=b"x\n")
    must(["adopt", root])
    out = os.path.join(d, "out.tar")
    fails(["cat", root, "--format", "tar", "-o", out], 1,
          ["stream 'vec' is dense <f4 (2,) and writes its arrays as members KEY.vec.npy, the names of stream "
           "'vec.npy'; --arrays text writes it as numbers, or rename one of them"])
    expect(not os.path.exists(out), "a tar was written")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-tar-arrays-"))
