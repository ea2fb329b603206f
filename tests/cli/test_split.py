#!/usr/bin/python3
"""zrec split --by-key-hash: stable splits as ID files.

- A root of 2,000 samples split val=5%,test=5%,train=rest, then grown to 3,000 samples
  (and, separately, rebuilt with its samples reordered) and split again: every sample
  keeps its split, by key (so all of the first val keys are in the new val); the three
  files are disjoint, cover every ID, list IDs ascending one a line, and match the
  documented hash (first 8 bytes of SHA-256(salt || 0x00 || key)) computed here.
- The files feed `cat --indices-from`, and `cat --exclude-from` gives their complement; another --salt gives another split; a store
  (no keys) splits by its IDs in decimal.
- Bad input: a bad spec, a pattern without {name} (exit 2), an existing output (exit 1).

Needs: ZREC (path of the zrec binary).
"""
import hashlib
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import byte_records, expect, lines_store, must, must_out, require_zrec, run_zrec  # noqa: E402

ZREC = require_zrec("test_split")
CASES, case = case_runner.case_registry()
SPEC = "val=5%,test=5%,train=rest"


def make_root(path, keys):
    os.makedirs(path)
    lines_store(os.path.join(path, "__key__"), keys)
    lines_store(os.path.join(path, "txt"), [b"text of " + k for k in keys])
    must(["adopt", path])
    return path


def keys_of(n):
    return [b"img-%06d" % i for i in range(n)]


def split(path, out, *extra):
    must(["split", path, "--by-key-hash", SPEC, "-o", os.path.join(out, "ids-{name}.txt"), *extra])
    ids = {}
    for name in ("val", "test", "train"):
        with open(os.path.join(out, "ids-%s.txt" % name), "rb") as f:
            text = f.read()
        ids[name] = [int(line) for line in text.splitlines()]
        expect(text == b"".join(b"%d\n" % i for i in ids[name]), name + ": one ID a line")
        expect(ids[name] == sorted(set(ids[name])), name + ": ascending, distinct")
    return ids


def by_key(ids, keys):
    return {name: {keys[i] for i in v} for name, v in ids.items()}


def reference(key, salt=b""):
    u = int.from_bytes(hashlib.sha256(salt + b"\0" + key).digest()[:8], "big") / 2.0**64
    return "val" if u < 0.05 else "test" if u < 0.10 else "train"


@case
def splits_stay_as_the_root_grows_or_is_reordered(d):
    small, grown = keys_of(2000), keys_of(3000)
    shuffled = list(small)
    random.Random(5).shuffle(shuffled)
    first = by_key(split(make_root(os.path.join(d, "v1"), small), d), small)
    os.makedirs(os.path.join(d, "o2"))
    second = by_key(split(make_root(os.path.join(d, "v2"), grown), os.path.join(d, "o2")), grown)
    os.makedirs(os.path.join(d, "o3"))
    third = by_key(split(make_root(os.path.join(d, "v3"), shuffled), os.path.join(d, "o3")), shuffled)
    for name in ("val", "test", "train"):
        expect(first[name] <= second[name], name + ": a key of the first split left it when the root grew")
        expect(first[name] == third[name], name + ": reordering moved keys")
    for keys, s in ((small, first), (grown, second)):
        expect(sum(len(v) for v in s.values()) == len(keys) and set().union(*s.values()) == set(keys),
               "disjoint and covering")
        expect(all(reference(k) == name for name, v in s.items() for k in v), "the documented hash")
    expect(60 <= len(first["val"]) <= 140 and 60 <= len(first["test"]) <= 140, {n: len(v) for n, v in first.items()})


@case
def files_feed_cat_and_salt_changes_the_split(d):
    keys = keys_of(500)
    root = make_root(os.path.join(d, "r"), keys)
    ids = split(root, d)
    got = byte_records_of(root, os.path.join(d, "ids-val.txt"), d)
    expect(got == [keys[i] for i in ids["val"]], "cat --indices-from")
    rest = must_out(["cat", os.path.join(root, "__key__"), "--exclude-from", os.path.join(d, "ids-val.txt"),
                     "--framing", "lines"]).splitlines()
    expect(rest == [keys[i] for i in sorted(ids["test"] + ids["train"])], "cat --exclude-from: the complement")
    rc, _, err = run_zrec(["cat", root + "/__key__", "0:5", "--exclude-from", os.path.join(d, "ids-val.txt")])
    expect(rc == 2 and "--exclude-from selects every record but those listed" in err, err)
    os.makedirs(os.path.join(d, "salted"))
    salted = split(root, os.path.join(d, "salted"), "--salt", "v2")
    expect(salted != ids, "a salt changes the split")
    expect(all(reference(keys[i], b"v2") == name for name, v in salted.items() for i in v), "salted hash")
    j = json.loads(must_out(["split", root, "--by-key-hash", "a=50%,b=50%", "-o", os.path.join(d, "h-{name}"),
                             "--json"]))
    expect(j["key"] == "__key__" and j["length"] == 500, j)
    expect(j["splits"]["a"]["length"] + j["splits"]["b"]["length"] == 500, j)


def byte_records_of(root, ids_file, d):
    out = must_out(["cat", os.path.join(root, "__key__"), "--indices-from", ids_file, "--framing", "lines"])
    return out.splitlines()


@case
def a_store_splits_by_id(d):
    store = lines_store(os.path.join(d, "s"), [b"x"] * 300)
    ids = split(store, d)
    expect(all(reference(b"%d" % i) == name for name, v in ids.items() for i in v), "IDs in decimal are the keys")
    expect(byte_records(store) == [b"x"] * 300, "unchanged")


@case
def bad_input(d):
    root = make_root(os.path.join(d, "r"), keys_of(10))
    out = os.path.join(d, "ids-{name}.txt")
    for spec, says in (("val=5%,train=90%", "add up to less than 100%"), ("val=60%,test=50%,x=rest", "more than 100%"),
                       ("val=5", "'5' is no share"), ("val", "is not NAME=SHARE"),
                       ("a=rest,b=rest", "only one split can be 'rest'"), ("a=5%,a=rest", "'a' is given twice")):
        rc, _, err = run_zrec(["split", root, "--by-key-hash", spec, "-o", out])
        expect(rc == 2 and says in err, "%s: %d %s" % (spec, rc, err))
    rc, _, err = run_zrec(["split", root, "--by-key-hash", SPEC, "-o", os.path.join(d, "ids.txt")])
    expect(rc == 2 and "needs {name}" in err, err)
    split(root, d)
    rc, _, err = run_zrec(["split", root, "--by-key-hash", SPEC, "-o", out])
    expect(rc == 1 and "already exists" in err, err)


sys.exit(case_runner.run_cases(CASES, "zrec-test-split-"))
