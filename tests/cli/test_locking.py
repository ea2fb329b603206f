#!/usr/bin/python3
"""Lifetime-lock tests for zrec (docs/format.md section 7 and section 10 "Lock contention").

The lock is flock(2) on meta.zr: a writer holds it exclusively, a reader shared. A writer
or reader that finds it held fails at once with "locked by another process" (exit 1,
one stderr line); with --wait it blocks until the holder lets go. The holder is either a
helper Python process (flock LOCK_EX / LOCK_SH, what a writer / reader does) or a real
`zrec append-npy STORE -` kept alive by a slow pipe.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import fcntl
import hashlib
import io
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)

import cli_helpers  # noqa: E402  (tests/cli/cli_helpers.py)
from cli_helpers import must_out as must  # noqa: E402

ZREC = cli_helpers.require_zrec("test_locking")

LOCKED = "locked by another process"
WIDTH = 16  # Dense |u1 (16,)

# A process that takes flock on a file and holds it until its stdin closes (the test lets
# it go once what it checks has happened, never after a fixed time). It prints "locked"
# once it has the lock.
HOLDER = r"""
import fcntl, os, sys
path, mode = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR if mode == "ex" else os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX if mode == "ex" else fcntl.LOCK_SH)
print("locked", flush=True)
sys.stdin.read()
"""


def run(args, stdin=None, timeout=60):
    p = subprocess.run([ZREC] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def check_locked_error(cmd, rc, err, what):
    shown = "%s -> rc %d, stderr %r" % (what, rc, err)
    if rc != 75:
        raise AssertionError("expected exit 75 (EX_TEMPFAIL: busy): " + shown)
    lines = err.splitlines()
    if len(lines) != 1 or not lines[0].startswith("zrec %s: " % cmd) or LOCKED not in lines[0]:
        raise AssertionError("expected one line 'zrec %s: ... %s': %s" % (cmd, LOCKED, shown))


def expect_locked(cmd, args, stdin=None):
    t0 = time.monotonic()
    rc, _, err = run(args, stdin, timeout=20)
    elapsed = time.monotonic() - t0
    check_locked_error(cmd, rc, err, "zrec " + " ".join(args))
    if elapsed > 5:
        raise AssertionError("zrec %s took %.1f s to report the lock; it must fail at once" % (cmd, elapsed))


def expect_snapshot(store, length):
    """info, cat, verify and digest on a store a writer holds: the last published state
    (info and verify flag it as such), at once."""
    rc, out, err = run(["info", store], timeout=20)
    if rc != 0 or "a writer is appending; this is the last published state" not in out.decode():
        raise AssertionError("info on a held store: rc %d out %r err %r" % (rc, out, err))
    if "length        %d\n" % length not in out.decode():
        raise AssertionError("info on a held store shows the wrong length (want %d): %r" % (length, out))
    rc, out, err = run(["info", "--json", store], timeout=20)
    import json
    j = json.loads(out)
    if rc != 0 or j["writer_active"] is not True or j["length"] != length:
        raise AssertionError("info --json on a held store: rc %d %r" % (rc, out))
    expect_cat_snapshot(store, length)
    rc, out, err = run(["verify", store], timeout=20)
    text = out.decode()
    if rc != 0 or "OK: %d records" % length not in text or \
            "a writer is appending; this is its last published state" not in text:
        raise AssertionError("verify on a held store: rc %d %r %r" % (rc, text, err))
    rc, out, err = run(["verify", "--json", "--quick", store], timeout=20)
    j = json.loads(out)
    if rc != 0 or j["writer_active"] is not True or j["length"] != length:
        raise AssertionError("verify --json on a held store: rc %d %r %r" % (rc, out, err))
    rc, out, err = run(["digest", store], timeout=20)
    if rc != 0 or not out.startswith(SNAPSHOT_DIGESTS.get(store, out[:64])):
        raise AssertionError("digest on a held store: rc %d %r %r" % (rc, out, err))


# Digests of stores before a holder took them, to compare the snapshot's with.
SNAPSHOT_DIGESTS = {}


def expect_cat_snapshot(store, length):
    """cat on a held store: the records of its last published state, at once."""
    t0 = time.monotonic()
    rc, out, err = run(["cat", store], timeout=20)
    if rc != 0 or np.load(io.BytesIO(out)).shape[0] != length:
        raise AssertionError("cat on a held store: rc %d err %r (want its %d published records)" % (rc, err, length))
    if time.monotonic() - t0 > 5:
        raise AssertionError("cat on a held store took %.1f s; it reads the snapshot at once" % (time.monotonic() - t0))


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def batch(n, seed):
    return (np.arange(n * WIDTH, dtype=np.uint32).reshape(n, WIDTH) * 31 + seed).astype("|u1")


def hash_tree(store):
    out = {}
    for name in sorted(os.listdir(store)):
        with open(os.path.join(store, name), "rb") as f:
            out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def length_of(store):
    with open(os.path.join(store, "meta.zr"), "rb") as f:
        return int.from_bytes(f.read(8), "little")


class Holder:
    """A helper process holding flock on meta.zr."""

    def __init__(self, store, mode):
        self.p = subprocess.Popen([sys.executable, "-c", HOLDER, os.path.join(store, "meta.zr"), mode],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.p.stdout.readline()
        if line.strip() != b"locked":
            self.p.kill()
            raise AssertionError("lock holder did not start")

    def release(self):
        if self.p.poll() is None:
            self.p.stdin.close()
        self.p.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def wait_until_exclusively_held(store, proc, timeout=15):
    """Polls until someone holds meta.zr exclusively (LOCK_SH|LOCK_NB fails)."""
    deadline = time.monotonic() + timeout
    fd = os.open(os.path.join(store, "meta.zr"), os.O_RDONLY)
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError("the writer exited early (rc %s): %s" %
                                     (proc.returncode, proc.stderr.read().decode()))
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                return
            time.sleep(0.02)
    finally:
        os.close(fd)
    raise AssertionError("the writer never took the lock")


def waits_for_the_lock(p, store, what):
    """Until zrec process p sleeps waiting for the lock of `store` (its meta.zr open, the
    lock not its own: cli_helpers.in_lock_wait); then it must still be running."""
    cli_helpers.wait_until(lambda: cli_helpers.in_lock_wait(p.pid, os.path.join(store, "meta.zr")),
                           "%s waiting for the held lock" % what, proc=p)
    if p.poll() is not None:
        raise AssertionError("%s did not wait for the held lock: rc %d %r" % (what, p.returncode, p.communicate()[1]))


def waits_until_released(holder, store, args, what, stdin=None):
    """Runs `zrec ARGS` while `holder` (a Holder) holds the lock of `store`: it must wait
    for that lock, still be waiting when the holder lets go, and then exit 0. Returns
    its stdout."""
    p = subprocess.Popen([ZREC] + args, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if stdin is not None:
            p.stdin.write(stdin)
            close_stdin(p)
        waits_for_the_lock(p, store, what)
        holder.release()
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode != 0:
        raise AssertionError("%s, after the holder let go: rc %d %r" % (what, p.returncode, err))
    return out


def close_stdin(p):
    """Closes a Popen's stdin so that communicate() does not touch it again."""
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    p.stdin = None


