#!/usr/bin/python3
"""zrec duplicates, and recompress/cat --exclude-from applying its drop list.

- A root of 3,000 samples (streams __key__, png: image-like bytes, cls: a label) into
  which 30 images were copied over others' (27 pairs and 3 groups of three), 24 of the
  groups under a different label: `duplicates --by png` finds exactly the 30 groups
  (their very IDs, in --json too) and the 24 label conflicts, naming cls; the drop
  list (--keep first: every ID but each group's lowest; --keep last: but the highest)
  applied by `recompress --exclude-from` gives a root of 2,963 samples with no
  duplicates left (a second run finds none), whose streams hold exactly the source's
  samples less the dropped ones, in order; `cat --exclude-from` of a stream gives the
  same records.
- A lone store is searched as one stream "records"; `recompress --exclude-from` of a
  store keeps the other records in order.
- Refusals, each one line and nothing written: --by on a store, a root with two content
  streams and no --by, --by __key__, --by a stream the root lacks (exit 2); an existing
  --drop-list without -f; an ID out of range in --exclude-from (exit 1, DST not made).

Needs: ZREC (path of the zrec binary).
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import byte_records, expect, fails, lines_store, must, must_out, require_zrec  # noqa: E402

ZREC = require_zrec("test_duplicates")
CASES, case = case_runner.case_registry()
N = 3000


def planted_samples():
    """3,000 (key, png, cls) samples with 30 planted groups; returns them and the groups
    (sorted ID lists) with the set of group indexes whose labels disagree."""
    rng = random.Random(7)
    samples = [[b"s%05d" % i, rng.randbytes(rng.randrange(40, 120)).hex().encode(), str(i % 10).encode()]
               for i in range(N)]
    ids = rng.sample(range(N), 27 * 2 + 3 * 3)
    groups = [sorted(ids[2 * k:2 * k + 2]) for k in range(27)]
    groups += [sorted(ids[54 + 3 * k:54 + 3 * k + 3]) for k in range(3)]
    groups.sort()
    conflicting = set(rng.sample(range(len(groups)), 24))
    for g_index, group in enumerate(groups):
        first = group[0]
        for other in group[1:]:
            samples[other][1] = samples[first][1]
            # Same label where the group agrees; another where it must conflict.
            samples[other][2] = samples[first][2]
        if g_index in conflicting:
            samples[group[-1]][2] = str((int(samples[first][2]) + 1) % 10).encode()
    return samples, groups, conflicting


def make_root(path, samples, names=("__key__", "png", "cls")):
    os.makedirs(path)
    for i, name in enumerate(names):
        lines_store(os.path.join(path, name), [s[i] for s in samples])
    must(["adopt", path])
    return path


def summary_numbers(text):
    first = text.splitlines()[0]
    words = first.replace(",", "").replace("(", "").split()
    return {"samples": int(words[words.index("samples") - 1]), "groups": int(words[words.index("groups") - 1]),
            "holding": int(words[words.index("holding") + 1]), "drop": int(words[words.index("drop") - 2])}


@case
def finds_the_planted_groups_and_conflicts(d):
    samples, groups, conflicting = planted_samples()
    root = make_root(os.path.join(d, "ds"), samples)
    out = must_out(["duplicates", "--by", "png", root]).decode()
    expect(summary_numbers(out) == {"samples": N, "groups": 30, "holding": 63, "drop": 33}, out)
    expect("groups whose other streams differ: 24 (cls 24)" in out.splitlines()[1], out)
    shown = [l for l in out.splitlines() if l.startswith("group of")]
    expect(len(shown) == 10 and "... 20 more groups" in out, out)
    g0 = groups[0]
    expect(shown[0].startswith("group of %d: %d key 's%05d', %d key 's%05d'" % (len(g0), g0[0], g0[0], g0[1], g0[1])),
           shown[0])
    expect(shown[0].endswith("; differ in cls") == (0 in conflicting), shown[0])
    j = json.loads(must_out(["duplicates", "--by", "png", "--json", root]))
    expect([g["ids"] for g in j["groups"]] == groups, j["groups"])
    expect([i for i, g in enumerate(j["groups"]) if g["differ"] == ["cls"]] == sorted(conflicting), j["groups"])
    expect(all(g["differ"] in ([], ["cls"]) for g in j["groups"]), j["groups"])
    expect((j["group_count"], j["duplicate_samples"], j["dropped"], j["conflicting_groups"]) == (30, 63, 33, 24), j)
    expect(j["conflicts_by_stream"] == {"cls": 24} and j["by"] == "png" and j["root"] is True, j)
    expect(j["length"] == N and j["drop_list"] is None and j["keep"] == "first", j)


@case
def the_drop_list_removes_every_duplicate(d):
    samples, groups, _ = planted_samples()
    root = make_root(os.path.join(d, "ds"), samples)
    drop = os.path.join(d, "drop.txt")
    _, err = must(["duplicates", "--by", "png", "--drop-list", drop, root])
    expect("wrote 33 IDs to drop to" in err, err)
    want_drop = sorted(i for g in groups for i in g[1:])
    expect(open(drop).read() == "".join("%d\n" % i for i in want_drop), open(drop).read()[:200])
    clean = os.path.join(d, "clean")
    must(["recompress", "--exclude-from", drop, root, clean])
    kept = [s for i, s in enumerate(samples) if i not in set(want_drop)]
    for k, name in enumerate(("__key__", "png", "cls")):
        expect(byte_records(os.path.join(clean, name)) == [s[k] for s in kept], "stream %s after the drop" % name)
    j = json.loads(must_out(["duplicates", "--by", "png", "--json", clean]))
    expect(j["group_count"] == 0 and j["length"] == N - 33 and j["groups"] == [], j)
    must(["verify", clean])
    # cat --exclude-from of one stream: the same records as the cleaned root's.
    got = must_out(["cat", "--format", "raw", "--framing", "lines", "--exclude-from", drop, os.path.join(root, "png")])
    expect(got == b"".join(s[1] + b"\n" for s in kept), "cat --exclude-from")
    # --keep last keeps each group's highest ID; an existing list is kept without -f.
    fails(["duplicates", "--by", "png", "--keep", "last", "--drop-list", drop, root],
          says=["--drop-list '%s' already exists; use -f/--force" % drop])
    must(["duplicates", "--by", "png", "--keep", "last", "-f", "--drop-list", drop, root])
    expect(open(drop).read() == "".join("%d\n" % i for i in sorted(i for g in groups for i in g[:-1])), "keep last")


@case
def a_lone_store_is_one_stream(d):
    lines = [b"a", b"b", b"a", b"c", b"b", b"a"]
    store = lines_store(os.path.join(d, "st"), lines)
    j = json.loads(must_out(["duplicates", "--json", store]))
    expect([g["ids"] for g in j["groups"]] == [[0, 2, 5], [1, 4]] and j["by"] == "records" and not j["root"], j)
    drop = os.path.join(d, "drop.txt")
    must(["duplicates", "--drop-list", drop, store])
    expect(open(drop).read() == "2\n4\n5\n", open(drop).read())
    must(["recompress", "--exclude-from", drop, "--codec", "zstd", store, os.path.join(d, "st2")])
    expect(byte_records(os.path.join(d, "st2")) == [b"a", b"b", b"c"], "store after the drop")


@case
def refusals_name_the_rule(d):
    samples, _, _ = planted_samples()
    root = make_root(os.path.join(d, "ds"), samples[:50])
    store = lines_store(os.path.join(d, "st"), [b"x"])
    fails(["duplicates", "--by", "png", store], rc_want=2, says=["--by names a stream of a root"])
    fails(["duplicates", root], rc_want=2, says=["has 2 streams: name the one", "(cls, png)"])
    fails(["duplicates", "--by", "__key__", root], rc_want=2, says=["keys are meant to differ"])
    fails(["duplicates", "--by", "jpg", root], rc_want=2, says=["has no such stream (it has cls, png)"])
    fails(["duplicates", "--by", "png", "--keep", "middle", root], rc_want=2, says=["unknown --keep 'middle'"])
    bad = os.path.join(d, "bad.txt")
    with open(bad, "w") as f:
        f.write("3\n50\n")
    fails(["recompress", "--exclude-from", bad, root, os.path.join(d, "out")], says=["50"])
    expect(not os.path.exists(os.path.join(d, "out")), "DST made after a refused --exclude-from")


sys.exit(case_runner.run_cases(CASES, "zrec-test-duplicates-"))
