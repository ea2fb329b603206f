#!/usr/bin/python3
"""--codec auto (issue 46): the first window of records appended to an empty store
chooses raw, zstd or zstd_dict (docs/format.md §6, "The pending choice").

- token lists sharing phrases -> zstd_dict (info --json), records equal to the input,
  the choice's line on stderr and its facts under --json;
- random bytes -> raw; compressible but few records -> zstd;
- recompress --codec auto SRC DST chooses from SRC's sample;
- each stream of a root chooses its own: streams made with create --codec auto and fed
  by append-npy ROOT, and append-tar --codec auto's new streams;
- the dictionary is the same bytes whatever the thread count;
- a first append SIGKILLed at random instants, or on entering each of its fsyncs and
  unlinks (strace), rerun with --resume-file, leaves the store byte for byte as a clean
  run does (one write lane: the order of records inside a data file is otherwise the
  lanes' to choose); so does a killed publication's leftover dict.zr, and
  zrec-codec-auto left beside a published store goes;
- refusals: --codec auto with --dict, --level, --checksum (exit 2, exact messages).

Needs: ZREC, python3-numpy, strace.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import expect, must, must_out, records, require_zrec, run_all, run_zrec, tree_digests  # noqa: E402

ZREC = require_zrec("test_codec_auto")
ROOT = tempfile.mkdtemp(prefix="zrec-codec-auto-")
rnd = np.random.default_rng(46)


def token_lines(n, seed=1):
    """n token lists of 8-160 tokens made of 300 shared 8-token phrases: what a
    dictionary learns and a lone record's zstd frame cannot."""
    g = np.random.default_rng(seed)
    phrases = g.integers(0, 50000, size=(300, 8))
    out = []
    for _ in range(n):
        picks = g.integers(0, 300, size=int(g.integers(1, 21)))
        out.append(np.concatenate([phrases[p] for p in picks]).astype("<i4"))
    return out


def as_lines(arrays):
    return b"".join((" ".join(str(int(v)) for v in a) + "\n").encode() for a in arrays)


def info(store):
    return json.loads(must_out(["info", "--json", store]))


def tokens_store(name, n=4000, extra=()):
    path = os.path.join(ROOT, name)
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "auto", path])
    return path


def test_tokens_choose_zstd_dict():
    s = tokens_store("tokens")
    expect(info(s)["codec"] == "auto", "an empty auto store says auto: %r" % info(s)["codec"])
    expect(os.path.exists(os.path.join(s, "zrec-codec-auto")), "the pending choice is a file beside the store")
    arrays = token_lines(4000)
    out, err = must(["append-stream", "--parse", "ints", "--json", s], stdin=as_lines(arrays))
    facts = json.loads(out)
    choice = facts["codec_choice"]
    expect(choice["codec"] == "zstd_dict", "tokens choose zstd_dict: %r" % choice)
    expect(choice["ratio_dict"] > choice["ratio_zstd"] / 0.9, "the dictionary pays: %r" % choice)
    expect(choice["source_records"] == 4000 and choice["records_measured"] > 100, repr(choice))
    expect(info(s)["codec"] == "zstd_dict", "info says zstd_dict: %r" % info(s)["codec"])
    expect(not os.path.exists(os.path.join(s, "zrec-codec-auto")), "the first append consumed the pending file")
    got = records(s)
    expect(len(got) == len(arrays) and all(np.array_equal(a, b) for a, b in zip(got, arrays)),
           "the records are the input's")
    # Without --json, one line names the codec, the sample and the ratios.
    t = tokens_store("tokens2")
    _, err = must(["append-stream", "--parse", "ints", t], stdin=as_lines(arrays))
    line = [l for l in err.splitlines() if "codec auto chose" in l]
    expect(len(line) == 1 and line[0].startswith("zrec append-stream: codec auto chose zstd_dict for '%s': " % t) and
           "records sampled, " in line[0] and "held out and measured (" in line[0] and "compression ratio zstd " in line[0] and ", zstd_dict " in line[0],
           "the choice's line: %r" % err)
    must(["verify", t])
    # Later appends keep the choice.
    must(["append-stream", "--parse", "ints", t], stdin=as_lines(token_lines(10, seed=2)))
    expect(info(t)["codec"] == "zstd_dict" and info(t)["length"] == 4010, "the choice stands")


