#!/usr/bin/python3
"""Remote stores (docs/remote.md): stores and roots on a real web server (nginx on
loopback, HTTP and HTTPS with HTTP/2), read by URL, and a fault-injecting proxy in front
of it:

- every reading command (info, cat with every selection and format, digest, verify,
  view's API, recompress / concat / train-dict as sources) gives over HTTP what it gives
  on the local copy: the same bytes, digests and reports;
- HTTPS is verified: a self-signed server fails without --cacert and works with it,
  over HTTP/2;
- info of a 10^6-record store and cat of 10 records transfer under 64 KiB (plus the
  records), reported in --json (`remote`) and with -v;
- dropped connections and 500s are retried and resumed, with the same output; a server
  that always fails is reported after the tries; a server ignoring Range is refused
  (unless the file is small); a store republished while being read fails, never mixing
  versions;
- 403 / 404 / a redirect loop give one clear line, and no message shows credentials or
  a query string; writers refuse URLs;
- a record asked for again in a later window is not fetched again (a copy is kept);
- a random gather fetches no byte twice: 500 and 5,000 random 10 KiB records receive at
  most 1.1x the distinct records' bytes, and random ~100-byte records never more than
  the store holds (issue 43: 14x the store before).

Needs: ZREC (path of the zrec binary), nginx-light, openssl, NumPy.
"""
import json
import os
import re
import shutil
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import view_helpers  # noqa: E402
from cli_helpers import expect, fails, must, must_out, npy_bytes, require_zrec, run_zrec, tree_digests  # noqa: E402
from web_server import FaultProxy, WebServer  # noqa: E402

ZREC = require_zrec("test_remote")
CASES, case = case_runner.case_registry()
FIGURES = []


def remote_json(out):
    return json.loads(out).get("remote", {})


def verbose_stats(err):
    """(requests, bytes) from -v's 'remote reads: N requests, B bytes received' line."""
    m = re.search(r"remote reads: (\d+) requests, (\d+) bytes received", err)
    expect(m is not None, "no remote reads line in: " + err)
    return int(m.group(1)), int(m.group(2))


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def dense_store(path, n, width=16, codec="zstd"):
    import numpy as np
    os.makedirs(os.path.dirname(path), exist_ok=True)
    must(["create", "--dense", "--dtype", "<i4", "--shape", str(width), "--codec", codec, path])
    must(["append-npy", path, "-"], stdin=npy_bytes(np.arange(n * width, dtype=np.int32).reshape(n, width)))


