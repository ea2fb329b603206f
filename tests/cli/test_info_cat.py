#!/usr/bin/python3
"""zrec info (single store, directory of named streams, --json) and zrec cat options
(selections, --indices-from, -o, out-of-range errors, terminal refusal), checked
against NumPy sources."""
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import ZREC, npy_bytes, run, run_all  # noqa: E402


tmp = tempfile.mkdtemp(prefix="zrec-info-cat-")
root = os.path.join(tmp, "dataset")
os.mkdir(root)
rng = np.random.default_rng(7)
joint = rng.standard_normal((100, 17, 3)).astype("<f4")
label = rng.integers(0, 10, size=100).astype("<i8")
tokens = [rng.integers(0, 50000, size=n).astype("<i4") for n in rng.integers(1, 40, size=100)]

run("create", "--dense", "--dtype", "<f4", "--shape", "17,3", "--codec", "raw", "--shards", "3", f"{root}/joint")
run("append-npy", f"{root}/joint", "-", stdin=npy_bytes(joint))
run("create", "--dense", "--dtype", "int64", "--shape", "scalar", f"{root}/label")
run("append-npy", f"{root}/label", "-", stdin=npy_bytes(label))
run("create", "--ragged", "--dtype", "<i4", "--ndim", "1", f"{root}/token")
run("append-npy", f"{root}/token", "-", stdin=b"".join(npy_bytes(t) for t in tokens))


def info_json_reports_schema_and_sizes():
    j = json.loads(run("info", "--json", f"{root}/joint").stdout)
    assert j["kind"] == "dense" and j["dtype"] == "<f4" and j["ndim"] == 2 and j["item_shape"] == [17, 3], j
    assert j["codec"] == "raw" and j["shards"] == 3 and j["length"] == 100, j
    assert j["logical_bytes"] == joint.nbytes == j["payload_bytes"], j
    assert j["compression_ratio"] == 1.0 and j["dict_bytes"] == 0, j
    assert j["files"]["meta.zr"] == 4096 + 16 * 100, j
    assert sum(j["files"].values()) == j["disk_bytes"], j
    t = json.loads(run("info", "--json", f"{root}/token").stdout)
    assert t["kind"] == "ragged" and t["item_shape"] is None and t["ndim"] == 1, t
    assert t["logical_bytes"] == sum(8 + x.nbytes for x in tokens), t


def info_text_lists_fields():
    out = run("info", f"{root}/label").stdout.decode()
    for want in ["kind          dense", "dtype         <i8", "item_shape    ()", "codec         raw", "length        100"]:
        assert want in out, (want, out)


def info_directory_of_streams_checks_lengths():
    # Without a zrec-root marker the stores are unrelated: no lengths compared.
    out = run("info", root).stdout.decode()
    assert out.splitlines()[0].startswith("store ") and out.splitlines()[-1] == (
        "not a root (no zrec-root marker): its 3 stores are unrelated, and their lengths are not compared"), out
    j = json.loads(run("info", "--json", root).stdout)
    assert sorted(j["streams"]) == ["joint", "label", "token"] and j["marked"] is False and "lengths_agree" not in j, j
    # A root (the marker as docs/format.md section 12 describes it): checked against its commit.
    # A stream past the commit, as a killed append to the root leaves it (a listed stream
    # is written only through its root, so the record goes in before the marker).
    marker = os.path.join(root, "zrec-root")
    run("append-npy", f"{root}/label", "-", stdin=npy_bytes(label[:1]))
    with open(marker, "w") as f:
        f.write("zrec-root 1\nlength 100\nstream joint\nstream label\nstream token\n")
    try:
        out = run("info", root).stdout.decode()
        assert "root (zrec-root): 3 streams, 100 samples committed\nproblem: stream 'label' holds 101 records, more " \
            "than the 100 samples the root committed" in out, out
        j = json.loads(run("info", "--json", root).stdout)
        assert j["marked"] is True and j["committed_length"] == 100 and j["lengths_agree"] is False, j
        assert [p["rule"] for p in j["problems"]] == ["root_length"], j
        os.remove(marker)
        assert "DISAGREE" not in run("info", root).stdout.decode()
    finally:
        if os.path.exists(marker):
            os.remove(marker)
        shutil.rmtree(f"{root}/label")
        run("create", "--dense", "--dtype", "int64", "--shape", "scalar", f"{root}/label")
        run("append-npy", f"{root}/label", "-", stdin=npy_bytes(label))
    with open(marker, "w") as f:
        f.write("zrec-root 1\nlength 100\nstream joint\nstream label\nstream token\n")
    try:
        out = run("info", root).stdout.decode()
        assert out.splitlines()[-1] == "root (zrec-root): 3 streams, 100 samples committed; lengths agree", out
    finally:
        os.remove(marker)