def test_random_bytes_choose_raw():
    s = os.path.join(ROOT, "random")
    must(["create", "--dense", "--shape", "256", "--dtype", "|u1", "--codec", "auto", s])
    a = rnd.integers(0, 256, size=(2000, 256), dtype=np.uint8)
    np.save(os.path.join(ROOT, "random.npy"), a)
    facts = json.loads(must_out(["append-npy", "--json", s, os.path.join(ROOT, "random.npy")]))
    expect(facts["codec_choice"]["codec"] == "raw", "random bytes choose raw: %r" % facts["codec_choice"])
    expect(info(s)["codec"] == "raw", "info says raw")
    expect(np.array_equal(np.concatenate([r.reshape(-1, 256) for r in records(s)]), a), "the records are the input's")


def test_few_compressible_choose_zstd():
    # Five records: too few for a dictionary; each compresses well on its own.
    s = os.path.join(ROOT, "few")
    must(["create", "--dense", "--shape", "4096", "--dtype", "|u1", "--codec", "auto", s])
    a = np.tile(np.arange(64, dtype=np.uint8), (5, 64))
    np.save(os.path.join(ROOT, "few.npy"), a)
    facts = json.loads(must_out(["append-npy", "--json", s, os.path.join(ROOT, "few.npy")]))
    expect(facts["codec_choice"]["codec"] == "zstd", repr(facts["codec_choice"]))
    expect(facts["codec_choice"]["dict_bytes"] is None, "no dictionary for 5 records")
    expect(info(s)["codec"] == "zstd", "info says zstd")


def test_recompress_auto():
    src = os.path.join(ROOT, "rsrc")
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", src])
    arrays = token_lines(3000, seed=3)
    must(["append-stream", "--parse", "ints", src], stdin=as_lines(arrays))
    dst = os.path.join(ROOT, "rdst")
    out = json.loads(must_out(["recompress", "--codec", "auto", "--json", src, dst]))
    expect(out["codec"] == "zstd_dict" and out["codec_choice"]["codec"] == "zstd_dict", repr(out))
    expect(info(dst)["codec"] == "zstd_dict", "recompress chose zstd_dict")
    expect(must_out(["digest", src]).split()[0] == must_out(["digest", dst]).split()[0], "same records")
    expect(not os.path.exists(os.path.join(dst, "zrec-codec-auto")), "DST's codec is chosen")


def test_dictionary_ignores_threads():
    lines = as_lines(token_lines(3000, seed=4))
    dicts = []
    for threads in ("1", "2", "4"):
        s = os.path.join(ROOT, "threads" + threads)
        must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "auto", s])
        must(["--threads", threads, "append-stream", "--parse", "ints", s], stdin=lines)
        dicts.append(open(os.path.join(s, "dict.zr"), "rb").read())
    expect(dicts[0] == dicts[1] == dicts[2], "the same records give the same dictionary on 1, 2 and 4 threads")


def fresh(name):
    path = os.path.join(ROOT, name)
    if os.path.exists(path):
        shutil.rmtree(path)
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "auto", path])
    return path


def append_argv(store, resume):
    return ["--threads", "1", "append-stream", "--parse", "ints", "--window-mib", "1", "--checkpoint-every", "700",
            "--resume-file", resume, store]


