#!/usr/bin/python3
"""Remote reads under attack (issue 45, the fifth attack round): a hostile server and a
hostile root marker must not hang zrec, send it outside the root, or make it print a
secret.

- Error bodies are drained to a few KiB: a 404, 500 or 302 whose body never ends
  fails (or is followed) at once; zrec used to read it until killed.
- Every request has a deadline: a body dripped a byte at a time, and 206 answers of
  one byte each, fail after the tries instead of running forever (the retry count
  used to start over whenever a byte arrived).
- https is never redirected to http; http redirects are still followed.
- A remote root's stream names are percent-encoded into the URL: a marker naming
  `%2e%2e%2f%2e%2e%2fprivate%2fsecret`, `x?y=1` or `x#f` makes no request outside the
  root's prefix and keeps the query token on every request (zrec used to read,
  verify and show a store of another prefix, credentials and all, exit 0).
- No output of any command shows the password, user or token of a URL: every
  reading command, text and --json, errors and warnings, -v logs and view's API
  are run on a store, a root and a stream by URL with credentials and a token.
- A store's name comes from the URL's path, never its query (cat --format tar used
  to name the member `s?token=T`, view the stream `?token=T`).
- Smaller: a 412 answering the first request is not "changed since it was opened";
  `;param` path parameters are redacted; `zrec adopt URL` says that it writes only
  local roots.

Needs: ZREC (path of the zrec binary), nginx-light, openssl, NumPy.
"""
import json
import os
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import view_helpers  # noqa: E402
from cli_helpers import expect, fails, must, must_out, npy_bytes, require_zrec, run_zrec  # noqa: E402
from web_server import WebServer  # noqa: E402

ZREC = require_zrec("test_remote_attacks")
CASES, case = case_runner.case_registry()
FIGURES = []
SECRETS = ("s3cretPW", "TOK3N", "alice", "SESS1ON")


def dense_store(path, n, width=16):
    import numpy as np
    os.makedirs(os.path.dirname(path), exist_ok=True)
    must(["create", "--dense", "--dtype", "<i4", "--shape", str(width), path])
    must(["append-npy", path, "-"], stdin=npy_bytes(np.arange(n * width, dtype=np.int32).reshape(n, width)))


def write_marker(root, length, streams):
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "zrec-root"), "w") as f:
        f.write("zrec-root 1\nlength %d\n" % length + "".join("stream %s\n" % s for s in sorted(streams)))


class HostileServer:
    """A loopback server whose first path word picks its misbehaviour:
      /endless404/..., /endless500/..., /endless302/...: that status with a body that
          never ends (chunked, until the client goes or 60 s pass);
      /drip/...: a 206 whose body comes one byte every 0.25 s;
      /tiny/...: a 206 of the first byte asked, whatever the range;
      /precondition/...: 412 to every request.
    `requests` counts requests."""

    def __init__(self):
        self.requests = 0
        self.lock = threading.Lock()

    def __enter__(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def endless(self, status, extra=()):
                self.send_response(status)
                for k, v in extra:
                    self.send_header(k, v)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"x" * 8192
                deadline = time.monotonic() + 60
                try:
                    while time.monotonic() < deadline:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                except OSError:
                    pass
                self.close_connection = True

            def do_GET(self):
                with outer.lock:
                    outer.requests += 1
                kind = self.path.split("/")[1]
                m = re.match(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
                first = int(m.group(1)) if m else 0
                total = 1 << 20
                if kind == "endless404":
                    return self.endless(404)
                if kind == "endless500":
                    return self.endless(500)
                if kind == "endless302":
                    return self.endless(302, [("Location", "/endless404/x")])
                if kind == "precondition":
                    self.send_response(412)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("ETag", '"fixed"')
                if kind == "tiny":
                    self.send_header("Content-Range", "bytes %d-%d/%d" % (first, first, total))
                    self.send_header("Content-Length", "1")
                    self.end_headers()
                    self.wfile.write(b"\0")
                    return
                last = int(m.group(2)) if m else total - 1
                self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, total))
                self.send_header("Content-Length", str(last - first + 1))
                self.end_headers()
                try:
                    for _ in range(last - first + 1):
                        self.wfile.write(b"\0")
                        self.wfile.flush()
                        time.sleep(0.25)
                except OSError:
                    pass
                self.close_connection = True

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def timed_failure(args, says, within):
    start = time.monotonic()
    rc, out, err = run_zrec(args, timeout=within + 30)
    took = time.monotonic() - start
    expect(rc == 1, "zrec %s: rc %d (%s)" % (" ".join(args), rc, err.strip()))
    for s in says:
        expect(s in err, "zrec %s: %r does not say %r" % (" ".join(args), err.strip(), s))
    expect(len(err.strip().splitlines()) == 1, "more than one line: " + err)
    expect(took < within, "zrec %s took %.1f s (at most %d)" % (" ".join(args), took, within))
    return took


