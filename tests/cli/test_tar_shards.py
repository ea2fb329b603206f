#!/usr/bin/python3
"""WebDataset shards out (issue 21): `cat --format tar --maxcount N` / `--maxsize BYTES`
-o 'shard-%06d.tar' writes shards whose members, in order, are those of the one tar,
samples kept whole, each shard within --maxsize; a pattern without exactly one %d (or
with another '%') is refused before anything is written. --shuffle and --sample N
--distinct order the tar's samples as cat's other formats do; --sample with replacement
(keys repeated) is refused. --with-ids gives each sample a KEY.id member holding its record
ID, which append-tar --parse id=int reads back. A shard name that exists already is refused
before any shard is written, unless -f. Member names keep their keys' bytes, also keys that
are not UTF-8 (which used to fail the export), through export and import again; an export
that fails midway leaves no tar (it used to leave the one it had begun).

Needs: ZREC (path of the zrec binary).
"""
import io
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, lines_store, must, require_zrec  # noqa: E402

require_zrec("test_tar_shards")
CASES, case = case_runner.case_registry()


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
    # Issue 36: a shard name that exists (here a later one, left by a longer export) is
    # refused before any shard is written; -f overwrites and the stale one stays apart.
    again = os.path.join(d, "again")
    os.makedirs(again)
    with open(os.path.join(again, "s-000007.tar"), "wb") as f:
        f.write(b"stale")
    pattern = os.path.join(again, "s-%06d.tar")
    fails(["cat", "--format", "tar", "--maxcount", "10", ds, "-o", pattern], 1,
          ["-o '%s': the shard '%s' already exists; use -f/--force" % (pattern, os.path.join(again, "s-000007.tar"))])
    expect(os.listdir(again) == ["s-000007.tar"], "a refused export wrote %r" % os.listdir(again))
    must(["cat", "--format", "tar", "--maxcount", "10", "-f", ds, "-o", pattern])
    expect(sorted(os.listdir(again)) == ["s-000000.tar", "s-000001.tar", "s-000002.tar", "s-000007.tar"],
           "-f: %r" % os.listdir(again))


@case
def shuffled_and_sampled_tars(d):
    ds = os.path.join(d, "ds")
    os.makedirs(ds)
    lines_store(os.path.join(ds, "txt"), [b"t%02d" % i for i in range(20)])
    whole = members_of_cat(d, "whole", [ds])
    by_key = {}
    for name, data in whole:
        by_key.setdefault(name.split(".")[0], []).append((name, data))
    shuffled = members_of_cat(d, "shuffled", [ds, "--shuffle", "--seed", "3"])
    keys = [n.split(".")[0] for n, _ in shuffled]
    expect(sorted(keys) == sorted(by_key) and keys != sorted(keys), "--shuffle: %r" % keys)
    order = [int(l.split(b"\t")[0]) for l in must(["cat", "--format", "text", ds + "/txt", "--shuffle", "--seed", "3"])[0]
             .splitlines()]
    expect([int(k) for k in keys] == order, "the tar's shuffle differs from cat --shuffle's order")
    drawn = members_of_cat(d, "drawn", [ds, "--sample", "5", "--distinct", "--seed", "3"])
    expect([n for n, _ in drawn] == [n for n, _ in shuffled[:5]], "--sample 5 --distinct: the first 5 of the shuffle")
    fails(["cat", "--format", "tar", ds, "--sample", "5", "-o", os.path.join(d, "x.tar")], 2,
          ["--sample draws with replacement, and a sample drawn twice would repeat its key in the tar"])
    expect(not os.path.exists(os.path.join(d, "x.tar")), "a refused --sample wrote a tar")


@case
def ids_in_tar_samples(d):
    ds = os.path.join(d, "ds")
    os.makedirs(ds)
    lines_store(os.path.join(ds, "txt"), [b"t%02d" % i for i in range(20)])
    shuffled = members_of_cat(d, "ids", [ds, "10:20", "--shuffle", "--seed", "5", "--with-ids"])
    order = [int(l.split(b"\t")[0]) for l in
             must(["cat", "--format", "text", ds + "/txt", "10:20", "--shuffle", "--seed", "5"])[0].splitlines()]
    want = [m for i in order for m in (("%06d.txt" % i, b"t%02d" % i), ("%06d.id" % i, b"%d" % i))]
    expect(shuffled == want, "--with-ids: %r" % shuffled[:4])
    # Round trip: append-tar reads the ids back as a Dense scalar stream, the text beside it.
    back = os.path.join(d, "back")
    must(["append-tar", "--parse", "id=int", back, os.path.join(d, "ids.tar")])
    expect(must(["cat", "--format", "jsonl", back + "/id"])[0].decode().split() == [str(i) for i in order],
           "the id stream differs from the IDs written")
    expect(must(["cat", "--framing", "lines", back + "/txt"])[0] == b"".join(b"t%02d\n" % i for i in order),
           "the txt stream differs")
    # A stream named id would write members of the same names: refused, nothing written.
    fails(["cat", "--format", "tar", back, "--with-ids", "-o", os.path.join(d, "clash.tar")], 1,
          ["--with-ids writes each sample's ID as its '.id' member, and stream 'id' already writes members of that "
           "name"])
    expect(not os.path.exists(os.path.join(d, "clash.tar")), "a refused --with-ids wrote a tar")


