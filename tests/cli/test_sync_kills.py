#!/usr/bin/python3
"""zrec sync killed again and again (docs/remote.md, "Publishing to a bucket"), against
moto's server with its signature checks on, behind a proxy that counts every byte the
server is sent (request bodies, the cut ones of killed runs included):

- a root v1 (a quarter of v2, its data files over 5 MiB) is published; the local root
  grows to v2 (appends to both streams, so the data files grow and their old bytes are
  copied in the bucket: the append uploads are what a rerun takes up); the sync of v2 is
  SIGKILLed at ZREC_SYNC_KILLS (default 10) random points, each kill followed by a
  rerun (which the next kill may hit), the last run going to the end;
- a reader polls `zrec digest s3://...` the whole time: every digest it gets is v1's or
  v2's, never a mix; a read that meets a republished file fails with one line (exit 1);
- the end equals one clean sync of v2 into another prefix, file by file;
- bytes sent to the server across all runs exceed the clean sync's by at most one part
  per kill (--lanes 1: a killed run loses at most the part in flight);
- no multipart upload is left open.

ZREC_SYNC_KILL_MIB (default 96) sets the size of v2; the issue's 500 MiB run is
ZREC_SYNC_KILL_MIB=500. Prints what it covered as figure: lines.

Needs: ZREC, moto_server with boto3 in its Python, NumPy (/usr/bin/python3).
"""
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import cli_helpers  # noqa: E402
from cli_helpers import expect, must, run_zrec, require_zrec  # noqa: E402
from s3_server import S3Server  # noqa: E402

ZREC = require_zrec("test_sync_kills")
CASES, case = case_runner.case_registry()
FIGURES = []
MIB = 1 << 20
PART_MIB = 5
SIZE_MIB = int(os.environ.get("ZREC_SYNC_KILL_MIB", "96"))
KILLS = int(os.environ.get("ZREC_SYNC_KILLS", "10"))
RECORD = 64 << 10


class CountingProxy:
    """Passes every request to `upstream` unchanged (the Host header too, which the
    signature covers) and counts the request body bytes it read from clients."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.body_bytes = 0
        self._lock = threading.Lock()

    def __enter__(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _pass(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = b""
                while len(body) < length:
                    chunk = self.rfile.read(min(64 << 10, length - len(body)))
                    if not chunk:
                        break
                    body += chunk
                    with proxy._lock:
                        proxy.body_bytes += len(chunk)
                if len(body) < length:
                    self.close_connection = True
                    return  # a killed client: nothing reaches the server
                up = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=120)
                up.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    up.putheader(k, v)
                up.endheaders()
                if body:
                    up.send(body)
                r = up.getresponse()
                data = r.read()
                up.close()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                        self.send_header(k, v)
                # A HEAD's length is the object's, not the empty body's.
                self.send_header("Content-Length", r.getheader("Content-Length", "0") if self.command == "HEAD"
                                 else str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a killed zrec drops its connections mid-request

        self.server = Server(("127.0.0.1", 0), Handler)
        self.endpoint = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def grow_root(root, records, seed):
    """Appends `records` samples to the root (img: random 64 KiB records; cls: a label)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    if not os.path.exists(root):
        os.makedirs(root)
        must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", "--shards", "4",
              os.path.join(root, "img")])
        must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", os.path.join(root, "cls")])
        must(["adopt", root])
    imgs = cli_helpers.npy_bytes(rng.integers(0, 256, size=(records, RECORD), dtype=np.uint8))  # a record per row
    labels = cli_helpers.npy_bytes(rng.integers(0, 10, size=records, dtype=np.int64))
    with open(os.path.join(os.path.dirname(root), "img.npy"), "wb") as f:
        f.write(imgs)
    with open(os.path.join(os.path.dirname(root), "cls.npy"), "wb") as f:
        f.write(labels)
    must(["append-npy", "--split-axis0", root, "--stream", "img=" + os.path.join(os.path.dirname(root), "img.npy"),
          "--stream", "cls=" + os.path.join(os.path.dirname(root), "cls.npy")])


def dataset_digest(path, env):
    rc, out, err = run_zrec(["digest", "--json", path], env=env)
    if rc != 0:
        return rc, (err if isinstance(err, str) else err.decode(errors="replace")).strip()
    return 0, json.loads(out)["stores"][0]["digest"]


def sync_args(src, dst):
    return [ZREC, "sync", "--part-mib", str(PART_MIB), "--lanes", "1", "--progress", src, dst]


class Reader(threading.Thread):
    """Polls the bucket's digest until stopped, keeping every answer."""

    def __init__(self, url, env):
        super().__init__(daemon=True)
        self.url, self.env = url, env
        self.digests, self.errors = [], []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            rc, got = dataset_digest(self.url, self.env)
            (self.digests if rc == 0 else self.errors).append((rc, got))


