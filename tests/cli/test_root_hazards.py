#!/usr/bin/python3
"""Roots that hold something other than what append-tar made (issue 36's attack round):

- A stream that is a symbolic link to another store (a `cls` stream shared by two roots):
  append-tar refuses the root and leaves the store it points to byte-identical (it used
  to cut that store back to the root's committed count and overwrite its records, exit
  0); info and verify report the link as a root problem.
- A FIFO named zrec-root: info, verify and cat --format tar refuse it at once (they used
  to block in the open forever), as append-tar does.
- A root with streams of numbers (--parse cls=int, ids=ints) is adopted, resumed and
  appended to without --parse repeated: each existing stream continues as the --parse
  that made it (the Slurm publish step's `append-tar --adopt RESULT empty.tar` used to
  refuse the `<i8` stream, so a tar build with --parse never published).
- A rerun with --from-length and --keys over another input (a glob regenerated between a
  kill and the requeue): the skipped samples' keys are compared with the committed ones,
  and the first that differs fails the run naming both, nothing appended (it used to
  append the other input's tail, exit 0).
- The same with --keys-stream: the skipped samples' keys are compared with the root's
  committed __key__ records (issue 45: it used to append the other input's tail).
- A first run killed while its marker was a temporary: the rerun removes that
  temporary (it stayed in the root, hidden, never reported).
- What kills of append-tar leave in a root (stream temporaries without their marker,
  empty or holding store files, or with it; a marker temporary that is a second name of
  zrec-root): verify reports each on a note line and in --json's "temporaries", the root
  valid; the next writer removes them (reruns kept them for ever), but not one a live
  process locks, nor one holding a file no store holds (a warning names it).
- --keys FILE into a new root when FILE already holds lines: refused, FILE byte-identical
  (it used to be emptied, also when the run then failed); a failed first run leaves no
  keys file it created.

Needs: ZREC (path of the zrec binary).
"""
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, expect_failure, must, require_zrec, run_zrec, tree_digests  # noqa: E402

ZREC = require_zrec("test_root_hazards")
CASES, case = case_runner.case_registry()


def make_tar(path, keys, exts=("txt", "cls"), truncate=False):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for k in keys:
            for e in exts:
                data = ("%s %s\n" % (k, e)).encode()
                info = tarfile.TarInfo("%s.%s" % (k, e))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    data = buf.getvalue()
    if truncate:
        data = data[:len(data) // 2 + 100]
    with open(path, "wb") as f:
        f.write(data)
    return path


def keys(prefix, n):
    return ["%s/%04d" % (prefix, i) for i in range(n)]


@case
def linked_stream_is_refused_and_its_target_untouched(d):
    # train/ is a root of 20 samples; small/ a root of 5 whose cls stream is then
    # replaced by a link to train/cls (one label stream shared by two roots).
    train, small = os.path.join(d, "train"), os.path.join(d, "small")
    must(["append-tar", train, make_tar(os.path.join(d, "a.tar"), keys("a", 20))])
    must(["append-tar", small, make_tar(os.path.join(d, "b.tar"), keys("b", 5))])
    cls = os.path.join(small, "cls")
    for f in os.listdir(cls):
        os.unlink(os.path.join(cls, f))
    os.rmdir(cls)
    os.symlink(os.path.join(train, "cls"), cls)
    before = tree_digests(train)
    args = ["append-tar", small, make_tar(os.path.join(d, "c.tar"), keys("c", 3))]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 1, ["stream 'cls' of root '%s' is a symbolic link" % small])
    expect(tree_digests(train) == before, "append-tar through a linked stream changed the store it points to")
    # The readers say so too.
    rc, out, err = run_zrec(["verify", "--json", small])
    expect(rc == 1, "verify of a root with a linked stream: rc %d %s" % (rc, err))
    expect("is a symbolic link" in out.decode(), out.decode())
    rc, out, err = run_zrec(["info", small])
    expect("is a symbolic link" in out.decode() + err, out.decode() + err)