def members_of_cat(d, name, args):
    path = os.path.join(d, name + ".tar")
    must(["cat", "--format", "tar", *args, "-o", path])
    return members(path)


def raw_name_tar(path, names):
    """A ustar tar whose members are `names` (bytes, as they are: tarfile's surrogateescape
    writes undecodable bytes back as they were), each holding its own name."""
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT, encoding="utf-8", errors="surrogateescape") as t:
        for n in names:
            info = tarfile.TarInfo(os.fsdecode(n))
            info.size = len(n)
            t.addfile(info, io.BytesIO(n))
    return path


def raw_members(path):
    """(name bytes, data) of each member, names as the tar holds them."""
    with tarfile.open(path, encoding="utf-8", errors="surrogateescape") as t:
        return [(os.fsencode(m.name), t.extractfile(m).read()) for m in t.getmembers()]


@case
def member_names_keep_their_bytes(d):
    # Keys that are not UTF-8 (a Latin-1 'é') import with --keys-stream, and the export
    # used to fail on them with "Can't translate pathname", leaving an empty out.tar. Now
    # every member name comes back byte for byte (non-ASCII ones in a PAX header, marked
    # hdrcharset=BINARY), and the exported tar imports to a root that exports the same tar.
    names = [b"caf\xe9/0001.txt", b"caf\xe9/0001.cls", b"r\xc3\xa9sum\xc3\xa9/0002.txt",
             b"r\xc3\xa9sum\xc3\xa9/0002.cls", b"plain/0003.txt", b"plain/0003.cls", b"\xff\xfe/0004.txt",
             b"\xff\xfe/0004.cls"]
    src = raw_name_tar(os.path.join(d, "in.tar"), names)
    root = os.path.join(d, "root")
    must(["append-tar", "--keys-stream", root, src])
    out = os.path.join(d, "out.tar")
    must(["cat", "--format", "tar", root, "-o", out])
    got = raw_members(out)
    # A sample's members come in the order of the root's streams: cls, then txt.
    want = [(n, n) for n in sorted(names, key=lambda n: (names.index(n) // 2, n.endswith(b".txt")))]
    expect(got == want, "exported members: %r" % got)
    again = os.path.join(d, "again")
    must(["append-tar", "--keys-stream", again, out])
    out2 = os.path.join(d, "out2.tar")
    must(["cat", "--format", "tar", again, "-o", out2])
    expect(open(out, "rb").read() == open(out2, "rb").read(), "the re-imported root exports another tar")
    # Sharded, the non-ASCII names' PAX headers count against --maxsize.
    must(["cat", "--format", "tar", "--maxsize", "8000", root, "-o", os.path.join(d, "s-%d.tar")])
    shards = sorted(n for n in os.listdir(d) if n.startswith("s-"))
    sizes = [os.path.getsize(os.path.join(d, n)) for n in shards]
    expect(len(shards) > 1 and all(size <= 8000 for size in sizes), "shards of --maxsize 8000: %s" % sizes)
    expect(sum((raw_members(os.path.join(d, n)) for n in shards), []) == got, "the shards' members differ")


@case
def failed_export_leaves_no_tar(d):
    # A record that cannot be decoded fails the export after the tar was opened: the
    # command used to leave the tar it had begun (here: empty); now it removes it, and
    # every shard it wrote.
    ds = os.path.join(d, "ds")
    os.makedirs(ds)
    lines_store(os.path.join(ds, "txt"), [b"some text %d " % i * 20 for i in range(300)])
    data = os.path.join(ds, "txt", "data_0.zr")
    with open(data, "r+b") as f:
        f.seek(os.path.getsize(data) // 2)
        f.write(b"\xff" * 64)
    out = os.path.join(d, "out.tar")
    says = ["zrec cat: malformed store '%s': data_0.zr: record " % os.path.join(ds, "txt")]
    fails(["cat", "--format", "tar", ds, "-o", out], 1, says)
    expect(not os.path.exists(out), "a failed export left %s" % out)
    fails(["cat", "--format", "tar", "--maxcount", "10", ds, "-o", os.path.join(d, "shard-%02d.tar")], 1, says)
    expect(not [n for n in os.listdir(d) if n.startswith("shard-")], "a failed export left %s" % os.listdir(d))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-tar-shards-"))
