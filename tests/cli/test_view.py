#!/usr/bin/env python3
"""zrec view's server and API, against what the other commands say of the same stores.

What the API returns:
- overview: the keys `zrec info --json` has, equal to its values; histograms whose counts
  add up to the length;
- pages: rows in selection order (cat's parser: a bad selection is 400 with cat's own
  message), a seeded sample exactly `zrec cat --sample N --seed K`'s IDs, keys from
  --keys or a root's __key__ stream, token records as text with --vocab, renderings (text, pretty JSON, NumPy-style numbers, encoded images, pictures);
- pictures: PNGs decoded here equal to the record's pixels (full size) and box-filtered
  down for thumbnails; encoded images byte for byte as stored, with their type;
- one record: shard, offset and sizes; its hex view is the stored bytes; its .npy equals
  `zrec cat`'s record;
- verify: valid on a sound store, problems with record IDs on a damaged copy;
- filters: label=STREAM:VALUE and q=TEXT give exactly the matching samples of the
  source data, each request examining at most `scan` positions and returning a cursor,
  on local and remote (nginx) stores; class names in the grid's cells.
Safety (the issue's "Safe by default", one check each):
- zrec links no HTTP, TLS, brotli or PNG library (readelf NEEDED): nothing at process
  start for other commands;
- the token on every request, the Host header (DNS rebinding), CSP and nosniff on every
  response (errors and static files too), no record bytes as HTML, no path from a URL;
- bounded: a head over 16 KiB or with too many header lines gets 431, a slow head 408 at
  its deadline, connections past the limit 503, and the server serves on after all of it;
- a 1M-record store's overview reads its table, not its payloads (rchar), and peak RSS
  stays far below the store's size;
- nothing written: the stores and the working directory are byte-identical after;
- exits 130 on SIGINT, 143 on SIGTERM; --bind elsewhere warns; usage errors exit 2.

Usage: ZREC=build/zrec /usr/bin/python3 tests/cli/test_view.py
"""
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import (SANITIZED, expect, fails, must, must_out, npy_bytes, records, require_zrec, run_all,  # noqa: E402
                         tree_hash, wait_until)
from view_helpers import ViewServer, make_stores, png_pixels  # noqa: E402

ZREC = require_zrec("test_view")
ROOT = tempfile.mkdtemp(prefix="zrec-view-test.")
S = None       # the stores (make_stores)
SERVER = None  # one server over all four


def setup():
    global S, SERVER
    S = make_stores(ROOT)
    SERVER = ViewServer([S["images"], S["tokens"], S["text"], S["root"]],
                        ["--keys", "", "--keys", "", "--keys", "", "--keys", S["keys"]])


def test_links_no_server_library():
    out = subprocess.run(["readelf", "-d", ZREC], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    bad = [n for n in needed if any(w in n for w in ("httplib", "libssl", "brotli", "png"))]
    expect(needed and not bad, "zrec loads %s at every start (NEEDED %s)" % (bad, needed))
    module = os.path.join(os.path.dirname(ZREC), "zrec-view-http.so")
    expect(os.path.exists(module), "no %s next to zrec" % module)


def test_paths():
    p = SERVER.json("api/paths")
    expect([x["path"] for x in p["paths"]] == [S["images"], S["tokens"], S["text"], S["root"]], "paths %s" % p)
    expect(p["paths"][3]["root"] and p["paths"][3]["streams"] == ["cls", "json", "png"], "root %s" % p["paths"][3])
    expect(p["paths"][3]["keys"] and not p["paths"][0]["keys"], "keys flags %s" % p)


def test_overview_is_info():
    for index, path in enumerate([S["images"], S["tokens"], S["text"]]):
        info = json.loads(must_out(["info", "--json", path]))
        o = SERVER.json("api/overview", {"path": index})["streams"][0]
        for key in ("kind", "dtype", "ndim", "item_shape", "codec", "shards", "length", "logical_bytes",
                    "payload_bytes", "disk_bytes", "compression_ratio", "dict_bytes", "dict_id", "checksum",
                    "writer_active"):
            expect(o[key] == info[key], "%s: overview %s = %r, info says %r" % (path, key, o[key], info[key]))
        for name, st in info["record_sizes"].items():
            if name == "dims":
                continue
            got = o["record_sizes"][name]
            for k in ("min", "p50", "p99", "max"):
                expect(got[k] == st[k], "%s %s %s: %r, info %r" % (path, name, k, got[k], st[k]))
            h = got["histogram"]
            expect(sum(h["counts"]) == info["length"] and h["edges"][0] == st["min"] and len(h["counts"]) <= 60 and
                   len(h["edges"]) == len(h["counts"]) + 1, "%s %s histogram %s" % (path, name, h))
            expect(h["edges"][-1] == st["max"] + 1 and h["edges"] == sorted(set(h["edges"])),
                   "%s histogram's edges %s" % (name, h["edges"]))
            # Sizes spanning 64x their smallest or more are binned on a log scale.
            want = "log" if st["max"] >= 64 * max(st["min"], 1) else "linear"
            expect(h["scale"] == want, "%s %s: scale %s, want %s" % (path, name, h["scale"], want))
            if want == "linear" and len(h["edges"]) > 2:
                widths = {b - a for a, b in zip(h["edges"][:-1], h["edges"][1:-1])}
                expect(len(widths) == 1, "%s linear bins of widths %s" % (name, widths))
    # Per-dimension statistics as info --dims: ndim 1 from the table, ndim 3 on demand.
    tokens = SERVER.json("api/overview", {"path": 1})["streams"][0]["record_sizes"]["dims"]
    info = json.loads(must_out(["info", "--json", S["tokens"]]))["record_sizes"]["dims"]
    expect([{k: d[k] for k in ("min", "p50", "p99", "max")} for d in tokens] == info, "tokens dims %s" % tokens)
    import numpy as np
    rag = os.path.join(ROOT, "rag3")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "3", rag])
    must(["append-npy", rag, "-"], stdin=b"".join(npy_bytes(np.zeros((3, 10 + i, 20 + 2 * i), np.uint8))
                                                  for i in range(20)))
    v = ViewServer([rag])
    try:
        expect("dims" not in v.json("api/overview", {"path": 0})["streams"][0]["record_sizes"], "dims unasked")
        got = v.json("api/overview", {"path": 0, "dims": 1})["streams"][0]["record_sizes"]["dims"]
        want = json.loads(must_out(["info", "--dims", "--json", rag]))["record_sizes"]["dims"]
        expect([{k: d[k] for k in ("min", "p50", "p99", "max")} for d in got] == want, "dims %s, info %s" % (got, want))
        expect(all(sum(d["histogram"]["counts"]) == 20 for d in got), "dims histograms %s" % got)
    finally:
        v.stop()
    root = SERVER.json("api/overview", {"path": 3})
    expect([s["name"] for s in root["streams"]] == ["cls", "json", "png"] and root["lengths_agree"], "root %s" % root)


