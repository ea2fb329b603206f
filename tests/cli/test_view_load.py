#!/usr/bin/env python3
"""A bounded load test of zrec view over loopback: 8 clients, each with its own keep-alive
connection, send 2000 requests apiece (16,000 in all) that mix what a page asks for:
thumbnails (PNG encoded per request), pages of records, one record, its hex, the
overview and the static files. Every response must be 200 with the body a first,
unloaded request got for the same URL (no failed request, nothing mixed up between
concurrent requests). Prints requests/s and the server's peak RSS as figure lines.

Bounded: the request count is fixed (ZREC_VIEW_LOAD_REQUESTS per client overrides 2000),
and the run stops at 100 s whatever is left.

Then 8 clients download one 250 MiB record as .npy at once (a store of a few hundred
KiB): each download is whole and byte-exact, and the server's peak RSS stays within the
documented 512 MiB cap on record bytes plus the process (it peaked at 1.6 GiB when each
response held a copy of its record outside the cap).

Usage: ZREC=build/zrec /usr/bin/python3 tests/cli/test_view_load.py
"""
import http.client
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import SANITIZED, expect, require_zrec  # noqa: E402
from view_helpers import ViewServer, make_stores  # noqa: E402

require_zrec("test_view_load")
CLIENTS = 8
PER_CLIENT = int(os.environ.get("ZREC_VIEW_LOAD_REQUESTS", "500" if SANITIZED else "2000"))
TIME_LIMIT = 100.0


def run_clients(client):
    """Runs client(k) for k in 0..CLIENTS-1 on threads at once; returns the seconds they took."""
    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - start


def main():
    root = tempfile.mkdtemp(prefix="zrec-view-load.")
    server = None
    try:
        s = make_stores(root)
        server = ViewServer([s["images"], s["tokens"], s["text"], s["root"]],
                            ["--keys", "", "--keys", "", "--keys", "", "--keys", s["keys"]])
        base = "/%s/" % server.token

        def url(route, **params):
            return base + route + ("?" + urllib.parse.urlencode(params) if params else "")
        urls = ([url("api/picture", path=0, id=i) for i in range(12)] +
                [url("api/picture", path=3, stream=2, id=i) for i in range(10)] +
                [url("api/records", path=p, limit=24) for p in range(4)] +
                [url("api/records", path=1, sample=20, seed=k) for k in range(4)] +
                [url("api/record", path=1, id=i) for i in range(0, 40, 7)] +
                [url("api/hex", path=2, id=3, length=256), url("api/overview", path=1), url("api/overview", path=3),
                 base, base + "app.js", base + "style.css", url("api/paths")])
        # What each URL answers when nothing else runs.
        want = {}
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        for u in urls:
            conn.request("GET", u)
            r = conn.getresponse()
            want[u] = r.read()
            expect(r.status == 200, "%s: %d" % (u, r.status))
        conn.close()

        failures = []
        done = [0] * CLIENTS
        deadline = time.monotonic() + TIME_LIMIT

        def client(k):
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            for i in range(PER_CLIENT):
                if time.monotonic() > deadline:
                    failures.append("client %d: out of time after %d requests" % (k, i))
                    return
                u = urls[(i * 7 + k * 13) % len(urls)]
                try:
                    c.request("GET", u)
                    r = c.getresponse()
                    body = r.read()
                    if r.status != 200 or body != want[u]:
                        failures.append("%s: status %d, %d bytes (want %d)" % (u, r.status, len(body), len(want[u])))
                    if r.getheader("Connection", "").lower() == "close":
                        c.close()
                except (OSError, http.client.HTTPException) as e:
                    failures.append("%s: %r" % (u, e))
                    c.close()
                done[k] += 1
            c.close()

        took = run_clients(client)
        total = sum(done)
        rss = server.peak_rss_mib()
        print("figure: view load: %d clients x %d requests = %d in %.1f s, %.0f requests/s, %d failed"
              % (CLIENTS, PER_CLIENT, total, took, total / took, len(failures)))
        print("figure: view load: server peak RSS %.1f MiB" % rss)
        expect(not failures, "%d failed requests, first: %s" % (len(failures), failures[:3]))
        expect(total == CLIENTS * PER_CLIENT, "%d requests made, want %d" % (total, CLIENTS * PER_CLIENT))
        expect(SANITIZED or rss < 200, "peak RSS %.0f MiB" % rss)
        rc = server.stop()
        server = None
        expect(rc == 130, "exit %d after the load" % rc)
        huge_downloads(root)
        print("PASS: view load")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


def huge_downloads(root):
    size = 250 << 20
    store = os.path.join(root, "huge")
    zrec = os.environ["ZREC"]
    subprocess.run([zrec, "create", "--ragged", "--ndim", "1", "--dtype", "|u1", store], check=True)
    frame = size.to_bytes(8, "little") + bytes([7]) * size
    subprocess.run([zrec, "append-stream", "-q", "--framing", "u64le", store], input=frame, check=True)
    del frame
    header = npy_header(size)
    server = ViewServer([store])
    try:
        u = "/%s/api/npy?path=0&id=0" % server.token
        failures = []

        def client(k):
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            try:
                c.request("GET", u)
                r = c.getresponse()
                head = r.read(len(header))
                got, odd = len(head), 0
                while True:
                    chunk = r.read(1 << 20)
                    if not chunk:
                        break
                    got += len(chunk)
                    odd += len(chunk) - chunk.count(7)
                if r.status != 200 or head != header or got != len(header) + size or odd:
                    failures.append("client %d: status %d, %d bytes (want %d), %d bytes not 7"
                                    % (k, r.status, got, len(header) + size, odd))
            except (OSError, http.client.HTTPException) as e:
                failures.append("client %d: %r" % (k, e))
            finally:
                c.close()

        took = run_clients(client)
        rss = server.peak_rss_mib()
        print("figure: view: %d concurrent .npy downloads of a 250 MiB record in %.1f s, server peak RSS %.0f MiB "
              "(cap on record bytes 512 MiB)" % (CLIENTS, took, rss))
        expect(not failures, "; ".join(failures[:3]))
        expect(SANITIZED or rss < 512 + 64, "peak RSS %.0f MiB over the 512 MiB cap" % rss)
    finally:
        server.stop()


def npy_header(n):
    """The .npy header zrec view sends for a 1-D '|u1' record of n bytes (format 1.0)."""
    d = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % n
    pad = 64 - (10 + len(d) + 1) % 64
    body = (d + " " * pad + "\n").encode()
    return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body


if __name__ == "__main__":
    main()
