#!/usr/bin/python3
"""append-h5 and append-lmdb into every stream of a root at once (issue 42): a root of
image (Ragged '|u1'), label (Dense scalar '<i8'), embedding (Dense (4,) '<f4') and
tokens (Ragged '<i4') streams grows from

- an HDF5 file, one dataset per stream (--dataset H5PATH=STREAM), aligned by position:
  row i of every dataset is sample i;
- an LMDB environment, one named database per stream (--db NAME=STREAM), aligned by
  key: sample i is the i-th key in key order, whatever order the keys were written in;
  a root's __key__ stream, which no database feeds, gets each sample's key; --prefix
  and --exclude-key apply to every database.

Each stream is read back record by record and compared with the source; a rerun with
--from-length appends nothing (the root byte-identical).

Refused with one line naming the rule, the root byte-identical (file hashes): datasets
of unequal row counts (both named, with their counts), a stream of the root no dataset
feeds, a dataset whose rows are not records of its stream, a key one database holds and
another lacks (key and both databases named), a value of the wrong size, a __key__
stream that cannot hold keys.

SIGKILL: each command with --checkpoint-every and --resume-file killed at random
instants, each rerun to its end, leaves every stream's digest equal to a clean run's.

Needs: ZREC (path of the zrec binary), numpy, python3-h5py, python3-lmdb.
"""
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, must, must_out, records, require_zrec, tree_digests  # noqa: E402

import h5py  # noqa: E402
import lmdb  # noqa: E402
import numpy as np  # noqa: E402

ZREC = require_zrec("test_root_imports")
CASES, case = case_runner.case_registry()
STREAMS = ("embedding", "image", "label", "tokens")
H5_SPECS = ["--dataset", "/pix=image", "--dataset", "/meta/label=label", "--dataset", "/emb=embedding",
            "--dataset", "/tok=tokens"]
DB_SPECS = ["--db", "pix=image", "--db", "labels=label", "--db", "emb=embedding", "--db", "tok=tokens"]


def image(i):
    return bytes((i * 7 + j) % 256 for j in range(1 + i % 50))


def label(i):
    return i * 3 - 5


def embedding(i):
    return [i, i + 0.5, i + 1, i + 1.5]


def tokens(i):
    return list(range(i, i + i % 5 + 1))


def make_root(d, name="root", keys=False):
    root = os.path.join(d, name)
    os.mkdir(root)
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", root + "/image"])
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", root + "/label"])
    must(["create", "--dense", "--shape", "4", "--dtype", "<f4", root + "/embedding"])
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", root + "/tokens"])
    if keys:
        must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", root + "/__key__"])
    must(["adopt", root])
    return root


def make_h5(path, start, n, label_rows=None):
    with h5py.File(path, "w") as f:
        pix = f.create_dataset("pix", (n,), dtype=h5py.vlen_dtype(np.uint8), chunks=(min(64, n),))
        tok = f.create_dataset("tok", (n,), dtype=h5py.vlen_dtype(np.dtype("<i4")), chunks=(min(64, n),))
        for k in range(n):
            pix[k] = np.frombuffer(image(start + k), dtype=np.uint8)
            tok[k] = np.array(tokens(start + k), dtype="<i4")
        rows = n if label_rows is None else label_rows
        f.create_dataset("meta/label", data=np.array([label(start + k) for k in range(rows)], dtype="<i8"))
        f.create_dataset("emb", data=np.array([embedding(start + k) for k in range(n)], dtype="<f4"), chunks=(min(256, n), 4))
    return path


def key(i):
    return b"k%06d" % i


def make_env(path, indices, drop=None):
    """Named databases pix, labels, emb and tok holding the samples of `indices` (written
    in that order) under key(i); drop=(DB, i) leaves one entry out."""
    env = lmdb.open(path, map_size=1 << 30, max_dbs=8)
    dbs = {name: env.open_db(name.encode()) for name in ("pix", "labels", "emb", "tok")}
    with env.begin(write=True) as txn:
        for i in indices:
            for name, value in (("pix", image(i)), ("labels", np.int64(label(i)).tobytes()),
                                ("emb", np.array(embedding(i), dtype="<f4").tobytes()),
                                ("tok", np.array(tokens(i), dtype="<i4").tobytes())):
                if drop != (name, i):
                    txn.put(key(i), value, db=dbs[name])
    env.close()
    return path


