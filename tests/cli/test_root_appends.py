#!/usr/bin/python3
"""Appends that feed every stream of a root at once (issue 42, item 2): before, only
append-tar could append to a root, so a root with an array stream could never grow.

- append-npy ROOT --stream NAME=FILE ...: a root of label (Dense scalar '<i8'), embedding
  (Dense (4,) '<f4'), token (Ragged '<i4' ndim 1) and text (Ragged '|u1') streams grows
  by one record per stream per sample, each read back equal to its input; a rerun with
  --from-length appends nothing (the root byte-identical).
- append-stream ROOT: JSON lines, one object per sample, one key per stream: numbers
  into the scalar stream, arrays into the Dense and Ragged ones, strings as UTF-8 (or,
  --parse text=bytes, one byte per character); a rerun with --from-length skips.
- Refused, the root byte-identical, one line naming the rule: inputs of unequal record
  counts (both counts named), a stream of the root not fed, a stream the root lacks, an
  array of the wrong dtype, a JSON line with a missing or an extra key (line and key
  named), a directory without a zrec-root marker.
- SIGKILL: append-npy ROOT, append-stream ROOT (JSON lines) and append-tar ROOT (a tar
  of .npy members: the clean root's export), each with --checkpoint-every and
  --resume-file, killed at 5 random instants and rerun to its end, leave every stream's
  digest equal to a clean append-npy run's.

Needs: ZREC (path of the zrec binary), numpy.
"""
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import (expect, fails, must, must_out, records, require_zrec,  # noqa: E402
                         tree_digests)

import numpy as np  # noqa: E402

ZREC = require_zrec("test_root_appends")
CASES, case = case_runner.case_registry()
FIGURES = []
STREAMS = ("embedding", "label", "text", "token")


def make_root(d, name="root"):
    root = os.path.join(d, name)
    os.mkdir(root)
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", root + "/label"])
    must(["create", "--dense", "--shape", "4", "--dtype", "<f4", root + "/embedding"])
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", root + "/token"])
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", root + "/text"])
    must(["adopt", root])
    return root


def write_inputs(d, n, start=0, tag=""):
    """The four streams' .npy inputs of samples start..start+n-1; returns the --stream args."""
    p = lambda s: os.path.join(d, s + tag + ".npy")  # noqa: E731
    np.save(p("label"), np.arange(start, start + n, dtype="<i8"))
    np.save(p("embedding"), np.arange(start * 4, (start + n) * 4, dtype="<f4").reshape(n, 4))
    with open(p("token"), "wb") as f:
        for i in range(start, start + n):
            np.save(f, np.arange(i % 7 + 1, dtype="<i4") + i)
    with open(p("text"), "wb") as f:
        for i in range(start, start + n):
            np.save(f, np.frombuffer(("sample %d" % i).encode(), dtype="|u1"))
    return [a for s in STREAMS for a in ("--stream", "%s=%s" % (s, p(s)))]


def check_samples(root, n):
    """Sample i of every stream is what write_inputs made for i."""
    label, emb = (records(os.path.join(root, s))[0] for s in ("label", "embedding"))  # Dense: one (N, ...) array
    tok, text = (records(os.path.join(root, s)) for s in ("token", "text"))
    expect([len(x) for x in (label, emb, tok, text)] == [n] * 4, "lengths %r, want %d each" %
           ([len(x) for x in (label, emb, tok, text)], n))
    for i in range(n):
        expect(int(label[i]) == i, "label %d is %r" % (i, label[i]))
        expect(emb[i].tolist() == [4.0 * i + k for k in range(4)], "embedding %d is %r" % (i, emb[i]))
        expect(tok[i].tolist() == list(range(i, i + i % 7 + 1)), "token %d is %r" % (i, tok[i]))
        expect(text[i].tobytes() == ("sample %d" % i).encode(), "text %d is %r" % (i, text[i]))


def committed(root):
    return open(os.path.join(root, "zrec-root")).read().splitlines()[1]