@case
def every_command_reads_a_remote_store_as_its_local_copy(d):
    www = os.path.join(d, "www")
    os.makedirs(www)
    s = view_helpers.make_stores(www)
    dense_store(os.path.join(www, "dense"), 5000)
    names = ["images", "tokens", "text", "labels", "dense"]
    with WebServer(www) as web:
        for name in names:
            local, url = os.path.join(www, name), web.http + "/" + name
            info_l = json.loads(must_out(["info", "--json", "--exact", local]))
            info_r = json.loads(must_out(["info", "--json", "--exact", url]))
            expect(without(info_r, "path", "remote") == without(info_l, "path"), name + ": info differs")
            expect(info_r["path"] == url and info_r["remote"]["requests"] > 0, name + ": " + str(info_r))
            for args in ([], ["--format", "raw"], ["--format", "jsonl", "1:7"], ["::3"], ["-1"],
                         ["--sample", "25", "--seed", "4"], ["--shuffle", "--seed", "9"],
                         ["--sample", "5", "--distinct"]):
                expect(must_out(["cat", url, *args]) == must_out(["cat", local, *args]),
                       "%s: cat %s differs" % (name, args))
            ids = os.path.join(d, "ids")
            with open(ids, "w") as f:
                f.write("3\n0\n3\n1\n")
            expect(must_out(["cat", url, "--indices-from", ids, "--format", "raw"]) ==
                   must_out(["cat", local, "--indices-from", ids, "--format", "raw"]), name + ": --indices-from")
            expect(must_out(["digest", url]).split()[0] == must_out(["digest", local]).split()[0], name + ": digest")
            v = json.loads(must_out(["verify", "--json", url]))
            expect(v["valid"] and v["length"] == info_l["length"] and v["remote"]["bytes"] > 0, str(v))
        # A root: found by its marker, streams and all.
        root_l, root_r = s["root"], web.http + "/dataset"
        expect(must_out(["cat", "--format", "tar", root_r]) == must_out(["cat", "--format", "tar", root_l]),
               "cat --format tar of the root differs")
        info = json.loads(must_out(["info", "--json", root_r]))
        expect(sorted(info["streams"]) == ["cls", "json", "png"] and info["lengths_agree"], str(info))
        v = json.loads(must_out(["verify", "--json", root_r]))
        expect(v["valid"] and v["length"] == 10, str(v))
        # Sources of the commands that write a local store.
        out = os.path.join(d, "out")
        os.makedirs(out)
        must(["recompress", "--codec", "raw", web.http + "/text", os.path.join(out, "text_raw")])
        must(["concat", web.http + "/tokens", web.http + "/tokens", os.path.join(out, "tokens2")])
        must(["concat", s["tokens"], s["tokens"], os.path.join(out, "tokens2_local")])
        expect(must_out(["digest", os.path.join(out, "text_raw")]).split()[0] ==
               must_out(["digest", s["text"]]).split()[0], "recompress of a URL")
        expect(must_out(["digest", os.path.join(out, "tokens2")]).split()[0] ==
               must_out(["digest", os.path.join(out, "tokens2_local")]).split()[0], "concat of URLs")
        must(["train-dict", "--size", "1K", web.http + "/text", "-o", os.path.join(out, "r.dict")])
        must(["train-dict", "--size", "1K", s["text"], "-o", os.path.join(out, "l.dict")])
        expect(open(os.path.join(out, "r.dict"), "rb").read() == open(os.path.join(out, "l.dict"), "rb").read(),
               "train-dict of a URL")
        # view of a remote root and a remote store: the API answers as for the local ones.
        local_view = view_helpers.ViewServer([root_l, s["images"]])
        remote_view = view_helpers.ViewServer([root_r, web.http + "/images"])
        try:
            for route, params in (("api/overview", {"path": 0}), ("api/overview", {"path": 1}),
                                  ("api/records", {"path": 0, "stream": 2, "offset": 0, "limit": 5}),
                                  ("api/record", {"path": 0, "stream": 2, "id": 3}),
                                  ("api/picture", {"path": 1, "stream": 0, "id": 3}),
                                  ("api/hex", {"path": 1, "stream": 0, "id": 1, "length": 64})):
                sl, _, bl = local_view.get(route, params)
                sr, _, br = remote_view.get(route, params)
                expect(sl == sr == 200, "%s: %d / %d" % (route, sl, sr))
                expect(bl.replace(root_l.encode(), b"P").replace(s["images"].encode(), b"P") ==
                       br.replace(root_r.encode(), b"P").replace((web.http + "/images").encode(), b"P"),
                       "view %s %s differs" % (route, params))
        finally:
            local_view.stop()
            remote_view.stop()


@case
def https_is_verified_and_offers_http2(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "s"), 2000)
    with WebServer(www) as web:
        url = web.https + "/s"
        fails(["info", url], says=["cannot open '" + url + "/meta.zr'", "certificate"])
        expect(must_out(["--cacert", web.cacert, "digest", url]).split()[0] ==
               must_out(["digest", os.path.join(www, "s")]).split()[0], "digest over HTTPS")
        protocols = {line.split()[2] for line in web.access_log() if " 206 " in line and "/s/" in line}
        expect("HTTP/2.0" in protocols, "no HTTP/2 request in %s" % protocols)


