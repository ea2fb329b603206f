#!/usr/bin/python3
"""README.md runs top to bottom.

Every ```sh / ```bash / ```console block of README.md is split into commands (a command
continues over a trailing backslash or an open quote; in console blocks only "$ " lines
are commands), and all of them, in the README's order, run as ONE bash script (set -e,
pipefail) in one scratch directory, as a reader would type them: a store an example
uses is one an earlier example made, and no store is made twice. `zrec` is the binary
under test ($ZREC); the inputs the examples name exist: small .npy batches, gen.py and
tokenize_corpus.py, ids.txt, corpus.jsonl, imgs/, tar shards, train.h5, train.lmdb, in-*.npy, and
stand-ins for the `gen` and `producer` commands the text leaves to the reader. The
script fails the test when a command exits non-zero; its step markers name the command.

SKIPPED lists what cannot run here, with the reason; each is printed as a `figure:`
line. Only the Slurm recipes need a live cluster; the others install packages as root,
need an installed prefix, serve until Ctrl-C, or take minutes of CPU, and each names
the test that runs the same thing.
"""
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import npy_bytes, require_zrec  # noqa: E402

ZREC = require_zrec("test_readme_examples")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(SRC, "README.md")

# What cannot run in a test: (section, block or None for all, a command's start or None
# for the whole block) -> why. Keep it short: everything else runs.
SKIPPED = [
    ("Install", 1, None, "installs Debian packages as root and builds; tests/cli/test_install.sh runs cmake --install"),
    ("Install", 2, None, "needs an installed prefix and the reader's app.cc; test_install.sh builds "
                         "tests/install_consumer with pkg-config"),
    ("Two commands", 1, None, "installs packages and runs the whole test suite (CI runs scripts/test.sh)"),
    ("Tests", 1, None, "builds and runs the test suite this test is part of (CI runs scripts/test.sh)"),
    ("Scaling out: Slurm, GNU parallel", 1, None, "needs a Slurm cluster; tests/cli/test_slurm.sh runs it on one"),
    ("Looking at a dataset: view", 1, None, "serves until Ctrl-C; tests/cli/test_view.py and test_view_browser.py "
                                            "run it on these kinds of stores"),
    ("Stores on a web server or bucket", 1, None, "needs the store on a web server; tests/cli/test_remote.py runs "
                                                  "these commands against nginx"),
    ("Stores on a web server or bucket", 2, None, "needs the store in a bucket; tests/cli/test_s3.py and test_sync.py "
                                                  "run these commands against a signature-checking S3 server"),
    ("Benchmarks", 1, "zrec bench  ", "minutes of CPU on loaderx-sized workloads; test_bench_smoke.sh runs bench small"),
    ("Benchmarks", 1, "zrec bench -w vision", "builds 1 GiB stores; test_bench_smoke.sh runs bench small"),
    ("Benchmarks", 1, "/usr/bin/python3 scripts/bench_peers.py", "minutes of CPU (NumPy, HDF5, LMDB peers)"),
]


# --- README parsing -------------------------------------------------------------------