def test_pages_follow_selection():
    page = SERVER.json("api/records", {"path": 1, "sel": "-5:,3,::-17", "limit": 100})
    want = [35, 36, 37, 38, 39, 3, 39, 22, 5]
    expect([r["id"] for r in page["rows"]] == want, "ids %s" % [r["id"] for r in page["rows"]])
    page = SERVER.json("api/records", {"path": 1, "sel": "10:", "offset": 5, "limit": 7})
    expect([r["id"] for r in page["rows"]] == list(range(15, 22)) and page["total"] == 30, "paging %s" % page)


def test_sample_is_cats():
    for sel, n, seed in (("", 25, 0), ("", 7, 12345), ("5:30", 40, 3), ("::-3", 11, 99)):
        params = {"path": 1, "sample": n, "seed": seed, "limit": 100}
        if sel:
            params["sel"] = sel
        got = [r["id"] for r in SERVER.json("api/records", params)["rows"]]
        args = ["cat", S["tokens"]] + ([sel] if sel else []) + ["--sample", str(n), "--seed", str(seed),
                                                                "--format", "jsonl", "--with-ids"]
        want = [json.loads(line)["id"] for line in must_out(args).decode().splitlines()]
        expect(got == want, "sample %s n=%d seed=%d: %s, cat says %s" % (sel, n, seed, got, want))


def test_bad_input_is_400_with_cats_message():
    for sel in ("5:x", "1,,2", "::0", "99999999999999999999"):
        status, _, body = SERVER.get("api/records", {"path": 1, "sel": sel})
        rc, _, err = (lambda p: (p.returncode, p.stdout, p.stderr.decode()))(
            subprocess.run([ZREC, "cat", S["tokens"], sel], capture_output=True))
        cat_message = err.splitlines()[0].split("zrec cat: ", 1)[1]
        expect(status == 400 and json.loads(body)["error"] == cat_message,
               "sel %r: %d %s, cat says %r" % (sel, status, body, cat_message))
    for params, want in (({"path": 1, "id": "40"}, "index 40 is out of range for a store of 40 records"),
                         ({"path": 1, "id": "0:3"}, "parameter 'id': '0:3' is not one record index"),
                         ({"path": 1, "id": "-41"}, "index -41 is out of range for a store of 40 records")):
        status, _, body = SERVER.get("api/record", params)
        expect(status == 400 and json.loads(body)["error"] == want, "%s: %d %s" % (params, status, body))
    for route, params, code in (("api/records", {"path": 9}, 404), ("api/record", {"path": 3, "stream": 3, "id": 0}, 404),
                                ("api/records", {"path": "0x1"}, 400), ("api/records", {"path": 0, "limit": 101}, 400),
                                ("api/records", {"path": 0, "limit": 0}, 400), ("api/nothing", {}, 404),
                                ("api/verify", {"job": 77}, 404)):
        status, hdrs, body = SERVER.get(route, params)
        expect(status == code and hdrs["content-type"] == "application/json" and "error" in json.loads(body),
               "%s %s: %d %s" % (route, params, status, body))
    status, hdrs, _ = SERVER.get("api/records", {"path": 0}, method="PUT")
    expect(status == 405, "PUT: %d" % status)
    status, hdrs, _ = SERVER.get("api/verify", {"path": 0}, method="GET")
    expect(status == 405 and hdrs.get("allow") == "POST", "GET api/verify without job: %d %s" % (status, hdrs))


