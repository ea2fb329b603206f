#!/usr/bin/python3
"""--json on every command that writes or reads stores (docs/json.md, man zrec-<cmd>
JSON OUTPUT): create, append-npy, append-files, append-stream, append-lmdb,
append-tar, recompress, concat, digest, train-dict; and the shared key names of info
and verify.

Each case runs the command on small inputs with --json and checks that stdout holds
exactly one JSON object and nothing else, that its key set is exactly the documented
one, that its values agree with the stores themselves (`zrec info --json`, `zrec
digest`, file sizes), and that the summary line went neither to stdout nor to stderr
(while the same run without --json prints it on stderr and nothing on stdout). Also:
-q does not silence --json; --json with an output that would share stdout is a usage
error; a failed command prints no object.

Needs: ZREC (path of the zrec binary), python3-numpy, python3-lmdb.
"""
import io
import json
import os
import re
import subprocess
import sys
import tarfile

import lmdb
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import byte_records, fails, must, npy_bytes, require_zrec, run_zrec  # noqa: E402

ZREC = require_zrec("test_json_output")
FIGURES = []
CASES, case = case_runner.case_registry()
# The summary lines --json replaces (warnings, "zrec CMD: warning: ...", stay on stderr).
SUMMARY = re.compile(r"^zrec [a-z-]+: (appended \d+ (record|sample)|wrote '|trained a dictionary)", re.M)

APPEND_KEYS = {"path", "records_appended", "records_skipped", "records_present", "records_compared", "bytes_in",
               "stored_bytes", "length", "elapsed_s"}
TRAINING_KEYS = {"dict_bytes", "dict_id", "fastcover_k", "fastcover_d", "candidates", "source_records",
                 "records_sampled", "records_held_out", "sample_bytes", "seed", "held_out_bytes",
                 "held_out_ratio_zstd", "held_out_ratio_dict"}
TRANSFER_KEYS = {"path", "sources", "codec", "shards", "checksum", "dict_bytes", "length", "logical_bytes",
                 "stored_bytes", "source_payload_bytes", "frames_copied", "records_reencoded", "training",
                 "elapsed_s"}
CONCAT_KEYS = TRANSFER_KEYS | {"parts_placed", "bytes_cloned", "bytes_linked", "sources_removed"}


def json_run(args, stdin=None, keys=None):
    """Runs zrec with --json (already in args); returns (object, stderr). stdout must be
    one JSON object and a newline, stderr free of a summary line."""
    out, err = must(args, stdin=stdin)
    text = out.decode()
    assert text.endswith("}\n") and text.count("\n") == 1, "stdout is not one JSON line: %r" % text
    obj = json.loads(text)
    assert isinstance(obj, dict), obj
    assert not SUMMARY.search(err), "a summary line on stderr with --json: %r" % err
    if keys is not None:
        assert set(obj) == keys, "keys %s, want %s" % (sorted(obj), sorted(keys))
    assert isinstance(obj["elapsed_s"], float) and obj["elapsed_s"] >= 0, obj
    return obj, err


def info(path):
    return json.loads(must(["info", "--json", path])[0])


def text_digest(path):
    return must(["digest", path])[0].decode().split()[0]


def ragged_u1(path):
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", path])
    return path


def tokens(n, seed=0):
    rng = np.random.default_rng(seed)
    # Repetitive token lists, so a dictionary has something to learn.
    vocab = rng.integers(0, 50, size=64, dtype="<i4")
    return [np.concatenate([np.tile(vocab, 7)[: 200 + i % 200], [i]]).astype("<i4") for i in range(n)]


def token_store(tmp, name, n, seed=0):
    path = os.path.join(tmp, name)
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", path])
    src = os.path.join(tmp, name + ".npy")
    with open(src, "wb") as f:
        for t in tokens(n, seed):
            f.write(npy_bytes(t))
    must(["append-npy", path, src])
    return path