@case
def npy_feeds_every_stream_and_rerun_skips(d):
    root = make_root(d)
    first = write_inputs(d, 5)
    err = must(["append-npy", root] + first)[1]
    expect("appended 5 samples" in err and "it now holds 5" in err, err)
    second = write_inputs(d, 3, start=5, tag="b")
    must(["append-npy", "--from-length", "5", root] + second)
    check_samples(root, 8)
    expect(committed(root) == "length 8", committed(root))
    before = tree_digests(root)
    err = must(["append-npy", "--from-length", "5", root] + second)[1]
    expect("appended 0 samples" in err and "after skipping 3 already present" in err, err)
    expect(tree_digests(root) == before, "a rerun changed the root")
    # stdin for one stream.
    third = write_inputs(d, 2, start=8, tag="c")
    third[third.index("label=" + os.path.join(d, "labelc.npy"))] = "label=-"
    must(["append-npy", root] + third, stdin_file=os.path.join(d, "labelc.npy"))
    check_samples(root, 10)


@case
def json_lines_feed_every_stream_and_rerun_skips(d):
    root = make_root(d)
    lines = json_lines(6)
    err = must(["append-stream", root], stdin=lines.encode())[1]
    expect("appended 6 samples" in err, err)
    check_samples(root, 6)
    before = tree_digests(root)
    err = must(["append-stream", "--from-length", "0", root], stdin=lines.encode())[1]
    expect("after skipping 6 already present" in err, err)
    expect(tree_digests(root) == before, "a rerun changed the root")
    # Nested arrays fill a Dense stream; --parse text=bytes takes a character per byte.
    must(["append-stream", "--parse", "text=bytes", root],
         stdin=b'{"text": "\\u00ff\\u0001", "token": [1], "label": -1, "embedding": [[1, 2], [3, 4]]}\n')
    expect(records(root + "/text")[6].tobytes() == b"\xff\x01", "bytes: %r" % records(root + "/text")[6])
    expect(records(root + "/embedding")[0][6].tolist() == [1, 2, 3, 4], "nested: %r" % records(root + "/embedding"))


@case
def bad_inputs_are_refused_root_unchanged(d):
    root = make_root(d)
    good = write_inputs(d, 5)
    must(["append-npy", root] + good)
    np.save(os.path.join(d, "label4.npy"), np.arange(4, dtype="<i8"))
    short = list(good)
    short[short.index("label=" + os.path.join(d, "label.npy"))] = "label=" + os.path.join(d, "label4.npy")
    np.save(os.path.join(d, "f8.npy"), np.arange(5, dtype="<f8"))
    wrong = list(good)
    wrong[wrong.index("label=" + os.path.join(d, "label.npy"))] = "label=" + os.path.join(d, "f8.npy")
    line = '{"label": 1, "embedding": [1, 2, 3, 4], "token": [1], "text": "a"%s}\n'
    for args, stdin, says in [
        (["append-npy", root] + short, None,
         ["'%s/label'): '%s' holds 4 records, but stream 'embedding' ('%s/embedding'): '%s' holds 5" %
          (root, os.path.join(d, "label4.npy"), root, os.path.join(d, "embedding.npy")), "nothing was appended"]),
        (["append-npy", root] + good[:-2], None,
         ["root '%s' has a stream 'token' that the input does not feed" % root]),
        (["append-npy", root] + good + ["--stream", "extra=" + os.path.join(d, "label.npy")], None,
         ["root '%s' has no stream 'extra'" % root]),
        (["append-npy", root] + wrong, None,
         ["stream 'label' ('%s/label'): '%s': array at byte 0: dtype '<f8' does not match the store's '<i8'" %
          (root, os.path.join(d, "f8.npy"))]),
        (["append-stream", root], (line % "").replace(', "text": "a"', "").encode() * 1,
         ['stdin line 1: the key "text" is missing']),
        (["append-stream", root], (line % ', "zz": 2').encode(), ['stdin line 1: the key "zz" is no stream']),
        (["append-stream", root], ((line % "") + (line % "").replace("[1, 2, 3, 4]", "[1, 2, 3]")).encode(),
         ['stdin line 2: the value of "embedding" holds 3 numbers; each record is exactly 4']),
        (["append-npy", d] + good, None, ["'%s' is no root (it has no zrec-root marker)" % d]),
    ]:
        before = tree_digests(root)
        err = fails(args, 1, says, stdin=stdin)
        expect(len(err.strip().splitlines()) == 1, "more than one line: %r" % err)
        expect(tree_digests(root) == before, "zrec %s changed the root" % " ".join(args))
    check_samples(root, 5)


