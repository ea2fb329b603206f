"""A real web server for remote-store tests and benchmarks: Debian's nginx on loopback,
started from a generated config (plain HTTP, and HTTPS with HTTP/2 and a self-signed
certificate made by the openssl CLI), serving a directory with Range and ETags on, as
any static web server or bucket does; and a small fault-injecting proxy in front of it.

    with WebServer(docroot) as web:            # web.http, web.https: base URLs
        with FaultProxy(web.http_port) as proxy:  # proxy.url: base URL through the proxy
            proxy.drop_every = 3                  # every 3rd response cut mid-body
            ...

Extra locations of the config: /forbidden/ answers 403, /loop/ redirects to itself,
/moved/X redirects to /X, /downgrade/X redirects to http://.../X (from https too).
Needs: /usr/sbin/nginx (nginx-light), /usr/bin/openssl.
"""
import http.client
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NGINX = "/usr/sbin/nginx"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("nothing listens on port %d after %d s" % (port, timeout))


def stop_server(proc, work):
    """Ends a server process (SIGTERM, then SIGKILL after 10 s) and removes its work dir."""
    if proc is not None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(work, ignore_errors=True)


CONFIG = """
{user}
daemon off;
worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 512; }}
http {{
  log_format plain '$request_method $uri $server_protocol $status $http_range $body_bytes_sent';
  access_log {work}/access.log plain;
  log_format uris '$request_uri';
  access_log {work}/uris.log uris;
  client_body_temp_path {work}/tmp_body;
  proxy_temp_path {work}/tmp_proxy;
  fastcgi_temp_path {work}/tmp_fastcgi;
  uwsgi_temp_path {work}/tmp_uwsgi;
  scgi_temp_path {work}/tmp_scgi;
  types {{ application/octet-stream zr; }}
  default_type application/octet-stream;
  keepalive_requests 10000;
  sendfile on;
  server {{
    listen 127.0.0.1:{http_port};
    listen 127.0.0.1:{https_port} ssl http2;
    ssl_certificate {work}/cert.pem;
    ssl_certificate_key {work}/key.pem;
    root {docroot};
    location /forbidden/ {{ return 403; }}
    location /loop/ {{ return 302 /loop/; }}
    location /moved/ {{ rewrite ^/moved/(.*)$ /$1 redirect; }}
    location /downgrade/ {{ rewrite ^/downgrade/(.*)$ http://127.0.0.1:{http_port}/$1 redirect; }}
  }}
}}
"""


class WebServer:
    """nginx serving `docroot` on two loopback ports: http (plain) and https (TLS,
    HTTP/2 offered). cacert: the PEM file that verifies it (its own certificate)."""

    def __init__(self, docroot):
        self.docroot = os.path.abspath(docroot)
        self.work = tempfile.mkdtemp(prefix="zrec-nginx-")
        self.http_port = free_port()
        self.https_port = free_port()
        self.proc = None

    def __enter__(self):
        self.cacert = os.path.join(self.work, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                        os.path.join(self.work, "key.pem"), "-out", self.cacert], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        conf = os.path.join(self.work, "nginx.conf")
        with open(conf, "w") as f:
            # Workers of a master started as root would run as nobody, who cannot read a
            # test's private temporary directories.
            user = "user root;" if os.geteuid() == 0 else ""
            f.write(CONFIG.format(user=user, work=self.work, docroot=self.docroot, http_port=self.http_port,
                                  https_port=self.https_port))
        self.proc = subprocess.Popen([NGINX, "-c", conf, "-p", self.work], stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.work, "stderr.log"), "w"))
        try:
            wait_listening(self.http_port)
            wait_listening(self.https_port)
        except RuntimeError:
            self.__exit__(None, None, None)
            raise
        self.http = "http://127.0.0.1:%d" % self.http_port
        self.https = "https://127.0.0.1:%d" % self.https_port
        return self

    def access_log(self):
        with open(os.path.join(self.work, "access.log")) as f:
            return f.read().splitlines()

    def request_uris(self):
        """Every request's URI as the client sent it (path, percent-encoding and query)."""
        with open(os.path.join(self.work, "uris.log")) as f:
            return f.read().splitlines()

    def __exit__(self, *exc):
        stop_server(self.proc, self.work)


