#!/usr/bin/python3
"""zrec diff: which samples two roots or stores hold differently, by content.

- A v2 root of 2,000 samples (streams __key__, jpg: image-like bytes, cls: a label) and
  v3 made from it by dropping 10 samples, relabelling 20 and copying 30 images over
  others, keys kept: `diff --by-key` reports exactly 10 removed, 20 changed in cls and
  30 in jpg (1,940 unchanged), also with v3's samples shuffled and with either side
  served over HTTP by nginx; --json lists the very IDs as ranges. The positional diff
  (no --by-key) shows what a shift does: the 10 missing samples as removed at the end,
  and every sample after the first dropped one as changed, counted exactly.
- Exit codes as cmp(1): 0 equal (a root against a copy of itself, re-compressed), 1
  different, 2 trouble (a missing side, a store against a root, --by-key without keys, a
  key held twice, a usage error), each trouble with one line naming the rule.
- Two lone stores compare as one stream named "records".

Needs: ZREC (path of the zrec binary), nginx (tests/cli/web_server.py).
"""
import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, lines_store, must, require_zrec, run_zrec  # noqa: E402
from web_server import WebServer  # noqa: E402

ZREC = require_zrec("test_diff")
CASES, case = case_runner.case_registry()
N = 2000


def make_root(path, samples):
    """A root of streams __key__, jpg, cls from samples [(key, jpg, cls)] (bytes, no newline)."""
    os.makedirs(path)
    for i, name in enumerate(["__key__", "jpg", "cls"]):
        lines_store(os.path.join(path, name), [s[i] for s in samples])
    must(["adopt", path])
    return path


def v2_samples():
    rng = random.Random(2)
    return [(b"s%05d" % i, rng.randbytes(rng.randrange(50, 200)).hex().encode(), str(i % 10).encode())
            for i in range(N)]


def v3_samples(v2):
    """v2 less 10 samples, 20 relabelled, 30 images copied from other samples; and what was done."""
    rng = random.Random(3)
    picked = rng.sample(range(N), 60)
    dropped, relabelled, recopied = set(picked[:10]), set(picked[10:30]), set(picked[30:])
    v3 = []
    for i, (key, jpg, cls) in enumerate(v2):
        if i in dropped:
            continue
        if i in relabelled:
            cls = str((int(cls) + 1) % 10).encode()
        if i in recopied:
            jpg = v2[(i + 1) % N][1]  # another sample's image: different content here
        v3.append((key, jpg, cls))
    return v3, dropped, relabelled, recopied


def diff(*args, rc_want):
    rc, out, err = run_zrec(["diff", *args])
    expect(rc == rc_want, "diff %s: rc %d, want %d: %s" % (args, rc, rc_want, err))
    return out.decode()


def counts(text):
    """The summary lines of the text output: {"removed": n, "changed jpg": n, ...}."""
    out = {}
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in ("removed", "added", "changed", "unchanged") and words[-1].isdigit():
            out[" ".join(words[:-1])] = int(words[-1])
    return out


def ranges_to_ids(ranges):
    return [i for start, stop in ranges for i in range(start, stop)]


def two_roots(d, shuffle=False):
    v2 = v2_samples()
    v3, dropped, relabelled, recopied = v3_samples(v2)
    if shuffle:
        random.Random(4).shuffle(v3)
    return make_root(os.path.join(d, "v2"), v2), make_root(os.path.join(d, "v3"), v3), v2, v3, (
        dropped, relabelled, recopied)


BY_KEY_WANT = {"removed": 10, "added": 0, "changed": 50, "changed cls": 20, "changed jpg": 30, "unchanged": 1940}


@case
def by_key_finds_exactly_what_was_done(d):
    a, b, v2, v3, (dropped, relabelled, recopied) = two_roots(d)
    out = diff("--by-key", a, b, rc_want=1)
    expect(counts(out) == BY_KEY_WANT, out)
    first = min(dropped | relabelled | recopied)
    line = [l for l in out.splitlines() if l[:1] in "-+~"][0]
    kind = "-" if first in dropped else "~"
    expect(line.startswith("%s A %d" % (kind, first)) and ("key 's%05d'" % first) in line, out)
    # --json: every change, as ranges of IDs in A.
    j = json.loads(run_zrec(["diff", "--by-key", "--json", a, b])[1])
    expect(j["by"] == "key" and j["equal"] is False, j)
    expect(ranges_to_ids(j["removed_ids"]) == sorted(dropped), j["removed_ids"])
    expect(ranges_to_ids(j["changed_by_stream"]["cls"]["ids"]) == sorted(relabelled), j)
    expect(ranges_to_ids(j["changed_by_stream"]["jpg"]["ids"]) == sorted(recopied), j)
    expect(j["added_ids"] == [] and j["unchanged"] == 1940 and j["a"]["length"] == N and j["b"]["length"] == N - 10, j)