@case
def info_and_a_head_transfer_little(d):
    import numpy as np
    www = os.path.join(d, "www")
    store = os.path.join(www, "big")
    os.makedirs(www)
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", "--codec", "raw", store])
    must(["append-npy", store, "-"], stdin=npy_bytes(np.arange(10**6, dtype=np.int64)))
    with WebServer(www) as web:
        info = json.loads(must_out(["info", "--json", web.http + "/big"]))
        expect(info["length"] == 10**6 and info["sampled_records"] == 2048, str(info))
        got = info["remote"]["bytes"]
        expect(got <= 64 << 10, "info of 10^6 records transferred %d bytes" % got)
        FIGURES.append("info of a 10^6-record store over HTTP: %d requests, %d bytes" % (info["remote"]["requests"], got))
        out, err = must(["-v", "cat", "--format", "raw", web.http + "/big", "0:10"])
        expect(out == np.arange(10, dtype=np.int64).tobytes(), "cat 0:10")
        requests, got = verbose_stats(err)
        expect(got <= (64 << 10) + len(out), "cat 0:10 transferred %d bytes" % got)
        FIGURES.append("cat 0:10 of a 10^6-record store over HTTP: %d requests, %d bytes" % (requests, got))
        exact = json.loads(must_out(["info", "--json", "--exact", web.http + "/big"]))
        expect(exact["sampled_records"] is None and exact["remote"]["bytes"] > 16 * 10**6, "--exact reads the table")
        # view's overview describes it as info does: from the sample, not 16 MB of table.
        logged = len(web.access_log())
        v = view_helpers.ViewServer([web.http + "/big"])
        try:
            o = v.json("api/overview", {"path": 0})["streams"][0]
            expect(o["sampled_records"] == 2048 and o["length"] == 10**6 and o["logical_bytes"] == 8 * 10**6,
                   "view overview of a remote store: %s" % {k: o[k] for k in ("sampled_records", "length")})
        finally:
            v.stop()
        sent = [int(line.split()[-1]) for line in web.access_log()[logged:] if "/big/meta.zr" in line]
        # The sample's pieces, and (a Dense integer store is a label stream) the table of the
        # 65,536 records whose values it counts: about 1 MiB, not the 16 MB a whole table is.
        expect(sent and sum(sent) <= 1100 * 1024, "view read %d bytes of the table: %s" % (sum(sent), sent))


def bytes_by_file(log_lines, prefix):
    """{file: body bytes sent} of the access log's lines for files under prefix."""
    out = {}
    for line in log_lines:
        parts = line.split()
        if len(parts) >= 2 and parts[1].startswith(prefix):
            name = parts[1][len(prefix):]
            out[name] = out.get(name, 0) + int(parts[-1])
    return out


@case
def random_gathers_fetch_each_byte_once(d):
    import random
    import numpy as np
    www = os.path.join(d, "www")
    os.makedirs(www)
    rng = np.random.default_rng(5)
    must(["create", "--dense", "--dtype", "|u1", "--shape", "10240", "--codec", "raw", os.path.join(www, "big")])
    must(["append-npy", os.path.join(www, "big"), "-"],
         stdin=npy_bytes(rng.integers(0, 256, size=(20000, 10240), dtype=np.uint8)))
    lines = [json.dumps({"id": i, "t": "x" * int(n)}) for i, n in enumerate(rng.integers(40, 160, size=2000))]
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", os.path.join(www, "tiny")])
    must(["append-stream", os.path.join(www, "tiny")], stdin=("\n".join(lines) + "\n").encode())
    tiny_size = sum(os.path.getsize(os.path.join(www, "tiny", f)) for f in os.listdir(os.path.join(www, "tiny")))
    random.seed(8)
    with WebServer(www) as web:
        for name, n, count in (("big", 20000, 500), ("big", 20000, 5000), ("tiny", 2000, 500), ("tiny", 2000, 5000)):
            ids = [random.randrange(n) for _ in range(count)]
            path = os.path.join(d, "ids-%s-%d" % (name, count))
            with open(path, "w") as f:
                f.write("\n".join(map(str, ids)) + "\n")
            logged = len(web.access_log())
            out = must_out(["cat", "--format", "raw", web.http + "/" + name, "--indices-from", path])
            expect(out == must_out(["cat", "--format", "raw", os.path.join(www, name), "--indices-from", path]),
                   "%s %d: the records differ" % (name, count))
            sent = bytes_by_file(web.access_log()[logged:], "/%s/" % name)
            data = sum(v for k, v in sent.items() if k.startswith("data_"))
            table = sent.get("meta.zr", 0)
            if name == "big":
                distinct = len(set(ids)) * 10240
                expect(data <= 1.1 * distinct, "%d random 10 KiB records: %d data bytes for %d distinct"
                       % (count, data, distinct))
                FIGURES.append("%d random 10 KiB records over HTTP: %.3fx the distinct records' bytes (+%d of table)"
                               % (count, data / distinct, table))
            else:
                expect(data + table <= tiny_size, "%d random ~100-byte records: %d bytes for a %d-byte store"
                       % (count, data + table, tiny_size))
                FIGURES.append("%d random ~100-byte records over HTTP: %d bytes received, the store holds %d"
                               % (count, data + table, tiny_size))


