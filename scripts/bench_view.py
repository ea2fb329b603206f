#!/usr/bin/env python3
"""zrec view's page of thumbnails against its baseline, measured in one run.

A zstd store of 100 uint8 pictures (3, 224, 224) is made (smooth gradients with noise,
which compress as photos do). Then, best of --repeat runs each:

- page: what a browser does for one grid page of 100 records: GET api/records?limit=100
  and the 100 thumbnails (api/picture, PNG encoded per request), over 6 keep-alive
  connections at once (a browser's per-host limit);
- cat: `zrec cat STORE 0:100 -o /dev/null` (reading and decoding the same 100 records);
- png: encoding the same 100 thumbnails (box-filtered to 160 pixels, as the server does)
  as PNG with the same zlib level and filter (level 3, Sub), here in Python's zlib.

The issue's target: page <= 2 x (cat + png). Prints one `figure:` line per measurement
and the ratio; exit status 1 when the ratio is above 2.

Usage: scripts/bench_view.py [--zrec build/zrec] [--repeat 5]
"""
import argparse
import http.client
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))


def pictures(n):
    import numpy as np
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:224, 0:224]
    out = np.empty((n, 3, 224, 224), dtype=np.uint8)
    for i in range(n):
        for c in range(3):
            base = (x * (1 + (i + c) % 3) + y * (2 + i % 5)) % 256
            out[i, c] = np.clip(base + rng.normal(0, 6, size=(224, 224)), 0, 255).astype(np.uint8)
    return out


def thumbnail(a, side=160):
    """The server's box filter (apps/cli/view/array_image.cc), (C, H, W) -> (h, w, C)."""
    import numpy as np
    c, h, w = a.shape
    longest = max(h, w)
    oh, ow = (max(1, h * side // longest), max(1, w * side // longest)) if longest > side else (h, w)
    ys = [(y * h // oh, max(y * h // oh + 1, (y + 1) * h // oh)) for y in range(oh)]
    xs = [(x * w // ow, max(x * w // ow + 1, (x + 1) * w // ow)) for x in range(ow)]
    hwc = np.transpose(a, (1, 2, 0)).astype(np.uint32)
    out = np.empty((oh, ow, c), dtype=np.uint8)
    for oy, (y0, y1) in enumerate(ys):
        for ox, (x0, x1) in enumerate(xs):
            n = (y1 - y0) * (x1 - x0)
            out[oy, ox] = (hwc[y0:y1, x0:x1].sum(axis=(0, 1)) + n // 2) // n
    return out


def png_encode(rgb):
    """PNG with the Sub filter on every row and zlib level 3, as png_writer.cc writes."""
    import numpy as np
    import struct
    h, w, c = rgb.shape
    rows = rgb.reshape(h, w * c).astype(np.int16)
    sub = rows.copy()
    sub[:, c:] = (rows[:, c:] - rows[:, :-c]) % 256
    raw = np.concatenate([np.ones((h, 1), dtype=np.uint8), sub.astype(np.uint8)], axis=1).tobytes()

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 3)) + chunk(b"IEND", b""))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zrec", default=os.environ.get("ZREC", os.path.join(HERE, "..", "build", "zrec")))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    zrec = os.path.abspath(args.zrec)
    import cli_helpers
    cli_helpers.ZREC = zrec
    from view_helpers import ViewServer

    root = tempfile.mkdtemp(prefix="zrec-bench-view.")
    server = None
    try:
        store = os.path.join(root, "images")
        pics = pictures(100)
        subprocess.run([zrec, "create", "--dense", "--dtype", "|u1", "--shape", "3,224,224", store], check=True)
        subprocess.run([zrec, "append-npy", store, "-"], input=cli_helpers.npy_bytes(pics), check=True,
                       stdout=subprocess.DEVNULL)
        server = ViewServer([store])
        base = "/%s/" % server.token

        def page():
            conns = [http.client.HTTPConnection("127.0.0.1", server.port, timeout=30) for _ in range(6)]
            conns[0].request("GET", base + "api/records?" + urllib.parse.urlencode({"path": 0, "limit": 100}))
            r = conns[0].getresponse()
            r.read()
            assert r.status == 200
            errors = []

            def fetch(k):
                for i in range(k, 100, 6):
                    conns[k].request("GET", base + "api/picture?path=0&id=%d" % i)
                    resp = conns[k].getresponse()
                    body = resp.read()
                    if resp.status != 200 or not body.startswith(b"\x89PNG"):
                        errors.append(i)
            threads = [threading.Thread(target=fetch, args=(k,)) for k in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for c in conns:
                c.close()
            assert not errors, errors

        def cat():
            subprocess.run([zrec, "cat", store, "0:100", "-o", "/dev/null"], check=True)

        thumbs = [thumbnail(p) for p in pics]

        def png():
            for t in thumbs:
                png_encode(t)

        page()  # warm: the store opened, the page cache filled
        t_page, t_cat, t_png = best(page, args.repeat), best(cat, args.repeat), best(png, args.repeat)
        ratio = t_page / (t_cat + t_png)
        print("figure: view page of 100 thumbnails (3x224x224 uint8, zstd): %.1f ms" % (t_page * 1e3))
        print("figure: baseline: zrec cat of the 100 records to /dev/null %.1f ms + PNG encoding of their "
              "thumbnails %.1f ms = %.1f ms" % (t_cat * 1e3, t_png * 1e3, (t_cat + t_png) * 1e3))
        print("figure: view page / baseline = %.2fx (target <= 2x)" % ratio)
        return 0 if ratio <= 2 else 1
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
