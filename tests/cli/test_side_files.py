#!/usr/bin/python3
"""Side files: the files an option names beside a command's stores and inputs (issue 45's
attack round, items 5, 6 and 15).

- A FIFO given to any option that names a side file (--dict, --stream-dict, --keys,
  --indices-from, --files-from, --labels, --vocab, --against, --resume-file, --manifest,
  --plan, a PLAN operand, an LMDB environment) is refused at once with one line naming the
  option and the file, exit 1, nothing written. Several used to block in open(2) past
  SIGINT and SIGTERM (--dict, --stream-dict, view --keys, verify --against), others until
  SIGTERM (cat --keys, --indices-from, view --labels and --vocab, an LMDB environment). A
  device is refused the same way; '-' (stdin) and bash's <(cmd) still work where an option
  reads a list.
- A side file a command writes (--resume-file, append-tar's and append-lmdb's --keys) is
  never inside the store or root it appends to, the rule -o, --manifest and --plan follow:
  `append-stream --resume-file STORE/dict.zr` used to write the store's dictionary into a
  zstd store (exit 0; the store then malformed).
- A STREAM=FILE option naming no stream (--stream-dict text= for txt, view --vocab toks=,
  --labels nosuch=), or naming a stream twice, is a usage error (exit 2) that lists the
  streams there are; each used to be ignored, or the second to replace the first, silently.
- A dictionary larger than 4 MiB gets a one-line warning saying what it costs in memory.

Needs: ZREC (path of the zrec binary), python3-lmdb.
"""
import io
import os
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, expect_failure, must, must_out, require_zrec, run_zrec, tree_digests  # noqa: E402

ZREC = require_zrec("test_side_files")
CASES, case = case_runner.case_registry()
HAS_VIEW = run_zrec(["view", "--help"])[0] == 0


def make_tar(path, keys, exts=("txt", "cls")):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for k in keys:
            for e in exts:
                data = ("%s %s\n" % (k, e)).encode()
                info = tarfile.TarInfo("%s.%s" % (k, e))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    return path


def make_env(path):
    import lmdb
    env = lmdb.open(path, map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i in range(3):
            txn.put(b"k%d" % i, b"value %d" % i)
    env.close()
    return path


def setup(d):
    """Two stores of bytes (zstd), a root of streams txt and cls, a tar, an LMDB env."""
    s, s2 = os.path.join(d, "s"), os.path.join(d, "s2")
    for p in (s, s2):
        must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "zstd", p])
        must(["append-stream", p], stdin=b"one\ntwo\nthree\n")
    tar = make_tar(os.path.join(d, "a.tar"), ["a/%d" % i for i in range(3)])
    root = os.path.join(d, "root")
    must(["append-tar", root, tar])
    return s, s2, root, tar


def digests(d):
    """tree_digests(d) but LMDB's lock file, which opening an environment rewrites."""
    return {k: v for k, v in tree_digests(d).items() if not k.endswith("lock.mdb")}


def refuses_at_once(d, args, says, rc_want=1, usage=False):
    """`zrec ARGS` exits rc_want within 10 s with one stderr line holding `says` (a usage
    error adds its "Try 'zrec CMD --help'" line), and changes nothing under d."""
    before = digests(d)
    rc, _, err = run_zrec(args, timeout=10)
    expect_failure(args, rc, err, rc_want, [says])
    lines = err.strip().splitlines()
    expect(len(lines) == (2 if usage else 1) and says in lines[0],
           "zrec %s: not one line: %r" % (" ".join(args), err))
    expect(digests(d) == before, "zrec %s changed something" % " ".join(args))