@case
def endless_error_bodies_and_drips_end(d):
    with HostileServer() as h:
        took = timed_failure(["info", h.url + "/endless404/s"], ["is not a zrecord store"], 10)
        FIGURES.append("404 with an endless body: failed in %.2f s" % took)
        took = timed_failure(["info", h.url + "/endless500/s"], ["HTTP 500", "(after 6 tries)"], 30)
        FIGURES.append("500 with an endless body: failed after 6 tries in %.2f s" % took)
        took = timed_failure(["info", h.url + "/endless302/s"], ["is not a zrecord store"], 10)
        FIGURES.append("302 with an endless body: followed, failed in %.2f s" % took)
        took = timed_failure(["--remote-timeout", "1", "info", h.url + "/drip/s"], ["timed out"], 60)
        FIGURES.append("a body dripped at 4 bytes/s, --remote-timeout 1: failed in %.2f s" % took)
        took = timed_failure(["cat", h.url + "/tiny/s"], ["again and again", "(after 6 tries)"], 30)
        FIGURES.append("206 answers of one byte each: failed in %.2f s" % took)
        fails(["info", h.url + "/precondition/s"], says=["HTTP 412"])
        err = fails(["info", h.url + "/precondition/s"])
        expect("changed since it was opened" not in err, "a 412 at open: " + err)


@case
def https_is_never_redirected_to_http(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "s"), 100)
    with WebServer(www) as web:
        want = must_out(["digest", os.path.join(www, "s")]).split()[0]
        expect(must_out(["digest", web.http + "/moved/s"]).split()[0] == want, "an http redirect is followed")
        before = len(web.request_uris())
        fails(["--cacert", web.cacert, "info", web.https + "/downgrade/s"],
              says=["redirects from https to 'http://127.0.0.1:%d/s/meta.zr'" % web.http_port, "refused"])
        expect(not any(line.startswith("/s/") for line in web.request_uris()[before:]), "a request went over http")


@case
def a_root_marker_cannot_send_reads_outside_the_root(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "private", "secret"), 10)
    dense_store(os.path.join(www, "pub", "root", "ok"), 10)
    root = os.path.join(www, "pub", "root")
    for hostile in ("%2e%2e%2f%2e%2e%2fprivate%2fsecret", "x?y=1", "x#f"):
        write_marker(root, 10, ["ok", hostile])
        with WebServer(www) as web:
            url = "http://alice:s3cretPW@127.0.0.1:%d/pub/root?token=TOK3N" % web.http_port
            for args in (["info", url], ["verify", url], ["cat", "--format", "tar", "-o", os.path.join(d, "o.tar"), url]):
                rc, out, err = run_zrec(args)
                expect(rc != 0, "%s with stream %r: exit 0 (%s)" % (args[0], hostile, err))
                for s in SECRETS:
                    expect(s.encode() not in out and s not in err, "%s shows %s: %s" % (args[0], s, err))
            uris = web.request_uris()
            outside = [u for u in uris if not u.startswith("/pub/root/")]
            expect(not outside, "stream %r: requests outside the root: %s" % (hostile, outside))
            untokened = [u for u in uris if not u.endswith("?token=TOK3N")]
            expect(not untokened, "stream %r: requests without the token: %s" % (hostile, untokened))


def all_output(args, stdin=None):
    rc, out, err = run_zrec(args, stdin=stdin)
    return rc, out.decode(errors="replace") + err


