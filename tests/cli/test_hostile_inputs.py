#!/usr/bin/python3
"""Hostile tar, HDF5 and LMDB inputs and hostile names (issue 20). Each case failed on
the code before the fix; each refusal is one line naming the input and the rule, exit 1
(2 for a bad option), and leaves the stores it touched byte-identical.

- Stream names (one rule, include/zrec/dataset.h): a member extension that is a
  store file name (0.meta.zr bricked the root), '.', hidden, a temporary's pattern, a
  newline, an escape, a leading '-', a space is refused when it would make a stream;
  ignored with --ext; refused in --ext; a root holding such a store (a directory
  ROOT/meta.zr no longer makes ROOT a store) is refused by append-tar and cat --format
  tar and flagged by info.
- Names printed (info's table, verify's report, digest's line, append summaries) go
  through the escaper: no raw newline or escape reaches stdout or stderr.
- cat --format tar: -o into the store or root, onto meta.zr/dict.zr, or onto the keys
  file is refused; keys that are absolute or hold '..' are refused unless
  --absolute-names; a key with a NUL byte always.
- A command whose data goes to stdout fails (exit 1, one line) when stdout was closed
  at start; with -o FILE it runs.
- --parse text is parsed as it is read: numbers cut by the 1 MiB read chunks, a Dense
  scalar stream refused at the second number, a number longer than 4096 characters.
- HDF5: external raw data, external links and virtual datasets are refused unless
  --allow-external; a band of chunks larger than the window is refused.
- LMDB: a value larger than the file, a meta page claiming more pages than the file, a
  node offset past its page, a page size of 0 (mdb_env_open divided by it) or two that
  differ: an error naming the entry, not SIGBUS or SIGFPE.

Needs: ZREC, /usr/bin/python3 with numpy, h5py, lmdb.
"""
import io
import os
import subprocess
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import hostile_inputs as hostile  # noqa: E402
from cli_helpers import byte_records, expect, fails, must, records, require_zrec, run_zrec  # noqa: E402

ZREC = require_zrec("test_hostile_inputs")
CASES, case = case_runner.case_registry()
FIGURES = []
RULE = "a stream name is 1 to 128 letters, digits, '_' and '-'"


