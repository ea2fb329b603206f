#!/usr/bin/env python3
"""zrec concat joining by placement (docs/scale-out.md "Joining in parallel"):

- parts of one layout are placed (the summary and --json say so) and give the same store
  as the join in steps (--plan, --place in any order, --publish), byte for byte;
- parts that differ (shard count) fall back to frame copy, with the same records;
- DST never exists before --publish; a placement killed in the middle (strace holds its
  second copy_file_range, then SIGKILL) leaves no marker, and placing again finishes it;
- --consume removes the sources, DST's data files being the first part's (same inode),
  and holds them from the start: a source someone else holds is refused before DST exists;
- errors: usage (exit 2), publish before every part is placed, an unknown part (exit 1);
- --discard removes the plan and its temporary.

Usage: ZREC=path/to/zrec /usr/bin/python3 tests/cli/test_concat_join.py
"""
import fcntl
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import (STRACE_NO_LEAK_CHECK, expect, fails, must, must_out, require_zrec, run_all,  # noqa: E402
                         tree_hash, wait_until)

ZREC = require_zrec("test_concat_join")
TMP = tempfile.mkdtemp(prefix="zrec-join-")


def build_part(path, first, n, shards=3, codec="zstd", size=200):
    """A Ragged |u1 store of records first..first+n-1 (record i: `size` bytes made from i)."""
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--shards", str(shards), "--codec", codec, path])
    src = path + ".in"
    os.makedirs(src)
    names = []
    for i in range(first, first + n):
        name = os.path.join(src, "r%07d" % i)
        with open(name, "wb") as f:
            f.write((b"record %d " % i) * (size // 10 + i % 7))
        names.append(name)
    with open(src + ".list", "w") as f:
        f.write("".join(x + "\n" for x in names))
    must(["--threads", "1", "-q", "append-files", "--files-from", src + ".list", path])
    shutil.rmtree(src)


def parts(tag, sizes, **kw):
    paths, first = [], 0
    for k, n in enumerate(sizes):
        paths.append(os.path.join(TMP, "%s-p%d" % (tag, k)))
        build_part(paths[-1], first, n, **kw)
        first += n
    return paths


def digest(store):
    return must_out(["digest", store]).split()[0]


def test_one_process_placement_equals_the_steps():
    ps = parts("a", [40, 0, 2, 75])
    one = os.path.join(TMP, "a-one")
    out, _ = must(["concat", "--json", *ps, one])
    facts = json.loads(out)
    expect(facts["parts_placed"] == 4 and facts["frames_copied"] == 117 and facts["length"] == 117,
           "placement facts: %r" % facts)
    _, err = must(["concat", *ps, os.path.join(TMP, "a-one2")])
    expect("117 frames copied, 0 records re-encoded (4 parts placed as whole runs" in err, err)
    plan = os.path.join(TMP, "a.plan")
    dst = os.path.join(TMP, "a-steps")
    facts = json.loads(must_out(["concat", "--json", "--plan", plan, *ps, dst]))
    expect(facts["parts"] == 4 and facts["length"] == 117 and not facts["reused"], "plan facts: %r" % facts)
    temp = facts["temp"]
    expect(os.path.basename(temp).startswith(".a-steps.zrec-join-"), temp)
    for k in (3, 1, 0, 2, 3):
        expect(not os.path.exists(dst), "DST exists before --publish")
        facts = json.loads(must_out(["concat", "--json", "--place", str(k), plan]))
        expect(facts["part"] == k and not facts["published"], "place facts: %r" % facts)
    _, err = must(["concat", "--publish", plan])
    expect("published '%s': 117 records from 4 parts" % dst in err, err)
    expect(tree_hash(dst) == tree_hash(one), "steps and one process differ")
    expect(digest(dst) == digest(one), "digests differ")
    # Requeued steps after the publication succeed and change nothing.
    _, err = must(["concat", "--publish", plan])
    expect("was published already" in err, err)
    _, err = must(["concat", "--place", "2", plan])
    expect("is published already; nothing to place" in err, err)
    _, err = must(["concat", "--plan", plan, *ps, dst])
    expect("exists already for these parts: 4 of 4 placed, published" in err, err)
    must(["concat", "--discard", plan])
    expect(not os.path.exists(plan) and tree_hash(dst) == tree_hash(one), "discard after publish")


def test_mismatched_parts_fall_back_to_frame_copy():
    a = os.path.join(TMP, "m-a")
    b = os.path.join(TMP, "m-b")
    build_part(a, 0, 30, shards=3)
    build_part(b, 30, 30, shards=2)
    facts = json.loads(must_out(["concat", "--json", a, b, os.path.join(TMP, "m-all")]))
    expect(facts["parts_placed"] == 0 and facts["frames_copied"] == 60, "fallback facts: %r" % facts)
    ref = os.path.join(TMP, "m-ref")
    build_part(ref, 0, 60, shards=3)
    expect(digest(os.path.join(TMP, "m-all")) == digest(ref), "fallback digest")
    fails(["concat", "--plan", os.path.join(TMP, "m.plan"), a, b, os.path.join(TMP, "m-x")], 1,
          ["cannot join by placement: '%s' has 2 data files, '%s' 3" % (b, a)])
    expect(not os.path.exists(os.path.join(TMP, "m.plan")), "no plan after a refusal")


def test_killed_placement_is_placed_again():
    if shutil.which("strace") is None:
        raise AssertionError("strace not found (scripts/setup.sh installs it)")
    ps = parts("k", [300, 300], size=20000)  # runs of a few MiB: several copy_file_range calls
    plan = os.path.join(TMP, "k.plan")
    dst = os.path.join(TMP, "k-steps")
    temp = json.loads(must_out(["concat", "--json", "--plan", plan, *ps, dst]))["temp"]
    must(["concat", "--place", "0", plan])
    # Hold the second copy_file_range of part 1's placement, then kill it there.
    p = subprocess.Popen(["strace", *STRACE_NO_LEAK_CHECK, "-f", "-o", os.path.join(TMP, "k.strace"), "-e",
                          "trace=copy_file_range", "-e", "inject=copy_file_range:delay_enter=30s:when=2",
                          ZREC, "concat", "--threads", "1", "--place", "1", plan],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    trace_file = os.path.join(TMP, "k.strace")

    def calls_traced():
        if not os.path.exists(trace_file):
            return 0
        with open(trace_file) as f:
            return f.read().count("copy_file_range")

    try:
        wait_until(lambda: calls_traced() >= 2, "the second copy_file_range of part 1's placement", proc=p,
                   step=0.05)
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    trace = open(os.path.join(TMP, "k.strace")).read()
    expect(trace.count("copy_file_range(") >= 2, "not killed in the middle: %s" % trace[-500:])
    expect(not os.path.exists(os.path.join(temp, ".zrec-placed-1")), "a killed placement left its marker")
    # --wait: strace is gone, but the zrec it traced may still be exiting and holding the
    # temporary store's lock for a moment (a loaded CI run saw exit 75 here).
    fails(["concat", "--wait=30", "--publish", plan], 1, ["part 1 of 2 are not placed yet; place them first"])
    expect(not os.path.exists(dst), "DST after a failed publish")
    must(["concat", "--place", "1", plan])
    must(["concat", "--publish", plan])
    one = os.path.join(TMP, "k-one")
    must(["concat", *ps, one])
    expect(tree_hash(dst) == tree_hash(one), "re-placed join differs from the one-process join")


def test_consume_links_the_first_part_and_removes_the_sources():
    ps = parts("c", [50, 20, 31])
    ref = os.path.join(TMP, "c-ref")
    must(["concat", *ps, ref])
    inode = os.stat(os.path.join(ps[0], "data_1.zr")).st_ino
    dst = os.path.join(TMP, "c-all")
    facts = json.loads(must_out(["concat", "--json", "--consume", *ps, dst]))
    expect(facts["sources_removed"] and facts["bytes_linked"] > 0, "consume facts: %r" % facts)
    expect(all(not os.path.exists(p) for p in ps), "sources left after --consume")
    st = os.stat(os.path.join(dst, "data_1.zr"))
    expect(st.st_ino == inode and st.st_nlink == 1, "data_1.zr is not the first part's file")
    expect(tree_hash(dst) == tree_hash(ref), "consumed join differs")
    must(["verify", "-q", dst])
    # The sources are held for removal from the start: while anyone else holds one (a
    # reader here; a writer would change the data files DST shares), nothing is created.
    ps = parts("h", [10, 10])
    with open(os.path.join(ps[1], "meta.zr"), "rb") as held:
        fcntl.flock(held, fcntl.LOCK_SH)
        fails(["concat", "--consume", *ps, os.path.join(TMP, "h-all")], 75,
              ["store '%s' is locked by another process" % ps[1]])
    expect(not os.path.exists(os.path.join(TMP, "h-all")) and all(os.path.exists(p) for p in ps),
           "a busy source: DST created or a source removed")
    a = os.path.join(TMP, "c-twice")
    build_part(a, 0, 3)
    fails(["concat", "--consume", a, a, os.path.join(TMP, "c-x")], 2, ["is given twice"])
    expect(os.path.exists(a), "a refused --consume removed its source")


def test_consume_killed_at_an_fsync_is_rerun():
    # Issue 36: SIGKILL at each of the first fsyncs of a --consume. The first source's data
    # files are then hard-linked into DEST's leftover temporary: appending to it is refused
    # with a line saying why, and the rerun removes the temporary (it used to leave it,
    # warning, and the source stayed unwritable) and builds DEST equal to a clean join.
    ref_parts = parts("r", [40, 25])
    ref = os.path.join(TMP, "r-ref")
    must(["concat", *ref_parts, ref])
    for when in (1, 2, 3):
        ps = parts("f%d" % when, [40, 25])
        dst = os.path.join(TMP, "f%d-all" % when)
        p = subprocess.run(["strace", *STRACE_NO_LEAK_CHECK, "-f", "-o", "/dev/null", "-e",
                            "inject=fsync:signal=SIGKILL:when=%d" % when, ZREC, "concat", "--consume", *ps, dst],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        expect(p.returncode != 0, "fsync %d: the killed concat exited %d" % (when, p.returncode))
        leftovers = [n for n in os.listdir(TMP) if n.startswith(".f%d-all.zrec-tmp-" % when)]
        if leftovers:
            fails(["append-stream", ps[0]], 1, ["has 2 hard links", "until it is rerun"])
        _, err = must(["concat", "--consume", *ps, dst])
        expect("leaving" not in err, "fsync %d: the rerun left a temporary: %s" % (when, err))
        expect([n for n in os.listdir(TMP) if n.startswith(".f%d-all.zrec-tmp-" % when)] == [],
               "fsync %d: a temporary is left after the rerun" % when)
        expect(tree_hash(dst) == tree_hash(ref), "fsync %d: the rerun's DEST differs from a clean join" % when)


def test_step_errors():
    ps = parts("e", [5, 5])
    plan = os.path.join(TMP, "e.plan")
    dst = os.path.join(TMP, "e-dst")
    fails(["concat", "--plan", plan, "--codec", "raw", *ps, dst], 2, ["--codec is not for a join in steps"])
    fails(["concat", "--plan", plan, "--place", "0", *ps, dst], 2, ["give one of --plan, --place, --publish"])
    fails(["concat", "--publish", plan, "extra"], 2, ["take one operand, the plan file"])
    fails(["concat", "--publish", plan], 1, ["cannot open '%s'" % plan])
    # A plan inside a source store would be one more file in it (issue 36).
    inside = os.path.join(ps[0], "x.plan")
    fails(["concat", "--plan", inside, *ps, dst], 1, ["--plan '%s' is inside store '%s'" % (inside, ps[0])])
    expect(not os.path.exists(inside), "a refused --plan wrote into the source")
    must(["concat", "--plan", plan, *ps, dst])
    fails(["concat", "--place", "2", plan], 1, ["there is no part 2 in the plan '%s' of 2 parts (0..1)" % plan])
    fails(["concat", "--publish", plan], 1, ["parts 0 and 1 of 2 are not placed yet"])
    other = os.path.join(TMP, "e-other")
    build_part(other, 0, 4)
    fails(["concat", "--plan", plan, other, ps[1], dst], 1, ["exists and plans another join"])
    with open(plan, "r+b") as f:
        f.seek(0)
        f.write(b"x")
    fails(["concat", "--place", "0", plan], 1, ["is not a zrec join plan"])
    with open(plan, "r+b") as f:
        f.seek(0)
        f.write(b"z")
    temp = glob.glob(os.path.join(TMP, ".e-dst.zrec-join-*"))
    expect(len(temp) == 1, "one temporary: %r" % temp)
    _, err = must(["concat", "--discard", plan])
    expect("removed the plan" in err and not os.path.exists(plan) and not os.path.exists(temp[0]), err)
    expect(all(os.path.exists(p) for p in ps) and not os.path.exists(dst), "discard touched the parts or DST")


sys.exit(run_all([test_one_process_placement_equals_the_steps, test_mismatched_parts_fall_back_to_frame_copy,
                  test_killed_placement_is_placed_again, test_consume_links_the_first_part_and_removes_the_sources,
                  test_consume_killed_at_an_fsync_is_rerun, test_step_errors], TMP))
