#!/usr/bin/python3
"""digest, recompress, concat and cat take a root of named streams (issue 42, item 3).

They refused a root, locally and by URL, with "is not a zrecord store (no meta.zr ...)".
Now, for a root append-tar made (png-like bytes, cls numbers, json text):

- `digest ROOT` prints one line per committed stream, "HASH  ROOT/STREAM", the digest of
  the stream over the committed samples only (records past them, of a run that never
  committed, are not hashed), then the dataset's "HASH  ROOT": SHA-256 of
  "zrec-root-digest-v1\\nlength=N\\n" and "<name> <hex>\\n" per stream, recomputed here from
  the sources with hashlib; --json holds the same; --per-record one line per sample;
  over HTTP the same digests;
- `recompress ROOT DST --stream-codec png=raw` writes a new root (marker committed, the
  same streams and length) whose digests equal the source's and whose png stream is raw
  (info --json), also from a source read over HTTP; an existing DST, an unknown stream,
  zstd_dict are refused, nothing written;
- `concat ROOT1 ROOT2 DST`: the samples of both, every stream's digest that of the
  sources' records one after another; roots of other streams are refused naming the
  difference, nothing written;
- records past the commit (a killed append's) are neither hashed, copied nor written;
- `cat ROOT` writes a JSON object per sample (keys the streams, values as
  `cat --format jsonl` renders the stream's record), selected by sample (ranges,
  --indices-from, --sample); --format npy of a root is a usage error.

Needs: ZREC (path of the zrec binary), nginx (the HTTP cases).
"""
import hashlib
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import (  # noqa: E402
    expect, fails, killed_append_leftovers, must, must_out, npy_bytes, require_zrec, tree_digests)
from web_server import WebServer  # noqa: E402

ZREC = require_zrec("test_root_commands")
CASES, case = case_runner.case_registry()

PNG = b"\x89PNG\r\n\x1a\n"


def member(k, ext, base=0):
    if ext == "png":
        return PNG + bytes([k % 256]) * (10 + k)
    if ext == "cls":
        return b"%d" % (base + 3 * k)
    return json.dumps({"k": base + k}).encode()