@case
def keys_files_stand_in_for_the_key_stream(d):
    """Stores without __key__, their keys in files as append-tar --keys writes them: the
    same findings as the roots' __key__ streams give; a file of the wrong length refused."""
    v2 = v2_samples()
    v3, dropped, relabelled, recopied = v3_samples(v2)
    random.Random(5).shuffle(v3)
    a, b = lines_store(os.path.join(d, "a"), [s[1] for s in v2]), lines_store(os.path.join(d, "b"), [s[1] for s in v3])
    ka, kb = os.path.join(d, "a.keys"), os.path.join(d, "b.keys")
    with open(ka, "wb") as f:
        f.write(b"".join(s[0] + b"\n" for s in v2))
    with open(kb, "wb") as f:
        f.write(b"".join(s[0] + b"\n" for s in v3))
    out = diff("--keys-a", ka, "--keys-b", kb, a, b, rc_want=1)
    want = {"removed": 10, "added": 0, "changed": 30, "changed records": 30, "unchanged": 1960}
    expect(counts(out) == want and out.startswith("by key (keys files)"), out)
    j = json.loads(run_zrec(["diff", "--json", "--keys-a", ka, "--keys-b", kb, a, b])[1])
    expect(ranges_to_ids(j["removed_ids"]) == sorted(dropped) and j["by"] == "key", j)
    expect(ranges_to_ids(j["changed_ids"]) == sorted(recopied), j["changed_ids"])
    with open(kb, "ab") as f:
        f.write(b"extra\n")
    rc, out, err = run_zrec(["diff", "--keys-a", ka, "--keys-b", kb, a, b])
    expect(rc == 2 and out == b"" and err.strip() == (
        "zrec diff: --keys-b '%s' holds %d keys, and '%s' %d samples: one line per sample" % (kb, N - 9, b, N - 10)),
        err)
    rc, _, err = run_zrec(["diff", "--keys-a", ka, a, b])
    expect(rc == 2 and "has no __key__ stream" in err and "--keys-b" in err, err)


@case
def by_key_holds_for_a_reordered_root(d):
    a, b, *_ = two_roots(d, shuffle=True)
    expect(counts(diff("--by-key", a, b, rc_want=1)) == BY_KEY_WANT, "shuffled v3")
    # Swapped sides: the removed become added (B's IDs), the changes stay.
    want = dict(BY_KEY_WANT, removed=0, added=10)
    expect(counts(diff("--by-key", b, a, rc_want=1)) == want, "swapped")


@case
def by_position_shows_the_shift(d):
    a, b, v2, v3, (dropped, _, _) = two_roots(d)
    want = {"removed": N - len(v3), "added": 0, "changed": 0, "unchanged": 0}
    names = ["__key__", "jpg", "cls"]
    for i in range(len(v3)):
        differ = [n for k, n in enumerate(names) if v2[i][k] != v3[i][k]]
        if differ:
            want["changed"] += 1
            for n in differ:
                want["changed " + n] = want.get("changed " + n, 0) + 1
        else:
            want["unchanged"] += 1
    out = diff(a, b, rc_want=1)
    got = counts(out)
    expect(got == want, "%s != %s" % (got, want))
    # Every sample from the first dropped one on is shifted: its key differs.
    expect(want["changed __key__"] == len(v3) - min(dropped), want)
    expect(out.startswith("by position: "), out)


@case
def one_side_over_http_gives_the_same(d):
    www = os.path.join(d, "www")
    os.makedirs(www)
    a, b, *_ = two_roots(www, shuffle=True)
    local = diff("--by-key", a, b, rc_want=1)
    with WebServer(www) as web:
        for x, y in ((web.http + "/v2", b), (a, web.https + "/v3")):
            rc, out, err = run_zrec(["--cacert", web.cacert, "diff", "--by-key", x, y])
            expect(rc == 1, err)
            expect(counts(out.decode()) == BY_KEY_WANT, out)
            # Only the header line names the sides.
            expect(out.decode().splitlines()[1:] == local.splitlines()[1:], out)


@case
def equal_roots_exit_0(d):
    v2 = v2_samples()[:300]
    a = make_root(os.path.join(d, "a"), v2)
    b = make_root(os.path.join(d, "b"), v2)
    must(["recompress", os.path.join(a, "jpg"), os.path.join(d, "jpg-zstd")])
    shutil.rmtree(os.path.join(b, "jpg"))
    os.rename(os.path.join(d, "jpg-zstd"), os.path.join(b, "jpg"))
    for args in ([a, b], ["--by-key", a, b]):
        c = counts(diff(*args, rc_want=0))
        expect(c == {"removed": 0, "added": 0, "changed": 0, "unchanged": 300}, c)
    j = json.loads(run_zrec(["diff", "--json", a, b])[1])
    expect(j["equal"] is True and j["changed_ids"] == [], j)


@case
def stores_compare_as_one_stream(d):
    a = lines_store(os.path.join(d, "a"), [b"x", b"y", b"z"])
    b = lines_store(os.path.join(d, "b"), [b"x", b"Y", b"z", b"w"])
    out = diff(a, b, rc_want=1)
    expect(counts(out) == {"removed": 0, "added": 1, "changed": 1, "changed records": 1, "unchanged": 2}, out)
    expect("~ A 1 B 1: records\n+ B 3\n" in out, out)


@case
def trouble_exits_2(d):
    v2 = v2_samples()[:20]
    a = make_root(os.path.join(d, "a"), v2)
    dup = make_root(os.path.join(d, "dup"), v2[:5] + [v2[2]])
    store = lines_store(os.path.join(d, "s"), [b"x"])
    nokeys = os.path.join(d, "nokeys")
    os.makedirs(nokeys)
    lines_store(os.path.join(nokeys, "cls"), [b"1"])
    must(["adopt", nokeys])
    cases = [
        ([a, os.path.join(d, "missing")], "is neither a store (no meta.zr) nor a root"),
        ([a, store], "is a store and"),
        (["--by-key", a, nokeys], "has no __key__ stream"),
        (["--by-key", a, dup], "key 's00002' is held by samples 2 and 5: --by-key needs each key once"),
        ([a], "missing operand B"),
        (["--max-shown", "-1", a, a], "not a non-negative integer"),
    ]
    for args, says in cases:
        rc, out, err = run_zrec(["diff", *args])
        expect(rc == 2, "diff %s: rc %d: %s" % (args, rc, err))
        expect(says in err and out == b"", "diff %s: %r" % (args, err))
        expect(len([l for l in err.splitlines() if not l.startswith("Try ")]) == 1, err)


sys.exit(case_runner.run_cases(CASES, "zrec-test-diff-"))
