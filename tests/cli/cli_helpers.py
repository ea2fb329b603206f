"""Helpers the Python CLI tests share (next to case_runner.py, which runs the cases).

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cli_helpers import ZREC, SANITIZED, run_zrec, must, fails, expect  # noqa: E402

What it offers:
- ZREC: the zrec binary (env ZREC, "build/zrec" when unset); require_zrec(name) exits
  with a message when it is not an executable and returns its absolute path (it also
  becomes ZREC for every helper here).
- SANITIZED: true when the tests run under a sanitizer (env ZREC_SANITIZED=1/ON/TRUE),
  for smaller counts and skipping RSS asserts.
- List-style calls: run_zrec(args) -> (rc, stdout bytes, stderr text); must(args) ->
  (stdout, stderr), raising when the exit status is not 0 (must_out: stdout only);
  fails(args, rc_want, says) asserts a failure and the words its stderr must hold
  (expect_failure: the same check on a result already at hand);
  expect(cond, msg) raises AssertionError(msg).
- records(store) / byte_records(store): every record, read back through
  `zrec cat --format npy`, as NumPy arrays / bytes.
- Star-style calls: run(*args, stdin=None, check=True) -> CompletedProcess, raising
  on a non-zero exit when check; npy_bytes(array) -> the .npy file bytes.
- tree_hash(store): one SHA-256 over a store directory's file names and contents (to
  show a refused command left it unchanged byte for byte).
- wait_peak_rss_mib(popen): waits for a started process; returns (exit status, its
  peak RSS in MiB).
- wait_until(predicate, what, timeout, proc): polls until predicate() holds and returns
  its value; raises AssertionError naming `what` (the state that never came) after
  WAIT_SECONDS, or as soon as the Popen `proc` exits, if given. Tests wait for states
  with it (a process blocked, a lock held, a length reached), never for a fixed sleep.
- wait_blocked_in_pipe_write(pid) / wait_blocked_in_pipe_read(pid): whether a process
  came to sleep writing to / reading from a pipe.
- read_all_of_pipe(pid, fd=0): whether a process has read everything its pipe at fd
  holds and sleeps waiting for more (in read(2) or poll(2)).
- in_lock_wait(pid, path): whether a process sleeps waiting for the flock on `path`
  (zrec --wait), with the file open and the lock not its own; flock_waiters(path): the
  processes blocked in flock(2) on `path` (/proc/locks).
- killed_append_leftovers(root, args, stdin): what an append to a root killed between
  its streams' publication and the root's commit leaves (records past the committed
  count): runs the per-store append `args` with the marker moved aside, since zrec
  refuses to write a stream its root lists.
- run_all(fns, root, label): the pass/fail loop of the tests whose cases take no
  arguments (see case_runner.run_cases for cases that get a directory each).
"""
import fcntl
import hashlib
import io
import os
import shutil
import shlex
import stat
import struct
import subprocess
import sys
import termios
import time