@case
def records_repeated_across_windows_are_fetched_once(d):
    # 3,000 IDs drawn from 300 records, read in windows of 400 records (--window-mib 8,
    # half of it for each window): nearly every record comes back in several windows, and
    # none may be fetched twice (the copies kept may take another half window: 3 MB here).
    import random
    import numpy as np
    www = os.path.join(d, "www")
    os.makedirs(www)
    rng = np.random.default_rng(6)
    must(["create", "--dense", "--dtype", "|u1", "--shape", "10240", "--codec", "raw", os.path.join(www, "big")])
    must(["append-npy", os.path.join(www, "big"), "-"],
         stdin=npy_bytes(rng.integers(0, 256, size=(3000, 10240), dtype=np.uint8)))
    random.seed(9)
    pool = random.sample(range(3000), 300)
    ids = [random.choice(pool) for _ in range(3000)]
    path = os.path.join(d, "ids")
    with open(path, "w") as f:
        f.write("\n".join(map(str, ids)) + "\n")
    with WebServer(www) as web:
        for window in ("8", "64"):
            logged = len(web.access_log())
            args = ["cat", "--format", "raw", "--window-mib", window, "--indices-from", path]
            out = must_out(args[:1] + [web.http + "/big"] + args[1:])
            expect(out == must_out(args[:1] + [os.path.join(www, "big")] + args[1:]), "the records differ")
            sent = bytes_by_file(web.access_log()[logged:], "/big/")
            data = sum(v for k, v in sent.items() if k.startswith("data_"))
            distinct = len(set(ids)) * 10240
            expect(data <= 1.1 * distinct, "--window-mib %s: %d data bytes for %d distinct (%.2fx)"
                   % (window, data, distinct, data / distinct))
            FIGURES.append("3,000 IDs of 300 records, windows of %s MiB: %.3fx the distinct records' bytes"
                           % (window, data / distinct))


@case
def dropped_connections_and_500s_are_retried(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "s"), 6000)
    want = must_out(["digest", os.path.join(www, "s")]).split()[0].decode()
    with WebServer(www) as web, FaultProxy(web.http_port) as proxy:
        for fault in ("drop_every", "error_every"):
            proxy.drop_every = proxy.error_every = 0
            # The client's request sequence repeats run to run: without forgetting the first
            # run's faults, the second would meet only requests already faulted and skip them.
            proxy.clear_faults()
            setattr(proxy, fault, 3)
            report = json.loads(must_out(["digest", "--json", proxy.url + "/s"]))
            expect(report["stores"][0]["digest"] == want, "%s: digest differs: %s" % (fault, report))
            expect(report["remote"]["retries"] > 0, "%s: no retries: %s" % (fault, report))
            expect(must_out(["cat", "--format", "raw", proxy.url + "/s"]) ==
                   must_out(["cat", "--format", "raw", os.path.join(www, "s")]), fault + ": cat differs")
            FIGURES.append("%s=3: digest equal after %d retries of %d requests" % (
                fault, report["remote"]["retries"], report["remote"]["requests"]))
        proxy.drop_every = 0
        proxy.error_every = 1
        proxy.repeat = True
        fails(["info", proxy.url + "/s"], says=["cannot open '" + proxy.url + "/s/meta.zr'", "HTTP 500",
                                                 "(after 6 tries)"])


