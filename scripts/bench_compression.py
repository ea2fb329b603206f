#!/usr/bin/python3
"""Measurements behind docs/compression.md: zstd vs zstd_dict ratios, train-dict time per
tier, recompress throughput vs `cp -r` of the same store, and concat-with-frame-copy
throughput vs `cp -r` of the parts. Every speed is reported next to a baseline taken in
the same run on the same machine (warm page cache for both).

Usage: ZREC=build/zrec /usr/bin/python3 scripts/bench_compression.py [WORKDIR] [--scale F]
Prints a Markdown report on stdout. Needs python3-numpy. Takes a few minutes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ZREC = os.environ.get("ZREC", "build/zrec")


def sh(args, **kw):
    t0 = time.monotonic()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(args), p.stderr.decode()))
    return dt, p.stdout.decode(), p.stderr.decode()


def zrec(*args):
    return sh([ZREC] + list(args))


def info(store):
    return json.loads(zrec("info", "--json", store)[1])


def du(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def best_of(n, fn):
    return min(fn() for _ in range(n))


def make_tokens(path, records, seed=0):
    rng = np.random.default_rng(seed)
    # Token-like: Zipf ids over a 32k vocabulary with sentence-like repeated phrases.
    phrases = [rng.integers(0, 32000, size=int(rng.integers(3, 12))).astype("<i4") for _ in range(400)]
    with open(path, "wb") as f:
        for _ in range(records):
            n = int(rng.integers(64, 1024))
            parts, total = [], 0
            while total < n:
                if rng.random() < 0.3:
                    p = phrases[int(rng.zipf(1.5)) % len(phrases)]
                else:
                    p = (rng.zipf(1.3, int(rng.integers(2, 10))) % 32000).astype("<i4")
                parts.append(p)
                total += len(p)
            np.save(f, np.concatenate(parts)[:n].astype("<i4"))


def make_images(path, records, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:64, 0:64]
    out = np.empty((records, 3, 64, 64), dtype="|u1")
    for i in range(records):
        base = (xx * rng.uniform(0.5, 3) + yy * rng.uniform(0.5, 3) + rng.integers(0, 255)) % 256
        img = np.stack([base * rng.uniform(0.6, 1.0) for _ in range(3)])
        cy, cx, r = rng.integers(8, 56, size=3)
        mask = (yy - cy) ** 2 + (xx - cx) ** 2 < (r % 20 + 4) ** 2
        img[:, mask] = rng.integers(0, 255, size=(3, 1))
        img += rng.integers(0, 3, size=img.shape)  # sensor noise of a few levels
        out[i] = np.clip(img, 0, 255).astype("|u1")
    np.save(path, out)


def measure(work, name, create_args, npy, report):
    base = os.path.join(work, name + "-zstd")
    zrec("create", *create_args, "--codec", "zstd", base)
    zrec("append-npy", base, npy)
    i = info(base)
    logical = i["logical_bytes"]
    rows = {"zstd (level 3)": (i["payload_bytes"], None)}
    times = {}
    for tier in ["small", "balanced", "max"]:
        d = os.path.join(work, "%s-%s.dict" % (name, tier))
        times[tier] = best_of(2, lambda: zrec("train-dict", base, "-o", d, "--tier", tier)[0])
        dst = os.path.join(work, "%s-dict-%s" % (name, tier))
        zrec("recompress", base, dst, "--dict", d)
        rows["zstd_dict, %s dictionary (level 15)" % tier] = (info(dst)["payload_bytes"], times[tier])
    l15 = os.path.join(work, name + "-zstd15")
    zrec("recompress", base, l15, "--level", "15")
    rows["zstd level 15, no dictionary"] = (info(l15)["payload_bytes"], None)

    report.append("### %s: %d records, %.1f MiB logical\n" % (name, i["length"], logical / 2**20))
    report.append("| codec | stored | ratio | train-dict |")
    report.append("|---|---:|---:|---:|")
    for k, (stored, t) in rows.items():
        report.append("| %s | %.2f MiB | %.2fx | %s |" % (k, stored / 2**20, logical / stored,
                                                       "%.2f s" % t if t is not None else "-"))
    report.append("")

    # Throughput vs cp -r of the same store (both from a warm page cache).
    def cp(src, sync=False):
        # zrec fsyncs what it publishes; `sync FILE...` makes the copy as durable.
        dst = os.path.join(work, "cp-tmp")
        shutil.rmtree(dst, ignore_errors=True)
        cmd = "cp -r '%s' '%s'" % (src, dst) + (" && sync '%s'/*" % dst if sync else "")
        t = sh(["bash", "-c", cmd])[0]
        shutil.rmtree(dst)
        return t

    def recompress(src, *args):
        dst = os.path.join(work, "rc-tmp")
        shutil.rmtree(dst, ignore_errors=True)
        t = zrec("recompress", src, dst, *args)[0]
        shutil.rmtree(dst)
        return t

    raw = os.path.join(work, name + "-raw")
    zrec("recompress", base, raw, "--codec", "raw")
    dict_store = os.path.join(work, "%s-dict-balanced" % name)
    bal = os.path.join(work, "%s-balanced.dict" % name)
    cases = [
        ("zstd -> zstd_dict (balanced dict given)", base, ["--dict", bal], 1),
        ("zstd -> raw (decode only)", base, ["--codec", "raw"], 3),
        ("raw -> zstd (encode only)", raw, ["--codec", "zstd"], 3),
        ("zstd -> zstd, --shards 8 (frame copy)", base, ["--shards", "8"], 3),
        ("zstd_dict -> zstd_dict, --shards 8 (frame copy)", dict_store, ["--shards", "8"], 3),
    ]
    report.append("| recompress | source on disk | time | MiB/s (source) | `cp -r` | `cp -r` + fsync | "
                  "recompress / cp+fsync |")
    report.append("|---|---:|---:|---:|---:|---:|---:|")
    for label, src, args, reps in cases:
        size = du(src)
        t = best_of(reps, lambda: recompress(src, *args))
        c = best_of(3, lambda: cp(src))
        cs = best_of(3, lambda: cp(src, sync=True))
        report.append("| %s | %.1f MiB | %.2f s | %.0f | %.2f s (%.0f MiB/s) | %.2f s (%.0f MiB/s) | %.2fx |" %
                      (label, size / 2**20, t, size / 2**20 / t, c, size / 2**20 / c, cs, size / 2**20 / cs, t / cs))
    report.append("")

    # concat with frame copy: 4 parts of the same codec, vs cp -r of the 4 parts.
    parts = []
    for p in range(4):
        part = os.path.join(work, "%s-part%d" % (name, p))
        zrec("recompress", base, part)  # each part: a copy of the base store
        parts.append(part)
    size = sum(du(p) for p in parts)

    def concat():
        dst = os.path.join(work, "cc-tmp")
        shutil.rmtree(dst, ignore_errors=True)
        t = zrec("concat", *parts, dst)[0]
        shutil.rmtree(dst)
        return t

    def cp_parts(sync=False):
        dst = os.path.join(work, "cp-tmp")
        shutil.rmtree(dst, ignore_errors=True)
        cmd = "mkdir '%s' && cp -r %s '%s'/" % (dst, " ".join(parts), dst) + (" && sync '%s'/*/*" % dst if sync else "")
        t = sh(["bash", "-c", cmd])[0]
        shutil.rmtree(dst)
        return t

    t = best_of(3, concat)
    c = best_of(3, cp_parts)
    cs = best_of(3, lambda: cp_parts(sync=True))
    report.append("| concat (frame copy) | sources on disk | time | MiB/s | `cp -r` of the parts | `cp -r` + fsync | "
                  "concat / cp+fsync |")
    report.append("|---|---:|---:|---:|---:|---:|---:|")
    report.append("| 4 zstd parts -> zstd | %.1f MiB | %.2f s | %.0f | %.2f s (%.0f MiB/s) | %.2f s (%.0f MiB/s) | %.2fx |" %
                  (size / 2**20, t, size / 2**20 / t, c, size / 2**20 / c, cs, size / 2**20 / cs, t / cs))
    report.append("")
    for p in parts:
        shutil.rmtree(p)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--scale")]
    scale = 1.0
    for a in sys.argv[1:]:
        if a.startswith("--scale="):
            scale = float(a.split("=", 1)[1])
    work = args[0] if args else tempfile.mkdtemp(prefix="zrec-bench-compress-")
    os.makedirs(work, exist_ok=True)
    report = []
    _, version, _ = zrec("--version")
    # --version prints "zrec X", "zstd Y", "fmt Z" on three lines.
    report.append("%s, %d CPUs, `%s`\n" % (", ".join(version.strip().splitlines()), os.cpu_count(), ZREC))
    try:
        tok = os.path.join(work, "tokens.npy")
        make_tokens(tok, int(40000 * scale))
        measure(work, "tokens", ["--ragged", "--dtype", "<i4", "--ndim", "1"], tok, report)
        img = os.path.join(work, "images.npy")
        make_images(img, int(8000 * scale))
        measure(work, "images", ["--dense", "--dtype", "|u1", "--shape", "3,64,64"], img, report)
    finally:
        if not args:
            shutil.rmtree(work, ignore_errors=True)
    print("\n".join(report))


if __name__ == "__main__":
    main()