def test_killed_first_append_reruns_to_same_bytes():
    data = os.path.join(ROOT, "kill-input.txt")
    with open(data, "wb") as f:
        f.write(as_lines(token_lines(6000, seed=5)))
    clean = fresh("kill-clean")
    must(append_argv(clean, os.path.join(ROOT, "clean.resume")), stdin_file=data)
    want = tree_digests(clean)
    t0 = time.monotonic()
    must(append_argv(fresh("kill-timing"), os.path.join(ROOT, "timing.resume")), stdin_file=data)
    run_secs = time.monotonic() - t0
    r = random.Random(46)
    killed = 0
    for trial in range(6):
        s = fresh("kill-%d" % trial)
        resume = os.path.join(ROOT, "kill-%d.resume" % trial)
        with open(data, "rb") as f:
            p = subprocess.Popen([ZREC] + append_argv(s, resume), stdin=f, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(r.uniform(0, run_secs) if trial else 0.05)
            p.send_signal(signal.SIGKILL)
            killed += p.wait() == -signal.SIGKILL
        must(append_argv(s, resume), stdin_file=data)
        got = tree_digests(s)
        expect(got == want, "trial %d: the rerun's store differs from a clean run's: %r vs %r" % (trial, got, want))
    expect(killed >= 1, "no run was killed before it ended")


def test_killed_at_every_sync_and_unlink():
    # strace kills the first append on entering each fsync, fdatasync and unlink it makes
    # under the store (tests/cli/strace_faults.py): before dict.zr is synced, between it
    # and the page, between the page and the removal of zrec-codec-auto. Each rerun with
    # the same --resume-file makes the clean run's store, byte for byte.
    import strace_faults
    work = os.path.join(ROOT, "fs-work")
    data = os.path.join(ROOT, "fs-input.txt")
    with open(data, "wb") as f:
        f.write(as_lines(token_lines(3000, seed=9)))
    store, resume = os.path.join(work, "s"), os.path.join(ROOT, "fs.resume")
    argv = ["--threads", "1", "append-stream", "--parse", "ints", "--resume-file", resume, store]

    def fresh_work():
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        if os.path.exists(resume):
            os.remove(resume)
        must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "auto", store])

    fresh_work()
    must(argv, stdin_file=data)
    want = tree_digests(store)
    expect("dict.zr" in want and "zrec-codec-auto" not in want, "the clean run chose zstd_dict: %r" % want)
    fresh_work()
    # LeakSanitizer cannot run under ptrace (it aborts the process): the traced runs go
    # without it, as test_fault_inject's do.
    traced_env = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
    sites, rc, err = strace_faults.enumerate_sites([ZREC] + argv, work, ROOT, stdin=data, env=traced_env,
                                                   syscalls=("fsync", "fdatasync", "unlink", "unlinkat"))
    expect(rc == 0 and len(sites) >= 5, "tracing found %d sites (rc %s): %s" % (len(sites), rc, err))
    calls = []
    for site in sites:
        fresh_work()
        out = strace_faults.inject([ZREC] + argv, site, "SIGKILL", ROOT, stdin=data, env=traced_env)
        expect(out.injected and out.rc == -signal.SIGKILL, "the kill at %s %d did not land" % site[:2])
        calls.append(out.call)
        must(argv, stdin_file=data)
        got = tree_digests(store)
        expect(got == want, "killed at %s: the rerun's store differs: %r vs %r" % (out.call[:80], got, want))
    expect(any("zrec-codec-auto" in c for c in calls) and any("dict.zr" in c for c in calls),
           "the kills reached dict.zr's sync and the pending file's removal: %r" % calls)
    print("figure: %d kills at fsync/unlink of a first append, each rerun byte-identical to a clean run" % len(sites))