@case
def a_server_ignoring_range_is_refused_unless_the_file_is_small(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "big"), 40000)  # meta.zr: 644 KiB; data files ~500 KiB
    dense_store(os.path.join(www, "small"), 100)
    must(["create", "--dense", "--dtype", "<i4", "--shape", "4", os.path.join(www, "wide")])
    import numpy as np
    must(["append-npy", os.path.join(www, "wide"), "-"],
         stdin=npy_bytes(np.zeros((100000, 4), dtype=np.int32)))  # meta.zr: 1.6 MB
    with WebServer(www) as web, FaultProxy(web.http_port) as proxy:
        proxy.ignore_range = True
        expect(must_out(["digest", proxy.url + "/small"]).split()[0] ==
               must_out(["digest", os.path.join(www, "small")]).split()[0], "a small store served whole")
        fails(["info", proxy.url + "/wide"], says=["cannot open '" + proxy.url + "/wide/meta.zr'",
                                                    "the server ignores Range requests"])


@case
def a_store_republished_while_read_fails(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "s"), 50000)
    data0 = os.path.join(www, "s", "data_0.zr")
    other = os.path.join(d, "other")
    # Same size, other bytes: only the validator tells the two apart.
    with open(data0, "rb") as f:
        body = bytearray(f.read())
    body[-1] ^= 0xFF
    with open(other, "wb") as f:
        f.write(body)
    with WebServer(www) as web, FaultProxy(web.http_port) as proxy:
        replaced = []
        lock = threading.Lock()

        def before(path, headers):
            rng = headers.get("Range", "")
            with lock:
                if not path.endswith("/data_0.zr") or rng.startswith("bytes=0-") or replaced:
                    return
                shutil.copyfile(other, data0 + ".new")
                st = os.stat(data0)
                os.utime(data0 + ".new", (st.st_atime + 10, st.st_mtime + 10))
                os.replace(data0 + ".new", data0)
                replaced.append(path)

        proxy.before = before
        err = fails(["cat", "--format", "raw", "-o", os.path.join(d, "out"), proxy.url + "/s"],
                    says=["data_0.zr", "changed since it was opened", "republished"])
        expect(replaced, "the file was never replaced: " + err)


@case
def errors_are_one_line_and_never_show_secrets(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "s"), 10)
    os.makedirs(os.path.join(www, "forbidden", "s"))
    with WebServer(www) as web:
        host = "127.0.0.1:%d" % web.http_port
        err = fails(["info", "http://alice:s3cret@%s/nothing?X-Amz-Signature=SIGSECRET" % host],
                    says=["http://%s/nothing?" % host, "is not a zrecord store"])
        expect("s3cret" not in err and "SIGSECRET" not in err and "alice" not in err, err)
        out = must_out(["digest", "http://%s/s?token=TOKSECRET" % host])  # the query rides along to every file
        expect(b"TOKSECRET" not in out, out)
        fails(["cat", web.http + "/forbidden/s"], says=["HTTP 403", "access denied"])
        fails(["info", web.http + "/loop/s"], says=["more than 5 redirects"])
        fails(["info", "http://127.0.0.1:1/s"], says=["cannot open 'http://127.0.0.1:1/s/meta.zr'"])
        err = fails(["digest", web.http + "/loop/s"], says=["more than 5 redirects"])
        expect(err.count("\n") == 1, "more than one line: " + err)


@case
def writers_refuse_urls(d):
    www = os.path.join(d, "www")
    dense_store(os.path.join(www, "s"), 10)
    npy = os.path.join(d, "x.npy")
    import numpy as np
    with open(npy, "wb") as f:
        f.write(npy_bytes(np.zeros((2, 16), dtype=np.int32)))
    before = tree_digests(os.path.join(www, "s"))
    with WebServer(www) as web:
        url = web.http + "/s"
        rc, _, err = run_zrec(["append-npy", url, npy])
        expect(rc != 0 and "URL" in err and len(err.strip().splitlines()) == 1, "append-npy to a URL: %d %s" % (rc, err))
        fails(["concat", "--consume", url, url, os.path.join(d, "dst")], rc_want=2, says=["is a URL"])
    expect(tree_digests(os.path.join(www, "s")) == before, "the served store changed")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-remote-", figures=FIGURES))
