#!/usr/bin/python3
"""`zrec verify`: every corruption is found and named, nothing else is, exit codes.

- The single-rule corruption corpus of test_malformed_store.py (imported, not copied):
  `zrec verify` exits 1 on every damaged store and names the rule's words, the record,
  its data file; `--json` lists the same problem with record/file/offset; `--quick`
  finds every page and table problem; every "accept" case verifies clean (exit 0).
- Problems only verify finds (a reader does not look): overlapping records, several
  problems at once (verify keeps going), --max-errors.
- Bit rot: a flipped payload byte inside a zstd raw block is caught only with
  `create --checksum`; in a raw store only with `--against` per-record digests; and
  verify says plainly what it cannot detect.
- A directory of named streams: each verified, lengths must agree.
- Exit codes: 0 valid, 1 corrupt, 2 usage error or store not checkable (missing,
  locked by a writer, not a store); many concurrent verify/cat/info all succeed.

Needs: ZREC (path of the zrec binary), python3-numpy, python3-msgpack, python3-zstandard.
"""
import fcntl
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
import test_malformed_store as M  # noqa: E402  (the corruption corpus)
from cli_helpers import killed_append_leftovers, must  # noqa: E402  (tests/cli/cli_helpers.py)

import numpy as np  # noqa: E402

ZREC = M.ZREC
FIGURES = {}


