#!/usr/bin/python3
"""WebDataset shards out (issue 21): `cat --format tar --maxcount N` / `--maxsize BYTES`
-o 'shard-%06d.tar' writes shards whose members, in order, are those of the one tar,
samples kept whole, each shard within --maxsize; a pattern without exactly one %d (or
with another '%') is refused before anything is written.

Needs: ZREC (path of the zrec binary).
"""
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, must, require_zrec  # noqa: E402

require_zrec("test_tar_shards")
CASES, case = case_runner.case_registry()


def lines_store(path, lines):
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", path])
    must(["append-stream", path], stdin=b"".join(l + b"\n" for l in lines))
    return path


def members(path):
    with tarfile.open(path) as t:
        return [(m.name, t.extractfile(m).read()) for m in t.getmembers()]


@case
def shards_out(d):
    ds = os.path.join(d, "ds")
    os.makedirs(ds)
    jpg = lines_store(os.path.join(ds, "jpg"), [b"J" * (100 + 37 * i) for i in range(25)])
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", os.path.join(ds, "cls")])
    must(["append-stream", "--parse", "ints", os.path.join(ds, "cls")],
         stdin=b"".join(b"%d\n" % (i % 4) for i in range(25)))
    whole = os.path.join(d, "whole.tar")
    must(["cat", "--format", "tar", ds, "-o", whole])
    want = members(whole)
    expect(len(want) == 50, "one tar: %d members" % len(want))
    out_dir = os.path.join(d, "shards")
    os.makedirs(out_dir)
    _, err = must(["cat", "--format", "tar", "--maxcount", "10", ds, "-o", os.path.join(out_dir, "s-%06d.tar")])
    names = sorted(os.listdir(out_dir))
    expect(names == ["s-000000.tar", "s-000001.tar", "s-000002.tar"], "shards: %r" % names)
    got = [m for n in names for m in members(os.path.join(out_dir, n))]
    expect(got == want, "the shards' members differ from the one tar's")
    expect([len(members(os.path.join(out_dir, n))) for n in names] == [20, 20, 10], "samples per shard")
    expect("wrote 25 samples in 3 shards" in err, "summary: %r" % err)
    # --maxsize: every shard within the limit, samples whole (a jpg and its cls together).
    size_dir = os.path.join(d, "by-size")
    os.makedirs(size_dir)
    must(["-q", "cat", "--format", "tar", "--maxsize", "8K", ds, "-o", os.path.join(size_dir, "%d.tar")])
    names = sorted(os.listdir(size_dir), key=lambda n: int(n.split(".")[0]))
    expect(len(names) > 2 and all(os.path.getsize(os.path.join(size_dir, n)) <= 8192 for n in names),
           "--maxsize 8K: %r" % [(n, os.path.getsize(os.path.join(size_dir, n))) for n in names])
    got = [m for n in names for m in members(os.path.join(size_dir, n))]
    expect(got == want, "the --maxsize shards' members differ from the one tar's")
    for n in names:
        ms = members(os.path.join(size_dir, n))
        expect(len(ms) % 2 == 0 and all(ms[i][0][:6] == ms[i + 1][0][:6] for i in range(0, len(ms), 2)),
               "%s splits a sample" % n)
    # The pattern: exactly one %d; nothing written when it is refused.
    for pattern, why in [("s.tar", "has no %d"), ("s-%d-%d.tar", "has a second '%'"),
                         ("s-%s.tar", "has '%s', which is not %d"), ("s-%06x.tar", "has '%06x', which is not %d")]:
        fails(["cat", "--format", "tar", "--maxcount", "10", ds, "-o", os.path.join(d, pattern)], 2, [why])
    fails(["cat", "--format", "tar", "--maxcount", "10", ds], 2, ["--maxcount and --maxsize write shards: give -o"])
    fails(["cat", "--format", "jsonl", "--maxcount", "10", jpg], 2, ["write tar shards: --format tar"])
    expect(sorted(os.listdir(d)) == ["by-size", "ds", "shards", "whole.tar"], "files: %r" % os.listdir(d))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-tar-shards-"))