@case
def no_output_shows_a_secret(d):
    www = os.path.join(d, "www")
    os.makedirs(www)
    s = view_helpers.make_stores(www)
    dense_store(os.path.join(www, "dense"), 300)
    bad = os.path.join(www, "badroot")  # a root whose marker names a stream the local rule refuses
    dense_store(os.path.join(bad, "a b"), 10)
    write_marker(bad, 10, ["a b"])
    out_dir = os.path.join(d, "out")
    os.makedirs(out_dir)
    with WebServer(www) as web:
        base = "http://alice:s3cretPW@127.0.0.1:%d" % web.http_port
        q = "?token=TOK3N"
        store, root, stream = base + "/dense" + q, base + "/dataset" + q, base + "/dataset/png" + q
        gone, bad_url = base + "/nothing;jsessionid=SESS1ON/x" + q, base + "/badroot" + q
        runs = []
        for url in (store, root, stream, gone, bad_url):
            for args in (["info"], ["info", "--json"], ["info", "--exact"], ["verify"], ["verify", "--json"],
                         ["verify", "--quick"], ["digest"], ["digest", "--json"], ["-v", "cat", "0:3"],
                         ["cat", "--format", "jsonl", "0:2"], ["cat", "--format", "tar", "-o", os.path.join(out_dir, "t.tar")],
                         ["train-dict", "--size", "1K", "-o", os.path.join(out_dir, "d.dict")],
                         ["recompress", "--codec", "raw", "-f"], ["concat"], ["adopt"]):
                dst = [os.path.join(out_dir, "copy")] if args[0] in ("recompress", "concat") else []
                if args[0] == "concat":
                    rc, text = all_output(["concat", url, url, *dst])
                else:
                    rc, text = all_output(args + [url] + dst)
                runs.append((args, url, rc, text))
                must(["verify", "--quick", s["images"]])  # the local stores are untouched
                if os.path.exists(os.path.join(out_dir, "copy")):
                    import shutil
                    shutil.rmtree(os.path.join(out_dir, "copy"))
        leaks = [(a, rc, t) for a, _, rc, t in runs if any(x in t for x in SECRETS)]
        expect(not leaks, "secrets shown: %s" % leaks[:3])
        expect(any(rc == 0 for _, _, rc, _ in runs) and any(rc != 0 for _, _, rc, _ in runs), "no mix of outcomes")
        adopt = [t for a, u, rc, t in runs if a == ["adopt"] and u == root][0]
        expect("URL" in adopt and "No such file" not in adopt, "adopt of a URL: " + adopt)
        FIGURES.append("%d command runs on URLs with credentials and a token: no secret shown" % len(runs))
        # The store's name is the URL path's last word: a tar member, view's stream.
        import tarfile
        must(["cat", "--format", "tar", "-o", os.path.join(out_dir, "d.tar"), store])
        names = tarfile.open(os.path.join(out_dir, "d.tar")).getnames()
        expect(names and all(n.split(".")[1] == "dense" for n in names), "tar members: %s" % names[:3])
        v = view_helpers.ViewServer([store, root])
        try:
            for route, params in (("api/paths", None), ("api/overview", {"path": 0}), ("api/overview", {"path": 1}),
                                  ("api/records", {"path": 1, "stream": 0, "offset": 0, "limit": 3})):
                status, _, body = v.get(route, params)
                text = body.decode(errors="replace")
                expect(not any(x in text for x in SECRETS), "view %s shows a secret: %s" % (route, text[:300]))
            paths = v.json("api/paths")["paths"]
            expect(paths[0]["streams"] == ["dense"], "view names the store %s" % paths[0]["streams"])
        finally:
            v.stop()
        expect(not any(x in v.stderr for x in SECRETS), "view's stderr shows a secret: " + v.stderr)


@case
def path_parameters_are_redacted(d):
    fails(["info", "http://127.0.0.1:1/a;jsessionid=SESS1ON/s"], says=["http://127.0.0.1:1/a;\u2026/s/meta.zr"])


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-remote-attacks-", figures=FIGURES))