def test_killed_publication_leftovers():
    data = as_lines(token_lines(3000, seed=6))
    clean = fresh("left-clean")
    must(["--threads", "1", "append-stream", "--parse", "ints", clean], stdin=data)
    want = tree_digests(clean)
    # Killed between writing dict.zr and the page: an empty store with a dict.zr, and
    # data past its tails. Readers still open it; the rerun makes the same store.
    s = fresh("left-dict")
    open(os.path.join(s, "dict.zr"), "wb").write(b"\x37\xa4\x30\xec" + b"half a dictionary")
    open(os.path.join(s, "data_0.zr"), "wb").write(b"junk past the tail")
    expect(info(s)["length"] == 0 and info(s)["codec"] == "auto", "the leftover store opens as empty, auto")
    must(["--threads", "1", "append-stream", "--parse", "ints", s], stdin=data)
    expect(tree_digests(s) == want, "the rerun after a killed publication is a clean run's store")
    # Killed just after the page: zrec-codec-auto beside a store with records; readers
    # ignore it, the next writer removes it.
    t = fresh("left-file")
    must(["--threads", "1", "append-stream", "--parse", "ints", t], stdin=data)
    open(os.path.join(t, "zrec-codec-auto"), "wb").write(b"zrec-codec-auto 1\n")
    expect(info(t)["codec"] == "zstd_dict", "a stale pending file changes nothing")
    must(["append-stream", "--parse", "ints", t], stdin=b"")
    expect(tree_digests(t) == want, "the next writer removed the stale pending file")


def test_root_streams_choose_each():
    # append-npy ROOT (root_append): a root of streams made with create --codec auto.
    root = os.path.join(ROOT, "root")
    os.mkdir(root)
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "auto", root + "/token"])
    must(["create", "--dense", "--shape", "64", "--dtype", "|u1", "--codec", "auto", root + "/noise"])
    must(["adopt", root])
    arrays = token_lines(3000, seed=7)
    with open(os.path.join(ROOT, "token.npy"), "wb") as f:
        for a in arrays:
            np.save(f, a)
    np.save(os.path.join(ROOT, "noise.npy"), rnd.integers(0, 256, size=(3000, 64), dtype=np.uint8))
    out = json.loads(must_out(["append-npy", "--json", root, "--stream", "token=" + os.path.join(ROOT, "token.npy"),
                               "--stream", "noise=" + os.path.join(ROOT, "noise.npy")]))
    choice = out["codec_choice"]
    expect(choice["token"]["codec"] == "zstd_dict" and choice["noise"]["codec"] == "raw", repr(choice))
    expect(info(root + "/token")["codec"] == "zstd_dict" and info(root + "/noise")["codec"] == "raw", "published")


def test_tar_new_streams():
    import io
    import tarfile
    tar = os.path.join(ROOT, "shard.tar")
    arrays = token_lines(2000, seed=8)
    with tarfile.open(tar, "w") as t:
        for i, a in enumerate(arrays):
            for ext, data in (("txt", (" ".join(str(int(v)) for v in a)).encode()),
                              ("bin", rnd.integers(0, 256, size=200, dtype=np.uint8).tobytes())):
                info_ = tarfile.TarInfo("%06d.%s" % (i, ext))
                info_.size = len(data)
                t.addfile(info_, io.BytesIO(data))
    ds = os.path.join(ROOT, "ds")
    out = json.loads(must_out(["append-tar", "--json", "--codec", "auto", ds, tar]))
    choice = out["codec_choice"]
    expect(choice["txt"]["codec"] == "zstd_dict" and choice["bin"]["codec"] == "raw", repr(choice))
    expect(info(ds + "/txt")["codec"] == "zstd_dict" and info(ds + "/bin")["codec"] == "raw", "published")
    expect(records(ds + "/txt")[5].tobytes() == " ".join(str(int(v)) for v in arrays[5]).encode(), "contents")
    # --stream-codec STREAM=auto: that stream chooses, the others keep --codec.
    one = os.path.join(ROOT, "ds-one")
    out = json.loads(must_out(["append-tar", "--json", "--codec", "zstd", "--stream-codec", "txt=auto", one, tar]))
    expect(sorted(out["codec_choice"]) == ["txt"] and out["codec_choice"]["txt"]["codec"] == "zstd_dict",
           repr(out.get("codec_choice")))
    expect(info(one + "/txt")["codec"] == "zstd_dict" and info(one + "/bin")["codec"] == "zstd", "per stream")
    # A rerun names the stream's codec as auto again: the stream keeps what auto chose.
    must(["append-tar", "--codec", "zstd", "--stream-codec", "txt=auto", "--from-length", "0", one, tar])
    again = info(one + "/txt")
    expect(again["length"] == 2000 and again["codec"] == "zstd_dict", "the rerun appended nothing: %r" % again)


