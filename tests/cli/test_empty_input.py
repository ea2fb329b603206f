#!/usr/bin/python3
"""An append-* that receives zero records says so: a warning "appended 0 records: the
input was empty" (exit 0), or with --require-records exit 1 and the store unchanged
byte for byte. Also: README's example scripts shadow no Python module."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import ZREC, npy_bytes, run_all, tree_hash  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMPTY = "appended 0 records: the input was empty"


def run(*args, stdin=b""):
    p = subprocess.run([ZREC, *args], input=stdin, capture_output=True)
    return p.returncode, p.stderr.decode()


root = tempfile.mkdtemp(prefix="zrec_empty_input.")


def make(name, *create):
    store = os.path.join(root, name)
    rc, err = run("create", *create, store)
    assert rc == 0, err
    return store


# (command, extra args, stdin) per append command, each with an empty input.
def empty_inputs(store):
    return [("append-stream", [store], b""),
            ("append-npy", [store, "-"], b""),
            ("append-files", [store, "-"], b"")]


def warns_on_empty_input():
    for cmd, args, stdin in empty_inputs(make("w", "--ragged", "--dtype", "|u1", "--ndim", "1")):
        rc, err = run(cmd, *args, stdin=stdin)
        assert rc == 0, (cmd, rc, err)
        assert f"zrec {cmd}: warning: {EMPTY}\n" in err, (cmd, err)


def require_records_fails_and_keeps_the_store():
    store = make("r", "--ragged", "--dtype", "|u1", "--ndim", "1")
    rc, err = run("-q", "append-stream", store, stdin=b"abc\nde\n")
    assert rc == 0, err
    before = tree_hash(store)
    for cmd, args, stdin in empty_inputs(store):
        rc, err = run(cmd, "--require-records", *args, stdin=stdin)
        assert rc == 1, (cmd, rc, err)
        assert err == f"zrec {cmd}: {EMPTY} (--require-records)\n", (cmd, err)
        assert tree_hash(store) == before, f"{cmd} --require-records changed the store"
    # With records, --require-records is silent and appends.
    rc, err = run("-q", "append-stream", "--require-records", store, stdin=b"x\n")
    assert rc == 0 and err == "", err
    assert tree_hash(store) != before


def skipped_everything_is_named():
    store = make("s", "--ragged", "--dtype", "|u1", "--ndim", "1")
    rc, err = run("append-stream", "--skip-first", "2", store, stdin=b"a\nb\n")
    assert rc == 0 and "appended 0 records: all 2 input records were skipped (--skip-first)" in err, err


def nonempty_input_has_no_warning():
    store = make("n", "--dense", "--dtype", "<f4", "--shape", "2")
    rc, err = run("append-npy", store, "-", stdin=npy_bytes(np.ones((3, 2), "<f4")))
    assert rc == 0 and "warning" not in err, err


def readme_scripts_shadow_no_module():
    stdlib = set(sys.stdlib_module_names) | {"numpy", "msgpack", "zstandard", "h5py", "lmdb"}
    texts = [open(os.path.join(SRC, p)).read() for p in ("README.md", "docs/pipelines.md")]
    scripts = {m for t in texts for m in re.findall(r"python3? ([A-Za-z_][\w]*)\.py", t)}
    assert scripts, "no example scripts found"
    bad = sorted(s for s in scripts if s in stdlib)
    assert not bad, f"example scripts named like Python modules: {bad}"


sys.exit(run_all((warns_on_empty_input, require_records_fails_and_keeps_the_store, skipped_everything_is_named,
                  nonempty_input_has_no_warning, readme_scripts_shadow_no_module), root, "empty-input cases"))