def info_on_nothing_is_an_error():
    p = run("info", tmp + "/nope", check=False)
    assert p.returncode == 1 and b"does not exist" in p.stderr, p.stderr
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    p = run("info", empty, check=False)
    assert p.returncode == 1 and p.stderr.decode().strip() == f"zrec info: '{empty}' is not a zrecord store and holds none", p.stderr


def cat_selections_match_numpy_indexing():
    for sel, idx in [("7", [7]), ("-1", [99]), ("10:20", range(10, 20)), ("::7", range(0, 100, 7)),
                     ("3,5,8", [3, 5, 8]), ("::-10", range(99, -1, -10)), ("95:", range(95, 100)), ("1:4,-2", [1, 2, 3, 98])]:
        got = np.load(io.BytesIO(run("cat", f"{root}/joint", sel).stdout))
        assert got.dtype == joint.dtype and np.array_equal(got, joint[list(idx)]), sel


def cat_indices_from_file_and_stdin():
    path = os.path.join(tmp, "ids.txt")
    with open(path, "w") as f:
        f.write("5\n 0 \n\n-1\n5\n")
    got = np.load(io.BytesIO(run("cat", f"{root}/label", "--indices-from", path).stdout))
    assert list(got) == [label[5], label[0], label[99], label[5]]
    got = np.load(io.BytesIO(run("cat", f"{root}/label", "--indices-from", "-", stdin=b"2\n3\n").stdout))
    assert list(got) == [label[2], label[3]]


def cat_ragged_stream_and_output_file():
    out = os.path.join(tmp, "tok.npy")
    run("cat", "--format", "npy", f"{root}/token", "::3", "-o", out)  # the stream, asked for
    with open(out, "rb") as f:
        for i in range(0, 100, 3):
            a = np.load(f)
            assert a.dtype == np.dtype("<i4") and np.array_equal(a, tokens[i]), i
        assert f.read() == b""


def cat_raw_and_jsonl():
    raw = run("cat", f"{root}/token", "0:5", "--format", "raw").stdout
    assert raw == b"".join(t.tobytes() for t in tokens[:5])
    lines = run("cat", f"{root}/token", "0:5", "--format", "jsonl").stdout.decode().splitlines()
    assert [json.loads(l) for l in lines] == [t.tolist() for t in tokens[:5]]
    lines = run("cat", f"{root}/label", "0:3", "--format", "jsonl").stdout.decode().splitlines()
    assert [json.loads(l) for l in lines] == label[:3].tolist()
    text = run("cat", f"{root}/token", "2", "--format", "text").stdout.decode()
    assert text.startswith("2\t[") and text.endswith("]\n"), text


def cat_out_of_range_and_bad_selection_fail_cleanly():
    p = run("cat", f"{root}/joint", "100", check=False)
    assert p.returncode == 1, p.returncode
    assert p.stderr.decode().strip() == "zrec cat: index 100 is out of range for a store of 100 records", p.stderr
    p = run("cat", f"{root}/joint", "1:x", check=False)
    assert p.returncode == 2 and p.stderr.startswith(b"zrec cat: invalid selection '1:x'"), p.stderr
    p = run("cat", f"{root}/joint", "--format", "csv", check=False)
    assert p.returncode == 2 and b"unknown --format 'csv'" in p.stderr, p.stderr
    assert p.stdout == b""


def cat_refuses_binary_on_a_terminal():
    # script(1) gives zrec a pseudo-terminal on stdout.
    if shutil.which("script") is None:
        return
    p = subprocess.run(["script", "-qec", f"{ZREC} cat {root}/label 0:2 --format npy", "/dev/null"], capture_output=True)
    assert p.returncode == 2 and b"refusing to write binary data to a terminal" in p.stdout, p.stdout
    # Without --format, a terminal gets the text format.
    p = subprocess.run(["script", "-qec", f"{ZREC} cat {root}/label 0:2", "/dev/null"], capture_output=True)
    assert p.returncode == 0 and p.stdout.startswith(b"0\t"), p.stdout
    p = subprocess.run(["script", "-qec", f"{ZREC} cat {root}/label 0:2 --format text", "/dev/null"], capture_output=True)
    assert p.returncode == 0, p.stdout


def cat_empty_store_gives_empty_array():
    run("create", "--dense", "--dtype", "|u1", "--shape", "2,2", f"{tmp}/empty_store")
    got = np.load(io.BytesIO(run("cat", f"{tmp}/empty_store").stdout))
    assert got.shape == (0, 2, 2) and got.dtype == np.uint8


sys.exit(run_all([info_json_reports_schema_and_sizes, info_text_lists_fields, info_directory_of_streams_checks_lengths,
                  info_on_nothing_is_an_error, cat_selections_match_numpy_indexing, cat_indices_from_file_and_stdin,
                  cat_ragged_stream_and_output_file, cat_raw_and_jsonl, cat_out_of_range_and_bad_selection_fail_cleanly,
                  cat_refuses_binary_on_a_terminal, cat_empty_store_gives_empty_array], tmp))