def check_samples(root, n, keys=False):
    """Sample i of every stream is what the sources hold for i."""
    lab, emb = (records(os.path.join(root, s))[0] for s in ("label", "embedding"))  # Dense: one (N, ...) array
    img, tok = (records(os.path.join(root, s)) for s in ("image", "tokens"))
    expect([len(x) for x in (lab, emb, img, tok)] == [n] * 4,
           "lengths %r, want %d each" % ([len(x) for x in (lab, emb, img, tok)], n))
    for i in range(n):
        expect(img[i].tobytes() == image(i), "image %d is %r" % (i, img[i]))
        expect(int(lab[i]) == label(i), "label %d is %r" % (i, lab[i]))
        expect(emb[i].tolist() == embedding(i), "embedding %d is %r" % (i, emb[i]))
        expect(tok[i].dtype == np.dtype("<i4") and tok[i].tolist() == tokens(i), "tokens %d is %r" % (i, tok[i]))
    if keys:
        got = [r.tobytes() for r in records(os.path.join(root, "__key__"))]
        expect(got == [key(i) for i in range(n)], "keys %r" % got[:5])


def committed(root):
    return open(os.path.join(root, "zrec-root")).read().splitlines()[1]


@case
def h5_datasets_feed_every_stream_by_position(d):
    root = make_root(d)
    h5 = make_h5(os.path.join(d, "a.h5"), 0, 300)
    err = must(["append-h5", root, h5] + H5_SPECS)[1]
    expect("appended 300 samples" in err and "it now holds 300" in err, err)
    check_samples(root, 300)
    # The next file, exactly once: --from-length says where it begins.
    h5b = make_h5(os.path.join(d, "b.h5"), 300, 40)
    must(["append-h5", "--from-length", "300", root, h5b] + H5_SPECS)
    check_samples(root, 340)
    expect(committed(root) == "length 340", committed(root))
    before = tree_digests(root)
    err = must(["append-h5", "--from-length", "300", root, h5b] + H5_SPECS)[1]
    expect("appended 0 samples" in err and "after skipping 40 already present" in err, err)
    expect(tree_digests(root) == before, "a rerun changed the root")
    # --start/--stop select the same rows of every dataset.
    part = make_root(d, "part")
    must(["append-h5", "--start", "0", "--stop", "25", part, h5] + H5_SPECS)
    check_samples(part, 25)


@case
def lmdb_databases_feed_every_stream_by_key(d):
    order = list(range(250))
    random.Random(7).shuffle(order)  # written out of order: read in key order
    env = make_env(os.path.join(d, "env"), order)
    root = make_root(d, keys=True)
    err = must(["append-lmdb", root, env] + DB_SPECS)[1]
    expect("appended 250 samples" in err and "to 5 streams" in err, err)
    check_samples(root, 250, keys=True)
    before = tree_digests(root)
    err = must(["append-lmdb", "--from-length", "0", root, env] + DB_SPECS)[1]
    expect("appended 0 samples" in err and "after skipping 250 already present" in err, err)
    expect(tree_digests(root) == before, "a rerun changed the root")
    # Without a __key__ stream the keys only order the samples.
    plain = make_root(d, "plain")
    must(["append-lmdb", "--checkpoint-every", "64", plain, env] + DB_SPECS)
    check_samples(plain, 250)


