#!/usr/bin/python3
"""append-files --manifest under SIGKILL (issue 9, defect 4).

A run of `zrec append-files --checkpoint-every N --manifest M` is killed at random
moments, then resumed as man zrec-append-files says: --skip-first K, K the number of
records the store gained (zrec info). After every kill the manifest must hold the lines
of exactly the published records, in ID order, possibly followed by lines whose IDs are
>= the store's length (records not published; the last line perhaps cut short); the
resumed run removes those first. At the end the store holds every file once, in list
order, and the manifest lists exactly them.

Needs: ZREC (path of the zrec binary).
"""
import hashlib
import json
import os
import random
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
from cli_helpers import (  # noqa: E402  (tests/cli/cli_helpers.py)
    SANITIZED, expect, must_out as must, require_zrec, run_zrec as run)

ZREC = require_zrec("test_manifest_kill")
FILES = 3000 if SANITIZED else 6000
KILLS = 20
FIGURES = []


def length(store):
    return json.loads(must(["info", "--json", store]))["length"]


def check_manifest_relation(manifest, expected_lines, published, what):
    """The manifest's lines with ID < published are exactly the first `published`
    expected lines; anything after them is lines of unpublished IDs (last maybe cut)."""
    data = open(manifest, "rb").read() if os.path.exists(manifest) else b""
    lines = data.split(b"\n")
    tail_cut = lines.pop()  # b"" when the file ends with a newline
    expect(lines[:published] == expected_lines[:published],
           "%s: the first %d manifest lines are not the published records'" % (what, published))
    for line in lines[published:] + ([tail_cut] if tail_cut else []):
        head = line.split(b"\t", 1)[0]
        if line is tail_cut and b"\t" not in line:
            continue  # cut inside the ID
        expect(head.isdigit() and int(head) >= published,
               "%s: manifest line %r after the published ones has an ID below %d" % (what, line, published))
    return len(lines) - published + (1 if tail_cut else 0)


def test_manifest_exact_after_kills(d):
    rng = random.Random(9)
    names, contents = [], []
    for k in range(FILES):
        name = os.path.join(d, "in", "f%05d" % k)
        os.makedirs(os.path.dirname(name), exist_ok=True)
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64))) + b"%d" % k
        with open(name, "wb") as f:
            f.write(body)
        names.append(name)
        contents.append(body)
    with open(os.path.join(d, "list"), "w") as f:
        f.write("\n".join(names) + "\n")
    expected = [b"%d\t%s\t%d" % (i, n.encode(), len(c)) for i, (n, c) in enumerate(zip(names, contents))]
    store = os.path.join(d, "s")
    manifest = os.path.join(d, "m.tsv")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", store])

    kills = extra_seen = runs = 0
    t_start = time.monotonic()
    while True:
        published = length(store)
        argv = [ZREC, "--threads", "2", "append-files", "--checkpoint-every", "40", "--manifest", manifest,
                "--files-from", os.path.join(d, "list"), "--skip-first", str(published), store]
        runs += 1
        if kills >= KILLS:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
            expect(p.returncode == 0, "the final run failed: %s" % p.stderr.decode())
            break
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.0, 0.1))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        p.communicate()
        now = length(store)
        expect(now >= published, "the store shrank from %d to %d" % (published, now))
        extra = check_manifest_relation(manifest, expected, now, "after kill %d" % kills)
        extra_seen += 1 if extra else 0
        expect(runs < 200, "no progress after %d runs" % runs)
        if p.returncode == 0:
            break  # finished before the kill landed
    expect(length(store) == FILES, "the store holds %d records, want %d" % (length(store), FILES))
    got = open(manifest, "rb").read()
    expect(got == b"\n".join(expected) + b"\n", "the final manifest is not exactly the %d published records" % FILES)
    sums = [l.split("\t")[1] for l in must(["digest", "--per-record", store]).decode().splitlines()]  # ID<TAB>hash
    # A ragged record's logical bytes: its dims (u64le), then its payload.
    want = [hashlib.sha256(struct.pack("<Q", len(c)) + c).hexdigest() for c in contents]
    expect(sums == want, "the records differ from the files")
    rc, out, err = run(["verify", store])
    expect(rc == 0, "verify: %s %s" % (out.decode(), err))
    FIGURES.append("manifest SIGKILLs: %d over %d runs (%d left unpublished lines to trim), %d files, %.1f s"
                   % (kills, runs, extra_seen, FILES, time.monotonic() - t_start))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases([test_manifest_exact_after_kills], "zrec-manifest-kill-", figures=FIGURES))
