#!/usr/bin/python3
"""zrec beside its peers on the loaderx store workloads, in one run.

For each workload, `zrec bench --export` generates the records and builds the zrec
stores (raw, zstd, zstd_dict; their write figures come from that run). The same
records, read back from the exported .npy files, are then written to

  npy-mmap-raw   one .npy (Dense) or a flat payload .npy + offsets (Ragged), np.load(mmap_mode='r')
  hdf5-raw       h5py, one chunk per record (Dense: chunks=(1, *item_shape); vision-var: one
                 dataset per record; tokens-var: a vlen int32 dataset, one element per chunk)
  hdf5-gzip      the same, gzip level 4 (Dense and vision-var only)
  lmdb-raw       py-lmdb, one key per record (8-byte big-endian id), the logical record as value

and all backends are gathered in random IID batches (uniform ids, with replacement),
interleaved in rounds so that a noisy machine slows them alike. zrec's gathers in the
rounds are `zrec bench STORE --rounds 1` runs on the kept stores. Each gather returns
the batch in one buffer, as zrec's does: npy fancy indexing m[idx]; Ragged npy
np.concatenate of the slices; HDF5 one read_direct per record into the batch buffer
(h5py's fancy indexing is about 100x slower here), per-record reads for Ragged; LMDB
b''.join of the values.

Peers are single-threaded Python, as in the loaderx tables; zrec uses its read lanes.
Prints the loaderx table layout plus each row's gather ratio to zrecord-raw (or, for
compressed rows, zrecord-zstd). Needs Debian's python3-numpy, python3-h5py, python3-lmdb.

  scripts/bench_peers.py --zrec build/zrec                 # all workloads, loaderx sizes
  scripts/bench_peers.py -w tokens --records 20000 --seconds 1
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MiB = 1024.0 * 1024.0
WORKLOADS = ["vision", "vision-var", "tokens", "tokens-var"]


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


def percentiles(times):
    if not times:
        return 0.0, 0.0, 0.0
    s = sorted(times)

    def rank(q):
        import math
        return s[min(len(s), max(1, math.ceil(q * len(s)))) - 1] * 1e3

    return rank(0.50), rank(0.95), rank(0.99)


class Corpus:
    """The exported records of one workload."""

    def __init__(self, export_dir, workload):
        d = os.path.join(export_dir, workload)
        self.dense = os.path.exists(os.path.join(d, "records.npy"))
        if self.dense:
            self.records = np.load(os.path.join(d, "records.npy"), mmap_mode="r")
            self.n = self.records.shape[0]
            self.item_shape = self.records.shape[1:]
            self.dtype = self.records.dtype
            self.logical_bytes = self.records.nbytes
        else:
            self.payload = np.load(os.path.join(d, "payload.npy"), mmap_mode="r")
            self.offsets = np.load(os.path.join(d, "offsets.npy"))
            self.shapes = np.load(os.path.join(d, "shapes.npy"))
            self.n = len(self.offsets) - 1
            self.ndim = self.shapes.shape[1]
            self.dtype = self.payload.dtype
            self.logical_bytes = self.payload.nbytes + 8 * self.ndim * self.n

    def record(self, i):
        if self.dense:
            return np.asarray(self.records[i])
        return np.asarray(self.payload[self.offsets[i]:self.offsets[i + 1]]).reshape(tuple(self.shapes[i]))

    def logical(self, i):
        """The logical record as zrec stores it: Ragged = u64 dims + payload."""
        if self.dense:
            return self.records[i].tobytes()
        return self.shapes[i].astype("<u8").tobytes() + self.payload[self.offsets[i]:self.offsets[i + 1]].tobytes()


# --- peers: each has write() -> seconds, open(), gather(idx) -> bytes, close() ---------

class Peer:
    """A format zrec is measured against: its row's name, whether it compresses, and the
    file or directory at `path` that write() fills (its size is the row's disk bytes)."""

    def __init__(self, corpus, path, name, compressed=False):
        self.c, self.path, self.name, self.compressed = corpus, path, name, compressed


class NpyPeer(Peer):
    def __init__(self, corpus, root):
        super().__init__(corpus, os.path.join(root, "npy"), "npy-mmap-raw")

    def write(self):
        os.makedirs(self.path)
        t0 = time.perf_counter()
        if self.c.dense:
            np.save(os.path.join(self.path, "records.npy"), np.asarray(self.c.records))
        else:
            np.save(os.path.join(self.path, "payload.npy"), np.asarray(self.c.payload))
            np.save(os.path.join(self.path, "offsets.npy"), self.c.offsets)
            np.save(os.path.join(self.path, "shapes.npy"), self.c.shapes)
        return time.perf_counter() - t0

    def open(self):
        if self.c.dense:
            self.m = np.load(os.path.join(self.path, "records.npy"), mmap_mode="r")
        else:
            self.m = np.load(os.path.join(self.path, "payload.npy"), mmap_mode="r")
            self.offs = np.load(os.path.join(self.path, "offsets.npy"))

    def gather(self, idx):
        if self.c.dense:
            return self.m[idx].nbytes
        m, o = self.m, self.offs
        out = np.concatenate([m[o[i]:o[i + 1]] for i in idx])
        return out.nbytes + 8 * self.c.ndim * len(idx)

    def close(self):
        self.m = None


class Hdf5Peer(Peer):
    def __init__(self, corpus, root, gzip):
        name = "hdf5-gzip" if gzip else "hdf5-raw"
        super().__init__(corpus, os.path.join(root, name + ".h5"), name, compressed=gzip)
        self.gzip = gzip
        self.vlen = not corpus.dense and corpus.ndim == 1

    def write(self):
        import h5py
        c = self.c
        kw = {"compression": "gzip", "compression_opts": 4} if self.gzip else {}
        t0 = time.perf_counter()
        with h5py.File(self.path, "w") as f:
            if c.dense:
                ds = f.create_dataset("records", shape=(c.n,) + c.item_shape, dtype=c.dtype,
                                      chunks=(1,) + c.item_shape, **kw)
                step = max(1, (64 << 20) // max(1, c.records[0].nbytes))
                for first in range(0, c.n, step):
                    ds[first:first + step] = c.records[first:first + step]
            elif self.vlen:
                ds = f.create_dataset("records", shape=(c.n,), dtype=h5py.vlen_dtype(c.dtype), chunks=(1,), **kw)
                step = 65536
                for first in range(0, c.n, step):
                    end = min(c.n, first + step)
                    block = np.empty(end - first, dtype=object)
                    for i in range(first, end):
                        block[i - first] = np.asarray(c.payload[c.offsets[i]:c.offsets[i + 1]])
                    ds[first:end] = block
            else:
                g = f.create_group("records")
                for i in range(c.n):
                    rec = c.record(i)
                    g.create_dataset(str(i), data=rec, chunks=rec.shape if self.gzip else None, **kw)
        return time.perf_counter() - t0

    def open(self):
        import h5py
        self.f = h5py.File(self.path, "r")
        self.ds = self.f["records"]
        self.out = None

    def gather(self, idx):
        if self.c.dense:
            # One read_direct per record into the batch buffer: h5py's fancy indexing
            # (ds[sorted unique ids]) measured about 100x slower on these chunked datasets.
            if self.out is None or self.out.shape[0] != len(idx):
                self.out = np.empty((len(idx),) + self.c.item_shape, dtype=self.c.dtype)
            ds, out = self.ds, self.out
            for k, i in enumerate(idx):
                ds.read_direct(out, np.s_[i:i + 1], np.s_[k:k + 1])
            return out.nbytes
        if self.vlen:
            ds = self.ds
            out = np.concatenate([ds[i] for i in idx])
            return out.nbytes + 8 * len(idx)
        g = self.ds
        total = 0
        for i in idx:
            total += g[str(i)][()].nbytes + 8 * self.c.ndim
        return total

    def close(self):
        self.f.close()


class LmdbPeer(Peer):
    def __init__(self, corpus, root):
        super().__init__(corpus, os.path.join(root, "lmdb"), "lmdb-raw")

    def write(self):
        import lmdb
        c = self.c
        t0 = time.perf_counter()
        env = lmdb.open(self.path, map_size=max(1 << 30, 3 * c.logical_bytes), subdir=True, sync=False,
                        metasync=False, writemap=False)
        first, step = 0, 4096
        while first < c.n:
            with env.begin(write=True) as txn:
                for i in range(first, min(c.n, first + step)):
                    txn.put(int(i).to_bytes(8, "big"), c.logical(i), append=True)
            first += step
        env.close()
        return time.perf_counter() - t0

    def open(self):
        import lmdb
        self.env = lmdb.open(self.path, readonly=True, lock=False, subdir=True)
        self.keys = [int(i).to_bytes(8, "big") for i in range(self.c.n)]

    def gather(self, idx):
        keys = self.keys
        with self.env.begin(buffers=False) as txn:
            get = txn.get
            buf = b"".join([get(keys[i]) for i in idx])
        return len(buf)

    def close(self):
        self.env.close()


def run_zrec(zrec, args):
    out = subprocess.run([zrec] + args, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zrec", default=os.environ.get("ZREC", "build/zrec"), help="zrec binary [build/zrec]")
    ap.add_argument("-w", "--workload", action="append", choices=WORKLOADS, help="repeatable [all four]")
    ap.add_argument("-n", "--records", type=int, help="records per workload [loaderx sizes]")
    ap.add_argument("--batch", type=int, default=256, help="records per gather batch [256]")
    ap.add_argument("--seconds", type=float, default=2.0, help="timed gathering per backend [2]")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds [4]")
    ap.add_argument("--threads", type=int, help="zrec lanes [docs/format.md §9 budgets]")
    ap.add_argument("--dir", help="scratch directory [$TMPDIR or /tmp]")
    ap.add_argument("--peers", default="npy,hdf5,lmdb", help="comma-separated subset of npy,hdf5,lmdb")
    ap.add_argument("--codecs", default="raw,zstd,zstd_dict", help="zrec codecs, comma-separated: raw, zstd, zstd_dict, auto (a store created with "
                    "--codec auto) [raw,zstd,zstd_dict]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    a = ap.parse_args()

    peers_wanted = set(a.peers.split(",")) if a.peers else set()
    workloads = a.workload or WORKLOADS
    scratch = tempfile.mkdtemp(prefix="zrec-peers-", dir=a.dir)
    threads = ["--threads", str(a.threads)] if a.threads else []
    report = {"workloads": []}
    try:
        for w in workloads:
            root = os.path.join(scratch, w)
            os.makedirs(root)
            size = ["--records", str(a.records)] if a.records else []
            print(f"bench_peers: {w}: zrec bench (write, export)", file=sys.stderr)
            zb = run_zrec(a.zrec, threads + ["bench", "--json", "-w", w, "--batch", str(a.batch), "--seconds", "0.2",
                                             "--rounds", "1", "--keep", "--dir", root, "-c", a.codecs, "--export",
                                             os.path.join(root, "export"), "--seed", str(a.seed)] + size)
            report.setdefault("environment", zb["environment"])
            wr = zb["workloads"][0]
            corpus = Corpus(os.path.join(root, "export"), w)
            rows = []  # dicts: backend, write_s, disk, gather fn...
            zrec_rows = {}
            for c in wr["codecs"]:
                zrec_rows[c["codec"]] = {"backend": c["backend"], "write_bytes_per_s": c["write"]["bytes_per_s"],
                                         "disk_bytes": c["disk_bytes"], "store": c["path"],
                                         "compressed": c.get("chosen", c["codec"]) != "raw",
                                         "times": [], "records": 0, "bytes": 0, "seconds": 0.0, "p": []}
            peers = []
            if "npy" in peers_wanted:
                peers.append(NpyPeer(corpus, root))
            if "hdf5" in peers_wanted:
                peers.append(Hdf5Peer(corpus, root, gzip=False))
                if corpus.dense or corpus.ndim > 1:
                    peers.append(Hdf5Peer(corpus, root, gzip=True))
            if "lmdb" in peers_wanted:
                peers.append(LmdbPeer(corpus, root))
            peer_rows = []
            for p in peers:
                print(f"bench_peers: {w}: writing {p.name}", file=sys.stderr)
                secs = p.write()
                disk = dir_bytes(p.path)
                p.open()
                peer_rows.append({"backend": p.name, "peer": p, "write_bytes_per_s": corpus.logical_bytes / secs,
                                  "disk_bytes": disk, "compressed": p.compressed, "times": [], "records": 0,
                                  "bytes": 0, "seconds": 0.0})
            rng = np.random.default_rng(a.seed)
            slice_s = a.seconds / a.rounds
            print(f"bench_peers: {w}: gathering ({a.rounds} rounds)", file=sys.stderr)
            for _ in range(a.rounds):
                for codec, z in zrec_rows.items():
                    j = run_zrec(a.zrec, threads + ["bench", "--json", "--batch", str(a.batch), "--seconds",
                                                    str(slice_s), "--rounds", "1", "--seed", str(rng.integers(1 << 30)),
                                                    z["store"]])
                    g = j["gather"]
                    z["records"] += g["records"]
                    z["bytes"] += g["bytes"]
                    z["seconds"] += g["elapsed_s"]
                    z["p"].append((g["p50_ms"], g["p95_ms"], g["p99_ms"]))
                for r in peer_rows:
                    spent = 0.0
                    while spent < slice_s:
                        idx = rng.integers(0, corpus.n, a.batch)
                        t0 = time.perf_counter()
                        nbytes = r["peer"].gather(idx)
                        dt = time.perf_counter() - t0
                        spent += dt
                        r["times"].append(dt)
                        r["records"] += a.batch
                        r["bytes"] += nbytes
                        r["seconds"] += dt
            for p in peers:
                p.close()
            out_rows = []
            for z in zrec_rows.values():
                med = [statistics.median(x[i] for x in z["p"]) for i in range(3)]
                out_rows.append({"backend": z["backend"], "write_bytes_per_s": z["write_bytes_per_s"],
                                 "gather_bytes_per_s": z["bytes"] / z["seconds"],
                                 "records_per_s": z["records"] / z["seconds"], "p50_ms": med[0], "p95_ms": med[1],
                                 "p99_ms": med[2], "disk_bytes": z["disk_bytes"], "compressed": z["compressed"]})
            for r in peer_rows:
                p50, p95, p99 = percentiles(r["times"])
                out_rows.append({"backend": r["backend"], "write_bytes_per_s": r["write_bytes_per_s"],
                                 "gather_bytes_per_s": r["bytes"] / r["seconds"],
                                 "records_per_s": r["records"] / r["seconds"], "p50_ms": p50, "p95_ms": p95,
                                 "p99_ms": p99, "disk_bytes": r["disk_bytes"], "compressed": r["compressed"]})
            by = {r["backend"]: r for r in out_rows}
            for r in out_rows:
                ref = by.get("zrecord-zstd" if r["compressed"] and "zrecord-zstd" in by else "zrecord-raw")
                r["ratio"] = corpus.logical_bytes / r["disk_bytes"]
                r["reference"] = ref["backend"] if ref else None
                r["gather_vs_reference"] = r["records_per_s"] / ref["records_per_s"] if ref else None
            report["workloads"].append({"workload": w, "records": corpus.n, "logical_bytes": corpus.logical_bytes,
                                        "batch": a.batch, "rows": out_rows})
            if not a.json:
                print(f"\n### {w}: {corpus.n} records, {corpus.logical_bytes / MiB:.1f} MiB, batch {a.batch}\n")
                print("| backend | logical write | logical gather | krecords/s | p50 | p95 | p99 | disk | ratio "
                      "| gather vs zrecord |")
                print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
                for r in out_rows:
                    vs = f"{r['gather_vs_reference']:.2f}x {r['reference']}" if r["reference"] else "-"
                    print(f"| {r['backend']} | {r['write_bytes_per_s'] / MiB:.0f} MiB/s | "
                          f"{r['gather_bytes_per_s'] / MiB:.0f} MiB/s | {r['records_per_s'] / 1e3:.1f} | "
                          f"{r['p50_ms']:.2f} ms | {r['p95_ms']:.2f} ms | {r['p99_ms']:.2f} ms | "
                          f"{r['disk_bytes'] / MiB:.1f} MiB | {r['ratio']:.2f}x | {vs} |", flush=True)
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if a.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