class SlowWriter:
    """`zrec append-npy STORE -` whose stdin we feed by hand."""

    def __init__(self, store, n, seed, extra=()):
        self.store, self.n, self.data = store, n, batch(n, seed)
        self.p = subprocess.Popen([ZREC] + list(extra) + ["append-npy", store, "-"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        blob = npy_bytes(self.data)
        self.head, self.rest = blob[: len(blob) - self.data.nbytes // 2], blob[len(blob) - self.data.nbytes // 2:]

    def _send(self, blob, close=False):
        # A writer refused at open exits without reading its input: ignore the broken pipe.
        try:
            self.p.stdin.write(blob)
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        if close:
            close_stdin(self.p)

    def feed_half(self):
        self._send(self.head)

    def finish(self):
        self._send(self.rest, close=True)
        out, err = self.p.communicate(timeout=30)
        return self.p.returncode, err.decode()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


# ---------------------------------------------------------------------------------------


def make_store(root, name, n=8):
    store = os.path.join(root, name)
    must(["create", "--dense", "--dtype", "|u1", "--shape", str(WIDTH), "--codec", "zstd", "--shards", "3", store])
    if n:
        must(["-q", "append-npy", store, "-"], stdin=npy_bytes(batch(n, 0)))
    return store


def cat_all(store, extra=()):
    return np.load(io.BytesIO(must(list(extra) + ["cat", store])))


def test_python_writer_lock_blocks_everyone(root):
    store = make_store(root, "a")
    before = hash_tree(store)
    SNAPSHOT_DIGESTS[store] = must(["digest", store])[:64]
    with Holder(store, "ex") as h:
        expect_locked("append-npy", ["append-npy", store, "-"], stdin=npy_bytes(batch(2, 5)))
        expect_snapshot(store, 8)
        rc, out, err = run(["cat", "--format", "text", store, "0"], timeout=20)
        if rc != 0 or not out.startswith(b"0\t"):
            raise AssertionError("cat --format text of a held store: rc %d %r %r" % (rc, out, err))
        h.release()
    if hash_tree(store) != before:
        raise AssertionError("a refused writer changed the store")
    assert cat_all(store).shape == (8, WIDTH)


def test_directory_info_reports_lock(root):
    parent = os.path.join(root, "streams")
    os.mkdir(parent)
    make_store(parent, "x")
    make_store(parent, "y")
    with Holder(os.path.join(parent, "y"), "ex") as h:
        rc, out, err = run(["info", parent])
        if rc != 0 or "y: a writer is appending; this is the last published state" not in out.decode():
            raise AssertionError("info on a directory with a held stream: rc %d %r %r" % (rc, out, err))
        h.release()
    must(["info", parent])


def test_python_reader_lock(root):
    store = make_store(root, "b")
    with Holder(store, "sh") as h:
        # A reader holding the shared lock keeps writers out but lets readers in.
        expect_locked("append-npy", ["append-npy", store, "-"], stdin=npy_bytes(batch(2, 5)))
        assert cat_all(store).shape == (8, WIDTH)
        must(["info", store])
        h.release()


def test_wait_blocks_until_release(root):
    store = make_store(root, "c")
    want = cat_all(store)
    # Reader waits on a writer's lock: asleep on it, still there when the holder lets go,
    # then it reads the records.
    with Holder(store, "ex") as h:
        got = np.load(io.BytesIO(waits_until_released(h, store, ["--wait", "cat", store], "--wait cat")))
    if not np.array_equal(got, want):
        raise AssertionError("--wait cat returned the wrong records")
    # Writer waits on a reader's lock (same for a writer's), then appends.
    for mode in ("sh", "ex"):
        with Holder(store, mode) as h:
            waits_until_released(h, store, ["--wait", "-q", "append-npy", store, "-"],
                                 "--wait append-npy with a %s lock held" % mode, stdin=npy_bytes(batch(3, 9)))
    got = cat_all(store)
    if got.shape != (14, WIDTH) or not np.array_equal(got[8:11], batch(3, 9)) or not np.array_equal(got[11:], batch(3, 9)):
        raise AssertionError("records appended after --wait are wrong")
    # --wait on a free store does not block.
    t0 = time.monotonic()
    must(["--wait", "info", store])
    if time.monotonic() - t0 > 5:
        raise AssertionError("--wait blocked on a free store")


def test_wait_seconds_gives_up(root):
    store = make_store(root, "w")
    with Holder(store, "ex"):
        for args, cmd in ((["--wait=0.5", "append-npy", store, "-"], "append-npy"),
                          (["append-npy", "--wait=0.5", store, "-"], "append-npy")):
            t0 = time.monotonic()
            rc, _, err = run(args, stdin=npy_bytes(batch(2, 5)), timeout=20)
            waited = time.monotonic() - t0
            want = "zrec %s: store '%s' is still locked by another process after 0.5 s (--wait=0.5)" % (cmd, store)
            if rc != 75 or err.strip() != want:
                raise AssertionError("--wait=0.5 on a held store: rc %d %r, want 75 %r" % (rc, err, want))
            if not 0.4 <= waited < 5:
                raise AssertionError("--wait=0.5 gave up after %.2f s" % waited)
    # A lock let go within the time: the command goes on.
    with Holder(store, "ex") as h:
        waits_until_released(h, store, ["--wait=120", "-q", "append-npy", store, "-"], "--wait=120 append-npy",
                             stdin=npy_bytes(batch(2, 5)))
    assert length_of(store) == 10
    for bad in ("--wait=abc", "--wait=-1", "--wait=1x"):
        rc, out, err = run([bad, "info", store])
        if rc != 2 or "expected a number of seconds" not in err:
            raise AssertionError("zrec %s info: rc %d %r" % (bad, rc, err))


def test_real_writer_holds_lock(root):
    store = make_store(root, "d")
    before = hash_tree(store)
    w = SlowWriter(store, 50, seed=3)
    waiter = None
    try:
        w.feed_half()
        wait_until_exclusively_held(store, w.p)
        # Nothing is published yet: the on-disk page still says 8 records.
        assert length_of(store) == 8
        expect_locked("append-npy", ["append-npy", store, "-"], stdin=npy_bytes(batch(2, 5)))
        expect_snapshot(store, 8)
        # A --wait reader queued behind the writer sees its publication, never a partial state.
        waiter = subprocess.Popen([ZREC, "--wait", "cat", store], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        waits_for_the_lock(waiter, store, "--wait cat behind the writer")
        rc, err = w.finish()
        if rc != 0:
            raise AssertionError("the slow writer failed: rc %d %r" % (rc, err))
        out, err = waiter.communicate(timeout=30)
        if waiter.returncode != 0:
            raise AssertionError("--wait cat failed: %r" % err)
        got = np.load(io.BytesIO(out))
        if got.shape != (58, WIDTH) or not np.array_equal(got[8:], batch(50, 3)):
            raise AssertionError("--wait cat saw %s, not the published 58 records" % (got.shape,))
    finally:
        w.kill()
        if waiter is not None and waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert hash_tree(store) != before


def test_info_follows_checkpoints_of_a_live_writer(root):
    """A long append-stream fed slowly from a pipe publishes every 10 records; info,
    run while it holds the lock, always shows one of those published states."""
    import json
    store = os.path.join(root, "live")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", store])
    p = subprocess.Popen([ZREC, "-q", "append-stream", "--checkpoint-every", "10", store], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = set()
        for k in range(35):
            p.stdin.write(b"r%03d\n" % k)
            p.stdin.flush()
            if k in (0, 12, 27):
                wait_until_exclusively_held(store, p)
                want = (k + 1) // 10 * 10
                deadline = time.monotonic() + 10
                while True:  # the checkpoint is published shortly after its 10th record
                    rc, out, err = run(["info", "--json", store], timeout=20)
                    j = json.loads(out)
                    if rc != 0 or not j["writer_active"] or j["length"] % 10 or j["length"] > want:
                        raise AssertionError("info during a live append: rc %d %r %r" % (rc, out, err))
                    if j["length"] == want or time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
                if j["length"] != want:
                    raise AssertionError("info never showed checkpoint %d (last %d)" % (want, j["length"]))
                if want and j["record_sizes"]["logical"] != {"min": 12, "p50": 12, "p99": 12, "max": 12}:
                    raise AssertionError("record sizes of the snapshot: %r" % j["record_sizes"])
                seen.add(want)
                # cat reads the same published state: whole checkpoints, never a partial one.
                rc, out, err = run(["cat", "--format", "raw", store], timeout=20)
                n = len(out) // 4
                if rc != 0 or n % 10 or n > k + 1 or out != b"".join(b"r%03d" % i for i in range(n)):
                    raise AssertionError("cat during a live append: rc %d %r %r" % (rc, out, err))
        close_stdin(p)
        if p.wait(timeout=30) != 0:
            raise AssertionError("the live writer failed: %r" % p.stderr.read())
        j = json.loads(must(["info", "--json", store]))
        if j["length"] != 35 or j["writer_active"]:
            raise AssertionError("after the writer: %r" % j)
        assert seen == {0, 10, 20}, seen
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_racing_writers_one_wins(root):
    store = make_store(root, "e")
    writers = [SlowWriter(store, 10, seed=40 + k) for k in range(4)]
    try:
        for w in writers:
            w.feed_half()
        # The losers fail at open; wait for them (the winner blocks on its open stdin).
        deadline = time.monotonic() + 20
        while sum(w.p.poll() is not None for w in writers) < len(writers) - 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        results = [w.finish() for w in writers]
    finally:
        for w in writers:
            w.kill()
    winners = [k for k, (rc, _) in enumerate(results) if rc == 0]
    if len(winners) != 1:
        raise AssertionError("expected exactly one writer to win, got %r" % results)
    for k, (rc, err) in enumerate(results):
        if k not in winners:
            check_locked_error("append-npy", rc, err, "racing writer %d" % k)
    got = cat_all(store)
    if got.shape != (18, WIDTH) or not np.array_equal(got[8:], batch(10, 40 + winners[0])):
        raise AssertionError("the store does not hold exactly the winner's records")


def test_waiting_writers_serialize(root):
    store = make_store(root, "f", n=0)
    first = SlowWriter(store, 20, seed=1)
    second = None
    try:
        first.feed_half()
        wait_until_exclusively_held(store, first.p)
        second = subprocess.Popen([ZREC, "--wait", "-q", "append-npy", store, "-"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        second.stdin.write(npy_bytes(batch(7, 2)))
        close_stdin(second)
        waits_for_the_lock(second, store, "--wait append-npy behind the first writer")
        rc, err = first.finish()
        if rc != 0:
            raise AssertionError("first writer failed: %r" % err)
        _, err2 = second.communicate(timeout=30)
        if second.returncode != 0:
            raise AssertionError("waiting writer failed: %r" % err2)
    finally:
        first.kill()
        if second is not None and second.poll() is None:
            second.kill()
            second.wait()
    got = cat_all(store)
    if got.shape != (27, WIDTH) or not np.array_equal(got[:20], batch(20, 1)) or not np.array_equal(got[20:], batch(7, 2)):
        raise AssertionError("serialized appends are wrong: %s" % (got.shape,))


def test_many_readers_at_once(root):
    store = make_store(root, "g", n=64)
    want = must(["cat", store])
    with Holder(store, "sh") as h:  # and a long-lived reader holding the shared lock
        procs = []
        for k in range(24):
            args = [ZREC, "cat", store] if k % 3 else [ZREC, "info", "--json", store]
            procs.append((args, subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
        for args, p in procs:
            out, err = p.communicate(timeout=60)
            if p.returncode != 0:
                raise AssertionError("concurrent reader %s failed: %r" % (" ".join(args[1:]), err))
            if args[1] == "cat" and out != want:
                raise AssertionError("a concurrent reader got different bytes")
        h.release()


def test_killed_writer_releases_lock(root):
    store = make_store(root, "h")
    w = SlowWriter(store, 30, seed=8)
    try:
        w.feed_half()
        wait_until_exclusively_held(store, w.p)
        w.p.kill()
        w.p.wait()
    finally:
        w.kill()
    got = cat_all(store)  # no --wait: the kernel dropped the lock with the process
    if got.shape != (8, WIDTH):
        raise AssertionError("after a killed writer the store must read as published")
    must(["-q", "append-npy", store, "-"], stdin=npy_bytes(batch(1, 1)))
    assert cat_all(store).shape == (9, WIDTH)


TESTS = [v for k, v in sorted(globals().items()) if k.startswith("test_")]


def main():
    return case_runner.run_cases(TESTS, "zrec-locking-")


if __name__ == "__main__":
    sys.exit(main())