def run(args, stdin=None, timeout=120):
    p = subprocess.run([ZREC] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")




def sane(rc, out, err, what):
    if rc < 0 or rc >= 128 or "internal error" in err or "Sanitizer" in err or "runtime error" in err:
        raise AssertionError("%s crashed: rc %d, stderr %r" % (what, rc, err[-2000:]))


def verify(store, *extra):
    rc, out, err = run(["verify"] + list(extra) + [store])
    sane(rc, out, err, "verify " + store)
    return rc, out, err


def verify_json(store, *extra):
    rc, out, err = run(["verify", "--json"] + list(extra) + [store])
    sane(rc, out, err, "verify --json " + store)
    try:
        doc = json.loads(out)
    except ValueError:
        raise AssertionError("verify --json printed no JSON object: %r (stderr %r)" % (out, err))
    if out.count("\n") != 1:
        raise AssertionError("verify --json must print exactly one line: %r" % out)
    return rc, doc, err


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def test(fn):
    TESTS.append(fn)
    return fn


TESTS = []


def copy_good(root, goods, name, tag):
    dst = os.path.join(root, "work", tag, name)
    shutil.rmtree(os.path.dirname(dst), ignore_errors=True)
    os.makedirs(os.path.dirname(dst))
    shutil.copytree(goods[name], dst, symlinks=True)
    return dst


# ---------------------------------------------------------------------------------------
# the shared corpus


def corpus_case(root, goods, c, index):
    store = copy_good(root, goods, c["store"], "corpus%03d" % index)
    c["fn"](store)
    rc, out, err = verify(store)
    if c["category"] == "accept":
        expect(rc == 0, "verify must accept this store: rc %d\n%s%s" % (rc, out, err))
        rc, doc, err = verify_json(store)
        expect(rc == 0 and doc["valid"] and doc["problem_count"] == 0, "verify --json must accept: %r" % doc)
        return "accepted"
    expect(rc == 1, "expected exit 1 (corrupt), got %d\nstdout %s\nstderr %s" % (rc, out, err))
    problems = [l for l in out.splitlines() if ": problem: " in l]
    expect(problems, "no problem line on stdout: %r" % out)
    text = "\n".join(problems)
    missing = [k for k in c["keys"] if k not in text]
    expect(not missing, "problem lines lack %r: %s" % (missing, text))
    expect("CORRUPT" in out, "no CORRUPT summary: %r" % out)
    expect(err.startswith("zrec verify: ") and "corrupt" in err, "stderr should say corrupt: %r" % err)
    rc, doc, _ = verify_json(store)
    expect(rc == 1 and not doc["valid"] and doc["problem_count"] >= 1 and doc["problems"], "json: %r" % doc)
    p = doc["problems"][0]
    for key in ("rule", "record", "file", "offset", "message"):
        expect(key in p, "problem lacks %r: %r" % (key, p))
    if c["category"] in ("loc", "data"):
        ids = {q["record"] for q in doc["problems"]}
        expect(M.BAD_ID in ids, "record %d not among the problems %r" % (M.BAD_ID, doc["problems"]))
        bad = [q for q in doc["problems"] if q["record"] == M.BAD_ID][0]
        expect(bad["file"] in c["keys"], "file %r is not the one damaged (%r)" % (bad["file"], c["keys"]))
        expect(isinstance(bad["offset"], int), "no offset: %r" % bad)
    else:
        expect(doc["problems"][0]["rule"] == "store", "a store-level problem has rule 'store': %r" % doc)
    # --quick finds everything that needs no payload read.
    rc, out, err = verify(store, "--quick")
    if c["category"] in ("page", "loc"):
        expect(rc == 1, "--quick must find a %s problem: rc %d %s" % (c["category"], rc, out))
    else:
        expect(rc in (0, 1), "--quick: rc %d" % rc)
    return "rejected"


@test
def test_corruption_corpus(root):
    needed = sorted({c["store"] for c in M.CASES})
    goods = {}
    for name in needed:
        kind, rest = name.split("_", 1)
        codec, shards = rest.rsplit("_", 1)
        goods[name] = M.build_good(root, kind, codec, int(shards))
        rc, out, err = verify(goods[name])
        expect(rc == 0, "a good store fails verify: %s %s" % (out, err))
    counts = {"rejected": 0, "accepted": 0}
    fails = []
    for i, c in enumerate(M.CASES):
        try:
            counts[corpus_case(root, goods, c, i)] += 1
        except Exception as e:
            fails.append("[%s] %s: %s" % (c["store"], c["name"], e))
        finally:
            shutil.rmtree(os.path.join(root, "work", "corpus%03d" % i), ignore_errors=True)
    FIGURES["corpus corruptions rejected by verify"] = counts["rejected"]
    FIGURES["corpus damages docs/format.md allows, accepted by verify"] = counts["accepted"]
    expect(not fails, "%d corpus cases failed:\n  %s" % (len(fails), "\n  ".join(fails)))


# ---------------------------------------------------------------------------------------
# what only verify looks for


def small_store(root, name, kind="dense", codec="raw", shards=3, extra=()):
    path = os.path.join(root, name)
    args = ["create", "--dtype", "<i4", "--codec", codec, "--shards", str(shards)] + list(extra)
    args += ["--dense", "--shape", "2,4"] if kind == "dense" else ["--ragged", "--ndim", "1"]
    must(args + [path])
    arrays = M.dense_arrays() if kind == "dense" else M.ragged_arrays()
    must(["-q", "append-npy", path, "-"], stdin=M.npy_stream(arrays))
    return path


@test
def test_overlap_same_bytes(root):
    s = small_store(root, "ov1")
    o3, p3, l3 = M.get_loc(s, 3)
    M.set_loc(s, 6, offset=o3)  # records 3 and 6 (both data_0.zr) now share their bytes
    rc, doc, _ = verify_json(s)
    expect(rc == 1, "overlap not found: %r" % doc)
    ov = [p for p in doc["problems"] if p["rule"] == "overlap"]
    expect(len(ov) == 1 and ov[0]["file"] == "data_0.zr" and ov[0]["offset"] == o3, "%r" % doc["problems"])
    expect({ov[0]["record"]} <= {3, 6} and "overlap record" in ov[0]["message"], "%r" % ov)
    # Record 6's old bytes are now a gap below the tail: tolerated, but noted.
    expect(any("belong to no record" in n for n in doc["notes"]), "gap not noted: %r" % doc["notes"])
    # cat does not look for overlaps (it would cost a sort); --quick does.
    rc, out, err = verify(s, "--quick")
    expect(rc == 1 and "[overlap]" in out, "--quick misses the overlap: %s" % out)


@test
def test_overlap_partial(root):
    s = small_store(root, "ov2", shards=1)
    o5, p5, _ = M.get_loc(s, 5)
    M.set_loc(s, 5, offset=o5 - 4)  # straddles the end of record 4
    rc, doc, _ = verify_json(s)
    ov = [p for p in doc["problems"] if p["rule"] == "overlap"]
    expect(rc == 1 and len(ov) == 1 and ov[0]["record"] == 5 and "record 4" in ov[0]["message"], "%r" % doc)


@test
def test_keeps_going_and_max_errors(root):
    s = small_store(root, "many", codec="zstd", shards=3)
    tail1 = M.page(s)["tails"][1]
    M.set_loc(s, 1, offset=tail1)  # past the tail (table rule)
    M.set_loc(s, 7, logic=M.DENSE_WIDTH + 4)  # Dense width (table rule)
    b = bytearray(M.record_bytes(s, 5))
    for k in range(4, len(b)):
        b[k] ^= 0x5A
    M.rewrite_in_place(s, 5, bytes(b))  # garbage frame (payload)
    rc, doc, err = verify_json(s)
    expect(rc == 1 and doc["problem_count"] == 3 and not doc["stopped_early"], "%r" % doc)
    got = {(p["record"], p["rule"], p["file"]) for p in doc["problems"]}
    expect(got == {(1, "past_tail", "data_1.zr"), (7, "dense_width", "data_1.zr"), (5, "decode", "data_2.zr")},
           "problems %r" % got)
    for p in doc["problems"]:
        expect(p["offset"] == M.get_loc(s, p["record"])[0], "offset of %r" % p)
    # Every other record was still decoded.
    expect(doc["records_decoded"] == M.N_RECORDS - 3, "decoded %d" % doc["records_decoded"])
    rc, doc, _ = verify_json(s, "--max-errors", "2")
    expect(rc == 1 and doc["problem_count"] == 2 and doc["stopped_early"] and len(doc["problems"]) == 2, "%r" % doc)
    rc, out, _ = verify(s, "--max-errors", "1")
    expect(rc == 1 and "stopped after 1 problems" in out, out)
    rc, doc, _ = verify_json(s, "--max-errors", "0")
    expect(rc == 1 and doc["problem_count"] == 3, "%r" % doc)


@test
def test_meta_missing_beside_data_files(root):
    s = small_store(root, "nometa")
    os.remove(M.meta(s))
    rc, out, err = verify(s)
    expect(rc == 1 and "meta.zr is missing" in out, "%d %s %s" % (rc, out, err))


# ---------------------------------------------------------------------------------------
# bit rot


def incompressible_ragged(n, length, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2 ** 31, size=length, dtype="<i4") for _ in range(n)]


