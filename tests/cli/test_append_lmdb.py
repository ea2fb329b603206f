#!/usr/bin/python3
"""zrec append-lmdb: LMDB values, in key order, as records.

- Ragged '|u1': every record equals its value byte for byte, in key order (binary
  keys), --keys lists the keys; a data-file environment (subdir=False).
- --prefix selects a key range; parts converted by prefix and concatenated equal the
  whole conversion (digests).
- --dense into a Dense '<f4' store; a value of another width is refused naming its key.
- A live environment: a write transaction held open meanwhile does not block the
  import, which sees the snapshot it started with.
- An empty value is refused naming the key; the store and keys file stay unchanged.
- --checkpoint-every and --skip-first; a wrong store schema.
- --json: one object on stdout with append-tar's key names.
- --create makes a Ragged '|u1' store (new-store options apply), and takes it back when
  the run fails; --db NAME reads a named database; --exclude-key leaves out entries.

Needs: ZREC (path of the zrec binary), python3-lmdb, python3-numpy.
"""
import json
import os
import shutil
import random
import sys

import lmdb
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import byte_records, fails, must, records, require_zrec  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = require_zrec("test_append_lmdb")
FIGURES = []


def ragged(path):
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", path])
    return path


def make_env(path, items, subdir=True):
    env = lmdb.open(path, map_size=1 << 30, subdir=subdir)
    with env.begin(write=True) as txn:
        for k, v in items.items():
            txn.put(k, v)
    return env


def random_items(n, seed):
    rng = random.Random(seed)
    items = {}
    while len(items) < n:
        k = rng.choice([b"train-", b"val-", b"bin-"]) + bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 12)))
        items[k] = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 2000)))
    return items


def tree_bytes(root):
    return {f: open(os.path.join(root, f), "rb").read() for f in sorted(os.listdir(root))}


CASES, case = case_runner.case_registry()