ZREC = os.environ.get("ZREC", "build/zrec")
SANITIZED = os.environ.get("ZREC_SANITIZED", "0") in ("1", "ON", "TRUE", "true")
# strace options that turn LeakSanitizer off in the traced zrec (it cannot run under
# ptrace and aborts the process), keeping the rest of ASAN_OPTIONS.
STRACE_NO_LEAK_CHECK = ["-E", "ASAN_OPTIONS=" + (os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")]


def require_zrec(test_name):
    """Exits naming test_name unless env ZREC is an executable; returns its absolute path."""
    global ZREC
    path = os.environ.get("ZREC")
    if not path or not os.access(path, os.X_OK):
        sys.exit("%s: set ZREC to the zrec binary (got %r)" % (test_name, path))
    ZREC = os.path.abspath(path)
    return ZREC


def full_pipe():
    """A pipe whose buffer is full: the first write to its write end blocks. Returns (r, w)."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"\0" * 65536)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)
    return r, w


# How long a test waits for a state before it fails: generous, for a sanitized build on
# a loaded machine; a state that comes ends the wait at once.
WAIT_SECONDS = 120


def wait_until(predicate, what, timeout=WAIT_SECONDS, proc=None, step=0.01):
    """Polls predicate() every `step` seconds; returns its first true value. Raises
    AssertionError("... never came: WHAT") after `timeout` seconds, or as soon as the
    subprocess.Popen `proc` (when given) has exited, with its exit status and stderr."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            err = ""
            if proc.stderr is not None:
                try:
                    err = proc.stderr.read()
                except (OSError, ValueError):
                    pass
                if isinstance(err, bytes):
                    err = err.decode("utf-8", "replace")
                err = err.strip()
            raise AssertionError("%s never came: the process exited first (rc %d)%s"
                                 % (what, proc.returncode, ": " + err if err else ""))
        if time.monotonic() > deadline:
            raise AssertionError("%s never came within %g s" % (what, timeout))
        time.sleep(step)


def _wchan(pid):
    """What process `pid`'s main thread sleeps in (/proc/PID/wchan; "0" when running),
    or None once it is gone."""
    try:
        with open("/proc/%d/wchan" % pid) as f:
            return f.read()
    except OSError:
        return None


def _wait_wchan(pid, word, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        w = _wchan(pid)
        if w is None:
            return False
        if word in w:
            return True
        time.sleep(0.01)
    return False


def wait_blocked_in_pipe_write(pid, timeout=WAIT_SECONDS):
    """True once process `pid` sleeps in a pipe write (/proc/PID/wchan); False if it
    exits or `timeout` seconds pass first."""
    return _wait_wchan(pid, "pipe_write", timeout)


def wait_blocked_in_pipe_read(pid, timeout=WAIT_SECONDS):
    """True once process `pid` sleeps in a pipe read (/proc/PID/wchan: pipe_read); False if
    it exits or `timeout` seconds pass first."""
    return _wait_wchan(pid, "pipe_read", timeout)


def _fds_of(pid, path):
    """The descriptors (numbers, as strings) by which process `pid` has `path` open."""
    real = os.path.realpath(path)
    out = []
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return out
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == real:
                out.append(fd)
        except OSError:
            pass
    return out


def read_all_of_pipe(pid, fd=0):
    """True while process `pid` has read every byte the pipe at its descriptor `fd` holds
    (FIONREAD, on a second opening of /proc/PID/fd/FD, says 0) and its main thread sleeps
    waiting for more: in read(2) (wchan pipe_read) or in poll(2) (zrec waits for input and
    its interrupt descriptor together). Once the writer has written all it will for now,
    this is "blocked reading its input"."""
    try:
        r = os.open("/proc/%d/fd/%d" % (pid, fd), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        unread = struct.unpack("i", fcntl.ioctl(r, termios.FIONREAD, b"\0\0\0\0"))[0]
    finally:
        os.close(r)
    w = _wchan(pid) or ""
    return unread == 0 and ("pipe_read" in w or "poll" in w)


def in_lock_wait(pid, path):
    """True while process `pid` sleeps waiting for the flock on `path`: its main thread
    in flock(2) (wchan locks_lock_inode_wait) or in the poll(2) between the LOCK_NB tries
    of zrec's interruptible --wait (wchan poll_schedule_timeout), with `path` open and
    no lock of its own on it (/proc/PID/fdinfo/FD lists the locks a descriptor holds)."""
    w = _wchan(pid) or ""
    if "lock_inode_wait" not in w and "poll" not in w:
        return False
    for fd in _fds_of(pid, path):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                if not any(line.startswith("lock:") for line in f):
                    return True
        except OSError:
            pass
    return False


def flock_waiters(path):
    """The process IDs blocked in flock(2) on `path`: the "->" lines of /proc/locks for
    its inode. The inode number alone is compared: the device field there need not be
    stat's st_dev on a stacked file system (overlayfs in a container)."""
    try:
        ino = os.stat(path).st_ino
    except OSError:
        return []
    pids = []
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 7 and fields[1] == "->" and fields[2] == "FLOCK" and \
                    fields[6].rsplit(":", 1)[-1] == str(ino):
                pids.append(int(fields[5]))
    return pids


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run_zrec(args, stdin=None, timeout=300, cwd=None, prefix=(), env=None, stdin_file=None, stdin_from=None):
    """Runs [*prefix, ZREC, *args]; returns (exit status, stdout bytes, stderr text).
    Its standard input: `stdin` bytes (a pipe), the file at `stdin_file` (opened as a
    shell's `<` would), or the output of the shell pipeline `stdin_from` (bash, pipefail:
    a failing producer fails the run); with none of them, this process's own."""
    argv = list(prefix) + [ZREC] + list(args)
    if stdin_from is not None:
        line = stdin_from + " | " + " ".join(shlex.quote(a) for a in argv)
        p = subprocess.run(["bash", "-o", "pipefail", "-c", line], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, cwd=cwd, env=env)
    elif stdin_file is not None:
        with open(stdin_file, "rb") as f:
            p = subprocess.run(argv, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                               cwd=cwd, env=env)
    else:
        p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           cwd=cwd, env=env)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def must(args, stdin=None, timeout=300, cwd=None, env=None, stdin_file=None, stdin_from=None):
    """run_zrec that must exit 0; returns (stdout bytes, stderr text). The one `must` of
    the Python tests: a script that wants stdout only takes must_out."""
    rc, out, err = run_zrec(args, stdin, timeout=timeout, cwd=cwd, env=env, stdin_file=stdin_file,
                            stdin_from=stdin_from)
    if rc != 0:
        raise AssertionError("zrec %s failed (rc %d): %s" % (" ".join(args), rc, err.strip()))
    return out, err


def must_out(args, stdin=None, timeout=300, cwd=None, env=None, stdin_file=None, stdin_from=None):
    """must, returning stdout only."""
    return must(args, stdin, timeout=timeout, cwd=cwd, env=env, stdin_file=stdin_file, stdin_from=stdin_from)[0]


def fails(args, rc_want=1, says=(), stdin=None, stdin_file=None, stdin_from=None):
    """run_zrec that must exit rc_want with each string of says in its stderr; returns stderr."""
    rc, _, err = run_zrec(args, stdin, stdin_file=stdin_file, stdin_from=stdin_from)
    return expect_failure(args, rc, err, rc_want, says)


def expect_failure(args, rc, err, rc_want=1, says=()):
    """Raises unless `zrec ARGS` exited rc_want with each string of says in stderr err; returns err."""
    if rc != rc_want:
        raise AssertionError("zrec %s: rc %d, want %d (stderr: %s)" % (" ".join(args), rc, rc_want, err.strip()))
    for s in says:
        if s not in err:
            raise AssertionError("zrec %s: stderr %r does not say %r" % (" ".join(args), err.strip(), s))
    return err


def records(store):
    """All records, as NumPy arrays, via the .npy stream of `zrec cat`."""
    import numpy as np
    data = must(["cat", "--format", "npy", store])[0]
    buf = io.BytesIO(data)
    out = []
    while buf.tell() < len(data):
        out.append(np.lib.format.read_array(buf))
    return out


def lines_store(path, lines):
    """A Ragged 1-D '|u1' store at `path` holding `lines` (bytes, no newline), one record each."""
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", path])
    must(["append-stream", path], stdin=b"".join(l + b"\n" for l in lines))
    return path


def byte_records(store):
    return [r.tobytes() for r in records(store)]


def tree_digests(path):
    """Every file under path (or the file itself), relative name -> SHA-256 of its bytes:
    what a command that must change nothing is compared against. A FIFO, socket or device
    is named by its type (reading it could block)."""
    if os.path.isfile(path):
        return {"": hashlib.sha256(open(path, "rb").read()).hexdigest()}
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            st = os.stat(p)
            if stat.S_ISREG(st.st_mode):
                out[os.path.relpath(p, path)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
            else:
                out[os.path.relpath(p, path)] = "mode %o" % stat.S_IFMT(st.st_mode)
    return out


def killed_append_leftovers(root, args, stdin=None):
    marker, aside = os.path.join(root, "zrec-root"), os.path.join(root, "zrec-root.aside")
    os.rename(marker, aside)
    try:
        return must(args, stdin=stdin)
    finally:
        os.rename(aside, marker)


def tree_hash(store):
    h = hashlib.sha256()
    for name in sorted(os.listdir(store)):
        with open(os.path.join(store, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


def wait_peak_rss_mib(p):
    """Waits for subprocess.Popen p (setting p.returncode); returns (exit status, peak RSS MiB)."""
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss / 1024.0


def run(*args, stdin=None, check=True):
    """Runs `zrec ARGS...`; returns the CompletedProcess (output captured), raising when
    check and the exit status is not 0."""
    p = subprocess.run([ZREC, *args], input=stdin, capture_output=True)
    if check and p.returncode != 0:
        raise AssertionError(f"zrec {' '.join(args)} exited {p.returncode}: {p.stderr.decode()}")
    return p


def npy_bytes(a):
    """The bytes of a .npy file holding a."""
    import numpy as np
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def run_all(fns, root, label=None):
    """Runs each fn() (printing "ok   NAME" or "FAIL NAME: ERROR", going on after a
    failure), removes the directory root, then prints "figure: LABEL passed N, failed M"
    (or "N passed, M failed" without a label). Returns the exit status: 1 if any failed."""
    passed = failed = 0
    try:
        for fn in fns:
            try:
                fn()
                passed += 1
                print(f"ok   {fn.__name__}")
            except Exception as e:  # noqa: BLE001 - report every failure and keep going
                failed += 1
                print(f"FAIL {fn.__name__}: {e}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if label is None:
        print(f"{passed} passed, {failed} failed")
    else:
        print(f"figure: {label} passed {passed}, failed {failed}")
    return 1 if failed else 0