@case
def fifo_marker_is_refused_at_once(d):
    root = os.path.join(d, "ds")
    must(["append-tar", root, make_tar(os.path.join(d, "a.tar"), keys("a", 4))])
    marker = os.path.join(root, "zrec-root")
    os.unlink(marker)
    os.mkfifo(marker)
    for args in (["info", root], ["verify", root], ["cat", "--format", "tar", root, "-o", os.path.join(d, "out.tar")],
                 ["append-tar", root, os.path.join(d, "a.tar")]):
        # run_zrec's timeout (60 s here) fails the test where the open blocked.
        rc, _, err = run_zrec(args, timeout=60)
        expect(rc != 0 and "is not a regular file" in err, "zrec %s: rc %d, %s" % (" ".join(args), rc, err.strip()))


@case
def number_streams_need_no_parse_repeated(d):
    root = os.path.join(d, "ds")
    def numbers_tar(path, ks):  # a text, one number (cls) and two numbers (ids) a sample
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
            for i, k in enumerate(ks):
                for e, data in (("txt", b"text %d" % i), ("cls", b"%d\n" % (i % 3)), ("ids", b"%d %d\n" % (i, -i))):
                    info = tarfile.TarInfo("%s.%s" % (k, e))
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
        with open(path, "wb") as f:
            f.write(buf.getvalue())
        return path
    a, b = numbers_tar(os.path.join(d, "a.tar"), keys("a", 5)), numbers_tar(os.path.join(d, "b.tar"), keys("b", 3))
    must(["append-tar", "--parse", "cls=int", "--parse", "ids=ints", root, a])
    empty = os.path.join(d, "empty.tar")
    with tarfile.open(empty, "w"):
        pass
    before = tree_digests(root)
    _, err = must(["append-tar", "--adopt", root, empty])
    expect(tree_digests(root) == before, "adopting a root with nothing to add changed it")
    must(["append-tar", root, b])
    got = [json.loads(line) for line in must(["cat", "--format", "jsonl", os.path.join(root, "cls")])[0].splitlines()]
    expect(got == [0, 1, 2, 0, 1, 0, 1, 2], got)
    ids = [json.loads(line) for line in must(["cat", "--format", "jsonl", os.path.join(root, "ids")])[0].splitlines()]
    expect(ids == [[i, -i] for i in range(5)] + [[i, -i] for i in range(3)], ids)
    # A --parse that does not fit the stream is still refused.
    args = ["append-tar", "--parse", "cls=float", root, b]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 1, ["--parse cls=float needs a Dense scalar store of a float dtype"])


@case
def rerun_over_another_input_is_refused(d):
    root, kf = os.path.join(d, "ds"), os.path.join(d, "ds.keys")
    first = make_tar(os.path.join(d, "first.tar"), keys("a", 6))
    must(["append-tar", "--from-length", "0", "--keys", kf, root, first])
    before, keys_before = tree_digests(root), open(kf, "rb").read()
    other = make_tar(os.path.join(d, "other.tar"), keys("a", 3) + keys("z", 5))
    args = ["append-tar", "--from-length", "0", "--keys", kf, root, other]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 1, ["sample 'z/0000' is not sample 3 of root '%s': line 4 of keys file '%s' is "
                                      "'a/0003'" % (root, kf), "nothing was appended"])
    expect(tree_digests(root) == before and open(kf, "rb").read() == keys_before, "a refused rerun changed the root")
    # The same input again is a rerun that appends nothing; a longer one appends its tail.
    must(["append-tar", "--from-length", "0", "--keys", kf, root, first])
    longer = make_tar(os.path.join(d, "longer.tar"), keys("a", 9))
    _, err = must(["append-tar", "--from-length", "0", "--keys", kf, root, longer])
    expect("appended 3 samples" in err and "after skipping 6 already present" in err, err)
    expect(open(kf).read().splitlines() == keys("a", 9), "keys after the longer rerun")