def make_root(d, name, n, base=0, exts=("png", "cls", "json")):
    tar = os.path.join(d, name + ".tar")
    with tarfile.open(tar, "w") as t:
        for k in range(n):
            for ext in exts:
                data = member(k, ext, base)
                info = tarfile.TarInfo("s%03d.%s" % (base + k, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    root = os.path.join(d, name)
    must(["append-tar", "--parse", "cls=int", root, tar])
    return root


def record_hash(ext, k, base=0):
    """R_i of zrec-digest: Ragged '|u1' ndim 1 (8-byte length prefix) or a Dense '<i8'."""
    data = member(k, ext, base)
    if ext == "cls":
        return hashlib.sha256(int(data).to_bytes(8, "little", signed=True)).digest()
    return hashlib.sha256(len(data).to_bytes(8, "little") + data).digest()


def stream_digest(ext, ks):
    """The store digest of `ks` = [(k, base)...] records of stream `ext`."""
    header = b"zrec-digest-v1\n"
    header += b"dtype=<i8\nndim=0\nitem_shape=\n" if ext == "cls" else b"dtype=|u1\nndim=1\nragged\n"
    h = hashlib.sha256(header + b"length=%d\n" % len(ks))
    for k, base in ks:
        h.update(record_hash(ext, k, base))
    return h.hexdigest()


def dataset_digest(n, streams):
    h = hashlib.sha256(b"zrec-root-digest-v1\nlength=%d\n" % n)
    for name, hexd in sorted(streams.items()):
        h.update(b"%s %s\n" % (name.encode(), hexd.encode()))
    return h.hexdigest()


def digest_lines(out):
    return [tuple(line.split("  ", 1)) for line in out.decode().splitlines()]


def expected_lines(root, n):
    streams = {e: stream_digest(e, [(k, 0) for k in range(n)]) for e in ("cls", "json", "png")}
    return [(streams[e], root + "/" + e) for e in sorted(streams)] + [(dataset_digest(n, streams), root)]


@case
def digest_of_a_root(d):
    root = make_root(d, "ds", 5)
    want = expected_lines(root, 5)
    expect(digest_lines(must_out(["digest", root])) == want, must_out(["digest", root]))
    j = json.loads(must_out(["digest", "--json", root]))["stores"][0]
    expect(j["root"] is True and j["length"] == 5 and j["digest"] == want[-1][0], j)
    expect([(s["digest"], s["path"]) for s in j["streams"]] == want[:-1], j)
    # Per sample: a SHA-256 over "<name> <hex R_i>\n" of each stream.
    lines = must_out(["digest", "--per-record", root]).decode().splitlines()
    for k in range(5):
        h = hashlib.sha256(b"".join(b"%s %s\n" % (e.encode(), record_hash(e, k).hex().encode())
                                    for e in ("cls", "json", "png")))
        expect(lines[k] == "%d\t%s" % (k, h.hexdigest()), lines)
    # A stream's digest is the store's when it holds exactly the committed samples.
    expect(digest_lines(must_out(["digest", root + "/png"]))[0][0] == want[2][0], "png")


@case
def recompress_a_root(d):
    root = make_root(d, "ds", 6)
    before = tree_digests(root)
    dst = os.path.join(d, "out")
    must(["recompress", root, dst, "--stream-codec", "png=raw"])
    expect(before == tree_digests(root), "source changed")
    src_lines = [h for h, _ in digest_lines(must_out(["digest", root]))]
    dst_lines = [h for h, _ in digest_lines(must_out(["digest", dst]))]
    expect(src_lines == dst_lines, (src_lines, dst_lines))
    info = json.loads(must_out(["info", "--json", dst]).decode().splitlines()[0])
    codecs = {name: s["codec"] for name, s in info["streams"].items()}
    expect(codecs["png"] == "raw" and codecs["json"] == "zstd", info)
    with open(os.path.join(dst, "zrec-root")) as f:
        expect(f.read() == "zrec-root 1\nlength 6\nstream cls\nstream json\nstream png\n", "marker")
    expect(sorted(os.listdir(d)) == ["ds", "ds.tar", "out"], os.listdir(d))
    # Refusals change nothing.
    after = tree_digests(dst)
    fails(["recompress", root, dst], says=["zrec recompress: '%s' already exists; choose a new destination" % dst])
    fails(["recompress", root, os.path.join(d, "o2"), "--stream-codec", "gif=raw"], rc_want=2,
          says=["--stream-codec 'gif=raw': 'gif' is not one of the streams (cls, json, png)"])
    fails(["recompress", root, os.path.join(d, "o2"), "--codec", "zstd_dict"], rc_want=2,
          says=["a root's streams keep their own dictionaries"])
    expect(after == tree_digests(dst) and not os.path.exists(os.path.join(d, "o2")), "refusal wrote")


@case
def concat_roots(d):
    a = make_root(d, "a", 4)
    b_tar = os.path.join(d, "b.tar")
    with tarfile.open(b_tar, "w") as t:
        for k in range(3):
            for ext in ("png", "cls", "json"):
                data = member(k, ext, 100)
                info = tarfile.TarInfo("t%03d.%s" % (k, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    b = os.path.join(d, "b")
    must(["append-tar", "--parse", "cls=int", b, b_tar])
    dst = os.path.join(d, "ab")
    must(["concat", a, b, dst])
    ks = [(k, 0) for k in range(4)] + [(k, 100) for k in range(3)]
    streams = {e: stream_digest(e, ks) for e in ("cls", "json", "png")}
    want = [(streams[e], dst + "/" + e) for e in sorted(streams)] + [(dataset_digest(7, streams), dst)]
    expect(digest_lines(must_out(["digest", dst])) == want, must_out(["digest", dst]))
    # Roots of other streams: refused naming the difference, nothing written.
    c = make_root(d, "c", 2, exts=("png", "cls"))
    fails(["concat", a, c, os.path.join(d, "ac")], says=[
        "root '%s' has the streams (cls, png) and root '%s' (cls, json, png): only '%s' has json; concat joins "
        "roots of the same streams" % (c, a, a)])
    expect(not os.path.exists(os.path.join(d, "ac")), "ac written")


@case
def cat_a_root(d):
    root = make_root(d, "ds", 5)
    lines = [json.loads(x) for x in must_out(["cat", root]).decode().splitlines()]
    expect(len(lines) == 5, lines)
    for k, obj in enumerate(lines):
        expect(list(obj) == ["cls", "json", "png"], obj)
        expect(obj["cls"] == 3 * k and obj["json"] == '{"k": %d}' % k, obj)
    # Each value is what cat --format jsonl writes for the stream's record.
    for e in ("cls", "json", "png"):
        per = must_out(["cat", "--format", "jsonl", root + "/" + e]).decode().splitlines()
        expect([json.dumps(o[e]) for o in lines] == [json.dumps(json.loads(x)) for x in per], e)
    sel = [json.loads(x)["cls"] for x in must_out(["cat", root, "3,1"]).decode().splitlines()]
    expect(sel == [9, 3], sel)
    ids = os.path.join(d, "ids")
    with open(ids, "w") as f:
        f.write("4\n0\n")
    sel = [json.loads(x)["cls"] for x in must_out(["cat", root, "--indices-from", ids]).decode().splitlines()]
    expect(sel == [12, 0], sel)
    with_ids = [json.loads(x) for x in must_out(["cat", root, "-1", "--with-ids"]).decode().splitlines()]
    expect(with_ids == [{"id": 4, "sample": lines[4]}], with_ids)
    sampled = must_out(["cat", root, "--sample", "3", "--seed", "2", "--with-ids"]).decode().splitlines()
    expect(all(json.loads(x)["sample"] == lines[json.loads(x)["id"]] for x in sampled), sampled)
    fails(["cat", root, "--format", "npy", "-o", os.path.join(d, "x.npy")], rc_want=2,
          says=["a root of named streams is written as JSON lines"])


@case
def cat_a_root_on_a_terminal(d):
    # A person reads a terminal: a record of bytes that is no text is named, as cat of a
    # stream names it there.
    import pty
    import subprocess
    root = make_root(d, "ds", 2)
    master, slave = pty.openpty()
    p = subprocess.run([ZREC, "cat", root], stdout=slave, stderr=subprocess.PIPE, timeout=60)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    expect(p.returncode == 0, p.stderr)
    expect(out.decode().replace("\r\n", "\n") ==
           '{"cls": 0, "json": "{\\"k\\": 0}", "png": "<PNG image, 18 bytes>"}\n'
           '{"cls": 3, "json": "{\\"k\\": 1}", "png": "<PNG image, 19 bytes>"}\n', out)


@case
def records_past_the_commit_are_no_samples(d):
    # A killed append leaves records past the committed count in every stream: digest,
    # recompress and cat read samples 0 .. length-1 only, as the marker says.
    import numpy as np
    root = make_root(d, "ds", 5)
    for e in ("png", "json"):
        killed_append_leftovers(root, ["append-stream", os.path.join(root, e)], stdin=b"past\n")
    killed_append_leftovers(root, ["append-npy", os.path.join(root, "cls"), "-"],
                            stdin=npy_bytes(np.array([99], dtype="<i8")))
    expect(digest_lines(must_out(["digest", root])) == expected_lines(root, 5), "digest of the commit")
    dst = os.path.join(d, "out")
    must(["recompress", root, dst])
    expect([h for h, _ in digest_lines(must_out(["digest", dst]))] == [h for h, _ in expected_lines(root, 5)], "dst")
    expect(json.loads(must_out(["info", "--json", dst]))["streams"]["png"]["length"] == 5, "dst length")
    expect(len(must_out(["cat", root]).decode().splitlines()) == 5, "cat of the commit")


@case
def over_http(d):
    www = os.path.join(d, "www")
    os.makedirs(www)
    root = make_root(www, "ds", 5)
    want = [h for h, _ in expected_lines(root, 5)]
    with WebServer(www) as web:
        url = web.http + "/ds"
        got = digest_lines(must_out(["digest", url]))
        expect([h for h, _ in got] == want and [p for _, p in got][-1] == url, got)
        dst = os.path.join(d, "out")
        must(["recompress", url, dst, "--stream-codec", "png=raw"])
        expect([h for h, _ in digest_lines(must_out(["digest", dst]))] == want, "recompressed from HTTP")
        expect(must_out(["cat", url]) == must_out(["cat", root]), "cat over HTTP")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-root-commands-"))