@case
def create(tmp):
    dense = os.path.join(tmp, "dense")
    j, err = json_run(["create", "--json", "--dense", "--dtype", "<f4", "--shape", "3,2", "--shards", "3",
                       "--checksum", dense],
                      keys={"path", "kind", "dtype", "ndim", "item_shape", "codec", "shards", "checksum",
                            "dict_bytes", "length", "elapsed_s"})
    assert err == "", err
    i = info(dense)
    assert j["path"] == dense == i["path"], j
    for k in ("kind", "dtype", "ndim", "item_shape", "codec", "shards", "checksum", "dict_bytes", "length"):
        assert j[k] == i[k], (k, j[k], i[k])
    assert j["item_shape"] == [3, 2] and j["shards"] == 3 and j["checksum"] is True and j["length"] == 0, j
    ragged = os.path.join(tmp, "ragged")
    j, _ = json_run(["create", "--json", "--ragged", "--dtype", "<i8", "--ndim", "2", "--codec", "raw", ragged])
    assert j["kind"] == "ragged" and j["item_shape"] is None and j["ndim"] == 2 and j["codec"] == "raw", j
    # create's summary is an info line (-v); --json replaces it there too.
    out, err = must(["-v", "create", "--ragged", "--dtype", "<i8", "--ndim", "1", os.path.join(tmp, "v")])
    assert out == b"" and err.startswith("zrec create: info: created '%s': " % os.path.join(tmp, "v")), err
    j, err = json_run(["-v", "create", "--json", "--ragged", "--dtype", "<i8", "--ndim", "1", os.path.join(tmp, "w")])
    assert "created" not in err, err
    # A failed create prints no object.
    rc, out, err = run_zrec(["create", "--json", "--ragged", "--dtype", "<i8", "--ndim", "2", ragged])
    assert rc != 0 and out == b"" and "already" in err, (rc, out, err)
    # Writing the object to a full disk is an error, not silence.
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([ZREC, "create", "--json", "--ragged", "--dtype", "<i8", "--ndim", "1",
                                os.path.join(tmp, "full")], stdout=full, stderr=subprocess.PIPE)
        assert p.returncode == 1 and b"No space left" in p.stderr, (p.returncode, p.stderr)
    FIGURES.append("create --json: keys and values equal info --json's for a Dense and a Ragged store")


@case
def append_npy(tmp):
    s = os.path.join(tmp, "s")
    must(["create", "--dense", "--dtype", "<i4", "--shape", "4", s])
    a = np.arange(40, dtype="<i4").reshape(10, 4)
    src = os.path.join(tmp, "a.npy")
    open(src, "wb").write(npy_bytes(a))
    j, err = json_run(["append-npy", "--json", s, src], keys=APPEND_KEYS)
    assert err == "", err
    i = info(s)
    assert j["path"] == s and j["records_appended"] == 10 and j["records_skipped"] == 0, j
    assert j["length"] == i["length"] == 10, (j, i["length"])
    assert j["bytes_in"] == os.path.getsize(src), j
    assert j["stored_bytes"] == i["payload_bytes"], (j, i["payload_bytes"])
    # Resuming: skipped records counted, stored_bytes is what this run added.
    before = i["payload_bytes"]
    j, _ = json_run(["append-npy", "--json", "--skip-first", "3", s, src], keys=APPEND_KEYS)
    i = info(s)
    assert j["records_appended"] == 7 and j["records_skipped"] == 3 and j["length"] == i["length"] == 17, j
    assert j["stored_bytes"] == i["payload_bytes"] - before, (j, i["payload_bytes"], before)
    # -q silences the summary, not the requested object.
    j, err = json_run(["-q", "append-npy", "--json", s, src], keys=APPEND_KEYS)
    assert err == "" and j["length"] == 27, (j, err)
    # Without --json: the summary line on stderr, nothing on stdout.
    out, err = must(["append-npy", s, src])
    assert out == b"" and err.startswith("zrec append-npy: appended 10 records (") and "it now holds 37" in err, err
    FIGURES.append("append-npy --json: records, lengths and stored bytes equal info's over 4 runs")


@case
def append_files(tmp):
    s = ragged_u1(os.path.join(tmp, "s"))
    files = []
    for n in range(5):
        p = os.path.join(tmp, "f%d" % n)
        open(p, "wb").write(b"x" * (n * 100 + 1))
        files.append(p)
    empty = os.path.join(tmp, "empty")
    open(empty, "wb").close()
    missing = os.path.join(tmp, "missing")
    keys = APPEND_KEYS | {"missing_files_skipped", "empty_files_skipped"}
    j, err = json_run(["append-files", "--json", "--skip-missing", "--skip-empty", s] + files + [empty, missing],
                      keys=keys)
    i = info(s)
    assert j["records_appended"] == 5 and j["length"] == i["length"] == 5, j
    assert j["missing_files_skipped"] == 1 and j["empty_files_skipped"] == 1, j
    assert j["bytes_in"] == sum(os.path.getsize(f) for f in files), j
    assert j["stored_bytes"] == i["payload_bytes"], j
    assert "skipped 1 missing or unreadable file" in err and "skipped 1 empty file" in err, err
    FIGURES.append("append-files --json: skipped files counted as warnings say")