@case
def rerun_over_another_input_is_refused_by_the_key_stream(d):
    # The same rerun into a root that keeps its keys as the stream __key__ (--keys-stream):
    # the skipped samples' keys are compared with that stream's committed records (it used
    # to append the other input's tail after "skipping 6 already present", exit 0).
    root = os.path.join(d, "ds")
    first = make_tar(os.path.join(d, "first.tar"), keys("a", 6))
    must(["append-tar", "--from-length", "0", "--keys-stream", root, first])
    before = tree_digests(root)
    other = make_tar(os.path.join(d, "other.tar"), keys("a", 3) + keys("z", 5))
    for again in ([], ["--keys-stream"]):  # the stream is written whether or not the option is given again
        args = ["append-tar", "--from-length", "0"] + again + [root, other]
        rc, _, err = run_zrec(args)
        expect_failure(args, rc, err, 1, [
            "sample 'z/0000' is not sample 3 of root '%s': record 3 of its stream '__key__' is 'a/0003' (this input "
            "is not the one the earlier runs read from --from-length 0); nothing was appended" % root])
        expect(len(err.strip().splitlines()) == 1, "more than one line: %r" % err)
        expect(tree_digests(root) == before, "a refused rerun changed the root")
    # Its first sample differs: the first key compared fails.
    args = ["append-tar", "--from-length", "0", root, make_tar(os.path.join(d, "b.tar"), keys("b", 8))]
    rc, _, err = run_zrec(args)
    expect_failure(args, rc, err, 1, ["sample 'b/0000' is not sample 0 of root '%s': record 0 of its stream "
                                      "'__key__' is 'a/0000'" % root])
    expect(tree_digests(root) == before, "a refused rerun changed the root")
    # The same input again appends nothing; a longer one appends its tail, keys included.
    must(["append-tar", "--from-length", "0", root, first])
    _, err = must(["append-tar", "--from-length", "0", root, make_tar(os.path.join(d, "longer.tar"), keys("a", 9))])
    expect("appended 3 samples" in err and "after skipping 6 already present" in err, err)
    out, _ = must(["cat", "--format", "text", os.path.join(root, "__key__")])
    expect([line.split("\t", 1)[1] for line in out.decode().splitlines()] == keys("a", 9),
           "keys after the longer rerun: %r" % out)


@case
def keys_file_of_another_dataset_is_kept(d):
    kf = os.path.join(d, "keys.txt")
    with open(kf, "w") as f:
        f.write("other/0\nother/1\n")
    want = open(kf, "rb").read()
    root = os.path.join(d, "ds")
    good = make_tar(os.path.join(d, "a.tar"), keys("a", 6))
    bad = make_tar(os.path.join(d, "bad.tar"), keys("b", 6), truncate=True)
    for tar in (good, bad):
        args = ["append-tar", "--keys", kf, root, tar]
        rc, _, err = run_zrec(args)
        expect_failure(args, rc, err, 1, ["keys file '%s' already holds 2 lines, but root '%s' is new" % (kf, root)])
        expect(open(kf, "rb").read() == want, "the keys file changed")
        expect(not os.path.exists(root), "a refused run left the root")
    # A failed first run leaves no keys file it created.
    new_kf = os.path.join(d, "new.keys")
    args = ["append-tar", "--keys", new_kf, root, bad]
    rc, _, err = run_zrec(args)
    expect(rc == 1, "a truncated tar: rc %d" % rc)
    expect(not os.path.exists(new_kf), "a failed first run left the keys file it created")
    expect(not os.path.exists(root), "a failed first run left the root")
    # The same file then works for a real first run, and appends on the next.
    must(["append-tar", "--keys", new_kf, root, good])
    must(["append-tar", "--keys", new_kf, root, make_tar(os.path.join(d, "c.tar"), keys("c", 2))])
    expect(open(new_kf).read().splitlines() == keys("a", 6) + keys("c", 2), open(new_kf).read())
    expect(json.loads(must(["info", "--json", root])[0])["committed_length"] == 8, "root length")