@case
def a_fifo_is_refused_by_every_option_that_names_a_file(d):
    s, s2, root, tar = setup(d)
    env = make_env(os.path.join(d, "env"))
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    new, new_root = os.path.join(d, "new"), os.path.join(d, "new_root")
    names = os.path.join(d, "names.txt")
    with open(names, "w") as f:
        f.write(tar + "\n")
    cases = [
        (["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "zstd_dict", "--dict", fifo, new], "--dict"),
        (["recompress", "--dict", fifo, s, new], "--dict"),
        (["concat", "--dict", fifo, s, s2, new], "--dict"),
        (["append-tar", "--codec", "zstd_dict", "--dict", fifo, new_root, tar], "--dict"),
        (["append-tar", "--stream-dict", "txt=" + fifo, new_root, tar], "--stream-dict"),
        (["append-tar", "--keys", fifo, root, tar], "--keys"),
        (["append-tar", "--resume-file", fifo, root, tar], "--resume-file"),
        (["append-stream", "--resume-file", fifo, "-i", names, s], "--resume-file"),
        (["append-files", "--manifest", fifo, s, tar], "--manifest"),
        (["append-files", "--files-from", fifo, s], "--files-from"),
        (["train-dict", "--files-from", fifo, "-o", os.path.join(d, "out.dict")], "--files-from"),
        (["append-lmdb", "--keys", fifo, s, env], "--keys"),
        (["append-lmdb", s, fifo], "LMDB environment"),
        (["cat", "--indices-from", fifo, s], "--indices-from"),
        (["cat", "--format", "tar", "--indices-from", fifo, root], "--indices-from"),
        (["cat", "--format", "tar", "--keys", fifo, root], "--keys"),
        (["verify", "--against", fifo, s], "--against"),
        (["concat", "--plan", fifo, s, s2, new], "--plan"),
        (["concat", "--place", "0", fifo], "PLAN"),
        (["concat", "--publish", fifo], "PLAN"),
        (["concat", "--discard", fifo], "PLAN"),
    ]
    if HAS_VIEW:
        cases += [(["view", "--keys", fifo, s], "--keys"),
                  (["view", "--labels", "cls=" + fifo, root], "--labels"),
                  (["view", "--vocab", "txt=" + fifo, root], "--vocab")]
    for args, option in cases:
        # verify's exit 2: the --against listing is unreadable (man zrec-verify, EXIT STATUS).
        refuses_at_once(d, args, "%s '%s' is a FIFO, not a regular file" % (option, fifo),
                        2 if args[0] == "verify" else 1)
    for p in (new, new_root, os.path.join(d, "out.dict")):
        expect(not os.path.exists(p), "%s was made" % p)


@case
def a_device_is_refused_and_stdin_and_process_substitution_still_work(d):
    s, _, root, tar = setup(d)
    refuses_at_once(d, ["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "zstd_dict", "--dict",
                        "/dev/null", os.path.join(d, "new")],
                    "--dict '/dev/null' is a character device, not a regular file")
    refuses_at_once(d, ["append-tar", "--resume-file", "/dev/null", root, tar],
                    "--resume-file '/dev/null' is a character device, not a regular file")
    # '-' is stdin, and <(cmd) an anonymous pipe, not a FIFO: both read the list.
    expect(must_out(["cat", "--format", "raw", "--indices-from", "-", s], stdin=b"2\n0\n") == b"threeone",
           "--indices-from - did not read stdin")
    line = "%s cat --format raw --indices-from <(printf '1\\n') %s" % (ZREC, s)
    p = subprocess.run(["bash", "-c", line], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    expect(p.returncode == 0 and p.stdout == b"two", "<(cmd) as --indices-from: %r %r" % (p.stdout, p.stderr))


@case
def written_side_files_are_never_inside_the_store(d):
    s, _, root, tar = setup(d)
    env = make_env(os.path.join(d, "env"))
    tar2 = make_tar(os.path.join(d, "b.tar"), ["b/%d" % i for i in range(2)])
    inside = "is inside store '%s', which this command reads or writes; choose a path outside it"
    for args, path, store in [
            # A zstd store has no dict.zr: the resume file would have become its dictionary.
            (["append-stream", "--resume-file", os.path.join(s, "dict.zr"), s], os.path.join(s, "dict.zr"), s),
            (["append-tar", "--resume-file", os.path.join(root, "txt", "resume"), root, tar2],
             os.path.join(root, "txt", "resume"), root),
            (["append-tar", "--keys", os.path.join(root, "cls", "keys"), root, tar2],
             os.path.join(root, "cls", "keys"), root),
            (["append-lmdb", "--keys", os.path.join(s, "keys"), s, env], os.path.join(s, "keys"), s)]:
        before = digests(d)
        rc, _, err = run_zrec(args, stdin=b"four\n", timeout=60)
        option = "--resume-file" if "--resume-file" in args else "--keys"
        expect_failure(args, rc, err, 1, ["%s '%s' %s" % (option, path, inside % store)])
        expect(len(err.strip().splitlines()) == 1, "more than one line: %r" % err)
        expect(digests(d) == before, "zrec %s changed something" % " ".join(args))
    must(["verify", s])
    must(["verify", root])
    # Beside the store, the same resume file works as before.
    resume = os.path.join(d, "resume")
    must(["append-stream", "--resume-file", resume, s], stdin=b"four\n")
    expect(open(resume).read() == "3\n", "resume file holds %r" % open(resume).read())


@case
def stream_dict_naming_no_stream_or_one_twice_is_a_usage_error(d):
    tar = make_tar(os.path.join(d, "a.tar"), ["a/%d" % i for i in range(3)])
    dict_a, dict_b = os.path.join(d, "a.dict"), os.path.join(d, "b.dict")
    for p in (dict_a, dict_b):
        with open(p, "wb") as f:
            f.write(os.urandom(4096))
    root = os.path.join(d, "root")
    spec = "text=" + dict_a
    for ext in ([], ["--ext", "txt,cls"]):  # streams fixed by --ext, or by the first sample
        refuses_at_once(d, ["append-tar"] + ext + ["--stream-dict", spec, root, tar],
                        "--stream-dict '%s': 'text' is not one of the streams (txt, cls)" % spec, 2, usage=True)
        expect(not os.path.exists(root), "the root was left behind")
    refuses_at_once(d, ["append-tar", "--stream-dict", "txt=" + dict_a, "--stream-dict", "txt=" + dict_b, root, tar],
                    "--stream-dict 'txt=%s': the stream 'txt' has a dictionary already (--stream-dict 'txt=%s'); "
                    "give one FILE per STREAM" % (dict_b, dict_a), 2, usage=True)
    # Named right, it is used; a rerun naming a stream that exists now is fine.
    must(["append-tar", "--stream-dict", "txt=" + dict_a, root, tar])
    info = must_out(["info", "--json", os.path.join(root, "txt")])
    expect(b'"codec":"zstd_dict"' in info.replace(b" ", b""), "txt is not zstd_dict: %r" % info)
    must(["append-tar", "--from-length", "0", "--stream-dict", "txt=" + dict_a, root, tar])


@case
def view_labels_and_vocab_naming_no_stream_or_one_twice_are_usage_errors(d):
    if not HAS_VIEW:
        return
    _, _, root, _ = setup(d)
    names = os.path.join(d, "names.txt")
    with open(names, "w") as f:
        f.write("zero\none\n")
    for option, stream in [("--vocab", "toks"), ("--labels", "nosuch")]:
        spec = "%s=%s" % (stream, names)
        refuses_at_once(d, ["view", option, spec, root],
                        "%s '%s': '%s' is not one of the streams (cls, txt)" % (option, spec, stream), 2, usage=True)
    refuses_at_once(d, ["view", "--labels", "cls=" + names, "--labels", "cls=" + names, root],
                    "--labels 'cls=%s': the stream 'cls' has a file already; give one --labels per STREAM" % names,
                    2, usage=True)


@case
def a_dictionary_over_4_mib_is_taken_with_a_warning_of_its_cost(d):
    big, small = os.path.join(d, "big.dict"), os.path.join(d, "small.dict")
    with open(big, "wb") as f:
        f.write(os.urandom(5 << 20))  # raw-content dictionaries are allowed (docs/format.md §6)
    with open(small, "wb") as f:
        f.write(os.urandom(4 << 20))
    _, err = must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "zstd_dict", "--dict", big, os.path.join(d, "b")])
    want = ("--dict '%s' holds 5.0 MiB: every process that opens a store with it holds about 10.0 MiB for it"
            % big)
    expect(want in err and len(err.strip().splitlines()) == 1, "no one-line warning: %r" % err)
    _, err = must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", "--codec", "zstd_dict", "--dict", small, os.path.join(d, "s")])
    expect("MiB" not in err, "a 4 MiB dictionary was warned about: %r" % err)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-side-files-"))
