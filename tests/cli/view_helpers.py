"""What the `zrec view` tests share (test_view.py, test_view_browser.py, test_view_load.py).

- ViewServer(paths, extra_args): starts `zrec view --port 0 PATHS...`, reads the URL it
  prints, and offers get(route, params, headers) -> (status, headers dict, body bytes)
  over one keep-alive connection, raw(bytes) for hand-made requests, stop(signal) ->
  exit status, and peak_rss_mib() and open_connections() (the clients it has accepted
  and holds) while it runs.
- make_stores(root): the four stores the issue names, generated here: a Dense image
  store (uint8 3x24x32, zstd), a Ragged token store (<i4, ndim 1), a zstd_dict text store
  (JSON and plain lines) and an append-tar root (png + cls + json streams, with --keys).
  Returns a dict of paths and the arrays/bytes they hold.
- png_pixels(data) -> (width, height, channels, rows bytes): a small PNG decoder (8-bit,
  no interlace), to check the server's PNGs pixel for pixel; png_bytes(array) encodes one.
"""
import http.client
import io
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tarfile
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import must  # noqa: E402
import cli_helpers  # noqa: E402

URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/([0-9a-f]{48})/$")


class ViewServer:
    def __init__(self, paths, extra_args=(), env=None, cwd=None):
        args = [cli_helpers.ZREC, "view", "--port", "0", *extra_args, *paths]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        line = self.proc.stdout.readline().decode().strip()
        m = URL.match(line)
        if not m:
            err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
            self.proc.kill()
            raise AssertionError("zrec view printed %r, not its URL (stderr: %s)" % (line, err))
        self.url = line
        self.port = int(m.group(1))
        self.token = m.group(2)
        self.host = "127.0.0.1:%d" % self.port
        self.conn = None

    def connection(self):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        return self.conn

    def get(self, route, params=None, headers=None, method="GET", token=True):
        """route: "" (the page), "app.js", "api/records", ...; returns (status, headers, body)."""
        path = ("/%s/" % self.token if token else "/") + route
        if params:
            path += "?" + urllib.parse.urlencode(params)
        for attempt in (0, 1):
            conn = self.connection()
            try:
                conn.request(method, path, headers=headers or {})
                r = conn.getresponse()
                body = r.read()
                hdrs = {k.lower(): v for k, v in r.getheaders()}
                if hdrs.get("connection", "").lower() == "close":
                    conn.close()
                    self.conn = None
                return r.status, hdrs, body
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A keep-alive connection the server closed while idle: once more on a new one.
                conn.close()
                self.conn = None
                if attempt == 1:
                    raise

    def json(self, route, params=None, want=200, method="GET"):
        status, _, body = self.get(route, params, method=method)
        if status != want:
            raise AssertionError("%s %s: status %d, want %d: %s" % (route, params, status, want, body[:300]))
        return json.loads(body)

    def raw(self, data, timeout=30):
        """Sends bytes on a fresh connection; returns everything the server sends back."""
        import socket
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        try:
            s.sendall(data)
            chunks = []
            while True:
                try:
                    c = s.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not c:
                    break
                chunks.append(c)
            return b"".join(chunks)
        finally:
            s.close()

    def peak_rss_mib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
        return 0.0

    def open_connections(self):
        """How many client connections the server has accepted and holds open: its
        sockets (/proc/PID/fd) that /proc/net/tcp shows ESTABLISHED on its port."""
        inodes = set()
        fd_dir = "/proc/%d/fd" % self.proc.pid
        for fd in os.listdir(fd_dir):
            try:
                link = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[len("socket:["):-1])
        n = 0
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                fields = line.split()  # sl local rem st tx:rx tr:when retrnsmt uid timeout inode
                if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == self.port and fields[9] in inodes:
                    n += 1
        return n

    def read_bytes(self):
        """Bytes the process has read (rchar of /proc/PID/io): files and sockets."""
        with open("/proc/%d/io" % self.proc.pid) as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
        return 0

    def stop(self, sig=signal.SIGINT, timeout=20):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("zrec view did not stop within %d s of signal %d" % (timeout, sig))
        self.stderr = self.proc.stderr.read().decode("utf-8", "replace")
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc


def png_bytes(a):
    """A PNG of a uint8 array shaped (H, W) or (H, W, 3|4), no filter, zlib level 6."""
    import numpy as np
    a = np.ascontiguousarray(a, dtype=np.uint8)
    h, w = a.shape[:2]
    channels = 1 if a.ndim == 2 else a.shape[2]
    color = {1: 0, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\0" + a[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def png_pixels(data):
    """Decodes an 8-bit, non-interlaced PNG: (width, height, channels, rows bytes)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError("not a PNG: %r" % data[:16])
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) & 0xFFFFFFFF != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            raise AssertionError("PNG chunk %r: bad CRC" % kind)
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, color, _, _, interlace = ihdr
    if depth != 8 or interlace != 0:
        raise AssertionError("PNG depth %d interlace %d: not decoded here" % (depth, interlace))
    channels = {0: 1, 2: 3, 6: 4, 4: 2}[color]
    raw = zlib.decompress(idat)
    stride = w * channels
    out = bytearray()
    prev = bytearray(stride)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        out += line
        prev = line
    return w, h, channels, bytes(out)


def make_stores(root):
    """The four stores of the issue's browser test, and what they hold."""
    import numpy as np
    rng = np.random.default_rng(23)
    out = {}

    # A Dense image store: uint8 (3, 24, 32) pictures, zstd.
    images = rng.integers(0, 256, size=(12, 3, 24, 32), dtype=np.uint8)
    images[:, 0, :12, :] = 255  # a red band, so a screenshot shows pictures
    out["images"] = os.path.join(root, "images")
    must(["create", "--dense", "--dtype", "|u1", "--shape", "3,24,32", out["images"]])
    must(["append-npy", out["images"], "-"], stdin=cli_helpers.npy_bytes(images))
    out["images_data"] = images

    # A Ragged token store: <i4, ndim 1.
    tokens = [rng.integers(0, 50000, size=int(n), dtype=np.int32) for n in rng.integers(1, 3000, size=40)]
    tokens[0] = np.arange(2000, dtype=np.int32)  # above NumPy's summary threshold
    out["tokens"] = os.path.join(root, "tokens")
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", out["tokens"]])
    stream = b"".join(cli_helpers.npy_bytes(t) for t in tokens)
    must(["append-npy", out["tokens"], "-"], stdin=stream)
    out["tokens_data"] = tokens

    # A zstd_dict text store: JSON objects and plain lines, one per record.
    lines = []
    for i in range(60):
        if i % 3 == 0:
            lines.append("plain caption %d: a photo of a %s" % (i, ["cat", "dog", "bird"][i % 3]))
        else:
            lines.append(json.dumps({"id": i, "label": ["cat", "dog", "bird"][i % 3], "box": [i, i + 1, 30, 40],
                                     "note": "<script>alert(%d)</script>" % i}))
    text_plain = os.path.join(root, "text_zstd")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", text_plain])
    must(["append-stream", text_plain], stdin=("\n".join(lines) + "\n").encode())
    dict_path = os.path.join(root, "text.dict")
    must(["train-dict", "--size", "1K", text_plain, "-o", dict_path])
    out["text"] = os.path.join(root, "text")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "zstd_dict", "--dict", dict_path, out["text"]])
    must(["append-stream", out["text"]], stdin=("\n".join(lines) + "\n").encode())
    out["text_data"] = lines

    # An append-tar root: png + cls + json members per sample, with a keys file.
    tar_path = os.path.join(root, "shard.tar")
    samples = []
    with tarfile.open(tar_path, "w") as tar:
        for i in range(10):
            key = "sample_%03d" % i
            pic = rng.integers(0, 256, size=(16 + i, 20, 3), dtype=np.uint8)
            label = ["cat", "dog"][i % 2]
            meta = json.dumps({"key": key, "label": label})
            for ext, data in (("png", png_bytes(pic)), ("cls", str(i % 2).encode()), ("json", meta.encode())):
                info = tarfile.TarInfo("%s.%s" % (key, ext))
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            samples.append({"key": key, "png": png_bytes(pic), "pic": pic, "label": label})
    out["root"] = os.path.join(root, "dataset")
    out["keys"] = os.path.join(root, "dataset.keys")
    must(["append-tar", "--keys", out["keys"], out["root"], tar_path])
    out["root_data"] = samples

    # A label stream: a Dense scalar <i8 store of class ids, with a classes.txt of names.
    out["labels"] = os.path.join(root, "labels")
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", out["labels"]])
    label_ids = [i * i % 3 for i in range(30)]  # 0: 10, 1: 20, 2: none
    must(["append-stream", "--parse", "ints", out["labels"]], stdin=b"".join(b"%d\n" % v for v in label_ids))
    out["labels_data"] = label_ids
    out["classes"] = os.path.join(root, "classes.txt")
    with open(out["classes"], "w") as f:
        f.write("cat\ndog\nbird\n")
    return out
