"""Shared plumbing for the Python CLI tests in tests/cli (not a test itself).

CTest runs each tests/cli/test_*.py with /usr/bin/python3 and the zrec binary in $ZREC.
A script registers cases with `Suite.case`, runs them with `Suite.main()`, and gets:
one line per case, a final "N passed, M failed" line, exit status 1 on any failure,
and a temporary directory that is removed however the script ends.
"""

import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np


class CheckFailed(Exception):
    pass


def check(cond, message):
    if not cond:
        raise CheckFailed(message)


def zrec_binary():
    path = os.environ.get("ZREC")
    if not path or not os.access(path, os.X_OK):
        sys.stderr.write(f"error: set ZREC to the zrec binary (got {path!r})\n")
        sys.exit(2)
    return path


def run(args, *, input=None, expect_rc=0, env=None):
    """Runs zrec with `args`; returns stdout bytes. Fails the case when the exit status
    is not `expect_rc` (None: any)."""
    cmd = [zrec_binary(), *[str(a) for a in args]]
    r = subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if expect_rc is not None and r.returncode != expect_rc:
        raise CheckFailed(f"`{' '.join(cmd)}` exited {r.returncode} (expected {expect_rc}); "
                          f"stderr: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def run_full(args, *, input=None):
    cmd = [zrec_binary(), *[str(a) for a in args]]
    return subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def npy_bytes(*arrays):
    """A stream of .npy files, as np.save writes them one after another."""
    buf = io.BytesIO()
    for a in arrays:
        np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def load_npy_stream(data):
    """Every array of a stream of .npy files."""
    buf = io.BytesIO(data)
    out = []
    while buf.tell() < len(data):
        out.append(np.load(buf, allow_pickle=False))
    return out


def stack(records, item_shape, dt):
    """(len(records), *item_shape) in exactly `dt`, bytes copied verbatim (np.stack would
    make a big-endian dtype native)."""
    out = np.empty((len(records), *item_shape), dtype=dt)
    for i, r in enumerate(records):
        out[i] = r
    return out


def describe(a):
    return f"{a.dtype.str}{a.shape}"


def check_same_array(got, want, what):
    """Equal dtype (canonical string), shape and bytes."""
    check(isinstance(got, np.ndarray), f"{what}: not an array")
    check(got.dtype.str == want.dtype.str,
          f"{what}: dtype {got.dtype.str} != expected {want.dtype.str}")
    check(got.shape == want.shape, f"{what}: shape {got.shape} != expected {want.shape}")
    g, w = got.tobytes(), want.tobytes()
    if g != w:
        first = next(i for i in range(len(g)) if g[i] != w[i])  # same dtype and shape
        raise CheckFailed(f"{what}: bytes differ ({describe(got)}), first at byte {first}: "
                          f"{g[first:first + 8].hex()} != expected {w[first:first + 8].hex()}")


def check_same_arrays(got, want, what):
    check(len(got) == len(want), f"{what}: {len(got)} records, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        check_same_array(g, w, f"{what}: record {i}")


def temp_root():
    """$ZREC_TEST_TMPDIR, else /dev/shm when usable, else the default temp directory.
    zrec fsyncs every data file when it publishes; on tmpfs that costs nothing, while on
    a disk shared with concurrent builds it can dominate these small tests."""
    chosen = os.environ.get("ZREC_TEST_TMPDIR")
    if chosen:
        return chosen
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        return "/dev/shm"
    return None


class Suite:
    def __init__(self, name):
        self.name = name
        self.cases = []
        self.tmp = None

    def case(self, name):
        def register(fn):
            self.cases.append((name, fn))
            return fn
        return register

    def add(self, name, fn, *args, **kwargs):
        self.cases.append((name, lambda: fn(*args, **kwargs)))

    def tempdir(self, name):
        """A fresh directory under this run's temporary root."""
        safe = "".join(c if c.isalnum() or c in "._" else "_" for c in name)[:40]
        return tempfile.mkdtemp(prefix=safe + "-", dir=self.tmp)

    def main(self):
        zrec_binary()
        passed = failed = 0
        start = time.monotonic()
        # CTest's timeout sends SIGTERM: leave through `finally` so the temp root goes too.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        self.tmp = tempfile.mkdtemp(prefix=f"zrec-{self.name}-", dir=temp_root())
        try:
            for name, fn in self.cases:
                t0 = time.monotonic()
                try:
                    fn()
                except CheckFailed as e:
                    failed += 1
                    print(f"FAIL {name}: {e}", flush=True)
                except Exception:
                    failed += 1
                    print(f"FAIL {name}: unexpected exception\n{traceback.format_exc()}", flush=True)
                else:
                    passed += 1
                    print(f"ok   {name} ({time.monotonic() - t0:.2f} s)", flush=True)
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
        print(f"{self.name}: {time.monotonic() - start:.1f} s")
        print(f"{passed} passed, {failed} failed")
        sys.exit(1 if failed else 0)
