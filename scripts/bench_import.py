#!/usr/bin/python3
"""Import throughput against the natural baselines, measured in the same run (warm page
cache, everything on tmpfs, best of --repeat runs):
- `zrec append-tar` against `tar -xf` of the same tar into a tmpfs directory;
- `zrec append-lmdb` against python-lmdb iterating the same environment (a cursor over
  every value, touching its bytes);
- `zrec append-h5` against h5py reading the same dataset (chunk-aligned slices of rows,
  as append-h5 reads them), contiguous and gzip+shuffle chunked;
- a root's streams fed at once (append-npy ROOT --stream, append-h5 ROOT --dataset,
  append-lmdb ROOT --db) against the same appends made stream by stream into stores of
  the same schemas (one command per stream, their times added): "at once / stream by
  stream" is the ratio, goal <= 1.1x.

The zstd columns have a second baseline: the same read plus a bare per-record
`ZSTD_compressCCtx` loop at level 3 over the same records (as the store compresses them:
a Ragged record with its 8-byte shape prefix) on the same number of lanes as zrec's
writes (scripts/bench_import/zstd_records.c, timed inside the program, input in memory),
so "vs read+loop" reads as the fraction of "read it, then compress it" zrec reaches.

Two shapes of WebDataset shard: many small samples (jpg-like random bytes ~ 4 KiB plus
a text label), and fewer large ones (~ 256 KiB). Stores are written with --codec raw
(the cost of the import itself) and zstd (the default).

Usage: ZREC=build/zrec /usr/bin/python3 scripts/bench_import.py [--mib N] [--h5-mib N] [--root-mib N]
           [--repeat R] [--only tar,lmdb,h5,root] [--zrec-before OLD/zrec]
Prints a Markdown table on stdout.
"""
import argparse
import io
import os
import random
import shutil
import subprocess
import tarfile
import tempfile
import time

ZREC = os.environ.get("ZREC", "build/zrec")
HERE = os.path.dirname(os.path.abspath(__file__))
# zrec's write lanes on this machine (docs/format.md section 9: 3/4 of the CPUs, at least 1).
WRITE_LANES = max(1, len(os.sched_getaffinity(0)) * 3 // 4)


def build_zstd_records(work):
    exe = os.path.join(work, "zstd_records")
    subprocess.run(["cc", "-O2", "-pthread", os.path.join(HERE, "bench_import", "zstd_records.c"), "-lzstd", "-o", exe],
                   check=True)
    return exe


def write_records(path, records):
    """The records, each preceded by its 8-byte little-endian length (zstd_records' input)."""
    with open(path, "wb") as f:
        for r in records:
            f.write(len(r).to_bytes(8, "little"))
            f.write(r)


def bare_zstd_loop(args, work, records, ragged):
    """Best seconds of the bare per-record ZSTD_compressCCtx loop over records (level 3,
    WRITE_LANES lanes), best of args.repeat."""
    path = os.path.join(work, "records.bin")
    write_records(path, records)
    cmd = [args.zstd_records, path, "3", str(WRITE_LANES)] + (["ragged"] if ragged else [])
    best = min(float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()[0])
               for _ in range(args.repeat))
    os.remove(path)
    return best