def test_root_recompress_chooses_per_stream():
    # recompress ROOT DST: --stream-codec STREAM=auto chooses that stream's codec from
    # the source's records; --codec auto chooses every stream's. Contents are unchanged.
    root = os.path.join(ROOT, "root")
    src_digests = must_out(["digest", root]).split()
    one = os.path.join(ROOT, "root-one")
    out = json.loads(must_out(["recompress", "--json", "--stream-codec", "token=auto", root, one]))
    expect(sorted(out["codec_choice"]) == ["token"] and out["codec_choice"]["token"]["codec"] == "zstd_dict",
           repr(out.get("codec_choice")))
    expect({s["name"]: s["codec"] for s in out["streams"]} == {"noise": "raw", "token": "zstd_dict"}, repr(out))
    every = os.path.join(ROOT, "root-every")
    rc, _, err = run_zrec(["recompress", "--codec", "auto", root, every])
    expect(rc == 0, err)
    lines = [line for line in err.splitlines() if "codec auto chose" in line]
    expect(len(lines) == 2 and "'%s/noise'" % every in lines[0] and "'%s/token'" % every in lines[1], repr(err))
    for dst in (one, every):
        got = must_out(["digest", dst]).split()
        expect(got[0::2] == src_digests[0::2], "%s: digests differ from the source's" % dst)


def test_refusals():
    s = os.path.join(ROOT, "refused")
    d = os.path.join(ROOT, "some.dict")
    open(d, "wb").write(b"\x00" * 64)
    cases = [
        (["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "auto", "--dict", d, s],
         "--dict is only used with --codec zstd_dict, not auto"),
        (["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "auto", "--checksum", s],
         "--checksum sets zstd frame checksums, and codec auto may choose raw (give --codec zstd or zstd_dict)"),
        (["create", "--ragged", "--ndim", "1", "--dtype", "<i4", "--codec", "fast", s],
         "unknown codec 'fast' (use raw, zstd, zstd_dict or auto)"),
    ]
    for argv, message in cases:
        rc, _, err = run_zrec(argv)
        expect(rc == 2, "%s: exit %d, want 2 (%s)" % (argv, rc, err))
        expect(err.splitlines()[0] == "zrec create: " + message, "%s: stderr %r" % (argv, err))
        expect(not os.path.exists(s), "nothing created")
    src = os.path.join(ROOT, "tokens")
    rc, _, err = run_zrec(["recompress", "--codec", "auto", "--level", "9", src, os.path.join(ROOT, "x")])
    expect(rc == 2 and err.splitlines()[0] == "zrec recompress: --level is for zstd and zstd_dict, not auto", repr(err))
    rc, _, err = run_zrec(["append-tar", "--checksum", "--stream-codec", "txt=auto", os.path.join(ROOT, "x"),
                           os.path.join(ROOT, "shard.tar")])
    expect(rc == 2 and err.splitlines()[0] == "zrec append-tar: --stream-codec 'txt=auto': --checksum sets zstd frame "
           "checksums, and codec auto may choose raw (give the stream zstd)", repr(err))
    expect(not os.path.exists(os.path.join(ROOT, "x")), "nothing created")


if __name__ == "__main__":
    sys.exit(run_all([test_tokens_choose_zstd_dict, test_random_bytes_choose_raw, test_few_compressible_choose_zstd,
                      test_recompress_auto, test_dictionary_ignores_threads,
                      test_killed_first_append_reruns_to_same_bytes, test_killed_at_every_sync_and_unlink,
                      test_killed_publication_leftovers,
                      test_root_streams_choose_each, test_tar_new_streams, test_root_recompress_chooses_per_stream,
                      test_refusals], ROOT))
