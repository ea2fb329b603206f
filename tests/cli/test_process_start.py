#!/usr/bin/python3
"""What every zrec process loads at its start (issue 24): only what every command needs.

- `zrec info` of an empty store maps no libarchive (nor libxml2 or ICU, which it
  brings), and no C++ shared library: fmt and spdlog are compiled in (deps/),
  libstdc++ and libgcc linked statically; the dynamic loader's trace (LD_DEBUG=files)
  lists every object it loads;
- `zrec cat --format tar` and `zrec append-tar` load libarchive when they run, and
  their tar is the one they wrote and read before (a round trip, byte for byte);
- a libarchive that cannot be loaded fails append-tar and cat --format tar with one
  line naming the library and the loader's reason, exit 1, and the store is
  byte-identical afterwards;
- only the named command is built, and it is found after root options and their
  values; help, completion and mistyped names still see every command.

Needs: ZREC (path of the zrec binary).
"""
import io
import os
import re
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
from cli_helpers import expect, must, require_zrec, run_zrec, tree_hash  # noqa: E402

ZREC = require_zrec("test_process_start")
FIGURES = []
ARCHIVE_LIBS = ("libarchive", "libxml2", "libicu")
# libcurl and what it brings: loaded when a URL is first read (docs/remote.md).
CURL_LIBS = ("libcurl", "libnghttp2", "libssh2", "libldap")
# What a start loaded before: 2,960 of its 3,200 symbol bindings (docs/bench.md).
CXX_LIBS = ("libstdc++", "libgcc_s", "libfmt", "libspdlog")


def loaded_objects(args, cwd):
    """The shared objects the dynamic loader loads for `zrec ARGS`, from its own trace."""
    env = dict(os.environ, LD_DEBUG="files")
    import subprocess
    p = subprocess.run([ZREC, *args], cwd=cwd, env=env, capture_output=True)
    expect(p.returncode == 0, "zrec %s failed: %s" % (" ".join(args), p.stderr.decode()[-2000:]))
    return sorted(set(re.findall(r"file=(\S+) \[0\];\s+(?:needed|dynamically loaded) by", p.stderr.decode()))), p


def make_tar(path):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for i in range(3):
            data = b"sample %d " % i * (i + 1)
            ti = tarfile.TarInfo("%06d.txt" % i)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))


def test_info_loads_no_libarchive_nor_cxx_libraries(d):
    must(["create", "--dense", "--dtype", "<f4", "--shape", "4", os.path.join(d, "s")])
    objects, _ = loaded_objects(["info", "s"], d)
    expect(objects, "LD_DEBUG=files listed nothing (is this a dynamically linked zrec?)")
    bad = [o for o in objects if any(name in o for name in ARCHIVE_LIBS)]
    expect(not bad, "zrec info loads %s (all: %s)" % (bad, objects))
    cxx = [o for o in objects if any(name in o for name in CXX_LIBS)]
    expect(not cxx, "zrec info loads the C++ shared libraries %s (all: %s)" % (cxx, objects))
    curl = [o for o in objects if any(name in o for name in CURL_LIBS)]
    expect(not curl, "zrec info of a local store loads %s (all: %s)" % (curl, objects))
    FIGURES.append("zrec info loads %d shared objects: %s" % (len(objects), " ".join(objects)))


def test_tar_commands_load_libarchive(d):
    tar = os.path.join(d, "in.tar")
    make_tar(tar)
    objects, _ = loaded_objects(["append-tar", "--codec", "raw", "root", "in.tar"], d)
    expect(any("libarchive" in o for o in objects), "append-tar did not load libarchive: %s" % objects)
    objects, p = loaded_objects(["cat", "--format", "tar", "root"], d)
    expect(any("libarchive" in o for o in objects), "cat --format tar did not load libarchive: %s" % objects)
    with tarfile.open(fileobj=io.BytesIO(p.stdout)) as t:
        got = {m.name: t.extractfile(m).read() for m in t.getmembers()}
    with tarfile.open(tar) as t:
        want = {m.name: t.extractfile(m).read() for m in t.getmembers()}
    expect(got == want, "the tar written back differs: %s vs %s" % (sorted(got), sorted(want)))


