#!/usr/bin/python3
"""Many stores at once, and prefixes of growing stores (issue 21).

- info, verify and digest take several paths: one verdict per store, the others still
  checked after one fails, the exit status the worst (1 corrupt or missing, 2 verify
  could not check); --json writes one object per line.
- `digest STORE SELECTION` equals the digest of a store holding exactly those records
  (a prefix of a growing store compares like with like), and names the selection.
- `zrec info x.tar` says how to import it (a file is no store).

Needs: ZREC (path of the zrec binary).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, lines_store, must_out, require_zrec, run_zrec  # noqa: E402

require_zrec("test_many_stores")
CASES, case = case_runner.case_registry()


@case
def several_paths_one_verdict_each(d):
    a = lines_store(os.path.join(d, "a"), [b"one", b"two"])
    b = lines_store(os.path.join(d, "b"), [b"three"])
    missing = os.path.join(d, "missing")
    out = must_out(["verify", a, b]).decode()
    expect("%s: OK: 2 records" % a in out and "%s: OK: 1 records" % b in out, "verify a b: %r" % out)
    # A missing store between two good ones: both good ones still checked, exit 2.
    rc, out, err = run_zrec(["verify", a, missing, b])
    expect(rc == 2 and "%s: OK" % a in out.decode() and "%s: OK" % b in out.decode() and missing in err,
           "verify a missing b: rc %d %r %r" % (rc, out, err))
    # A corrupt store: exit 1, unless one could not be checked at all (2, the worst).
    c = lines_store(os.path.join(d, "c"), [b"four", b"five"])
    with open(os.path.join(c, "data_0.zr"), "r+b") as f:
        f.truncate(3)
    rc, out, err = run_zrec(["verify", a, c])
    expect(rc == 1 and "%s: OK" % a in out.decode() and "CORRUPT" in out.decode(), "verify a c: rc %d %r" % (rc, out))
    rc, _, _ = run_zrec(["verify", c, missing])
    expect(rc == 2, "verify corrupt + missing: rc %d, want 2 (the worst)" % rc)
    objs = [json.loads(l) for l in must_out(["verify", "--json", "--quick", a, b]).decode().splitlines()]
    expect([o["path"] for o in objs] == [a, b] and all(o["valid"] for o in objs), "verify --json: %r" % objs)
    objs = [json.loads(l) for l in must_out(["info", "--json", a, b]).decode().splitlines()]
    expect([o["length"] for o in objs] == [2, 1], "info --json a b: %r" % objs)
    rc, out, err = run_zrec(["info", a, missing, b])
    expect(rc == 1 and out.decode().count("length") == 2 and "'%s' does not exist" % missing in err,
           "info a missing b: rc %d %r %r" % (rc, out, err))
    tar = os.path.join(d, "x.tar")
    open(tar, "wb").write(b"\0" * 1024)
    fails(["info", tar], 1, ["'%s' is a file, not a zrecord store (a directory); a WebDataset tar is imported with: "
                             "zrec append-tar --ext EXT,... STORE '%s'" % (tar, tar)])
    rc, out, err = run_zrec(["digest", a, missing, b])
    got = out.decode().splitlines()
    expect(rc == 1 and len(got) == 2 and got[0].endswith("  " + a) and got[1].endswith("  " + b) and missing in err,
           "digest a missing b: rc %d %r %r" % (rc, out, err))


@case
def digest_of_a_prefix(d):
    lines = [b"r%d" % i for i in range(50)]
    grown = lines_store(os.path.join(d, "grown"), lines)
    first = lines_store(os.path.join(d, "first"), lines[:30])
    want = must_out(["digest", first]).decode().split()[0]
    out = must_out(["digest", grown, ":30"]).decode()
    expect(out == "%s  %s[:30]\n" % (want, grown), "digest grown :30: %r, want %s" % (out, want))
    every3 = lines_store(os.path.join(d, "every3"), lines[::3])
    out = must_out(["digest", grown, "::3"]).decode()
    expect(out.split()[0] == must_out(["digest", every3]).decode().split()[0], "digest ::3")
    j = json.loads(must_out(["digest", "--json", grown, "-5:"]))
    expect(j["stores"][0]["selection"] == "-5:" and j["stores"][0]["length"] == 5, "digest --json -5: %r" % j)
    lines_out = must_out(["digest", "--per-record", grown, "10:12"]).decode().splitlines()
    expect([l.split("\t")[0] for l in lines_out] == ["10", "11"], "--per-record 10:12: %r" % lines_out)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-many-stores-"))