@case
def lmdb_prefix_and_excluded_keys_apply_to_every_database(d):
    env = make_env(os.path.join(d, "env"), range(40))
    e = lmdb.open(env, max_dbs=8)
    dbs = [e.open_db(name) for name in (b"pix", b"labels", b"emb", b"tok")]
    with e.begin(write=True) as txn:  # a loader's bookkeeping entry in every database
        for db, value in zip(dbs, (b"n", np.int64(0).tobytes(), bytes(16), bytes(4))):
            txn.put(b"__len__", value, db=db)
    e.close()
    root = make_root(d)
    # Keys k0000.. are samples 0..9: --prefix k00000 selects 0..9, and __len__ sorts first.
    err = must(["append-lmdb", "--prefix", "k00000", "--exclude-key", "__len__", root, env] + DB_SPECS)[1]
    expect("appended 10 samples" in err, err)
    check_samples(root, 10)
    # A __key__ stream that cannot hold keys is refused, naming what it needs.
    bad = make_root(d, "bad")
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", bad + "/__key__"])
    os.remove(os.path.join(bad, "zrec-root"))
    must(["adopt", bad])
    before = tree_digests(bad)
    fails(["append-lmdb", bad, env] + DB_SPECS, 1,
          ["stream '__key__' ('%s/__key__') is dense <i8 (); it gets each sample's key, which needs a Ragged "
           "ndim-1 '|u1' stream" % bad])
    expect(tree_digests(bad) == before, "a refused append changed the root")


@case
def mismatches_are_refused_root_unchanged(d):
    root = make_root(d)
    h5 = make_h5(os.path.join(d, "a.h5"), 0, 20)
    must(["append-h5", root, h5] + H5_SPECS)
    env = make_env(os.path.join(d, "env"), range(20, 30))
    must(["append-lmdb", root, env] + DB_SPECS)
    check_samples(root, 30)
    short = make_h5(os.path.join(d, "short.h5"), 30, 10, label_rows=9)
    lacking = make_env(os.path.join(d, "lacking"), range(30, 40), drop=("emb", 33))
    f8 = make_h5(os.path.join(d, "f8.h5"), 30, 10)
    with h5py.File(f8, "a") as f:
        f.create_dataset("x", data=np.zeros(10, dtype="<f8"))
    wide = make_env(os.path.join(d, "wide"), range(30, 40))
    e = lmdb.open(wide, max_dbs=8)
    labels = e.open_db(b"labels")
    with e.begin(write=True) as txn:
        txn.put(key(35), b"123456789", db=labels)
    e.close()
    for args, says in [
        (["append-h5", root, short] + H5_SPECS,
         "zrec append-h5: dataset '/meta/label' of '%s' holds 9 rows, but dataset '/pix' of '%s' holds 10; every "
         "stream gets one record per sample (row i of each dataset); nothing was appended" % (short, short)),
        (["append-h5", root, h5] + H5_SPECS[:-2],
         "zrec append-h5: root '%s' has a stream 'tokens' that the input does not feed; every stream of a root gets "
         "one record per sample (give it too)" % root),
        (["append-h5", root, f8, "--dataset", "x=label"] + H5_SPECS[:2] + H5_SPECS[4:],
         "zrec append-h5: stream 'label' ('%s/label') is dense <i8 () but the rows of dataset 'x' of '%s' are "
         "dense <f8 () records (dtype '<i8' vs '<f8')" % (root, f8)),
        (["append-lmdb", root, lacking] + DB_SPECS,
         "zrec append-lmdb: key 'k000033' is in database 'pix' but not in database 'emb' of LMDB environment '%s'; "
         "a root's databases are aligned by key (each must hold the same keys); nothing was appended" % lacking),
        (["append-lmdb", root, wide] + DB_SPECS,
         "zrec append-lmdb: the value of key 'k000035' in database 'labels' is 9 bytes; a record of stream 'label' "
         "('%s/label') (dense <i8 ()) is 8; nothing was appended" % root),
        (["append-lmdb", root, env] + DB_SPECS[:-2],
         "zrec append-lmdb: root '%s' has a stream 'tokens' that the input does not feed" % root),
    ]:
        before = tree_digests(root)
        err = fails(args, 1, [says])
        expect(len(err.strip().splitlines()) == 1, "more than one line: %r" % err)
        expect(tree_digests(root) == before, "zrec %s changed the root" % " ".join(args))
    check_samples(root, 30)
    # A stream of a root stays refused by the single-store forms.
    fails(["append-h5", root + "/label", h5, "/meta/label"], 1, ["root"])
    fails(["append-lmdb", "--db", "labels", root + "/image", env], 1, ["root"])