@case
def values_in_key_order(tmp):
    items = random_items(3000, 1)
    env = make_env(os.path.join(tmp, "env"), items)
    s = ragged(os.path.join(tmp, "s"))
    keys = os.path.join(tmp, "keys")
    _, err = must(["append-lmdb", "--keys", keys, s, os.path.join(tmp, "env")])
    assert "appended 3000 records" in err, err
    order = sorted(items)
    assert byte_records(s) == [items[k] for k in order]
    want_keys = [k.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\r", b"\\r") for k in order]
    assert open(keys, "rb").read().split(b"\n")[:-1] == want_keys
    env.close()
    # A data-file environment (MDB_NOSUBDIR).
    env2 = make_env(os.path.join(tmp, "file.mdb"), {b"a": b"1", b"b": b"22"}, subdir=False)
    s2 = ragged(os.path.join(tmp, "s2"))
    must(["append-lmdb", s2, os.path.join(tmp, "file.mdb")])
    assert byte_records(s2) == [b"1", b"22"]
    env2.close()
    FIGURES.append("append-lmdb: 3000 values with binary keys byte-exact in key order")


@case
def prefix_parts_concat(tmp):
    items = random_items(2000, 2)
    envp = os.path.join(tmp, "env")
    make_env(envp, items).close()
    whole = ragged(os.path.join(tmp, "whole"))
    must(["append-lmdb", whole, envp])
    parts = []
    for p in (b"bin-", b"train-", b"val-"):  # the key order of the prefixes
        part = ragged(os.path.join(tmp, "part-" + p.decode().strip("-")))
        must(["append-lmdb", "--prefix", p.decode(), part, envp])
        assert byte_records(part) == [items[k] for k in sorted(items) if k.startswith(p)], p
        parts.append(part)
    must(["concat"] + parts + [os.path.join(tmp, "joined")])
    d1 = must(["digest", whole])[0].split()[0]
    d2 = must(["digest", os.path.join(tmp, "joined")])[0].split()[0]
    assert d1 == d2
    # A prefix no key has: nothing appended.
    empty = ragged(os.path.join(tmp, "none"))
    must(["append-lmdb", "--prefix", "zzz", empty, envp])
    assert byte_records(empty) == []


@case
def dense_values(tmp):
    rng = np.random.default_rng(3)
    vecs = {b"%05d" % i: rng.standard_normal(16).astype("<f4") for i in range(500)}
    envp = os.path.join(tmp, "env")
    make_env(envp, {k: v.tobytes() for k, v in vecs.items()}).close()
    s = os.path.join(tmp, "emb")
    must(["create", "--dense", "--dtype", "<f4", "--shape", "16", s])
    must(["append-lmdb", "--dense", s, envp])
    got = records(s)[0]
    assert got.shape == (500, 16) and np.array_equal(got, np.stack([vecs[k] for k in sorted(vecs)]))
    # Without --dense a Dense store is refused; a value of another width names its key.
    fails(["append-lmdb", s, envp], says=["must be Ragged '|u1' with ndim 1", "--dense"])
    make_env(envp, {b"00100": b"short"}).close()
    before = tree_bytes(s)
    fails(["append-lmdb", "--dense", s, envp], says=["the value of key '00100' is 5 bytes", "is 64"])
    assert tree_bytes(s) == before


@case
def json_summary(tmp):
    envp = os.path.join(tmp, "env")
    make_env(envp, {b"%03d" % i: b"v" * (i + 1) for i in range(20)}).close()
    s = ragged(os.path.join(tmp, "s"))
    out, err = must(["append-lmdb", "--json", "--skip-first", "5", s, envp])
    assert "appended 15 records" not in err, err  # --json replaces the summary line
    j = json.loads(out)
    assert list(j) == ["path", "records_appended", "records_skipped", "records_present", "records_compared",
                       "bytes_in", "stored_bytes", "length", "databases_skipped", "elapsed_s"], j
    assert (j["path"], j["records_appended"], j["records_skipped"], j["bytes_in"], j["length"]) == \
        (s, 15, 5, sum(range(6, 21)), 15), j
    assert j["stored_bytes"] > 0 and j["elapsed_s"] >= 0
    # Without --json, stdout stays empty.
    assert must(["append-lmdb", s, envp])[0] == b""


@case
def live_environment(tmp):
    envp = os.path.join(tmp, "env")
    env = make_env(envp, {b"k%03d" % i: b"v%d" % i for i in range(100)})
    txn = env.begin(write=True)  # a writer at work meanwhile
    txn.put(b"k999", b"uncommitted")
    s = ragged(os.path.join(tmp, "s"))
    must(["append-lmdb", s, envp])
    assert byte_records(s) == [b"v%d" % i for i in range(100)]  # the committed snapshot
    txn.commit()
    env.close()


@case
def errors_checkpoints_resume(tmp):
    items = {b"%04d" % i: b"x" * (i + 1) for i in range(50)}
    items[b"0037"] = b""
    envp = os.path.join(tmp, "env")
    make_env(envp, items).close()
    s = ragged(os.path.join(tmp, "s"))
    keys = os.path.join(tmp, "keys")
    fails(["append-lmdb", "--checkpoint-every", "10", "--keys", keys, s, envp],
          says=["the value of key '0037' is empty (records are nonempty)",
                "holds 30 records, as of the last checkpoint (resume: the same command with --from-length 0)"])
    assert byte_records(s) == [items[b"%04d" % i] for i in range(30)]
    assert open(keys).read().splitlines() == ["%04d" % i for i in range(30)]
    make_env(envp, {b"0037": b"fixed"}).close()
    must(["append-lmdb", "--skip-first", "30", "--keys", keys, s, envp])
    want = [b"fixed" if i == 37 else items[b"%04d" % i] for i in range(50)]
    assert byte_records(s) == want
    assert open(keys).read().splitlines() == ["%04d" % i for i in range(50)]
    fails(["append-lmdb", s, os.path.join(tmp, "missing")], says=["does not exist"])



@case
def create_named_databases_excluded_keys(tmp):
    env_path = os.path.join(tmp, "env")
    env = lmdb.open(env_path, map_size=1 << 30, max_dbs=4)
    train, val = env.open_db(b"train"), env.open_db(b"val")
    with env.begin(write=True) as txn:
        for i in range(5):
            txn.put(b"t%02d" % i, b"train-%d" % i, db=train)
        txn.put(b"v00", b"val-0", db=val)
    env.close()
    s = os.path.join(tmp, "train")
    must(["append-lmdb", "--create", "--db", "train", "--codec", "raw", s, env_path])
    assert byte_records(s) == [b"train-%d" % i for i in range(5)], byte_records(s)
    info = json.loads(must(["info", "--json", s])[0])
    assert (info["kind"], info["dtype"], info["ndim"], info["codec"]) == ("ragged", "|u1", 1, "raw"), info
    fails(["append-lmdb", "--db", "test", s, env_path], says=["has no database named 'test' (mdb_stat -a lists"])
    missing = os.path.join(tmp, "new")
    fails(["append-lmdb", missing, env_path], says=["(--create makes a Ragged '|u1' store of the values)"])
    fails(["append-lmdb", "--create", "--db", "nope", missing, env_path], says=["has no database named 'nope'"])
    assert not os.path.exists(missing), "a refused --create left a store"
    fails(["append-lmdb", "--create", "--dense", missing, env_path], rc_want=2, says=["--create makes a Ragged"])
    # A loader's __len__ / __keys__ entries are no records.
    loader = os.path.join(tmp, "loader")
    items = {b"%08d" % i: b"img-%d" % i for i in range(4)}
    items.update({b"__keys__": b"[...]", b"__len__": b"4"})
    make_env(loader, items).close()
    t = os.path.join(tmp, "imgs")
    _, err = must(["append-lmdb", "--create", "--exclude-key", "__len__", "--exclude-key", "__keys__", t, loader])
    assert byte_records(t) == [b"img-%d" % i for i in range(4)], byte_records(t)
    assert "left out 2 entries whose key --exclude-key names" in err, err


@case
def main_database_with_named_databases_imports_data_only(tmp):
    # As LMDB image datasets are written: images in the main database, a named database
    # 'labels' beside them, and a __len__ entry. LMDB keeps one entry per named database
    # in the main database (its 48-byte record of it); it used to become a record, as did
    # __len__, so every image sat two places off its label, exit 0.
    env_path = os.path.join(tmp, "env")
    env = lmdb.open(env_path, map_size=1 << 26, max_dbs=4)
    labels = env.open_db(b"labels")
    with env.begin(write=True) as txn:
        for i in range(6):
            txn.put(b"img%03d" % i, b"IMG" + bytes([i]) * 40)  # keys sort before 'labels'
            txn.put(b"img%03d" % i, b"%d" % (i % 3), db=labels)
        txn.put(b"__len__", b"6")
        # A plain 48-byte value whose key is no database stays a record.
        txn.put(b"meta48", b"m" * 48)
    env.close()
    imgs, cls = os.path.join(tmp, "imgs"), os.path.join(tmp, "cls")
    out, err = must(["append-lmdb", "--create", "--json", "--exclude-key", "__len__", imgs, env_path])
    assert byte_records(imgs) == [b"IMG" + bytes([i]) * 40 for i in range(6)] + [b"m" * 48], byte_records(imgs)
    assert "left out 1 entry of the main database: named database, not data ('labels'; --db NAME reads one)" in err, err
    assert json.loads(out)["databases_skipped"] == 1, out
    must(["append-lmdb", "--create", "--db", "labels", cls, env_path])
    assert byte_records(cls) == [b"%d" % (i % 3) for i in range(6)], byte_records(cls)
    # Without --exclude-key the metadata entry is kept, and the warning says how to drop it.
    again = os.path.join(tmp, "again")
    _, err = must(["append-lmdb", "--create", again, env_path])
    assert len(byte_records(again)) == 8, len(byte_records(again))
    assert ("appended 1 entry whose key looks like metadata ('__len__') as records; if they are not data, "
            "--exclude-key __len__ leaves them out") in err, err


@case
def keys_file_of_a_removed_store(tmp):
    # A store removed and made again with the same --keys path: the old keys are another
    # store's. A store this run creates refuses a keys file that holds lines (it used to
    # cut them all, saying "keys of records an interrupted run did not publish").
    envp = os.path.join(tmp, "env")
    make_env(envp, {b"k%03d" % i: b"v%d" % i for i in range(5)}).close()
    s, kf = os.path.join(tmp, "s"), os.path.join(tmp, "s.keys")
    must(["append-lmdb", "--create", "--keys", kf, s, envp])
    shutil.rmtree(s)
    before = open(kf, "rb").read()
    fails(["append-lmdb", "--create", "--keys", kf, s, envp], says=[
        "keys file '%s' already holds 5 lines, but '%s' is new: they are no keys of its records (name a new file, "
        "or remove this one)" % (kf, s)])
    assert open(kf, "rb").read() == before and not os.path.exists(s)
    # An existing empty store: the lines it does not hold are cut, and the warning says
    # what they may be.
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    _, err = must(["append-lmdb", "--keys", kf, "--prefix", "k00", s, envp])
    assert ("removed the last 5 lines of keys file '%s': keys of records '%s' does not hold (an interrupted run "
            "wrote them before publishing, or the file was another store's)" % (kf, s)) in err, err


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-append-lmdb-", figures=FIGURES))