@case
def temporary_marker_of_a_killed_first_run_is_removed(d):
    # A first run killed after writing its marker as a temporary, before linking it in,
    # leaves ".zrec-root.tmp-XXXXXX" (unlocked: its writer is dead) in a root with no
    # marker. The rerun that creates the marker removes it.
    root = os.path.join(d, "root")
    os.makedirs(root)
    stale = os.path.join(root, ".zrec-root.tmp-k1lled")
    with open(stale, "w") as f:
        f.write("zrec-root 1\nlength 0\n")
    must(["append-tar", root, make_tar(os.path.join(d, "a.tar"), keys("a", 3))])
    expect(sorted(os.listdir(root)) == ["cls", "txt", "zrec-root"], "left in the root: %s" % os.listdir(root))



def leave_kill_leftovers(root):
    """In `root` (a root with streams cls and txt), what kills of append-tar at its 256
    system calls left behind, each of which reruns kept for ever: a stream temporary
    killed between mkdtemp and its marker (empty, seconds old), one killed between the
    marker's removal and the rename (store files, no marker), one with its marker (which
    only a creation of that very stream removed), and the marker temporary of a create
    killed between its link and its unlink (a second name of zrec-root, whose lock the
    next writer holds itself). Besides them, one a live process holds (flock), and one
    holding a file no store holds: both must stay. Returns (the leftovers, the held
    directory's descriptor, the foreign one's path)."""
    import fcntl
    import shutil
    left = {}
    left["empty"] = os.path.join(root, ".cls.zrec-tmp-k1lled")
    os.mkdir(left["empty"])
    left["unmarked"] = os.path.join(root, ".txt.zrec-tmp-n0mark")
    os.mkdir(left["unmarked"])
    for f in ("meta.zr", "data_0.zr"):
        shutil.copyfile(os.path.join(root, "txt", f), os.path.join(left["unmarked"], f))
    left["marked"] = os.path.join(root, ".new.zrec-tmp-m4rked")
    os.mkdir(left["marked"])
    open(os.path.join(left["marked"], ".zrec-temporary"), "w").close()
    shutil.copyfile(os.path.join(root, "txt", "meta.zr"), os.path.join(left["marked"], "meta.zr"))
    left["marker link"] = os.path.join(root, ".zrec-root.tmp-l1nked")
    os.link(os.path.join(root, "zrec-root"), left["marker link"])
    held = os.path.join(root, ".cls.zrec-tmp-h3ld00")
    os.mkdir(held)
    fd = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    foreign = os.path.join(root, ".cls.zrec-tmp-f0reig")
    os.mkdir(foreign)
    with open(os.path.join(foreign, "notes.txt"), "w") as f:
        f.write("mine\n")
    return left, fd, held, foreign


def verify_notes(root):
    """zrec verify ROOT (which must be valid): its note lines, and its JSON temporaries."""
    out, _ = must(["verify", root])
    notes = [line for line in out.decode().splitlines() if ": note: " in line]
    j = json.loads(must(["verify", "--json", root])[0])
    expect(j["valid"], "verify --json: %s" % j)
    return notes, j["temporaries"]


def note(root, name):
    return ("%s: note: '%s' is a temporary of a writer of the root, killed (or at work now); the next writer of the "
            "root removes it" % (root, name))