def flip_inside_raw_block(store, i):
    """Flips one payload byte in the middle of record i's frame. The records of this test
    are incompressible, so the frame is one raw block and still decodes to the right
    length after the flip: only a content checksum can notice."""
    o, p, _ = M.get_loc(store, i)
    path = M.data_file(store, i % M.page(store)["shards"])
    b = M.pread(path, 1, o + p // 2)
    M.pwrite(path, bytes([b[0] ^ 0x01]), o + p // 2)


@test
def test_bit_rot_zstd_checksum(root):
    arrays = incompressible_ragged(6, 100, 1)
    plain = os.path.join(root, "rot_plain")
    summed = os.path.join(root, "rot_sum")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", plain])
    must(["create", "--checksum", "--ragged", "--ndim", "1", "--dtype", "<i4", summed])
    for s in (plain, summed):
        must(["-q", "append-npy", s, "-"], stdin=M.npy_stream(arrays))
    rc, doc, _ = verify_json(summed)
    expect(rc == 0 and doc["records_with_checksum"] == 6 and doc["not_detected"] == "", "%r" % doc)
    rc, doc, _ = verify_json(plain)
    expect(rc == 0 and doc["records_with_checksum"] == 0 and "checksum" in doc["not_detected"], "%r" % doc)
    rc, out, _ = verify(plain)
    expect("not detectable:" in out, out)
    for s in (plain, summed):
        flip_inside_raw_block(s, 2)
    rc, out, err = verify(plain)
    expect(rc == 0, "without a checksum the flip is expected to go unnoticed (a limit verify states): %s" % out)
    rc, doc, _ = verify_json(summed)
    expect(rc == 1 and doc["problems"][0]["record"] == 2 and doc["problems"][0]["rule"] == "decode"
           and "checksum" in doc["problems"][0]["message"].lower(), "%r" % doc)
    # The setting persisted from create through a separate append, and appends keep it.
    must(["-q", "append-npy", summed, "-"], stdin=M.npy_stream(arrays[:2]))
    must(["-q", "append-npy", "--no-checksum", plain, "-"], stdin=M.npy_stream(arrays[:1]))
    _, doc, _ = verify_json(summed)
    expect(doc["records_with_checksum"] == 8, "%r" % doc)


def record_sums(store):
    """Per-record SHA-256 of the logical records (zrec digest's R_i), from cat jsonl... via npy."""
    out = subprocess.run([ZREC, "cat", "--format", "npy", store], stdout=subprocess.PIPE, check=True).stdout
    import io
    f = io.BytesIO(out)
    sums = []
    while f.tell() < len(out):
        a = np.load(f)
        if a.ndim == 3:  # Dense store: one array (n, 2, 4)
            sums += [hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest() for x in a]
        else:  # Ragged: one array per record; the logical record has the shape prefix
            prefix = struct.pack("<%dQ" % a.ndim, *a.shape)
            sums.append(hashlib.sha256(prefix + a.tobytes()).hexdigest())
    return sums


@test
def test_bit_rot_raw_against_digests(root):
    for kind in ("dense", "ragged"):
        s = small_store(root, "rot_raw_" + kind, kind=kind, codec="raw")
        sums = record_sums(s)
        sums_path = os.path.join(root, "sums_" + kind)
        with open(sums_path, "w") as f:
            f.write("".join("%d %s\n" % (i, h) for i, h in enumerate(sums)))
        rc, doc, _ = verify_json(s, "--against", sums_path)
        expect(rc == 0 and doc["digests_compared"] == M.N_RECORDS and doc["not_detected"] == "", "%r" % doc)
        o, p, _ = M.get_loc(s, 4)
        shard = 4 % 3
        last = M.pread(M.data_file(s, shard), 1, o + p - 1)
        M.pwrite(M.data_file(s, shard), bytes([last[0] ^ 0x80]), o + p - 1)
        rc, out, _ = verify(s)
        expect(rc == 0 and "not detectable" in out and "raw" in out, "raw flip without digests: %s" % out)
        rc, doc, _ = verify_json(s, "--against", sums_path)
        expect(rc == 1 and [(p["record"], p["rule"], p["file"]) for p in doc["problems"]] ==
               [(4, "digest", "data_1.zr")], "%r" % doc)
        # Hash-first lines (sha256sum style) and stdin work too.
        alt = "".join("%s  %d\n" % (h, i) for i, h in enumerate(sums))
        rc, out, err = run(["verify", "--against", "-", s], stdin=alt.encode())
        expect(rc == 1 and "record 4" in out, out + err)
        # A `zrec digest --per-record` listing, where the command exists.
        rc, out, err = run(["digest", "--per-record", s])
        if rc == 0 or "unknown command" not in err:
            expect(rc == 0, "digest --per-record failed: %s" % err)
            listed = [l for l in out.splitlines() if l.strip()]
            rc, out2, err2 = run(["verify", "--against", "-", s], stdin=out.encode())
            # The digest now describes the damaged store: it matches.
            expect(rc == 0, "verify against a fresh digest: %s %s (%d lines)" % (out2, err2, len(listed)))
        # More digests than records: records were lost.
        with open(sums_path, "a") as f:
            f.write("%d %s\n" % (M.N_RECORDS, "0" * 64))
        rc, doc, _ = verify_json(s, "--against", sums_path)
        expect(rc == 1 and any(p["rule"] == "digest_count" for p in doc["problems"]), "%r" % doc)


@test
def test_against_errors(root):
    s = small_store(root, "agerr")
    bad = os.path.join(root, "bad.sums")
    for text in ("0 nothex\n", "1 %s\n" % ("a" * 64), "0 %s extra\n" % ("a" * 64)):
        with open(bad, "w") as f:
            f.write(text)
        rc, out, err = verify(s, "--against", bad)
        expect(rc == 2 and "bad.sums" in err and "line 1" in err, "%r -> %d %s" % (text, rc, err))
    rc, out, err = verify(s, "--against", os.path.join(root, "nope"))
    expect(rc == 2 and "nope" in err, err)
    rc, out, err = verify(s, "--quick", "--against", bad)
    expect(rc == 2, err)
    # The listing is read as the records are checked (issue 46): a malformed line past the
    # store's records is still found, by its line number, and a changed record before it
    # is still reported; so is a line too long, by its own number.
    sums = record_sums(s)
    good = "# sums\n" + "".join("%d %s\n" % (i, h) for i, h in enumerate(sums))
    changed = good.replace(sums[2], "f" * 64, 1)
    n = len(sums)
    for tail, line, rule in (("\n%d %s\n%d nothex\n" % (n, "0" * 64, n + 1), n + 4, "expected a record ID"),
                             ("%d %s\n" % (n + 5, "0" * 64), n + 2, "record %d where record %d" % (n + 5, n)),
                             ("x" * 5000 + "\n", n + 2, "line too long")):
        with open(bad, "w") as f:
            f.write(changed + tail)
        rc, out, err = verify(s, "--against", bad)
        expect(rc == 2 and "bad.sums' line %d: %s" % (line, rule) in err and "record 2 " in out and
               "[digest]" in out, "%r -> %d %s %s" % (tail[:40], rc, out, err))


# ---------------------------------------------------------------------------------------
# named streams, exit codes, concurrency


@test
def test_named_streams(root):
    d = os.path.join(root, "streams")
    os.makedirs(d)
    a = small_store(d, "image")
    small_store(d, "label", kind="ragged", codec="zstd")
    # A root: the marker of docs/format.md section 12 lists both, with their length.
    marker = os.path.join(d, "zrec-root")
    with open(marker, "w") as f:
        f.write("zrec-root 1\nlength %d\nstream image\nstream label\n" % M.N_RECORDS)
    rc, out, err = verify(d)
    expect(rc == 0 and "OK: 2 streams of %d records" % M.N_RECORDS in out, out + err)
    rc, doc, _ = verify_json(d, "--quick")
    expect(rc == 0 and doc["marked"] and doc["lengths_agree"] and set(doc["streams"]) == {"image", "label"} and
           doc["length"] == M.N_RECORDS, "%r" % doc)
    # Records past the commit, as an append to the root killed before its commit leaves.
    killed_append_leftovers(d, ["-q", "append-npy", a, "-"], stdin=M.npy_stream([M.dense_arrays()[0][:1]]))
    rc, out, err = verify(d)
    expect(rc == 1 and "[root_length]" in out and "do not match the root's committed samples" in err, out + err)
    rc, doc, _ = verify_json(d)
    expect(rc == 1 and not doc["lengths_agree"] and not doc["valid"], "%r" % doc)
    # Without the marker the stores are unrelated: each valid, lengths not compared.
    os.remove(marker)
    rc, out, err = verify(d)
    expect(rc == 0 and "OK: 2 stores, each valid (not a root" in out, out + err)
    rc, doc, _ = verify_json(d)
    expect(rc == 0 and doc["valid"] and doc["marked"] is False and "lengths_agree" not in doc, "%r" % doc)
    rc, out, err = verify(d, "--against", "x")
    expect(rc == 2, err)


@test
def test_exit_codes(root):
    s = small_store(root, "codes")
    rc, out, err = verify(os.path.join(root, "missing"))
    expect(rc == 2 and err.startswith("zrec verify: ") and "missing" in err, err)
    empty = os.path.join(root, "emptydir")
    os.makedirs(empty)
    rc, out, err = verify(empty)
    expect(rc == 2 and "not a zrecord store" in err, err)
    rc, out, err = verify(M.meta(s))
    expect(rc == 2, err)
    rc, out, err = run(["verify", "--max-errors", "x", s])
    expect(rc == 2 and "--help" in err, err)
    rc, out, err = run(["verify"])
    expect(rc == 2, err)
    # A writer holds the store: verify checks its last published state, and says so.
    with open(M.meta(s), "rb") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        rc, out, err = verify(s)
        expect(rc == 0 and "a writer is appending; this is its last published state" in out, "%d %s" % (rc, err))
    rc, out, err = verify(s)
    expect(rc == 0, err)
    rc, out, err = run(["verify", "--help"])
    words = " ".join(out.split())  # the description is filled: a phrase may span lines
    expect(rc == 0 and "0 valid, 1 corrupt (problems found)" in words and "Not detectable" in words, out)


@test
def test_concurrent_readers(root):
    s = small_store(root, "conc", codec="zstd")
    procs = []
    for i in range(24):
        cmd = [["verify", s], ["cat", "--format", "jsonl", s], ["info", s], ["verify", "--quick", s]][i % 4]
        procs.append(subprocess.Popen([ZREC] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        out, err = p.communicate(timeout=120)
        expect(p.returncode == 0, "concurrent %r failed: %s" % (p.args, err))
    FIGURES["concurrent readers (verify, cat, info) succeeding at once"] = len(procs)


@test
def test_leftovers_are_notes(root):
    s = small_store(root, "left", codec="zstd")
    with open(M.data_file(s, 1), "ab") as f:
        f.write(b"\xee" * 100)
    with open(M.meta(s), "ab") as f:
        f.write(b"\xff" * 32)
    rc, out, err = verify(s)
    expect(rc == 0 and out.count("note:") >= 2 and "100 bytes past its tail" in out, out)
    rc, out, err = run(["-q", "verify", s])
    expect(rc == 0 and out == "", "-q prints nothing for a valid store: %r" % out)


def main():
    return case_runner.run_cases(TESTS, "zrec-verify-", figures=lambda: ["%s: %s" % kv for kv in FIGURES.items()])


if __name__ == "__main__":
    sys.exit(main())