@case
def append_stream(tmp):
    s = ragged_u1(os.path.join(tmp, "s"))
    lines = b"".join(b'{"i": %d}\n' % i for i in range(25))
    j, err = json_run(["append-stream", "--json", s], stdin=lines, keys=APPEND_KEYS)
    # Warnings stay on stderr with --json: these 9-10 byte lines are 2.98x in zstd frames.
    assert err == (f"zrec append-stream: warning: '{s}': zstd stored 2.98x the bytes it read in the first 25 records; "
                   "a raw store would hold them smaller (zrec recompress --codec raw makes one)\n"), err
    i = info(s)
    assert j["records_appended"] == 25 == j["length"] == i["length"], j
    assert j["bytes_in"] == len(lines), j
    assert j["stored_bytes"] == i["payload_bytes"], j
    assert byte_records(s) == lines.splitlines()
    # An empty input still warns on stderr with --json (warnings are not the summary).
    j, err = json_run(["append-stream", "--json", s], stdin=b"", keys=APPEND_KEYS)
    assert j["records_appended"] == 0 and j["length"] == 25 and "appended 0 records: the input was empty" in err, err


@case
def append_lmdb(tmp):
    s = ragged_u1(os.path.join(tmp, "s"))
    envp = os.path.join(tmp, "env")
    env = lmdb.open(envp, map_size=1 << 24)
    values = {b"k%03d" % i: b"v" * (i + 1) for i in range(30)}
    with env.begin(write=True) as txn:
        for k, v in values.items():
            txn.put(k, v)
    env.close()
    j, err = json_run(["append-lmdb", "--json", s, envp], keys=APPEND_KEYS | {"databases_skipped"})
    assert err == "", err
    i = info(s)
    assert j["records_appended"] == 30 == j["length"] == i["length"], j
    assert j["databases_skipped"] == 0, j
    assert j["bytes_in"] == sum(len(v) for v in values.values()), j
    assert j["stored_bytes"] == i["payload_bytes"], j


def tar_bytes(samples):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for key, members in samples:
            for ext, data in members.items():
                ti = tarfile.TarInfo("%s.%s" % (key, ext))
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


@case
def append_tar(tmp):
    root = os.path.join(tmp, "ds")
    samples = [("s%03d" % i, {"txt": b"text %d" % i, "bin": bytes([i]) * (i + 1)}) for i in range(16)]
    tar = os.path.join(tmp, "a.tar")
    open(tar, "wb").write(tar_bytes(samples))
    keys = {"path", "samples_appended", "samples_skipped", "samples_present", "incomplete_skipped", "members_ignored",
            "bytes_in", "stored_bytes", "length", "streams", "elapsed_s"}
    j, err = json_run(["append-tar", "--json", root, tar], keys=keys)
    # Warnings stay on stderr with --json: the new streams' tiny members grow in zstd frames.
    assert sorted(err.splitlines()) == [
        f"zrec append-tar: warning: '{root}/bin': zstd stored 2.44x the bytes it read in the first 16 records; "
        "--stream-codec bin=raw would store them smaller",
        f"zrec append-tar: warning: '{root}/txt': zstd stored 3.67x the bytes it read in the first 16 records; "
        "--stream-codec txt=raw would store them smaller"], err
    i = info(root)
    assert j["path"] == root and sorted(j["streams"]) == sorted(i["streams"]) == ["bin", "txt"], j
    assert j["samples_appended"] == 16 == j["length"] and j["samples_skipped"] == 0, j
    assert all(st["length"] == 16 for st in i["streams"].values()), i
    assert j["stored_bytes"] == sum(st["payload_bytes"] for st in i["streams"].values()), j
    assert j["bytes_in"] == sum(len(d) for _, m in samples for d in m.values()), j
    out, err = must(["append-tar", root, tar])
    assert out == b"" and "zrec append-tar: appended 16 samples (" in err and "it now holds 32" in err, err


@case
def recompress_and_concat(tmp):
    a = token_store(tmp, "a", 300, seed=1)
    b = token_store(tmp, "b", 200, seed=2)
    # recompress with a trained dictionary: every record re-encoded, training reported.
    dst = os.path.join(tmp, "dict")
    j, err = json_run(["recompress", "--json", "--codec", "zstd_dict", "--tier", "small", "--samples", "100", a, dst],
                      keys=TRANSFER_KEYS)
    i = info(dst)
    assert j["path"] == dst and j["sources"] == [a] and j["codec"] == "zstd_dict" == i["codec"], j
    for k in ("shards", "checksum", "dict_bytes", "length", "logical_bytes"):
        assert j[k] == i[k], (k, j[k], i[k])
    assert j["stored_bytes"] == i["payload_bytes"], (j, i["payload_bytes"])
    assert j["source_payload_bytes"] == info(a)["payload_bytes"], j
    assert j["records_reencoded"] == 300 and j["frames_copied"] == 0, j
    t = j["training"]
    assert set(t) == TRAINING_KEYS | {"elapsed_s"}, sorted(t)
    assert t["dict_bytes"] == i["dict_bytes"] and t["dict_id"] == i["dict_id"] and t["source_records"] == 300, t
    assert t["records_sampled"] == 100 and t["seed"] == 0, t
    assert text_digest(dst) == text_digest(a)
    # Without --json both lines go to stderr.
    out, err = must(["recompress", "--codec", "zstd_dict", "--tier", "small", "--samples", "100", a,
                     os.path.join(tmp, "dict2")])
    assert out == b"" and "zrec recompress: trained a dictionary: " in err and "zrec recompress: wrote '" in err
    # concat with the same codec: frames copied, no training.
    all_ = os.path.join(tmp, "all")
    j, err = json_run(["concat", "--json", a, b, all_], keys=CONCAT_KEYS)
    assert err == "", err
    i = info(all_)
    assert j["sources"] == [a, b] and j["length"] == 500 == i["length"], j
    assert j["frames_copied"] == 500 and j["records_reencoded"] == 0 and j["training"] is None, j
    assert j["logical_bytes"] == i["logical_bytes"] == info(a)["logical_bytes"] + info(b)["logical_bytes"], j
    assert j["stored_bytes"] == i["payload_bytes"] == j["source_payload_bytes"], j
    out, err = must(["concat", a, b, os.path.join(tmp, "all2")])
    assert out == b"" and "zrec concat: wrote '" in err, err
    FIGURES.append("recompress/concat --json: 800 records, sizes equal info's, digests equal")