@case
def kill_leftovers_are_reported_and_removed_by_the_next_writer(d):
    root = os.path.join(d, "ds")
    must(["append-tar", root, make_tar(os.path.join(d, "a.tar"), keys("a", 4))])
    left, fd, held, foreign = leave_kill_leftovers(root)
    names = sorted(os.path.basename(p) for p in list(left.values()) + [held, foreign])
    # verify reports every one (it used to say nothing), and the root stays valid.
    notes, temporaries = verify_notes(root)
    expect(temporaries == names, "verify --json temporaries: %s" % temporaries)
    expect(notes == [note(root, n) for n in names], "verify's notes: %s" % notes)
    try:
        _, err = must(["append-tar", root, make_tar(os.path.join(d, "b.tar"), keys("b", 2))])
        for what, path in left.items():
            expect(not os.path.exists(path), "the rerun left the %s temporary %s" % (what, path))
        expect(os.path.isdir(held), "the rerun removed a temporary a live process holds")
        expect(os.path.exists(os.path.join(foreign, "notes.txt")), "the rerun removed a directory that is not zrec's")
        warning = ("zrec append-tar: warning: leaving '%s' in place: it is named like a zrec temporary but it "
                   "holds 'notes.txt', which is not a store file (remove it yourself if it is not needed)\n" % foreign)
        expect(warning in err and err.count("warning:") == 1, "append-tar's stderr: %r" % err)
        expect(json.loads(must(["info", "--json", root])[0])["committed_length"] == 6, "root length")
        notes, temporaries = verify_notes(root)
        expect(temporaries == sorted(os.path.basename(p) for p in (held, foreign)), "after: %s" % temporaries)
    finally:
        os.close(fd)
    # Let go, the held one is a leftover like the others: the next writer removes it.
    must(["append-tar", root, make_tar(os.path.join(d, "c.tar"), keys("c", 1))])
    expect(not os.path.exists(held), "the held temporary, let go, stayed")


@case
def fifos_at_every_name_are_refused_at_once(d):
    # Each name a command opens because a listing, a marker or an option named it, made a
    # FIFO: the command refuses it at once (10 s is ample) with a one-line error, and
    # changes nothing. cat --format tar used to export a root whose listed stream is a
    # FIFO (or gone) without that stream's members, exit 0; append-files with a FIFO
    # --manifest failed with "cannot sync 'm': Invalid argument".
    tar = make_tar(os.path.join(d, "a.tar"), keys("a", 3))
    root = os.path.join(d, "root")
    must(["append-tar", root, tar])
    os.rename(os.path.join(root, "cls"), os.path.join(d, "cls.moved"))
    os.mkfifo(os.path.join(root, "cls"))
    store = os.path.join(d, "s")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", store])
    data = os.path.join(d, "data")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", data])
    os.remove(os.path.join(data, "data_0.zr"))
    os.mkfifo(os.path.join(data, "data_0.zr"))
    manifest, keys_fifo = os.path.join(d, "m"), os.path.join(d, "k")
    os.mkfifo(manifest)
    os.mkfifo(keys_fifo)
    listed = "root '%s' lists the stream 'cls' in zrec-root, but '%s/cls' is not a store" % (root, root)
    for args, says in [
            (["cat", "--format", "tar", "-o", os.path.join(d, "out.tar"), root], listed + "; nothing was written"),
            (["append-tar", root, tar], listed + "; nothing was changed"),
            (["append-files", "--manifest", manifest, store, tar], "--manifest '%s' is a FIFO, not a regular file" % manifest),
            (["append-tar", "--keys", keys_fifo, os.path.join(d, "new"), tar],
             "--keys '%s' is a FIFO, not a regular file" % keys_fifo),
            (["info", data], "malformed store '%s': data_0.zr is not a regular file" % data),
            (["cat", data], "malformed store '%s': data_0.zr is not a regular file" % data),
            (["append-stream", "-i", tar, data], "malformed store '%s': data_0.zr is not a regular file" % data)]:
        before = tree_digests(d)
        rc, _, err = run_zrec(args, timeout=10)
        expect_failure(args, rc, err, 1, [says])
        expect(len(err.strip().splitlines()) == 1, "more than one line: %r" % err)
        expect(tree_digests(d) == before, "zrec %s changed something" % " ".join(args))
    expect(not os.path.exists(os.path.join(d, "out.tar")), "cat left its output")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-root-hazards-"))
