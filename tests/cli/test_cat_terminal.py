#!/usr/bin/python3
"""cat --format text/jsonl to a terminal (issue 21): a record of more than 1000 values is
summarised as numpy prints it (threshold=1000, edgeitems=3: the first and last 3 of each
axis around '...'; jsonl writes "..." so each line stays JSON); --full prints every
value; a pipe or a file always gets every value, as before. The terminal is a pty."""
import json
import os
import pty
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import ZREC, fails, must, must_out, npy_bytes, require_zrec, run_all  # noqa: E402

require_zrec("test_cat_terminal")
root = tempfile.mkdtemp(prefix="zrec_cat_terminal.")
store = f"{root}/img"
big = np.arange(2 * 3 * 20 * 20, dtype="<i4").reshape(2, 3, 20, 20)  # 1200 values a record
must(["create", "--dense", "--dtype", "<i4", "--shape", "3,20,20", store])
must(["append-npy", store, "-"], stdin=npy_bytes(big))
small = f"{root}/small"  # 1000 values: never summarised
must(["create", "--dense", "--dtype", "<i4", "--shape", "10,100", small])
must(["append-npy", small, "-"], stdin=npy_bytes(np.arange(1000, dtype="<i4").reshape(1, 10, 100)))


def on_terminal(args):
    """stdout of `zrec ARGS` written to a pty (the pty's \\r\\n read back as \\n)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([ZREC, *args], stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the writer closed the pty
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait(timeout=60) == 0, p.stderr.read()
    return out.replace(b"\r\n", b"\n").decode()


def numpy_text(a, summarise):
    """numpy's print of `a`, its column padding taken out (zrec separates values by one space)."""
    s = np.array2string(a, threshold=1000 if summarise else sys.maxsize, edgeitems=3, max_line_width=1 << 30)
    s = re.sub(r"\[ +", "[", s)
    return re.sub(r"(?<=\S) +", " ", s)


def terminal_text_is_numpy_summary():
    out = on_terminal(["cat", store, "--format", "text"])
    want = "".join(f"{i}\t{numpy_text(big[i], True)}\n" for i in range(2))
    assert out == want, out[:400]
    assert "..." in out and out.count("\n") == 2 * 23, out.count("\n")
    # --full: every value, as a pipe gets them.
    full = on_terminal(["cat", store, "--format", "text", "--full"])
    assert full == "".join(f"{i}\t{numpy_text(big[i], False)}\n" for i in range(2))
    # 1000 values are not more than the threshold.
    assert on_terminal(["cat", small, "--format", "text"]) == f"0\t{numpy_text(np.arange(1000).reshape(10, 100), False)}\n"


def terminal_jsonl_stays_json():
    lines = on_terminal(["cat", store, "0", "--format", "jsonl"]).splitlines()
    value = json.loads(lines[0])
    assert value[0][0] == [0, 1, 2, "...", 17, 18, 19] and value[0][3] == "..." and len(value[0]) == 7, value[0]
    assert value[2][6] == [1180, 1181, 1182, "...", 1197, 1198, 1199]
    full = json.loads(on_terminal(["cat", store, "0", "--format", "jsonl", "--full"]).splitlines()[0])
    assert full == big[0].tolist()


def pipes_and_files_get_every_value():
    piped = must_out(["cat", store, "--format", "text"]).decode()
    assert piped == "".join(f"{i}\t{numpy_text(big[i], False)}\n" for i in range(2))
    assert piped == on_terminal(["cat", store, "--format", "text", "--full"])
    lines = must_out(["cat", store, "--format", "jsonl"]).decode().splitlines()
    assert [json.loads(l) for l in lines] == big.tolist()
    must(["cat", store, "--format", "jsonl", "-o", f"{root}/all.jsonl"])
    with open(f"{root}/all.jsonl") as f:
        assert [json.loads(l) for l in f] == big.tolist()
    fails(["cat", store, "--format", "npy", "--full"], 2, ["--full is used with --format text or jsonl only"])


def binary_records_are_named_on_a_terminal():
    # Records of bytes that are no text (a PNG, a gzip file, random bytes) printed 23 KB of
    # \xNN on one line to a terminal; there they are named with their size (--full, pipes
    # and files print them as before).
    import gzip
    blobs = [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, gzip.compress(b"hello" * 100), b"a caption line",
             bytes([0, 1, 2, 250, 251]) * 10, "naïve café".encode()]
    s = f"{root}/blobs"
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", s])
    must(["append-stream", "--framing", "u32le", s], stdin=b"".join(len(b).to_bytes(4, "little") + b for b in blobs))
    out = on_terminal(["cat", s, "--format", "text"]).splitlines()
    assert out == ["0\t<PNG image, %d bytes>" % len(blobs[0]), "1\t<gzip data, %d bytes>" % len(blobs[1]),
                   "2\ta caption line", "3\t<binary data, 50 bytes>", "4\tnaïve café"], out
    lines = on_terminal(["cat", s, "0:2", "--format", "jsonl"]).splitlines()
    assert [json.loads(l) for l in lines] == ["<PNG image, %d bytes>" % len(blobs[0]),
                                              "<gzip data, %d bytes>" % len(blobs[1])], lines
    full = on_terminal(["cat", s, "0", "--format", "text", "--full"])
    assert full.startswith("0\t\\x89PNG\\x0d\\x0a") and len(full) > 1000, full[:40]
    piped = must_out(["cat", s, "0", "--format", "text"]).decode()
    assert piped == full, piped[:40]


sys.exit(run_all((terminal_text_is_numpy_summary, terminal_jsonl_stays_json, pipes_and_files_get_every_value,
                  binary_records_are_named_on_a_terminal), root, "cat terminal cases"))
