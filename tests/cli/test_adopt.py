#!/usr/bin/python3
"""Roots that grow (issue 34, problem 5): a label stream created beside append-tar's
streams made `verify` report the root corrupt, and the only way out was deleting
zrec-root by hand and re-adopting. `zrec adopt ROOT` lists such a stream through the
library's root protocol (zrec::DatasetWriter):

- a label stream of exactly the committed samples joins; verify then passes, and cat
  --format tar writes its members; info lists it;
- a store of another length is refused naming both lengths, every file unchanged;
- a missing path, a store, and a directory holding no store are refused, nothing made;
- a directory of stores no zrec command marked becomes a root (equal lengths);
- --json: path, length, streams, adopted.

Needs: ZREC (path of the zrec binary).
"""
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, must, must_out, require_zrec, run_zrec, tree_digests  # noqa: E402

ZREC = require_zrec("test_adopt")
CASES, case = case_runner.case_registry()


def tar_of(path, n):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for k in range(n):
            for ext in ("jpg", "txt"):
                data = b"%s %d" % (ext.encode(), k)
                info = tarfile.TarInfo("s%03d.%s" % (k, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    open(path, "wb").write(buf.getvalue())
    return path


def label_stream(root, labels):
    s = os.path.join(root, "label")
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", s])
    must(["append-stream", "--parse", "ints", s], stdin=b"".join(b"%d\n" % v for v in labels))
    return s


@case
def a_label_stream_joins_a_root(d):
    root = os.path.join(d, "ds")
    must(["append-tar", root, tar_of(os.path.join(d, "a.tar"), 6)])
    label_stream(root, [3, 1, 4, 1, 5, 9])
    rc, out, err = run_zrec(["verify", root])
    expect(rc == 0 and "note: 'label' is not committed yet: zrec-root does not list it (zrec adopt '%s' makes it a "
           "stream)" % root in out.decode(), out.decode() + err)
    out = json.loads(must_out(["adopt", "--json", root]))
    expect(out == {**out, "path": root, "length": 6, "streams": ["jpg", "label", "txt"], "adopted": ["label"]},
           str(out))
    expect(json.loads(must_out(["info", "--json", root]))["committed_length"] == 6, "committed length")
    must(["verify", root])
    tar = must_out(["cat", "--format", "tar", root])
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        names = t.getnames()
        expect("000002.label" in names and t.extractfile("000002.label").read() == b"4", str(names[:6]))
    # Adopting again changes nothing.
    before = tree_digests(root)
    must(["adopt", root])
    expect(tree_digests(root) == before, "a second adopt changed the root")


@case
def refusals_change_nothing(d):
    root = os.path.join(d, "ds")
    must(["append-tar", root, tar_of(os.path.join(d, "a.tar"), 6)])
    label_stream(root, [1, 2, 3, 4, 5])
    before = tree_digests(root)
    fails(["adopt", root], says=[
        "'%s/label' holds 5 records, but root '%s' committed 6 samples: a store joins a root's streams holding "
        "exactly one record per sample; nothing was changed" % (root, root)])
    expect(tree_digests(root) == before, "a refused adopt changed the root")
    missing = os.path.join(d, "typo")
    fails(["adopt", missing], says=["cannot open '%s'" % missing])
    expect(not os.path.exists(missing), "adopt made a directory")
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    fails(["adopt", empty], says=["'%s' holds no store to adopt" % empty])
    expect(os.listdir(empty) == [], "adopt left something in an empty directory")
    fails(["adopt", os.path.join(root, "jpg")], says=["is a store; adopt makes the stores inside a directory"])


@case
def an_unmarked_directory_becomes_a_root(d):
    root = os.path.join(d, "made")
    os.makedirs(root)
    label_stream(root, [7, 8, 9])
    txt = os.path.join(root, "txt")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", txt])
    must(["append-stream", txt], stdin=b"a\nb\nc\n")
    out = json.loads(must_out(["adopt", "--json", root]))
    expect((out["length"], out["streams"], out["adopted"]) == (3, ["label", "txt"], ["label", "txt"]), str(out))
    must(["verify", root])


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-adopt-"))