def test_unloadable_libarchive_fails_cleanly(d):
    tar = os.path.join(d, "in.tar")
    make_tar(tar)
    must(["append-tar", "--codec", "raw", os.path.join(d, "root"), tar])
    before = {s: tree_hash(os.path.join(d, "root", s)) for s in ("txt",)}
    # A file that is no library, where the loader looks first, under the soname zrec loads.
    soname = next(o for o in loaded_objects(["cat", "--format", "tar", "root"], d)[0] if "libarchive" in o)
    fake = os.path.join(d, "lib")
    os.mkdir(fake)
    with open(os.path.join(fake, soname), "wb") as f:
        f.write(b"not a library\n")
    env_prefix = ("env", "LD_LIBRARY_PATH=" + fake)
    for args, name in ((["append-tar", "--codec", "raw", os.path.join(d, "root"), tar], "append-tar"),
                       (["cat", "--format", "tar", "-o", os.path.join(d, "out.tar"), os.path.join(d, "root")],
                        "cat")):
        rc, _, err = run_zrec(args, prefix=env_prefix)
        expect(rc == 1, "zrec %s with an unloadable libarchive: rc %d, want 1 (%s)" % (name, rc, err.strip()))
        lines = err.strip().splitlines()
        want = "zrec %s: cannot load libarchive (%s), which tar input and output need: %s/%s: " % (
            name, soname, fake, soname)
        expect(len(lines) == 1 and lines[0].startswith(want), "zrec %s says %r, want one line starting %r" % (
            name, err, want))
    expect(not os.path.exists(os.path.join(d, "out.tar")), "cat left out.tar behind")
    after = {s: tree_hash(os.path.join(d, "root", s)) for s in ("txt",)}
    expect(after == before, "the store changed after the failed append-tar")


def test_the_named_command_alone_is_built(d):
    """Only the command the line names is built (app.cc): it is found after root options
    and their values, and help, completion and mistyped names still see every command."""
    must(["create", "--dense", "--dtype", "<f4", "--shape", "4", os.path.join(d, "s")])
    want = must(["info", "s"], cwd=d)[0]
    for args in (["--threads", "2", "info", "s"], ["--threads=2", "-v", "info", "s"], ["-q", "info", "s"]):
        out, _ = must(args, cwd=d)
        expect(out == want, "zrec %s printed %r, want %r" % (" ".join(args), out, want))
    rc, _, err = run_zrec(["--threads", "2", "infoo", "s"], cwd=d)
    expect(rc == 2 and "unknown command 'infoo'; did you mean 'info'?" in err, "typo: rc %d, %r" % (rc, err))
    rc, _, err = run_zrec(["info", "--threds", "2", "s"], cwd=d)
    expect(rc == 2 and "zrec info: unknown option '--threds'; did you mean '--threads'?" in err, "option typo: %r" % err)
    commands = ("create", "append-npy", "append-files", "append-stream", "append-tar", "append-lmdb", "append-h5",
                "cat", "info", "train-dict", "recompress", "concat", "digest", "verify", "bench", "view")
    help_text = must(["--help"])[0].decode()
    script = must(["completion", "bash"])[0].decode()
    for c in commands:
        expect(c in help_text, "zrec --help does not list %s" % c)
        expect(c in script, "the bash completion does not complete %s" % c)


if __name__ == "__main__":
    sys.exit(case_runner.run_cases([test_info_loads_no_libarchive_nor_cxx_libraries,
                                    test_tar_commands_load_libarchive,
                                    test_unloadable_libarchive_fails_cleanly, test_the_named_command_alone_is_built],
                                   "zrec-start-", figures=FIGURES))