def test_renderings():
    import numpy as np
    text = SERVER.json("api/records", {"path": 2, "limit": 3})["rows"]
    expect(text[0]["cells"][0]["look"] == "text" and text[0]["cells"][0]["text"] == S["text_data"][0], "text %s" % text[0])
    pretty = json.dumps(json.loads(S["text_data"][1]), indent=2)
    expect(text[1]["cells"][0]["look"] == "json" and text[1]["cells"][0]["text"] == pretty, "json %s" % text[1])
    tok = SERVER.json("api/record", {"path": 1, "id": 0})
    a = S["tokens_data"][0]
    numpy_text = np.array2string(a, separator=" ", threshold=1000, edgeitems=3)
    words = lambda t: t.replace("[", "[ ").split()  # NumPy pads columns; zrec does not
    expect(tok["look"] == "numbers" and tok["summarised"] and words(tok["text"]) == words(numpy_text),
           "numbers %r, numpy %r" % (tok["text"], numpy_text))
    expect((tok["min"], tok["max"], tok["mean"]) == (0.0, 1999.0, 999.5), "stats %s" % tok)
    expect(len(tok["sparkline"]) == 400 and tok["sparkline"][0] == 2.0, "sparkline %s" % tok["sparkline"][:3])
    small = SERVER.json("api/record", {"path": 1, "id": 1})
    b = S["tokens_data"][1]
    want = np.array2string(b, separator=" ", threshold=1000, edgeitems=3)
    expect(words(small["text"]) == words(want), "record 1 %r, numpy %r" % (small["text"][:80], want[:80]))
    row = SERVER.json("api/records", {"path": 3, "limit": 2})["rows"][1]
    expect(row["key"] == "sample_001" and [c["look"] for c in row["cells"]] == ["text", "json", "image"],
           "root row %s" % row)
    expect(row["cells"][2]["mime"] == "image/png", "png member %s" % row["cells"][2])
    page = SERVER.json("api/records", {"path": 0, "limit": 2})
    cell = page["rows"][0]["cells"][0]
    expect(cell["look"] == "pixels" and (cell["width"], cell["height"], cell["channels"]) == (32, 24, 3), "%s" % cell)


