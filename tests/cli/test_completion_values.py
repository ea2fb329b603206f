#!/usr/bin/python3
"""The values `zrec completion bash|zsh` offers for an option are the table its command
checks the value against (issue 21; cli/option_choices.h): each offered word is
accepted, a word outside them is refused with a message listing exactly the offered
words (so the table holds nothing else), and bash and zsh offer the same sets.
cat --format tar, missing before, is offered; --dtype offers NumPy's names."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import ZREC, expect_failure, must, require_zrec, run_all, run_zrec  # noqa: E402

require_zrec("test_completion_values")
root = tempfile.mkdtemp(prefix="zrec_completion_values.")


def bash_sets():
    """{"cat:--format": [words]} from the bash script's value arms."""
    out = must(["completion", "bash"])[0].decode()
    sets = {}
    for pats, words in re.findall(r"^\s+(\S+)\) COMPREPLY=\(\$\(compgen -W '([^']*)'", out, re.M):
        for pat in pats.split("|"):
            sets[pat] = words.split()
    return sets


def zsh_sets():
    """{"cat:--format": [words]} from the zsh script's _arguments specs."""
    out = must(["completion", "zsh"])[0].decode()
    sets, command = {}, None
    for line in out.splitlines():
        m = re.match(r"^\s+\(([a-z0-9-]+)\)$", line)
        if m:
            command = m.group(1)
        m = re.match(r"^\s+'(--?[a-z0-9-]+)=\[.*\]:value:\(([^)]*)\)'", line)
        if m and command:
            sets[f"{command}:{m.group(1)}"] = m.group(2).split()
    return sets


def sets_are_the_tables():
    b = bash_sets()
    want = {
        "cat:--format": ["npy", "raw", "text", "jsonl", "tar", "npz"],
        "cat:--framing": ["lines", "nul", "u32le", "u64le"],
        "append-stream:--framing": ["lines", "nul", "u32le", "u64le"],
        "append-stream:--parse": ["ints", "floats"],
        "train-dict:--tier": ["small", "balanced", "max"],
        "bench:--workload": ["vision", "vision-var", "tokens", "tokens-var"],
    }
    for key, words in want.items():
        assert b.get(key) == words, (key, b.get(key))
    for command in ("create", "append-tar", "append-lmdb", "append-h5", "recompress", "concat", "bench"):
        # auto (issue 46): every --codec of a store to be made, and bench's auto store.
        assert b.get(f"{command}:--codec") == ["raw", "zstd", "zstd_dict", "auto"], (command,
                                                                                   b.get(f"{command}:--codec"))
    assert "float32" in b["create:--dtype"] and "uint8" in b["create:--dtype"]
    assert "append-tar:--parse" not in b  # EXT=int|float: no fixed words
    z = zsh_sets()
    for key, words in b.items():
        long_key = key if key.split(":")[1].startswith("--") else None
        if long_key and long_key in z:
            assert z[long_key] == words, (key, z[long_key], words)
    assert z.get("cat:--format") == want["cat:--format"], z.get("cat:--format")


def refused(args, option_words, what):
    """`zrec ARGS` with a word outside the table: exit 2, the message lists the table."""
    rc, _, err = run_zrec(args, stdin=b"")
    listed = ", ".join(option_words[:-1]) + " or " + option_words[-1]
    expect_failure(args, rc, err, 2, [f"unknown {what} 'bogus' (use {listed})"])


def validators_accept_each_word_and_nothing_else():
    b = bash_sets()
    store = f"{root}/s"
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", store])
    must(["append-stream", store], stdin=b"a\nbb\n")
    for word in b["cat:--format"]:
        must(["cat", store, "--format", word, "-f", "-o", f"{root}/out.{word}"])
    refused(["cat", store, "--format", "bogus"], b["cat:--format"], "--format")
    for word in b["cat:--framing"]:
        must(["cat", store, "--framing", word, "-o", f"{root}/out.{word}"])
    refused(["cat", store, "--framing", "bogus"], b["cat:--framing"], "--framing")
    for word in b["append-stream:--framing"]:
        must(["append-stream", store, "--framing", word])
    refused(["append-stream", store, "--framing", "bogus"], b["append-stream:--framing"], "--framing")
    for word in b["append-stream:--parse"]:
        numbers = f"{root}/{word}"
        must(["create", "--ragged", "--ndim", "1", "--dtype", "<i8" if word == "ints" else "<f8", numbers])
        must(["append-stream", numbers, "--parse", word], stdin=b"1 2\n")
    refused(["append-stream", numbers, "--parse", "bogus"], b["append-stream:--parse"], "--parse")
    for i, word in enumerate(b["create:--codec"]):
        extra = ["--dict", f"{root}/dict"] if word == "zstd_dict" else []
        if extra:
            with open(f"{root}/dict", "wb") as f:
                f.write(b"x" * 256)
        must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", word, *extra, f"{root}/c{i}"])
    refused(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "bogus", f"{root}/c"],
            b["create:--codec"], "codec")
    for i, word in enumerate(b["create:--dtype"]):
        must(["create", "--ragged", "--ndim", "1", "--dtype", word, f"{root}/d{i}"])
    refused(["train-dict", store, "--tier", "bogus", "-o", f"{root}/d.zr"], b["train-dict:--tier"], "--tier")
    refused(["bench", "--workload", "bogus"], b["bench:--workload"], "workload")


sys.exit(run_all((sets_are_the_tables, validators_accept_each_word_and_nothing_else), root, "completion value cases"))