@case
def digest(tmp):
    a = token_store(tmp, "a", 50, seed=3)
    b = token_store(tmp, "b", 70, seed=4)
    j, err = json_run(["digest", "--json", a, b], keys={"stores", "elapsed_s"})
    assert err == "", err
    assert [set(s) for s in j["stores"]] == [{"path", "length", "digest"}] * 2, j
    assert [s["path"] for s in j["stores"]] == [a, b], j
    assert [s["digest"] for s in j["stores"]] == [text_digest(a), text_digest(b)], j
    assert [s["length"] for s in j["stores"]] == [info(a)["length"], info(b)["length"]] == [50, 70], j
    # -o FILE still gets the text lines; stdout only the object.
    o = os.path.join(tmp, "sums")
    j2, _ = json_run(["digest", "--json", "-o", o, a])
    assert open(o).read() == "%s  %s\n" % (text_digest(a), a) and j2["stores"][0]["digest"] == text_digest(a)
    per = os.path.join(tmp, "per")
    j3, _ = json_run(["digest", "--json", "--per-record", "-o", per, a])
    assert len(open(per).read().splitlines()) == 50 and j3["stores"][0]["digest"] == text_digest(a), j3
    # --per-record lines and the object cannot share stdout.
    fails(["digest", "--json", "--per-record", a], 2, says=["give -o FILE for the --per-record lines"])


@case
def train_dict(tmp):
    a = token_store(tmp, "a", 400, seed=5)
    out = os.path.join(tmp, "d.zr")
    j, err = json_run(["train-dict", "--json", "--size", "4K", "--samples", "200", "--seed", "7", a, "-o", out],
                      keys=TRAINING_KEYS | {"output", "sources", "elapsed_s"})
    assert j["output"] == out and j["sources"] == [a], j
    assert j["dict_bytes"] == os.path.getsize(out) and j["dict_id"] > 0, j
    assert j["source_records"] == 400 and j["records_sampled"] == 200 and j["seed"] == 7, j
    assert 0 < j["records_held_out"] < 200 and j["held_out_bytes"] > 0, j
    assert j["held_out_ratio_dict"] > 0 and j["held_out_ratio_zstd"] > 0, j
    # The dictionary a store is created with has the same size and ID.
    s = os.path.join(tmp, "s")
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", "--codec", "zstd_dict", "--dict", out, s])
    i = info(s)
    assert i["dict_bytes"] == j["dict_bytes"] and i["dict_id"] == j["dict_id"], (i, j)
    fails(["train-dict", "--json", a, "-o", "-"], 2, says=["give -o FILE for the dictionary"])
    o, err = must(["train-dict", "--size", "4K", a, "-o", os.path.join(tmp, "d2.zr")])
    assert o == b"" and err.startswith("zrec train-dict: wrote '"), err


@case
def info_verify_shared_keys(tmp):
    a = token_store(tmp, "a", 60, seed=6)
    i = info(a)
    v = json.loads(must(["verify", "--json", a])[0])
    # verify's own counter of decoded bytes has its own name; logical_bytes is info's.
    assert "logical_bytes" not in v and v["logical_bytes_decoded"] == i["logical_bytes"], (v, i)
    for k in ("path", "kind", "dtype", "ndim", "item_shape", "codec", "shards", "length"):
        assert v[k] == i[k], (k, v[k], i[k])
    q = json.loads(must(["verify", "--quick", "--json", a])[0])
    assert q["logical_bytes_decoded"] == 0 and q["records_decoded"] == 0, q


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-json-output-", figures=FIGURES))