def killed_run(src, dst, env, proxy, kill_at):
    """Starts a sync and SIGKILLs it once the server has been sent `kill_at` bytes in all
    (the proxy's count): a point inside a part, between two, or, when the count is past it
    already, while the run plans. True when it was killed, False when it ended first."""
    proc = subprocess.Popen(sync_args(src, dst), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        if proxy.body_bytes >= kill_at:
            proc.send_signal(signal.SIGKILL)
            break
        threading.Event().wait(0.002)
    rc = proc.wait()
    if rc == -signal.SIGKILL:
        return True
    expect(rc == 0, "a sync ended with exit %d" % rc)
    return False


@case
def killed_at_random_points_it_ends_as_one_clean_sync(d):
    rng = random.Random(int(os.environ.get("ZREC_SYNC_KILL_SEED", "20261207")))  # the points, not their timing
    records = SIZE_MIB * MIB // RECORD
    root = os.path.join(d, "ds", "root")
    grow_root(root, records // 4, 1)  # v1: a quarter of v2 (its data files over 5 MiB: appends copy them)
    with S3Server() as s3, CountingProxy(s3.port) as proxy:
        s3.make_bucket("zsync")
        env = s3.env(AWS_ENDPOINT_URL=proxy.endpoint)
        must(["sync", "--part-mib", str(PART_MIB), root, "s3://zsync/ds"], env=env)
        _, v1 = dataset_digest(root, env)
        grow_root(root, records - records // 4, 2)  # v2
        _, v2 = dataset_digest(root, env)

        # The yardstick: v1 published at another prefix as at ds, then one clean sync of v2
        # over it, its bytes counted.
        clean_prefix = "s3://zsync/clean"
        v1_copy = os.path.join(d, "v1copy")
        must(["sync", "s3://zsync/ds", v1_copy], env=env)  # the bucket still holds v1
        must(["sync", "--part-mib", str(PART_MIB), v1_copy, clean_prefix], env=env)
        before = proxy.body_bytes
        must(["sync", "--part-mib", str(PART_MIB), "--lanes", "1", root, clean_prefix], env=env)
        clean_bytes = proxy.body_bytes - before

        reader = Reader("s3://zsync/ds", env)
        reader.start()
        before = proxy.body_bytes
        # Ten points spread at random over the bytes one clean sync sends: every run is
        # killed at the next one, so ten kills land whatever the timing (a rerun resends
        # what a kill cut, which only moves it further along).
        points = sorted(before + int(rng.uniform(0, clean_bytes)) for _ in range(KILLS))
        kills = runs = 0
        for kill_at in points:
            runs += 1
            if killed_run(root, "s3://zsync/ds", env, proxy, kill_at):
                kills += 1
            else:
                break  # it finished: nothing left to kill
        expect(kills == KILLS, "only %d of %d runs could be killed before the sync ended" % (kills, KILLS))
        rc, _, err = run_zrec(["sync", "--json", "--part-mib", str(PART_MIB), "--lanes", "1", root, "s3://zsync/ds"],
                              env=env)
        expect(rc == 0, "the last run failed: %s" % err)
        sent = proxy.body_bytes - before
        reader.stop.set()
        reader.join()

        expect(dataset_digest("s3://zsync/ds", env) == (0, v2), "the bucket does not hold v2 after the last run")
        mixes = [g for _, g in reader.digests if g not in (v1, v2)]
        expect(not mixes, "the reader saw a digest of neither version: %s" % mixes[:3])
        bad = [e for rc, e in reader.errors if rc != 1 or len(e.splitlines()) != 1]
        expect(not bad, "a reader's failure was not one line with exit 1: %s" % bad[:3])
        saw = {g for _, g in reader.digests}
        # End state equals the clean sync's, file by file.
        a, b = os.path.join(d, "end"), os.path.join(d, "clean")
        must(["sync", "s3://zsync/ds", a], env=env)
        must(["sync", clean_prefix, b], env=env)
        for sub, _, files in os.walk(b):
            for f in files:
                pa = os.path.join(a, os.path.relpath(os.path.join(sub, f), b))
                with open(pa, "rb") as fa, open(os.path.join(sub, f), "rb") as fb:
                    expect(fa.read() == fb.read(), "%s differs from the clean sync's" % pa)
        extra = sent - clean_bytes
        expect(extra <= KILLS * PART_MIB * MIB,
               "the killed runs sent %d bytes more than one clean sync (%d), over one %d MiB part per kill" %
               (extra, clean_bytes, PART_MIB))
        expect(not s3.uploads_open("zsync"), "multipart uploads left open after the last run")
        FIGURES.append("sync kills: %d SIGKILLs over %d runs of a %d MiB root (v1 %d MiB): %d bytes sent in all, "
                       "a clean sync %d, extra %.2f parts per kill" %
                       (kills, runs + 1, SIZE_MIB, SIZE_MIB // 4, sent, clean_bytes,
                        extra / (PART_MIB * MIB) / max(kills, 1)))
        FIGURES.append("sync kills: the polling reader read %d digests (%s) and failed %d times, one line each%s" %
                       (len(reader.digests), "v1 and v2" if saw == {v1, v2} else "v1 only" if saw == {v1}
                        else "v2 only" if saw == {v2} else "none", len(reader.errors),
                        (", as: " + reader.errors[0][1][:200]) if reader.errors else ""))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-sync-kills-", figures=FIGURES))