class FaultProxy:
    """An HTTP/1.1 proxy in front of a web server (or moto's S3 server) on
    127.0.0.1:`upstream_port`, passing GETs through with their headers (Host, Range,
    conditions and signatures alike: a signed S3 request stays valid), with faults to
    switch on:
      drop_every = N   every Nth response sends its headers and half its body, then
                       closes the connection
      reset_every = N  every Nth request gets no answer: its connection is reset
      error_every = N  every Nth request is answered error_status with error_body
                       (500 "injected failure" unless set; N = 1: every one)
      answer = fn      fn(path, headers) returns (status, body) to answer a request with
                       instead of passing it on, or None to pass it on
      ignore_range     Range is dropped: the whole file comes back with 200
      before = fn      fn(path, headers) runs before each request is passed on (a test replaces
                       a file there)
    A request (its path and Range) meets a fault at most once unless `repeat` is set, so
    that a client retrying it gets through whatever the timing of its other requests.
    requests counts the requests seen, injected the faults made; clear_faults() forgets
    which requests met one, so a second fault run meets the same request sequence afresh."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.drop_every = 0
        self.reset_every = 0
        self.error_every = 0
        self.error_status = 500
        self.error_body = b"injected failure\n"
        self.answer = None
        self.ignore_range = False
        self.before = None
        self.repeat = False
        self.requests = 0
        self.injected = 0
        self._faulted = set()
        self._lock = threading.Lock()

    def clear_faults(self):
        with self._lock:
            self._faulted.clear()

    def __enter__(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                key = (self.path, self.headers.get("Range", ""))
                with proxy._lock:
                    proxy.requests += 1
                    n = proxy.requests
                    fault = proxy.repeat or key not in proxy._faulted
                    if fault and any(every and n % every == 0
                                     for every in (proxy.error_every, proxy.drop_every, proxy.reset_every)):
                        proxy._faulted.add(key)
                        proxy.injected += 1
                if proxy.before is not None:
                    proxy.before(self.path, self.headers)
                if fault and proxy.reset_every and n % proxy.reset_every == 0:
                    self.close_connection = True
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                answer = proxy.answer(self.path, self.headers) if proxy.answer is not None else None
                if answer is None and fault and proxy.error_every and n % proxy.error_every == 0:
                    answer = (proxy.error_status, proxy.error_body)
                if answer is not None:
                    self.send_response(answer[0])
                    self.send_header("Content-Length", str(len(answer[1])))
                    self.end_headers()
                    self.wfile.write(answer[1])
                    return
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("connection", "keep-alive", "proxy-connection", "te", "upgrade")}
                if proxy.ignore_range:
                    headers.pop("Range", None)
                    headers.pop("range", None)
                up = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                up.request("GET", self.path, headers=headers)
                r = up.getresponse()
                body = r.read()
                up.close()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() in ("etag", "last-modified", "content-range", "content-type", "location"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if fault and proxy.drop_every and n % proxy.drop_every == 0 and len(body) > 1:
                    self.wfile.write(body[:len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a client closing its connection (zrec after an error) is no news

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class SlowLink:
    """A TCP relay on loopback in front of 127.0.0.1:`upstream_port` that gives every
    connection a round trip of `rtt` seconds, as a link to a distant server or bucket
    has: the connection is opened after one round trip, and bytes wait rtt/2 each way,
    so each request costs one round trip whatever else is in flight. It relays bytes
    (HTTP, TLS, signed S3 requests alike) and runs its own event loop in a thread.
    Loopback's own latency stays under it: the rows that use it (scripts/bench_remote.py)
    measure how well a client hides latency by keeping requests in flight.

        with WebServer(docroot) as web, SlowLink(web.http_port, 0.025) as link:
            ...  # link.url: base URL over the slow link"""

    def __init__(self, upstream_port, rtt):
        self.upstream_port = upstream_port
        self.rtt = rtt

    async def _pump(self, reader, writer):
        """Relays reader to writer, each chunk held rtt/2 after it arrived."""
        import asyncio
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()

        async def read():
            while True:
                data = await reader.read(1 << 16)
                await queue.put((loop.time() + self.rtt / 2, data))
                if not data:
                    return

        async def write():
            while True:
                due, data = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not data:
                    break
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()

        try:
            await asyncio.gather(read(), write())
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _serve_one(self, client_reader, client_writer):
        import asyncio
        try:
            await asyncio.sleep(self.rtt)  # the connection's handshake
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(self._pump(client_reader, up_writer), self._pump(up_reader, client_writer))

    def __enter__(self):
        import asyncio
        started = threading.Event()

        async def main():
            self.loop = asyncio.get_running_loop()
            self.stopping = asyncio.Event()
            server = await asyncio.start_server(self._serve_one, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            started.set()
            await self.stopping.wait()
            server.close()
            # Connections a client left open end with the link.
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
        self.thread.start()
        if not started.wait(10):
            raise RuntimeError("the slow link did not start")
        self.url = "http://127.0.0.1:%d" % self.port
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(10)
