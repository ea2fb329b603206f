#!/usr/bin/python3
"""Time and peak RSS of every reading command against the store's length
(docs/bench.md, "Scale"): Ragged '|u1' stores of one-byte records (the table is all
there is to them: 16 bytes a record of meta.zr, 9 of data), of 10^5 .. 10^MAX records,
and per length:

  verify, info, digest, cat --shuffle, cat --sample 100000, cat --indices-from (100,000
  random IDs), recompress --codec zstd, concat --plan of two stores, and view's overview
  (the server's peak RSS after one /api/overview).

Prints one table row per command and length (seconds, peak RSS in MiB), then the
growth between the last two lengths. Usage:
  ZREC=build/zrec /usr/bin/python3 scripts/bench_scale.py [--max-exp 8] [--dir DIR]
DIR (default: a temporary directory) needs about 2.6 GB per 10^8 records, twice for
recompress and concat's temporary.
"""
import argparse
import http.client
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ZREC = os.environ.get("ZREC") or os.path.join(HERE, "..", "build", "zrec")


def measured(argv, stdin=None):
    """(seconds, peak RSS MiB) of a command, by GNU time."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *argv], stdin=stdin, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, check=False)
    last = out.stderr.decode().strip().splitlines()[-1]
    if out.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), out.stderr.decode()[-500:]))
    seconds, kib = last.split()
    return float(seconds), int(kib) / 1024


def build_store(path, n):
    subprocess.run([ZREC, "create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", path], check=True)
    p = subprocess.Popen([ZREC, "append-stream", path], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    chunk = b"a\n" * 1000000
    left = n
    while left > 0:
        k = min(left, 1000000)
        p.stdin.write(chunk if k == 1000000 else b"a\n" * k)
        left -= k
    p.stdin.close()
    if p.wait() != 0:
        raise RuntimeError("append-stream failed")


def view_overview(store):
    """(seconds for one overview, the server's peak RSS MiB)."""
    p = subprocess.Popen([ZREC, "view", "--port", "0", store], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        url = p.stdout.readline().decode().strip()
        m = re.match(r"http://127\.0\.0\.1:(\d+)/(\w+)/", url)
        conn = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=3600)
        t0 = time.monotonic()
        conn.request("GET", "/%s/api/overview?path=0" % m.group(2), headers={"Host": "127.0.0.1:" + m.group(1)})
        r = conn.getresponse()
        r.read()
        seconds = time.monotonic() - t0
        if r.status != 200:
            raise RuntimeError("overview: HTTP %d" % r.status)
        with open("/proc/%d/status" % p.pid) as f:
            hwm = int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))
        return seconds, hwm / 1024
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-exp", type=int, default=7)
    ap.add_argument("--dir")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="zrec-scale-", dir=args.dir)
    rows = {}
    try:
        print("%-26s %6s %10s %12s" % ("command", "length", "seconds", "peak MiB"), flush=True)
        for exp in range(5, args.max_exp + 1):
            n = 10 ** exp
            store = os.path.join(work, "s")
            build_store(store, n)
            ids = os.path.join(work, "ids")
            rng = random.Random(exp)
            with open(ids, "w") as f:
                f.write("".join("%d\n" % rng.randrange(n) for _ in range(100000)))
            out = os.path.join(work, "out")
            commands = [
                ("verify", [ZREC, "verify", store]),
                ("info", [ZREC, "info", store]),
                ("digest", [ZREC, "digest", store]),
                ("cat --shuffle", [ZREC, "cat", store, "--shuffle", "--format", "raw", "-o", "/dev/null", "-f"]),
                ("cat --sample 100000", [ZREC, "cat", store, "--sample", "100000", "--format", "raw", "-o",
                                         "/dev/null", "-f"]),
                ("cat --indices-from 10^5", [ZREC, "cat", store, "--indices-from", ids, "--format", "raw", "-o",
                                             "/dev/null", "-f"]),
                ("recompress --codec zstd", [ZREC, "recompress", "--codec", "zstd", store, out]),
                ("concat --plan", [ZREC, "concat", "--plan", os.path.join(work, "plan"), store, store, out]),
            ]
            for name, argv in commands:
                seconds, mib = measured(argv)
                rows.setdefault(name, []).append((n, seconds, mib))
                print("%-26s %6s %10.2f %12.1f" % (name, "1e%d" % exp, seconds, mib), flush=True)
                if name == "recompress --codec zstd":
                    shutil.rmtree(out)
                if name == "concat --plan":
                    subprocess.run([ZREC, "concat", "--discard", os.path.join(work, "plan")], check=True,
                                   stderr=subprocess.DEVNULL)
            seconds, mib = view_overview(store)
            rows.setdefault("view overview", []).append((n, seconds, mib))
            print("%-26s %6s %10.2f %12.1f" % ("view overview", "1e%d" % exp, seconds, mib), flush=True)
            shutil.rmtree(store)
        print()
        print("growth from the next-to-last length to the last (x10 records):")
        for name, r in rows.items():
            if len(r) >= 2:
                (_, s0, m0), (_, s1, m1) = r[-2], r[-1]
                print("%-26s time x%.1f, peak RSS %+.1f MiB (x%.2f)" % (name, s1 / max(s0, 1e-3), m1 - m0,
                                                                         m1 / max(m0, 1e-3)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