def digests(root):
    return [must_out(["digest", os.path.join(root, s)]).split()[0] for s in STREAMS]


def kill_and_resume(d, name, args):
    """`zrec ARGS[0] --checkpoint-every .. --resume-file .. ROOT ARGS[1:]` killed at 3
    random instants of a whole run and once just after its first checkpoint, each rerun
    to its end: every stream's digest equals a clean run's, and some kill landed after a
    checkpoint."""
    def command(root, resume):
        return [args[0], "--checkpoint-every", "700", "--resume-file", os.path.join(d, resume), root] + args[1:]
    clean = make_root(d, name + "-clean")
    t0 = time.monotonic()
    must(command(clean, name + "-clean.resume"))  # checkpoints cost time: the kills aim inside such a run
    duration = time.monotonic() - t0
    want = digests(clean)
    rng = random.Random(42)
    killed = checkpointed = 0
    for trial in range(4):  # each from an empty root, so the kill lands inside a whole run
        root = make_root(d, "%s-killed%d" % (name, trial))
        cmd = [ZREC] + command(root, "%s-resume%d" % (name, trial))
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if trial < 3:
            time.sleep(rng.uniform(0.0, duration))
        else:
            # Random instants alone missed every checkpoint in a loaded sanitizer run
            # (three of them fall in the first 28% of the clean run's time, which a
            # slower start can eat): the last kill waits for the root's first commit.
            while p.poll() is None and committed(root) == "length 0":
                time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
        p.wait()
        killed += p.returncode == -signal.SIGKILL
        checkpointed += p.returncode == -signal.SIGKILL and committed(root) != "length 0"
        r = subprocess.run(cmd, capture_output=True)
        expect(r.returncode == 0, "rerun after kill %d: %s" % (trial, r.stderr.decode()))
        expect(digests(root) == want, "%s kill %d: digests differ from a clean run's" % (name, trial))
    expect(killed >= 1 and checkpointed >= 1, "of 4 trials, %d killed %s mid-run, %d after a checkpoint" %
           (killed, name, checkpointed))


@case
def killed_h5_append_resumes_to_a_clean_runs_digests(d):
    h5 = make_h5(os.path.join(d, "a.h5"), 0, 12000)
    kill_and_resume(d, "h5", ["append-h5", h5] + H5_SPECS)


@case
def killed_lmdb_append_resumes_to_a_clean_runs_digests(d):
    env = make_env(os.path.join(d, "env"), range(12000))
    kill_and_resume(d, "lmdb", ["append-lmdb", env] + DB_SPECS)


@case
def failed_run_resumes_from_its_last_checkpoint(d):
    # Row 1500 of the images is empty (no record): the run fails there, its first
    # checkpoint kept; the same command on the mended file appends each sample once.
    h5 = make_h5(os.path.join(d, "a.h5"), 0, 3000)
    with h5py.File(h5, "a") as f:
        f["pix"][1500] = np.zeros(0, dtype=np.uint8)
    root = make_root(d)
    cmd = ["append-h5", "--checkpoint-every", "1000", "--resume-file", os.path.join(d, "resume"), root, h5] + H5_SPECS
    fails(cmd, 1, ["row 1500 of dataset '/pix' of '%s' is an empty sequence (records are nonempty); root '%s' holds "
                   "1000 samples, as of the last checkpoint" % (h5, root)])
    expect(committed(root) == "length 1000", committed(root))
    with h5py.File(h5, "a") as f:
        f["pix"][1500] = np.frombuffer(image(1500), dtype=np.uint8)
    must(cmd)
    check_samples(root, 3000)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-root-imports-"))