def tree(root):
    """Every file under root: relative path -> bytes (directories as None)."""
    out = {}
    for d, dirs, files in os.walk(root):
        for x in dirs:
            out[os.path.relpath(os.path.join(d, x), root)] = None
        for f in files:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def one_clean_line(err):
    """stderr is one line, with no raw control byte in it (the escaper's work)."""
    expect(err.count("\n") == 1 and err.endswith("\n"), "stderr is not one line: %r" % err)
    expect(not any(ord(c) < 0x20 and c != "\n" for c in err), "raw control byte on stderr: %r" % err)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def shell(cmd, cwd):
    p = subprocess.run(["bash", "-c", cmd], cwd=cwd, capture_output=True, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def make_root(d, n=3, name="root"):
    root = os.path.join(d, name)
    must(["append-tar", "--codec", "raw", root, write(os.path.join(d, name + ".tar"), hostile.tar_bytes(
        hostile.samples(n)))])
    return root


# --- stream names -----------------------------------------------------------------------

@case
def member_named_meta_zr_does_not_brick_the_root(d):
    # Defect 1: '0.meta.zr' made ROOT/meta.zr, after which ROOT read as a malformed store.
    root = os.path.join(d, "root")
    t = write(os.path.join(d, "t.tar"), hostile.tar_bytes([("0.jpg", b"j"), ("0.meta.zr", b"m"), ("1.jpg", b"k")]))
    err = fails(["append-tar", root, t], says=[
        "member '0.meta.zr' has the extension 'meta.zr', which cannot name a stream: it is a store file name "
        "(ends in '.zr') (" + RULE])
    one_clean_line(err)
    expect(not os.path.exists(os.path.join(root, "meta.zr")), "ROOT/meta.zr was created")
    # The root still imports: a good tar afterwards.
    must(["append-tar", root, write(os.path.join(d, "g.tar"), hostile.tar_bytes(hostile.samples(2)))])
    expect(b"2 streams, 2 samples committed; lengths agree" in must(["info", root])[0], "info of the root")


@case
def directory_named_meta_zr_is_no_store(d):
    # is_store_dir() took a directory ROOT/meta.zr for a store's meta file.
    root = make_root(d)
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", os.path.join(root, "meta.zr")])
    before = tree(root)
    out, err = must(["info", root])
    expect(b"meta.zr " in out and b"jpg " in out, "info lists the stores of the root: %r" % out)
    expect("'meta.zr' cannot be a stream of '%s': it is a store file name" % root in err, "info warns: %r" % err)
    says = "'%s' holds the store 'meta.zr', which cannot be a stream: it is a store file name" % root
    fails(["cat", "--format", "tar", root, "-o", os.path.join(d, "o.tar")], says=[says, "move it out of the root"])
    fails(["append-tar", root, os.path.join(d, "root.tar")], says=[says])
    expect(tree(root) == before, "the root changed")
    expect(not os.path.exists(os.path.join(d, "o.tar")), "cat left an output file")


@case
def bad_extensions_refused_or_ignored(d):
    figures = 0
    for i, (label, name) in enumerate(hostile.BAD_EXTENSIONS):
        ext = name[2:]
        root = os.path.join(d, "r%d" % i)
        # The first sample names the streams: a bad extension there is refused.
        t = write(os.path.join(d, "t%d.tar" % i), hostile.tar_bytes([("0.jpg", b"j"), (name, b"x")]))
        err = fails(["append-tar", root, t], says=["which cannot name a stream", RULE])
        one_clean_line(err)
        # A failed first run leaves nothing it made: not the stream of the good member
        # before it, not the root.
        expect(not os.path.exists(root), "%s: the root was left: %r" % (label, os.path.exists(root) and os.listdir(root)))
        # With --ext the member is never read: ignored and counted.
        root2 = os.path.join(d, "e%d" % i)
        _, err = must(["append-tar", "--ext", "jpg", root2, t])
        expect("ignored 1 member" in err, "%s with --ext: %r" % (label, err))
        expect(sorted(os.listdir(root2)) == ["jpg", "zrec-root"], "%s with --ext: %r" % (label, os.listdir(root2)))
        # The same name given to --ext or --parse is a usage error.
        err = fails(["append-tar", "--ext", "jpg," + ext, os.path.join(d, "x%d" % i), t], rc_want=2,
                    says=["cannot name a stream"])
        expect(not any(ord(c) < 0x20 and c != "\n" for c in err), "raw control byte: %r" % err)
        fails(["append-tar", "--parse", ext + "=ints", os.path.join(d, "x%d" % i), t], rc_want=2,
              says=["cannot name a stream"])
        figures += 1
    FIGURES.append("bad extensions refused (first sample, --ext, --parse) and ignored under --ext: %d" % figures)


@case
def names_printed_through_the_escaper(d):
    root = os.path.join(d, "root")
    os.makedirs(root)
    for name in ("ok", "a\nb", "x\x1b[2J"):
        must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", os.path.join(root, name)])
    rc, out, err = run_zrec(["info", root])
    expect(rc == 0, "info: %s" % err)
    text = out.decode()
    expect("a\\x0ab" in text and "x\\x1b[2J" in text, "info table: %r" % text)
    expect("\x1b" not in text and "a\nb" not in text, "raw name in info's table: %r" % text)
    # A directory of unrelated stores names them as it likes: no warning. In a marked
    # root, a store whose name breaks the stream name rule is warned about, escaped.
    expect(err == "", "info warned about an unmarked directory: %r" % err)
    marked = make_root(d, name="marked")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", os.path.join(marked, "a\nb")])
    rc, _, err = run_zrec(["info", marked])
    expect(rc == 0 and "\x1b" not in err and "'a\\x0ab' cannot be a stream of" in err, "info's warning: %r" % err)
    rc, out, err = run_zrec(["verify", root])
    expect(rc == 0 and b"\x1b" not in out and b"a\nb" not in out and b"a\\x0ab" in out, "verify: %r" % out)
    rc, out, err = run_zrec(["digest", os.path.join(root, "a\nb")])
    expect(rc == 0 and out.decode().endswith("  %s/a\\x0ab\n" % root) and out.count(b"\n") == 1, "digest: %r" % out)

    # An append's summary quotes the root: one line.
    weird = os.path.join(d, "r\n\x1b[31mfake")
    # --codec raw: zstd streams of one tiny sample would add the first window's codec
    # warnings (escaped the same way) to the one summary line this checks.
    _, err = must(["append-tar", "--codec", "raw", weird,
                   write(os.path.join(d, "t.tar"), hostile.tar_bytes(hostile.samples(1)))])
    one_clean_line(err)
    expect("r\\x0a\\x1b[31mfake" in err, "summary: %r" % err)


# --- cat --format tar -------------------------------------------------------------------

@case
def cat_tar_output_guard(d):
    # Defect 2: the tar path returned before refuse_output_into_stores ran.
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", s])
    must(["append-stream", "-i", write(os.path.join(d, "lines"), b"a\nbb\nccc\n"), s])
    root = make_root(d)
    keys = write(os.path.join(d, "keys"), b"k0\nk1\nk2\n")
    before = {p: tree(p) for p in (s, root)}
    keys_before = open(keys, "rb").read()
    for args, says in [
        (["cat", "--format", "tar", s, "-o", os.path.join(s, "dict.zr")], "is inside store"),
        (["cat", "--format", "tar", s, "-o", os.path.join(s, "meta.zr"), "--force"], "is inside store"),
        (["cat", "--format", "tar", root, "--keys", keys, "-o", keys, "--force"], "is the input file"),
        (["cat", "--format", "tar", root, "-o", os.path.join(root, "jpg", "data_0.zr"), "--force"], "inside store"),
        (["cat", "--format", "tar", root, "-o", os.path.join(root, "new.tar")], "inside store"),
        (["cat", s, "--indices-from", keys, "-o", keys, "--force"], "is the input file"),
    ]:
        fails(args, says=["-o '%s' " % args[args.index("-o") + 1], says])
    expect({p: tree(p) for p in (s, root)} == before, "a store changed")
    expect(open(keys, "rb").read() == keys_before, "the keys file changed")
    expect(not os.path.exists(os.path.join(s, "dict.zr")), "dict.zr was created")


@case
def cat_tar_unsafe_keys(d):
    root = make_root(d)
    out = os.path.join(d, "o.tar")
    keys = write(os.path.join(d, "keys"), b"../../evil\n/abs/x\nok/a..b\n")
    fails(["cat", "--format", "tar", root, "--keys", keys, "-o", out], says=[
        "keys file '%s' line 1: the key '../../evil' would be a member name that extracts outside the directory "
        "(it has a '..' component); --absolute-names keeps such names" % keys])
    expect(not os.path.exists(out), "an output file was left")
    write(keys, b"ok\n/abs/x\nfine\n")
    fails(["cat", "--format", "tar", root, "--keys", keys, "-o", out], says=["line 2: the key '/abs/x'", "it is absolute"])
    write(keys, b"../../evil\n/abs/x\nok/a..b\n")
    must(["cat", "--format", "tar", root, "--keys", keys, "--absolute-names", "-o", out])
    with tarfile.open(out) as t:
        names = t.getnames()
    expect(names[:2] == ["../../evil.cls", "../../evil.jpg"] and "/abs/x.jpg" in names and "ok/a..b.cls" in names,
           "member names kept: %r" % names)
    write(keys, b"a\\\\x\nb\0c\nd\n")
    fails(["cat", "--format", "tar", root, "--keys", keys, "--absolute-names", "-o", out + "2"],
          says=["line 2: the key 'b\\x00c' holds a NUL byte"])
    fails(["cat", root, "--absolute-names"], rc_want=2, says=["--absolute-names is used with --format tar only"])


# --- stdout closed at start ---------------------------------------------------------------

@case
def stdout_closed_at_start(d):
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    must(["append-stream", "-i", write(os.path.join(d, "lines"), b"a\nbb\n"), s])
    write(os.path.join(d, "a.npy"), b"")
    np.save(os.path.join(d, "a.npy"), np.frombuffer(b"xyz", dtype=np.uint8))
    before = tree(s)
    z = ZREC
    msg = "stdout was closed when zrec started (>&-): the output would be lost; give -o FILE, or leave stdout open"
    for cmd, want in [
        ("cat s", "zrec cat: " + msg),
        ("cat --format tar s", "zrec cat: " + msg),
        ("info s", "zrec info: " + msg),
        ("verify s", "zrec verify: " + msg),
        ("digest s", "zrec digest: " + msg),
        ("train-dict --tier small s -o -", "zrec train-dict: " + msg),
        ("completion bash", "zrec completion: " + msg),
        ("append-npy --json s a.npy", "zrec append-npy: stdout was closed when zrec started (>&-): the --json "
                                      "object would be lost; give -o FILE, or leave stdout open"),
    ]:
        rc, _, err = shell("%s %s >&-" % (z, cmd), d)
        expect(rc == 1 and err == want + "\n", "%s >&-: rc %d, stderr %r" % (cmd, rc, err))
    expect(tree(s) == before, "the store changed")
    # Output to a file, or no output at all: the command runs (fd 1 still never reused).
    rc, _, err = shell("%s cat --format npy s -o out.npy >&- && %s append-npy s a.npy >&-" % (z, z), d)
    expect(rc == 0 and os.path.getsize(os.path.join(d, "out.npy")) > 0, "cat -o / append-npy >&-: %s" % err)
    expect(byte_records(s) == [b"a", b"bb", b"xyz"], "the append with stdout closed")


# --- --parse, read a chunk at a time ---------------------------------------------------------

@case
def parse_streams_text_in_chunks(d):
    rng = np.random.default_rng(20)
    ints = rng.integers(-10**15, 10**15, size=250000)  # ~4 MiB of text: numbers cut by the 1 MiB chunks
    floats = rng.standard_normal(120000) * 1e5
    text_i = " ".join(str(v) for v in ints).encode() + b"\n"
    text_f = "\n".join(repr(float(v)) for v in floats).encode()
    t = write(os.path.join(d, "t.tar"), hostile.tar_bytes([("0.cls", text_i), ("0.f", text_f), ("1.cls", b" 7 "),
                                                          ("1.f", b"-0.5")]))
    root = os.path.join(d, "root")
    # 250000 numbers are 2 MiB of <i8: a 1 MiB window refuses the record, a 2 MiB one holds it.
    fails(["append-tar", "--parse", "cls=ints,f=floats", "--window-mib", "1", root, t], says=[
        "member '0.cls' holds more than 131072 numbers, more than a 1 MiB window holds (--parse cls); raise "
        "--window-mib for larger records"])
    must(["append-tar", "--parse", "cls=ints,f=floats", "--window-mib", "2", root, t])
    recs = byte_records(os.path.join(root, "cls"))
    expect(recs[0] == ints.astype("<i8").tobytes() and recs[1] == np.array([7], "<i8").tobytes(), "ints differ")
    recs = byte_records(os.path.join(root, "f"))
    expect(recs[0] == floats.astype("<f8").tobytes() and recs[1] == np.array([-0.5], "<f8").tobytes(),
           "floats differ")
    # A Dense scalar stream: refused at the second number, whatever follows.
    sc = os.path.join(d, "sc")
    os.makedirs(sc)
    must(["create", "--dense", "--dtype", "<i4", "--shape", "scalar", os.path.join(sc, "cls")])
    before = tree(sc)
    t2 = write(os.path.join(d, "t2.tar"), hostile.tar_bytes([("0.cls", b"5"), ("1.cls", b"1 2 " * 1000)]))
    fails(["append-tar", "--adopt", "--parse", "cls=ints", sc, t2], says=[
        "member '1.cls' holds more than one number; stream '%s/cls' is a Dense scalar store" % sc])
    expect(tree(sc) == before, "the scalar stream changed")
    # A number across a chunk's end waits for the rest, up to 4096 characters: not 3 MiB of them.
    t3 = write(os.path.join(d, "t3.tar"), hostile.tar_bytes([("0.cls", b"1 " + b"0" * (3 << 20) + b"5")]))
    fails(["append-tar", "--parse", "cls=ints", os.path.join(d, "r3"), t3], says=[
        "member '0.cls' holds a number of more than 4096 characters (--parse cls)"])


# --- HDF5 --------------------------------------------------------------------------------------

@case
def hdf5_external_data_refused(d):
    import h5py
    ext = write(os.path.join(d, "ext.bin"), bytes(range(256)) * 4)
    other = os.path.join(d, "other.h5")
    with h5py.File(other, "w") as f:
        f.create_dataset("x", data=np.arange(24, dtype="<i4").reshape(6, 4))
    h5 = os.path.join(d, "main.h5")
    with h5py.File(h5, "w") as f:
        f.create_dataset("raw", shape=(8, 128), dtype="u1", external=[(ext, 0, 1024)])
        f["link"] = h5py.ExternalLink(other, "/x")
        f["soft"] = h5py.SoftLink("/link")
        layout = h5py.VirtualLayout(shape=(6, 4), dtype="<i4")
        layout[:] = h5py.VirtualSource(other, "x", shape=(6, 4))
        f.create_virtual_dataset("virtual", layout)
        f.create_dataset("plain", data=np.ones((3, 2), "<i2"))
    allow = "; --allow-external reads it (only for files you trust: it reads whatever file the HDF5 file names)"
    cases = [
        ("raw", "dataset 'raw' of '%s' keeps its values in 1 external file ('%s')" % (h5, ext), ext_bytes := open(
            ext, "rb").read()),
        ("link", "'link' in '%s' is an external link (into another file)" % h5, np.arange(24, dtype="<i4").tobytes()),
        ("soft", "'soft' in '%s' leads through an external link (into another file)" % h5,
         np.arange(24, dtype="<i4").tobytes()),
        ("virtual", "dataset 'virtual' of '%s' is a virtual dataset (its values come from other datasets, of this or "
                    "other files)" % h5, np.arange(24, dtype="<i4").tobytes()),
    ]
    for name, says, want in cases:
        s = os.path.join(d, "s_" + name)
        err = fails(["append-h5", "--create", s, h5, name], says=[says + allow])
        one_clean_line(err)
        expect(not os.path.exists(s), "%s: the store was created" % name)
        must(["append-h5", "--create", "--allow-external", s, h5, name])
        expect(b"".join(byte_records(s)) == want, "%s with --allow-external: the values differ" % name)
    must(["append-h5", "--create", os.path.join(d, "plain"), h5, "plain"])
    FIGURES.append("HDF5 external raw data, external link (direct, through a soft link), virtual dataset: refused, "
                   "read with --allow-external")
    del ext_bytes


@case
def hdf5_band_of_chunks_must_fit_the_window(d):
    import h5py
    h5 = os.path.join(d, "bands.h5")
    with h5py.File(h5, "w") as f:
        # One chunk of 256 rows x 64 KiB = 16 MiB decompressed, from a file of a few KiB.
        dset = f.create_dataset("x", shape=(512, 65536), dtype="u1", chunks=(256, 65536), compression="gzip")
        dset[0:256] = 7
    expect(os.path.getsize(h5) < 200000, "the file is small")
    s = os.path.join(d, "s")
    fails(["append-h5", "--create", "--window-mib", "4", s, h5, "x"], says=[
        "dataset 'x' of '%s' is stored in chunks of 256 rows, and the chunks of those rows (all other axes) are "
        "16777216 bytes decompressed, more than the window (4194304 bytes): give --window-mib 16 or more" % h5])
    expect(not os.path.exists(s), "the store was created")
    must(["append-h5", "--create", "--window-mib", "16", s, h5, "x"])
    rows = records(s)[0]  # a Dense store: one array of every row
    expect(rows.shape == (512, 65536) and (rows[:256] == 7).all() and (rows[256:] == 0).all(), "the rows differ")


# --- LMDB --------------------------------------------------------------------------------------

@case
def lmdb_damaged_files_are_errors(d):
    items = [(b"k%03d" % i, bytes([i]) * (1 + i * 13 % 300)) for i in range(3)] + [(b"big", bytes(range(256)) * 24)]
    good = os.path.join(d, "good.mdb")
    hostile.lmdb_env(good, items)
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    before = tree(s)
    for name, damage, says in [
        ("value", lambda p: hostile.lmdb_value_beyond_file(p, b"big"),
         "is damaged: the value of key 'big' (2147418112 bytes) lies outside its data file (20480 bytes)"),
        ("pages", hostile.lmdb_pages_beyond_file,
         "is damaged: its meta page claims 5 pages of 4096 bytes, but its data file holds 16384 bytes"),
        ("node", hostile.lmdb_node_outside_page,
         "is damaged: reading its entries went outside its data file (before its first entry)"),
        ("psize", lambda p: hostile.lmdb_page_size(p, 0),
         "is damaged: its meta page claims pages of 0 bytes (a power of two, 512 to 65536)"),
        ("psize2", lambda p: hostile.lmdb_page_size(p, 8192, meta=1),
         "is damaged: its meta pages claim pages of 4096 and 8192 bytes"),
    ]:
        env = os.path.join(d, name + ".mdb")
        hostile.lmdb_env(env, items if name != "node" else items[:3])
        damage(env)
        rc, _, err = run_zrec(["append-lmdb", s, env])
        expect(rc == 1, "%s: rc %d (a signal is negative): %s" % (name, rc, err))
        expect("zrec append-lmdb: LMDB environment '%s' %s" % (env, says) in err, "%s: %r" % (name, err))
        one_clean_line(err)
        expect(tree(s) == before, "%s: the store changed" % name)
    must(["append-lmdb", s, good])
    expect(byte_records(s) == [v for _, v in sorted(items)], "the good environment's values")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-hostile-", figures=FIGURES))