def shell_blocks(text):
    """[(section, number in section, language, [lines])] for the sh/bash/console blocks."""
    blocks, section, counts = [], "", {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        heading = re.match(r"^#{1,6} (.*)", line)
        if heading:
            section = heading.group(1).strip()
        fence = re.match(r"^```(\w*)\s*$", line)
        if fence:
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            if fence.group(1) in ("sh", "bash", "console"):
                counts[section] = counts.get(section, 0) + 1
                blocks.append((section, counts[section], fence.group(1), body))
        i += 1
    return blocks


def complete(command):
    """True when the shell would not ask for more: no trailing backslash, no open quote."""
    if command.rstrip().endswith("\\"):
        return False
    lexer = shlex.shlex(command, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        list(lexer)
    except ValueError:
        return False
    return True


def commands_of(language, body):
    """The block's commands, each possibly spanning lines."""
    if language == "console":
        body = [line[2:] for line in body if line.startswith("$ ")]
    commands, current = [], ""
    for line in body:
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current = current + "\n" + line if current else line
        if complete(current):
            commands.append(current)
            current = ""
    if current:
        raise AssertionError("README: unterminated command: %r" % current)
    return commands


def skip_reason(section, number, command):
    for s, n, start, why in SKIPPED:
        if s == section and n in (None, number) and (start is None or (command + "  ").startswith(start)):
            return why
    return None


# --- inputs ---------------------------------------------------------------------------

GEN_PY = r'''import sys
import numpy as np

rng = np.random.default_rng(3)
for _ in range(1000):  # one token sequence per record
    n = int(rng.integers(20, 200))
    np.save(sys.stdout.buffer, (rng.zipf(1.5, n) % 5000).astype("<i4"))
'''

TOKENIZE_PY = r'''import json
import sys

for line in open(sys.argv[1]):
    print(" ".join(str(b) for b in json.loads(line)["text"].encode()))
'''

GEN_CMD = r'''#!/usr/bin/python3
# A stand-in for the README's `gen`: lines of whitespace-separated token ids.
import random, signal
signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a reader that stops early ends it quietly
r = random.Random(5)
for _ in range(2000):
    print(" ".join(str(r.randrange(1000)) for _ in range(r.randrange(1, 60))))
'''

PRODUCER_CMD = r'''#!/usr/bin/python3
# A stand-in for the README's `producer`: u32le length-prefixed binary frames.
import signal, struct, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
out = sys.stdout.buffer
for i in range(300):
    blob = bytes((i * 7 + j) % 256 for j in range(1 + i % 50))
    out.write(struct.pack("<I", len(blob)) + blob)
'''


def write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.chmod(path, mode)


def make_tar(path, samples, compress=""):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for key, members in samples:
            for ext, data in members:
                info = tarfile.TarInfo("%s.%s" % (key, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    data = buf.getvalue()
    if compress == "gz":
        import gzip
        data = gzip.compress(data)
    write(path, data)


def make_inputs(d):
    """The files the examples read, under d."""
    rng = np.random.default_rng(1)
    # Images with structure (compressible, as photos are) and some noise.
    base = (np.arange(224)[None, :, None] + np.arange(224)[None, None, :]).astype(np.uint8)
    for b in range(2):
        batch = np.broadcast_to(base, (16, 3, 224, 224)).copy()
        batch += rng.integers(0, 8, batch.shape, dtype=np.uint8)
        write(os.path.join(d, "batch%d.npy" % b), npy_bytes(batch))
    write(os.path.join(d, "gen.py"), GEN_PY)
    write(os.path.join(d, "tokenize_corpus.py"), TOKENIZE_PY)
    write(os.path.join(d, "ids.txt"), "0\n5\n17\n")
    words = ["zrec", "stores", "records", "in", "order", "and", "reads", "them", "back", "fast"]
    write(os.path.join(d, "corpus.jsonl"),
          "".join('{"id": %d, "text": "%s"}\n' % (i, " ".join(words[(i + k) % 10] for k in range(5 + i % 7)))
                  for i in range(200)))
    for i in range(12):
        write(os.path.join(d, "imgs", "dir%d" % (i % 3), "img%02d.jpg" % i), bytes(rng.integers(0, 256, 100 + i)))
    samples = [("s%04d" % i, [("jpg", bytes(rng.integers(0, 256, 64 + i))), ("cls", b"%d" % (i % 10))])
               for i in range(40)]
    make_tar(os.path.join(d, "shards", "train-000.tar"), samples[:20])
    make_tar(os.path.join(d, "shards", "train-001.tar.gz"), samples[20:], "gz")
    # Samples whose image is a .png or a .jpg (--ext 'png;jpg;jpeg=image,cls').
    make_tar(os.path.join(d, "photos-000.tar"),
             [("p%03d" % i, [("png" if i % 3 else "jpg", bytes(rng.integers(0, 256, 50 + i))), ("cls", b"%d" % (i % 4))])
              for i in range(12)])
    import h5py  # python3-h5py (scripts/setup.sh)
    with h5py.File(os.path.join(d, "train.h5"), "w") as f:  # append-h5 --create
        f.create_dataset("images", data=rng.integers(0, 256, (16, 3, 8, 8), dtype=np.uint8), chunks=(4, 3, 8, 8))
        f.create_dataset("labels", data=np.arange(16, dtype="<i8") % 10)  # append-h5 ROOT --dataset
    import lmdb  # python3-lmdb (scripts/setup.sh)
    env = lmdb.open(os.path.join(d, "train.lmdb"), map_size=1 << 24, max_dbs=4)  # append-lmdb ROOT --db
    images, labels = env.open_db(b"images"), env.open_db(b"labels")
    with env.begin(write=True) as txn:
        for i in range(12):
            txn.put(b"img%03d" % i, bytes(rng.integers(0, 256, 30 + i)), db=images)
            txn.put(b"img%03d" % i, np.int64(i % 4).tobytes(), db=labels)
    env.close()
    for p in range(4):  # many records per file: axis 0 is the batch
        write(os.path.join(d, "in-%03d.npy" % p),
              npy_bytes((rng.zipf(1.4, (1000, 128)) % 3000).astype("<i4")))


# A stand-in for the README's `gen_labels`: one label per sample the root ds/ committed.
GEN_LABELS_CMD = r'''#!/usr/bin/python3
import json, subprocess
info = json.loads(subprocess.run(["zrec", "info", "--json", "ds/"], capture_output=True, check=True).stdout)
for i in range(info["committed_length"]):
    print(i % 10)
'''


def stub_bin(d):
    """A directory for PATH: zrec (the binary under test), python, gen and producer."""
    os.makedirs(d)
    os.symlink(ZREC, os.path.join(d, "zrec"))
    os.symlink("/usr/bin/python3", os.path.join(d, "python"))
    write(os.path.join(d, "gen"), GEN_CMD, 0o755)
    write(os.path.join(d, "producer"), PRODUCER_CMD, 0o755)
    write(os.path.join(d, "gen_labels"), GEN_LABELS_CMD, 0o755)
    return d


# --- running --------------------------------------------------------------------------

def main():
    blocks = shell_blocks(open(README).read())
    root = tempfile.mkdtemp(prefix="zrec-readme-")
    figures, steps = [], []
    skipped = 0
    try:
        d = os.path.join(root, "run")
        make_inputs(d)
        env = dict(os.environ, PATH=stub_bin(os.path.join(root, "bin")) + os.pathsep + os.environ["PATH"],
                   HOME=os.path.join(root, "home"))
        os.makedirs(env["HOME"])
        for section, number, language, body in blocks:
            reasons = {}  # reason -> commands skipped for it, one figure line each
            for c in commands_of(language, body):
                why = skip_reason(section, number, c)
                if why:
                    skipped += 1
                    reasons.setdefault(why, []).append(" ".join(c.split()[:2]))
                else:
                    steps.append(("%s #%d: %s" % (section, number, " ".join(c.split())), c))
            for why, skipped_commands in reasons.items():
                figures.append("skipped %s #%d, %d command(s) (%s): %s" %
                               (section, number, len(skipped_commands), ", ".join(skipped_commands), why))
        # One script: a marker on stderr before each step names the one that failed.
        script = "set -e -o pipefail\n" + "".join("echo '@@step %d' >&2\n%s\n" % (i, c) for i, (_, c) in
                                                   enumerate(steps))
        p = subprocess.run(["bash", "-c", script], cwd=d, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
        err = p.stderr.decode("utf-8", "replace").splitlines()
        marks = [int(l.split()[1]) for l in err if l.startswith("@@step ")]
        done = len(marks) if p.returncode == 0 else len(marks) - 1
        for label, _ in steps[:done]:
            print("ok   " + label)
        failed = p.returncode != 0
        if failed:
            last = max(i for i, l in enumerate(err) if l.startswith("@@step ")) if marks else -1
            tail = err[last + 1:][-8:]  # what the failed step said
            print("FAIL %s\n     exit %d: %s" % (steps[marks[-1]][0] if marks else "the script", p.returncode,
                                              "\n     ".join(tail)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    # The extraction itself must keep finding the examples.
    if len(steps) < 50:
        failed = True
        print("FAIL only %d README commands to run (want at least 50)" % len(steps))
    for f in figures:
        print("figure: " + f)
    print("figure: README shell blocks %d, commands run %d as one script, skipped %d" % (len(blocks), done, skipped))
    print("%d passed, %d failed" % (done, 1 if failed else 0))
    return 1 if failed else 0


sys.exit(main())