def make_tar(path, total_bytes, member_bytes, seed):
    rng = random.Random(seed)
    n = max(1, total_bytes // member_bytes)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for i in range(n):
            for ext, data in (("jpg", rng.randbytes(rng.randrange(member_bytes // 2, member_bytes * 3 // 2))),
                              ("cls", b"%d" % rng.randrange(1000))):
                ti = tarfile.TarInfo("part/%08d.%s" % (i, ext))
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    return n


def best_of(repeat, fn):
    """(best wall seconds, best CPU seconds) over `repeat` runs."""
    runs = [fn() for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def timed(cmd, cleanup):
    """Wall and CPU (user + system) seconds of one run: on a loaded machine the CPU
    time is the steadier figure."""
    cleanup()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if status != 0:
        raise SystemExit("%s failed (status %d)" % (" ".join(cmd), status))
    return wall, ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=128, help="tar size per shape, MiB")
    ap.add_argument("--h5-mib", type=int, default=200, help="HDF5 dataset size, MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--root-mib", type=int, default=64, help="a root's samples, MiB (mostly its image stream)")
    ap.add_argument("--only", default="tar,lmdb,h5,root", help="which imports to time (comma-separated)")
    ap.add_argument("--zrec-before", help="a second zrec binary, timed in the same run (rows marked 'before')")
    args = ap.parse_args()
    args.builds = [("", ZREC)] + ([(" (before)", args.zrec_before)] if args.zrec_before else [])
    only = set(args.only.split(","))
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    work = tempfile.mkdtemp(prefix="zrec-bench-import-", dir=shm)
    try:
        args.zstd_records = build_zstd_records(work)
        if "tar" in only:
            bench_tar(args, work)
        if "lmdb" in only:
            bench_lmdb(args, work)
        if "h5" in only:
            bench_h5(args, work)
        if "root" in only:
            bench_root(args, work)
        print("\nMiB/s: wall clock. ratio: baseline time / zrec time, wall and CPU (user + system) "
              "(above 1: zrec is faster). vs read+loop: (baseline's wall time + the bare zstd loop's) / zrec zstd's "
              "wall time, on %d write lane(s). CPUs: %d, load average %.1f." % (
                  WRITE_LANES, os.cpu_count(), os.getloadavg()[0]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def tar_members(tar):
    with tarfile.open(tar) as t:
        return [t.extractfile(m).read() for m in t.getmembers() if m.isfile()]


def bench_tar(args, work):
    print("| shard | samples | tar MiB | `tar -xf` to tmpfs | append-tar raw | ratio (wall, CPU) "
          "| append-tar zstd | ratio (wall, CPU) | bare zstd loop | vs read+loop |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, member in (("small (4 KiB)", 4096), ("large (256 KiB)", 256 << 10)):
        tar = os.path.join(work, "in.tar")
        n = make_tar(tar, args.mib << 20, member, 1)
        mib = os.path.getsize(tar) / (1 << 20)
        out = os.path.join(work, "out")

        def clean():
            shutil.rmtree(out, ignore_errors=True)

        def clean_mk():
            clean()
            os.makedirs(out)

        with open(tar, "rb") as f:
            f.read()  # warm the page cache
        t_tar = best_of(args.repeat, lambda: timed(["tar", "-xf", tar, "-C", out], clean_mk))
        t_loop = bare_zstd_loop(args, work, tar_members(tar), ragged=True)
        for label, zrec in args.builds:
            t_raw = best_of(args.repeat, lambda: timed([zrec, "append-tar", "--codec", "raw", out, tar], clean))
            t_zstd = best_of(args.repeat, lambda: timed([zrec, "append-tar", out, tar], clean))
            clean()
            print("| %s | %d | %.0f | %.0f MiB/s | %.0f MiB/s | %.2fx, %.2fx | %.0f MiB/s | %.2fx, %.2fx | %.3f s "
                  "| %.2f |" % (
                name + label, n, mib, mib / t_tar[0], mib / t_raw[0], t_tar[0] / t_raw[0], t_tar[1] / t_raw[1],
                mib / t_zstd[0], t_tar[0] / t_zstd[0], t_tar[1] / t_zstd[1], t_loop, (t_tar[0] + t_loop) / t_zstd[0]))
        os.remove(tar)


def bench_lmdb(args, work):
    # LMDB: values of ~4 KiB.
    import lmdb  # python3-lmdb
    envp = os.path.join(work, "env")
    rng = random.Random(2)
    env = lmdb.open(envp, map_size=1 << 34)
    n = (args.mib << 20) // 4096
    with env.begin(write=True) as txn:
        for i in range(n):
            txn.put(b"%010d" % i, rng.randbytes(rng.randrange(2048, 6144)))
    env.close()
    mib = sum(os.path.getsize(os.path.join(envp, f)) for f in os.listdir(envp)) / (1 << 20)
    iterate = ("import lmdb,sys\nenv=lmdb.open(sys.argv[1],readonly=True,lock=False)\nt=0\n"
               "with env.begin() as txn:\n    for k,v in txn.cursor():\n        t+=len(v)+v[-1]\n")
    out = os.path.join(work, "out")

    def fresh(codec):
        def make():
            shutil.rmtree(out, ignore_errors=True)
            subprocess.run([ZREC, "create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", codec, out],
                           check=True)
        return make

    t_py = best_of(args.repeat, lambda: timed(["/usr/bin/python3", "-c", iterate, envp], lambda: None))
    env = lmdb.open(envp, readonly=True, lock=False)
    with env.begin() as txn:
        values = [bytes(v) for _, v in txn.cursor()]
    env.close()
    t_loop = bare_zstd_loop(args, work, values, ragged=True)
    del values
    print("\n| environment | values | MiB | python-lmdb iterating | append-lmdb raw | ratio (wall, CPU) "
          "| append-lmdb zstd | ratio (wall, CPU) | bare zstd loop | vs read+loop |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, zrec in args.builds:
        t_raw = best_of(args.repeat, lambda: timed([zrec, "append-lmdb", out, envp], fresh("raw")))
        t_zstd = best_of(args.repeat, lambda: timed([zrec, "append-lmdb", out, envp], fresh("zstd")))
        shutil.rmtree(out, ignore_errors=True)
        print("| ~4 KiB values%s | %d | %.0f | %.0f MiB/s | %.0f MiB/s | %.2fx, %.2fx | %.0f MiB/s | %.2fx, %.2fx "
              "| %.3f s | %.2f |" % (
                  label, n, mib, mib / t_py[0], mib / t_raw[0], t_py[0] / t_raw[0], t_py[1] / t_raw[1],
                  mib / t_zstd[0], t_py[0] / t_zstd[0], t_py[1] / t_zstd[1], t_loop, (t_py[0] + t_loop) / t_zstd[0]))


def bench_h5(args, work):
    # HDF5: float32 rows of 4 KiB (small integers, so gzip and zstd have work to do).
    import h5py  # python3-h5py
    import numpy as np
    h5 = os.path.join(work, "in.h5")
    rows = (args.h5_mib << 20) // 4096
    a = np.random.default_rng(3).integers(0, 256, (rows, 1024)).astype("<f4")
    with h5py.File(h5, "w") as f:
        f.create_dataset("contiguous", data=a)
        f.create_dataset("gzip", data=a, chunks=(64, 1024), compression="gzip", shuffle=True)
    del a
    mib = (rows * 4096) / (1 << 20)
    # h5py reading every row, in the windows append-h5 uses (64 MiB, whole chunks).
    read = ("import h5py,sys\nd=h5py.File(sys.argv[1],'r')[sys.argv[2]]\nstep=16384\nt=0\n"
            "for i in range(0,d.shape[0],step):\n    t+=int(d[i:i+step][-1,-1])\n")
    out = os.path.join(work, "out")

    def clean():
        shutil.rmtree(out, ignore_errors=True)

    with h5py.File(h5, "r") as f:
        rows_bytes = f["contiguous"][...].tobytes()
    t_loop = bare_zstd_loop(args, work, (rows_bytes[i:i + 4096] for i in range(0, len(rows_bytes), 4096)),
                            ragged=False)
    del rows_bytes
    print("\n| dataset | rows | MiB | h5py reading | append-h5 raw | ratio (wall, CPU) "
          "| append-h5 zstd | ratio (wall, CPU) | bare zstd loop | vs read+loop |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with open(h5, "rb") as f:
        while f.read(1 << 24):
            pass  # warm the page cache
    for name in ("contiguous", "gzip"):
        t_py = best_of(args.repeat, lambda: timed(["/usr/bin/python3", "-c", read, h5, name], lambda: None))
        for label, zrec in args.builds:
            t_raw = best_of(args.repeat, lambda: timed(
                [zrec, "append-h5", "--create", "--codec", "raw", out, h5, name], clean))
            t_zstd = best_of(args.repeat, lambda: timed([zrec, "append-h5", "--create", out, h5, name], clean))
            clean()
            print("| %s, 4 KiB rows%s | %d | %.0f | %.0f MiB/s | %.0f MiB/s | %.2fx, %.2fx | %.0f MiB/s | %.2fx, %.2fx "
                  "| %.3f s | %.2f |" % (
                      name, label, rows, mib, mib / t_py[0], mib / t_raw[0], t_py[0] / t_raw[0], t_py[1] / t_raw[1],
                      mib / t_zstd[0], t_py[0] / t_zstd[0], t_py[1] / t_zstd[1], t_loop,
                      (t_py[0] + t_loop) / t_zstd[0]))


# A root's streams: name -> (zrec create arguments, HDF5/LMDB source of sample i).
ROOT_STREAMS = {
    "image": ["--ragged", "--ndim", "1", "--dtype", "|u1"],
    "label": ["--dense", "--shape", "scalar", "--dtype", "<i8"],
    "embedding": ["--dense", "--shape", "4", "--dtype", "<f4"],
    "tokens": ["--ragged", "--ndim", "1", "--dtype", "<i4"],
}


def bench_root(args, work):
    """Every stream of a root at once against the same appends stream by stream."""
    import h5py  # python3-h5py
    import lmdb  # python3-lmdb
    import numpy as np
    rng = np.random.default_rng(4)
    n = (args.root_mib << 20) // 2600  # images of 1-4 KiB (random, as JPEGs are), 2.6 KiB with the rest
    images = [rng.integers(0, 256, int(k), dtype=np.uint8) for k in rng.integers(1024, 4096, n)]
    labels = rng.integers(0, 1000, n).astype("<i8")
    emb = rng.standard_normal((n, 4)).astype("<f4")
    tokens = [rng.integers(0, 50000, int(k)).astype("<i4") for k in rng.integers(8, 64, n)]
    data = {"image": images, "label": labels, "embedding": emb, "tokens": tokens}
    # The same samples as .npy files (one per stream), one HDF5 file (a dataset per
    # stream) and one LMDB environment (a named database per stream, keys in order).
    npy = {}
    for name, values in data.items():
        npy[name] = os.path.join(work, name + ".npy")
        with open(npy[name], "wb") as f:
            if isinstance(values, list):
                for v in values:
                    np.save(f, v)
            else:
                np.save(f, values)
    h5 = os.path.join(work, "root.h5")
    with h5py.File(h5, "w") as f:
        for name, values in data.items():
            if isinstance(values, list):
                d = f.create_dataset(name, (n,), dtype=h5py.vlen_dtype(values[0].dtype), chunks=(min(n, 4096),))
                d[...] = np.array(values, dtype=object)
            else:
                f.create_dataset(name, data=values, chunks=(min(n, 65536),) + values.shape[1:])
    envp = os.path.join(work, "root-env")
    env = lmdb.open(envp, map_size=1 << 34, max_dbs=8)
    with env.begin(write=True) as txn:
        for name, values in data.items():
            db = env.open_db(name.encode(), txn=txn)
            for i in range(n):
                txn.put(b"%010d" % i, np.asarray(values[i]).tobytes(), db=db)
    env.close()
    del data, images, tokens
    mib = sum(os.path.getsize(p) for p in npy.values()) / (1 << 20)
    out = os.path.join(work, "out")

    def fresh(root, names):
        def make():
            shutil.rmtree(out, ignore_errors=True)
            os.mkdir(out)
            for name in names:
                subprocess.run([ZREC, "create"] + ROOT_STREAMS[name] + [os.path.join(out, name)], check=True)
            if root:
                subprocess.run([ZREC, "adopt", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return make

    def one_by_one(zrec, command_of, names):
        """The appends of `names` one after another, into stores of a directory that is
        no root: each its own process, their wall and CPU seconds added."""
        fresh(False, names)()
        walls = cpus = 0.0
        for name in names:
            wall, cpu = timed([zrec] + command_of(name, os.path.join(out, name)), lambda: None)
            walls += wall
            cpus += cpu
        return walls, cpus

    # append-lmdb into a single store takes bytes (Ragged '|u1') or Dense records only:
    # tokens ('<i4' Ragged) stream by stream has no such form, so that root lacks it.
    lmdb_streams = [s for s in ROOT_STREAMS if s != "tokens"]
    forms = [
        ("append-npy, 4 streams", lambda: ["append-npy", out] + [a for s in ROOT_STREAMS
                                                                  for a in ("--stream", "%s=%s" % (s, npy[s]))],
         lambda s, store: ["append-npy", store, npy[s]]),
        ("append-h5, 4 streams", lambda: ["append-h5", out, h5] + [a for s in ROOT_STREAMS
                                                                    for a in ("--dataset", "%s=%s" % (s, s))],
         lambda s, store: ["append-h5", store, h5, s]),
        ("append-lmdb, 3 streams", lambda: ["append-lmdb", out, envp] + [a for s in lmdb_streams
                                                                          for a in ("--db", "%s=%s" % (s, s))],
         lambda s, store: ["append-lmdb", "--db", s, store, envp] + (["--dense"] if s != "image" else [])),
    ]
    print("\n| root of %d samples (%.0f MiB as .npy) | at once | stream by stream | at once / stream by stream "
          "(wall, CPU) | goal |" % (n, mib))
    print("|---|---|---|---|---|")
    for form, at_once, per_stream in forms:
        for label, zrec in args.builds:
            names = lmdb_streams if form.startswith("append-lmdb") else list(ROOT_STREAMS)
            t_once = best_of(args.repeat, lambda: timed([zrec] + at_once(), fresh(True, names)))
            runs = [one_by_one(zrec, per_stream, names) for _ in range(args.repeat)]
            t_each = min(r[0] for r in runs), min(r[1] for r in runs)
            shutil.rmtree(out, ignore_errors=True)
            print("| %s%s | %.2f s | %.2f s | %.2fx, %.2fx | <= 1.1x |" % (
                form, label, t_once[0], t_each[0], t_once[0] / t_each[0], t_once[1] / t_each[1]))


if __name__ == "__main__":
    main()