def test_pictures():
    import numpy as np
    for id_ in (0, 7):
        status, hdrs, body = SERVER.get("api/picture", {"path": 0, "id": id_, "size": "full"})
        w, h, c, px = png_pixels(body)
        want = np.transpose(S["images_data"][id_], (1, 2, 0))
        expect(status == 200 and hdrs["content-type"] == "image/png" and (w, h, c) == (32, 24, 3)
               and px == want.tobytes(), "record %d: PNG %dx%dx%d differs from the record" % (id_, w, h, c))
    # A thumbnail of a larger picture: box-filtered to 160 on its long side.
    big = np.random.default_rng(1).integers(0, 256, size=(400, 320), dtype=np.uint8)
    store = os.path.join(ROOT, "big")
    must(["create", "--dense", "--dtype", "|u1", "--shape", "400,320", store])
    must(["append-npy", store, "-"], stdin=npy_bytes(big[None]))
    v = ViewServer([store])
    try:
        _, hdrs, body = v.get("api/picture", {"path": 0, "id": 0})
        w, h, c, px = png_pixels(body)
        expect((w, h, c) == (128, 160, 1), "thumbnail %dx%dx%d, want 128x160x1" % (w, h, c))
        got = np.frombuffer(px, dtype=np.uint8).reshape(160, 128)
        # Output pixel (y, x) averages rows [y*400//160, (y+1)*400//160) and columns likewise, rounded.
        ys = [(y * 400 // 160, (y + 1) * 400 // 160) for y in range(160)]
        xs = [(x * 320 // 128, (x + 1) * 320 // 128) for x in range(128)]
        want = np.array([[int(big[y0:y1, x0:x1].sum() + (y1 - y0) * (x1 - x0) // 2) // ((y1 - y0) * (x1 - x0))
                          for x0, x1 in xs] for y0, y1 in ys], dtype=np.uint8)
        expect(np.array_equal(got, want), "thumbnail pixels differ from the box filter")
    finally:
        v.stop()
    # Encoded images go out as stored, with their type.
    for i in (0, 9):
        status, hdrs, body = SERVER.get("api/picture", {"path": 3, "stream": 2, "id": i})
        expect(status == 200 and hdrs["content-type"] == "image/png" and body == S["root_data"][i]["png"],
               "tar member %d: %d %s, %d bytes" % (i, status, hdrs["content-type"], len(body)))
    status, hdrs, body = SERVER.get("api/picture", {"path": 2, "id": 1})
    expect(status == 400 and hdrs["content-type"] == "application/json", "text as picture: %d" % status)


def test_record_hex_npy():
    import numpy as np
    info = json.loads(must_out(["info", "--json", S["tokens"]]))
    r = SERVER.json("api/record", {"path": 1, "id": 13})
    expect(r["shard"] == 13 % info["shards"] and r["codec"] == "zstd" and r["decoded"], "record %s" % r)
    data = open(os.path.join(S["tokens"], "data_%d.zr" % r["shard"]), "rb").read()
    stored = data[r["offset"]:r["offset"] + r["stored_bytes"]]
    h = SERVER.json("api/hex", {"path": 1, "id": 13, "offset": 16, "length": 40})
    got = bytes.fromhex("".join(line[10:58] for line in h["hex"]))
    expect(h["length"] == 40 and got == stored[16:56], "hex %s vs stored bytes" % h["hex"])
    status, hdrs, body = SERVER.get("api/npy", {"path": 1, "id": 13})
    a = np.load(io.BytesIO(body))
    expect(status == 200 and hdrs["content-type"] == "application/octet-stream"
           and hdrs["content-disposition"] == 'attachment; filename="record-13.npy"'
           and a.dtype == np.dtype("<i4") and np.array_equal(a, records(S["tokens"])[13]), "npy download")
    expect(r["npy_bytes"] == len(body), "npy_bytes %d, download %d" % (r["npy_bytes"], len(body)))


def test_verify():
    job = SERVER.json("api/verify", {"path": 1}, method="POST")["job"]
    st = {}
    for _ in range(400):
        st = SERVER.json("api/verify", {"job": job})
        if st["finished"]:
            break
        time.sleep(0.05)
    expect(st["finished"] and st["valid"] and st["records_decoded"] == 40 and st["problems"] == [], "verify %s" % st)
    # A damaged copy: record 0's zstd frame no longer starts with the magic number.
    bad = os.path.join(ROOT, "tokens_bad")
    must(["recompress", "--codec", "zstd", "--shards", "1", S["tokens"], bad])
    with open(os.path.join(bad, "data_0.zr"), "r+b") as f:
        f.write(b"\0")  # record 0's frame magic
    v = ViewServer([bad])
    try:
        job = v.json("api/verify", {"path": 0}, method="POST")["job"]
        for _ in range(400):
            st = v.json("api/verify", {"job": job})
            if st["finished"]:
                break
            time.sleep(0.05)
        expect(st["finished"] and not st["valid"] and st["problems"] and st["problems"][0]["id"] == 0
               and st["problems"][0]["rule"] == "decode", "damaged verify %s" % st)
        page = v.json("api/records", {"path": 0, "limit": 2})
        expect("error" in page["rows"][0]["cells"][0] and "error" not in page["rows"][1]["cells"][0],
               "a broken record shows its error, its neighbour renders: %s" % page["rows"])
    finally:
        v.stop()


def test_token_and_host():
    for route in ("", "app.js", "api/paths", "api/records?path=0"):
        status, hdrs, body = SERVER.get(route, token=False)
        expect(status == 403 and b"token" in body, "/%s without token: %d" % (route, status))
    status, _, _ = SERVER.get("api/paths", headers={"Host": "127.0.0.1:%d" % SERVER.port})
    expect(status == 200, "good Host refused")
    for host in ("evil.example:%d" % SERVER.port, "127.0.0.1:1", "localhost", "127.0.0.1.nip.io:%d" % SERVER.port):
        status, _, body = SERVER.get("api/paths", headers={"Host": host})
        expect(status == 403 and b"Host" in body, "Host %r: %d" % (host, status))
    for host in ("localhost:%d" % SERVER.port, "[::1]:%d" % SERVER.port, "10.1.2.3:%d" % SERVER.port):
        expect(SERVER.get("api/paths", headers={"Host": host})[0] == 200, "Host %r refused" % host)
    reply = SERVER.raw(("GET /%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (SERVER.token, SERVER.host)).encode())
    expect(reply.startswith(b"HTTP/1.1 301") and ("Location: /%s/\r\n" % SERVER.token).encode() in reply,
           "/TOKEN: %r" % reply[:120])
    wrong = SERVER.token[:-1] + ("0" if SERVER.token[-1] != "0" else "1")
    reply = SERVER.raw(("GET /%s/api/paths HTTP/1.1\r\nHost: %s\r\n\r\n" % (wrong, SERVER.host)).encode())
    expect(reply.startswith(b"HTTP/1.1 403"), "wrong token: %r" % reply[:40])
    reply = SERVER.raw(("GET /%s/api/paths HTTP/1.0\r\n\r\n" % SERVER.token).encode())
    expect(reply.startswith(b"HTTP/1.1 403"), "no Host header: %r" % reply[:40])
    for path in ("/%s/../../etc/passwd" % SERVER.token, "/%s/%%2e%%2e/%%2e%%2e/etc/passwd" % SERVER.token,
                 "/%s/api/../../etc/passwd" % SERVER.token, "/%s/style.css/../index.html" % SERVER.token):
        reply = SERVER.raw(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, SERVER.host)).encode())
        expect(reply.split(b" ")[1] in (b"403", b"404") and b"root:" not in reply, "%s: %r" % (path, reply[:60]))


def test_security_headers_everywhere():
    cases = [("", {}), ("app.js", {}), ("style.css", {}), ("favicon.svg", {}), ("api/paths", {}),
             ("api/picture", {"path": 0, "id": 0}), ("api/npy", {"path": 1, "id": 0}), ("api/records", {"path": 9}),
             ("nothing", {}), ("api/records", {"path": 1, "sel": "x"})]
    for route, params in cases:
        status, hdrs, body = SERVER.get(route, params)
        csp = hdrs.get("content-security-policy", "")
        expect("default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
               and hdrs.get("x-content-type-options") == "nosniff" and hdrs.get("referrer-policy") == "no-referrer",
               "/%s: headers %s" % (route, hdrs))
        ctype = hdrs.get("content-type", "")
        expect(ctype.startswith("text/html") == (route == ""), "/%s served as %s" % (route, ctype))
    for token in (True, False):
        status, hdrs, _ = SERVER.get("x", token=token)
        expect(hdrs.get("x-content-type-options") == "nosniff", "refusal without nosniff")
    # A record holding HTML comes out inside JSON, never as a document.
    status, hdrs, body = SERVER.get("api/record", {"path": 2, "id": 1})
    expect(hdrs["content-type"] == "application/json" and b"<script>" in body, "record 1: %s" % hdrs)


def test_limits():
    big = "X-Filler: " + "a" * 17000
    reply = SERVER.raw(("GET /%s/api/paths HTTP/1.1\r\nHost: %s\r\n%s\r\n\r\n" % (SERVER.token, SERVER.host, big)).encode())
    expect(reply.startswith(b"HTTP/1.1 431"), "17 KB header: %r" % reply[:50])
    many = "".join("X-%d: y\r\n" % i for i in range(3000))
    reply = SERVER.raw(("GET /%s/api/paths HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (SERVER.token, SERVER.host, many)).encode())
    expect(reply.startswith(b"HTTP/1.1 431"), "3000 header lines: %r" % reply[:50])
    reply = SERVER.raw(("POST /%s/api/verify?path=0 HTTP/1.1\r\nHost: %s\r\nContent-Length: 100000\r\n\r\n"
                        % (SERVER.token, SERVER.host)).encode() + b"z" * 100000)
    expect(reply.startswith(b"HTTP/1.1 413"), "100 KB body: %r" % reply[:50])
    long_uri = "/%s/api/records?path=0&sel=%s" % (SERVER.token, "1," * 5000)
    reply = SERVER.raw(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (long_uri, SERVER.host)).encode())
    expect(reply.split(b" ")[1] in (b"414", b"431"), "10 KB URI: %r" % reply[:50])


def test_slow_clients():
    # A head that trickles in: closed with 408 at its 10 s deadline, while others are served.
    slow = socket.create_connection(("127.0.0.1", SERVER.port), timeout=30)
    slow.sendall(b"GET /")
    start = time.monotonic()
    served = 0
    while time.monotonic() - start < 3:
        slow.sendall(b"a")
        served += SERVER.get("api/paths")[0] == 200
        time.sleep(0.5)
    slow.settimeout(15)
    reply = b""
    try:
        while True:
            c = slow.recv(4096)
            if not c:
                break
            reply += c
    except (ConnectionResetError, socket.timeout):
        pass
    took = time.monotonic() - start
    slow.close()
    expect(reply.startswith(b"HTTP/1.1 408") and 9.5 <= took <= 20 and served >= 3,
           "slow head: %r after %.1f s (%d served meanwhile)" % (reply[:30], took, served))
    # Connections past the limit get 503; once the idle ones time out, service resumes.
    idle = [socket.create_connection(("127.0.0.1", SERVER.port), timeout=10) for _ in range(128)]
    wait_until(lambda: SERVER.open_connections() >= 128, "the server holding the 128 idle connections",
               proc=SERVER.proc)
    reply = SERVER.raw(b"GET / HTTP/1.1\r\n\r\n")
    expect(reply.startswith(b"HTTP/1.1 503"), "connection 129: %r" % reply[:40])
    for s in idle:
        s.settimeout(10)
    closed = sum(1 for s in idle if s.recv(1) == b"")  # the server closes each after its idle timeout
    for s in idle:
        s.close()
    expect(closed == 128, "%d of 128 idle connections closed by the server" % closed)
    SERVER.conn = None
    expect(SERVER.get("api/paths")[0] == 200, "no service after the idle connections")


def test_million_record_overview_reads_no_payload():
    import numpy as np
    n = 200000 if SANITIZED else 1000000
    store = os.path.join(ROOT, "million")
    must(["create", "--dense", "--dtype", "<u8", "--shape", "16", "--codec", "raw", store])
    must(["append-npy", store, "-"], stdin=npy_bytes(np.arange(n * 16, dtype=np.uint64).reshape(n, 16)))
    v = ViewServer([store])
    try:
        before = v.read_bytes()
        start = time.monotonic()
        o = v.json("api/overview", {"path": 0})["streams"][0]
        took = time.monotonic() - start
        read = v.read_bytes() - before
        payload = n * 128
        expect(o["length"] == n and o["record_sizes"]["logical"]["p50"] == 128, "overview %s" % o["length"])
        expect(read < n * 16 + (4 << 20), "overview read %d bytes: more than the %d-byte table (payload %d)"
               % (read, n * 16, payload))
        rss = v.peak_rss_mib()
        expect(SANITIZED or rss < 100, "peak RSS %.0f MiB for a %d MiB store" % (rss, payload >> 20))
        print("figure: view overview of %d records: %.2f s, %.1f MiB read (payload %d MiB), peak RSS %.0f MiB"
              % (n, took, read / 2**20, payload >> 20, rss))
    finally:
        v.stop()


def test_nothing_written_and_exit_codes():
    cwd = tempfile.mkdtemp(dir=ROOT)
    stores = [S["images"], S["tokens"], S["text"]] + [os.path.join(S["root"], x) for x in ("cls", "json", "png")]
    before = [tree_hash(p) for p in stores]
    for sig, rc_want in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        v = ViewServer([S["images"], S["tokens"], S["text"], S["root"]], cwd=cwd)
        v.json("api/records", {"path": 3})
        v.get("api/picture", {"path": 0, "id": 1})
        v.json("api/overview", {"path": 2})
        rc = v.stop(sig)
        expect(rc == rc_want, "signal %d: exit %d, want %d (%s)" % (sig, rc, rc_want, v.stderr))
    expect([tree_hash(p) for p in stores] == before, "a store changed")
    expect(os.listdir(cwd) == [], "zrec view wrote %s" % os.listdir(cwd))


def test_bind_and_usage():
    v = ViewServer([S["images"]], ["--bind", "0.0.0.0"])
    try:
        expect(v.get("api/paths")[0] == 200, "0.0.0.0: 127.0.0.1 not served")
    finally:
        v.stop()
    expect("warning: listening on 0.0.0.0, not on this machine alone" in v.stderr, "no warning: %s" % v.stderr)
    v = ViewServer([S["images"]])
    v.stop()
    expect("warning" not in v.stderr, "loopback warned: %s" % v.stderr)
    fails(["view", "--bind", "localhost", S["images"]], 2, ["--bind 'localhost' is not a numeric IPv4 or IPv6 address"])
    fails(["view", "--keys", "a", "--keys", "b", S["images"]], 2, ["2 --keys for 1 PATH"])
    fails(["view", "--port", "70000", S["images"]], 2, ["--port: '70000' is out of range (0 to 65535)"])
    fails(["view", os.path.join(ROOT, "nothing")], 1, ["does not exist"])
    fails(["view", ROOT + "/tokens/data_0.zr"], 1, ["is not a zrecord store and holds none"])
    fails(["view", "--keys", os.path.join(ROOT, "no.keys"), S["images"]], 1, ["no.keys"])
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    fails(["view", "--port", str(busy.getsockname()[1]), S["images"]], 1, ["cannot listen on 127.0.0.1 port"])
    busy.close()


def test_label_values_and_names():
    # A label stream (Dense scalar <i8): a value histogram, each value named from
    # --labels (a Dense scalar stream used to show a size histogram of identical 8-byte
    # records); past 256 distinct values, the counts are null; other stores have none.
    v = ViewServer([S["labels"]], ["--labels", "labels=" + S["classes"]])
    try:
        got = v.json("api/overview", {"path": 0})["streams"][0]["values"]
        expect(got == {"sampled": 30, "distinct": 2, "counts": [{"value": 0, "count": 10, "name": "cat"},
                                                                 {"value": 1, "count": 20, "name": "dog"}]},
               "values %s" % got)
    finally:
        v.stop()
    expect("values" not in SERVER.json("api/overview", {"path": 0})["streams"][0], "an image store has values")
    many = os.path.join(ROOT, "many_labels")
    must(["create", "--dense", "--dtype", "<u2", "--shape", "scalar", many])
    must(["append-stream", "--parse", "ints", many], stdin=b"".join(b"%d\n" % i for i in range(300)))
    v = ViewServer([many])
    try:
        got = v.json("api/overview", {"path": 0})["streams"][0]["values"]
        expect(got == {"sampled": 300, "distinct": None, "counts": None}, "values %s" % got)
    finally:
        v.stop()
    fails(["view", "--labels", "labels", S["labels"]], 2, ["--labels 'labels': expected STREAM=FILE"])
    fails(["view", "--labels", "labels=" + os.path.join(ROOT, "none.txt"), S["labels"]], 1, ["none.txt"])


def test_keys_from_the_key_stream():
    """A root append-tar built with --keys-stream holds its keys: the page shows them
    without --keys (and --keys, when given, still wins)."""
    import io
    import tarfile
    root = os.path.join(ROOT, "keyed")
    tar_path = os.path.join(ROOT, "keyed.tar")
    keys = ["shard-a/%03d" % i for i in range(5)]
    with tarfile.open(tar_path, "w") as t:
        for k in keys:
            data = k.encode()
            info = tarfile.TarInfo(k + ".txt")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    must(["append-tar", "--keys-stream", root, tar_path])
    v = ViewServer([root])
    try:
        p = v.json("api/paths")
        expect(p["paths"][0]["keys"] and p["paths"][0]["streams"] == ["__key__", "txt"], "paths %s" % p)
        rows = v.json("api/records", {"path": 0, "limit": 10})["rows"]
        expect([r["key"] for r in rows] == keys, "keys %s" % [r.get("key") for r in rows])
    finally:
        v.stop()
    side = os.path.join(ROOT, "side.keys")
    with open(side, "w") as f:
        f.write("".join("other-%d\n" % i for i in range(5)))
    v = ViewServer([root], ["--keys", side])
    try:
        rows = v.json("api/records", {"path": 0, "limit": 2})["rows"]
        expect([r["key"] for r in rows] == ["other-0", "other-1"], "--keys did not win: %s" % rows)
    finally:
        v.stop()


def test_vocab_shows_token_text():
    """--vocab STREAM=FILE: a token stream's records are also shown as the text they
    encode (GPT-2-style byte-level BPE here), in the grid and on the record's page; a
    usage error names the option."""
    import numpy as np
    store = os.path.join(ROOT, "bpe")
    vocab = os.path.join(ROOT, "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(["Hello", "\u0120world", "!", "\u010a", "\u0120zrec"]) + "\n")
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", store])
    docs = [np.array([0, 1, 2], dtype=np.int32), np.array([0, 4, 3, 0, 9], dtype=np.int32)]
    must(["append-npy", store, "-"], stdin=b"".join(npy_bytes(a) for a in docs))
    v = ViewServer([store], ["--vocab", "bpe=" + vocab])
    try:
        rows = v.json("api/records", {"path": 0, "limit": 5})["rows"]
        got = [r["cells"][0].get("tokens_text") for r in rows]
        expect(got == ["Hello world!", "Hello zrec\nHello\u27e89\u27e9"], "tokens_text %r" % got)
        rec = v.json("api/record", {"path": 0, "stream": 0, "id": 1})
        expect(rec["tokens_text"] == got[1] and rec["look"] == "numbers", "record page %s" % rec)
    finally:
        v.stop()
    fails(["view", "--vocab", "bpe", store], 2, ["--vocab 'bpe': expected STREAM=FILE"])


def filtered_ids(server, params):
    """All the IDs a filtered page finds, asking on from each next_cursor; also checks
    that no request examines more than its scan."""
    ids, cursor, asks = [], 0, 0
    while cursor is not None:
        page = server.json("api/records", dict(params, cursor=cursor))
        scan = params.get("scan", 4096)
        expect(page["examined"] <= scan, "examined %d > scan %d" % (page["examined"], scan))
        expect(page["total"] is None and page["cursor"] == cursor, "filtered page %s" % page)
        ids += [r["id"] for r in page["rows"]]
        cursor = page["next_cursor"]
        asks += 1
        expect(asks < 1000, "next_cursor never ends: %s" % page)
    return ids


def test_filter_and_search():
    """label=STREAM:VALUE and q=TEXT: exactly the samples whose label is that value, whose
    key or text/JSON record holds the text (any case), compared with the data the stores
    were made from; each request examines at most `scan` positions and hands back a
    cursor to go on from; class names in the grid (label_name) and in label=."""
    text = S["text_data"]
    root = S["root_data"]
    # Search a text store (plain lines and JSON): case-insensitive substring.
    want = [i for i, line in enumerate(text) if "dog" in line.lower()]
    expect(want and filtered_ids(SERVER, {"path": 2, "q": "DoG"}) == want, "q=DoG on the text store")
    # Bounded: 10 positions a request, a cursor each time; all of them together is the same.
    page = SERVER.json("api/records", {"path": 2, "q": "cat", "scan": 10, "limit": 100})
    want_cat = [i for i, line in enumerate(text) if "cat" in line.lower()]
    expect(page["examined"] == 10 and page["next_cursor"] == 10 and
           [r["id"] for r in page["rows"]] == [i for i in want_cat if i < 10], "scan=10 page %s" % page)
    expect(page["filter"] == {"label": None, "q": "cat"} and page["scan"] == 10, "filter echo %s" % page["filter"])
    expect(filtered_ids(SERVER, {"path": 2, "q": "cat", "scan": 7, "limit": 3}) == want_cat, "q=cat in steps of 7")
    # A full page stops right after its last match: the next request goes on there.
    page = SERVER.json("api/records", {"path": 2, "q": "cat", "limit": 2})
    ids = [r["id"] for r in page["rows"]]
    expect(ids == want_cat[:2] and page["next_cursor"] == ids[-1] + 1 and page["examined"] == ids[-1] + 1,
           "limit=2 page %s" % {k: page[k] for k in ("examined", "next_cursor")})
    # Within a selection: positions of the selection, IDs of the store.
    got = filtered_ids(SERVER, {"path": 2, "q": "dog", "sel": "::-1", "scan": 5})
    expect(got == want[::-1], "q=dog over ::-1: %s" % got)
    # A root: the key (--keys) and the JSON stream; pictures are not searched as text.
    expect(filtered_ids(SERVER, {"path": 3, "q": "SAMPLE_007"}) == [7], "q by key")
    want_dog = [i for i, x in enumerate(root) if x["label"] == "dog"]
    expect(filtered_ids(SERVER, {"path": 3, "q": "\"dog\""}) == want_dog, "q in the JSON stream")
    # label=: the label stream's value; with q, both.
    expect(filtered_ids(SERVER, {"path": 3, "label": "cls:1"}) == want_dog, "label=cls:1")
    expect(filtered_ids(SERVER, {"path": 3, "label": "cls:0", "q": "sample_00"}) ==
           [i for i in range(10) if i % 2 == 0], "label=cls:0 with q")
    expect(filtered_ids(SERVER, {"path": 3, "label": "cls:5"}) == [], "label=cls:5 matches nothing")
    page = SERVER.json("api/records", {"path": 3, "label": "cls:1", "limit": 100})
    expect(page["next_cursor"] is None and page["examined"] == 10, "a whole root in one request: %s" % page)
    # Class names: in label= and in the grid's cells.
    v = ViewServer([S["labels"]], ["--labels", "labels=" + S["classes"]])
    try:
        want = [i for i, x in enumerate(S["labels_data"]) if x == 1]
        expect(filtered_ids(v, {"path": 0, "label": "labels:dog", "scan": 8}) == want, "label=labels:dog")
        expect(filtered_ids(v, {"path": 0, "label": "labels:1"}) == want, "label=labels:1")
        page = v.json("api/records", {"path": 0, "label": "labels:dog"})
        expect(page["filter"]["label"] == {"stream": "labels", "value": 1, "name": "dog"}, "label echo %s" % page["filter"])
        rows = v.json("api/records", {"path": 0, "limit": 30})["rows"]
        names = [r["cells"][0].get("label_name") for r in rows]
        expect(names == [["cat", "dog", "bird"][x] for x in S["labels_data"]], "label_name %s" % names)
        for params, words in (({"label": "labels:horse"}, "neither an integer nor a class name"),
                              ({"label": "labels"}, "is not STREAM:VALUE"),
                              ({"label": "nope:1"}, "has no stream 'nope'"),
                              ({"q": "x", "sample": 3}, "cannot be filtered"),
                              ({"q": "x", "scan": 0}, "scan"),
                              ({"q": "x", "scan": 65537}, "scan"),
                              ({"q": "x" * 257}, "longer than 256")):
            status, _, body = v.get("api/records", dict(params, path=0))
            expect(status == 400 and words in json.loads(body)["error"], "%s: %d %s" % (params, status, body))
    finally:
        v.stop()
    status, _, body = SERVER.get("api/records", {"path": 0, "label": "images:1"})
    expect(status == 400 and "not a label stream" in json.loads(body)["error"], "label of pictures: %s" % body)
    expect(filtered_ids(SERVER, {"path": 3, "label": "json:1"}) == [], "label=json:1: no JSON record is a number")
    expect("label_name" not in SERVER.json("api/records", {"path": 3})["rows"][0]["cells"][0], "names without a card")
    # By URL (docs/remote.md): the same Store API, the same answers.
    from web_server import WebServer
    with WebServer(ROOT) as web:
        r = ViewServer([web.http + "/" + os.path.basename(S["root"]), web.http + "/" + os.path.basename(S["text"])],
                       ["--keys", S["keys"], "--keys", ""])
        try:
            expect(filtered_ids(r, {"path": 0, "q": "Sample_004"}) == [4], "remote q by key")
            expect(filtered_ids(r, {"path": 0, "label": "cls:1", "scan": 3}) == want_dog, "remote label=cls:1")
            expect(filtered_ids(r, {"path": 1, "q": "dog", "scan": 16}) ==
                   [i for i, line in enumerate(text) if "dog" in line.lower()], "remote q on text")
        finally:
            r.stop()


def main():
    setup()
    tests = [test_links_no_server_library, test_paths, test_overview_is_info, test_pages_follow_selection,
             test_sample_is_cats, test_bad_input_is_400_with_cats_message, test_renderings, test_pictures,
             test_record_hex_npy, test_verify, test_token_and_host, test_security_headers_everywhere, test_limits,
             test_slow_clients, test_million_record_overview_reads_no_payload, test_nothing_written_and_exit_codes,
             test_bind_and_usage, test_label_values_and_names, test_keys_from_the_key_stream,
             test_vocab_shows_token_text, test_filter_and_search]
    try:
        rc = run_all(tests, ROOT, "view:")
    finally:
        rc_server = SERVER.stop()
        if rc_server != 130:
            print("FAIL the shared server exited %d: %s" % (rc_server, SERVER.stderr))
            rc = 1
    sys.exit(rc)


if __name__ == "__main__":
    main()