def digests(root):
    return [must_out(["digest", os.path.join(root, s)]).split()[0] for s in STREAMS]


def json_lines(n):
    return "".join('{"label": %d, "embedding": [%d, %d, %d, %d], "token": %s, "text": "sample %d"}\n' %
                   (i, 4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3, list(range(i, i + i % 7 + 1)), i) for i in range(n))


def kill_and_resume(d, name, argv, stdin_path, want, trials=5):
    """Runs `zrec ARGV ROOT` (ROOT a fresh root per trial; stdin from stdin_path, or
    none) with --checkpoint-every and --resume-file, SIGKILLs it at a random instant of a
    whole run, reruns it to its end, and expects every stream's digest to be `want`.
    Returns how many trials killed it mid-run."""
    def run(root, trial, wait=True):
        cmd = [ZREC, argv[0], "--checkpoint-every", "1000", "--resume-file",
               os.path.join(d, "%s-resume%d" % (name, trial)), root] + argv[1:]
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if wait:
            err = p.communicate()[1]
            expect(p.returncode == 0, "%s %s: %s" % (name, root, err.decode()))
        return p
    t0 = time.monotonic()
    run(make_root(d, name + "-timed"), 99)
    duration = time.monotonic() - t0
    rng = random.Random(42)
    killed = 0
    for trial in range(trials):  # each from an empty root, so the kill lands inside a whole run
        root = make_root(d, "%s-killed%d" % (name, trial))
        p = run(root, trial, wait=False)
        time.sleep(rng.uniform(0.0, duration))
        p.send_signal(signal.SIGKILL)
        p.wait()
        killed += p.returncode == -signal.SIGKILL
        run(root, trial)
        expect(digests(root) == want, "%s, kill %d: digests differ from a clean run's" % (name, trial))
    return killed


@case
def killed_appends_resume_to_a_clean_runs_digests(d):
    # The same 12,000 samples by .npy files, by JSON lines and by a tar of .npy members
    # (the clean root's own export): each append killed and resumed ends as a clean run.
    n = 12000
    args = write_inputs(d, n)
    clean = make_root(d, "clean")
    must(["append-npy", clean] + args)
    want = digests(clean)
    jsonl = os.path.join(d, "samples.jsonl")
    with open(jsonl, "w") as f:
        f.write(json_lines(n))
    tar = os.path.join(d, "samples.tar")
    must(["cat", clean, "--format", "tar", "-o", tar])
    from_json = make_root(d, "from-json")
    must(["append-stream", from_json], stdin_file=jsonl)
    expect(digests(from_json) == want, "append-stream ROOT of the same samples differs from append-npy's")
    killed = {"append-npy": kill_and_resume(d, "npy", ["append-npy"] + args, None, want),
              "append-stream": kill_and_resume(d, "jsonl", ["append-stream"], jsonl, want),
              "append-tar": kill_and_resume(d, "tar", ["append-tar", tar], None, want)}
    for command, count in killed.items():
        expect(count >= 1, "no trial killed %s mid-run" % command)
    FIGURES.append("root appends killed mid-run and resumed to a clean run's digests: %s" %
                   ", ".join("%s %d of 5" % kv for kv in killed.items()))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-root-appends-", figures=FIGURES))
