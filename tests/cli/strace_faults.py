"""Syscall fault injection with strace(1), for tests/cli/test_fault_inject.py.

A *site* is one call of one write-path syscall, named the way strace's injection
counts calls: per syscall and per thread ("the Nth pwrite64 of a thread"). Sites are
found by tracing one uninjected run with `strace -f -y` (which annotates every file
descriptor with its path) and keeping the calls that touch a path under the test's
work directory; each site is then rerun with one fault injected at exactly that call:

    sites = enumerate_sites(argv, work, cwd=root)
    out = inject(argv, sites[0], "EIO", cwd=root)   # out.rc, out.stderr, out.injected

Faults: an errno (EIO, ENOSPC, EINTR: the call is not made and fails with it) or
"SIGKILL" (the process is killed on entering the call). `injected` says whether strace
saw the fault land (its log marks an injected error "(INJECTED)" and a kill "+++ killed
by SIGKILL +++"), so a run where the fault missed cannot pass for one where it hit.

Needs: strace (scripts/setup.sh installs it).
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import tempfile

# The syscalls through which a program changes files or directories. A "?" makes
# strace skip a name the architecture does not have (aarch64 has no rename, mkdir...).
WRITE_PATH_SYSCALLS = (
    "open", "openat", "openat2", "creat", "mkdir", "mkdirat",
    "write", "writev", "pwrite64", "pwritev", "pwritev2", "copy_file_range", "sendfile", "fallocate",
    "fsync", "fdatasync", "sync_file_range", "syncfs",
    "truncate", "ftruncate",
    "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
    "unlink", "unlinkat", "rmdir",
    "chmod", "fchmod", "fchmodat",
)

# Calls whose failure must fail the command: they write, size, sync, name or create
# what the command publishes. Cleanup (unlink, rmdir) and cosmetics (chmod) may fail
# with only a warning; opening for reading is judged by what the store holds after.
MUST_FAIL_SYSCALLS = frozenset((
    "mkdir", "mkdirat", "write", "writev", "pwrite64", "pwritev", "pwritev2", "copy_file_range",
    "sendfile", "fallocate", "fsync", "fdatasync", "sync_file_range", "syncfs", "truncate", "ftruncate",
    "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "creat",
))
_OPEN_FOR_WRITING = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC")

FAULTS = ("EIO", "ENOSPC", "EINTR", "SIGKILL")
STRERROR = {"EIO": "Input/output error", "ENOSPC": "No space left on device", "EINTR": "Interrupted system call"}

Site = collections.namedtuple("Site", "syscall index call")
# rc: exit status, -9 when killed, None when it ran past the timeout (then killed);
# call: the call the fault hit, as strace printed it ("" when it missed).
Outcome = collections.namedtuple("Outcome", "rc stderr injected call log")

_CALL = re.compile(r"^(\d+)\s+(\w+)\((.*)$")


def strace_path():
    path = shutil.which("strace")
    if path is None:
        raise AssertionError("strace is not installed (scripts/setup.sh installs it)")
    return path


def _trace_set(names):
    return "trace=" + ",".join("?" + n for n in names)


def must_fail(site):
    """Whether an EIO/ENOSPC at this site must make the command fail (see MUST_FAIL_SYSCALLS)."""
    if site.syscall in MUST_FAIL_SYSCALLS:
        return True
    return site.syscall in ("open", "openat", "openat2") and bool(_OPEN_FOR_WRITING.search(site.call))


def parse_sites(log_text, work, cwd):
    """The sites of a `strace -f -y` log: (syscall, per-thread index) pairs where some
    thread's call of that index names a path under `work`. `call` is the first such
    call, as strace printed it (for messages)."""
    work = os.path.realpath(work)
    cwd_note = "AT_FDCWD<%s>" % os.path.realpath(cwd)
    counts = collections.Counter()
    sites = {}
    for line in log_text.splitlines():
        m = _CALL.match(line)
        if m is None:
            continue  # "<... resumed>", "+++ exited +++", signals
        tid, name, rest = m.groups()
        counts[(tid, name)] += 1
        index = counts[(tid, name)]
        text = (name + "(" + rest).replace(cwd_note, "AT_FDCWD")
        if (work + "/" in text or work + ">" in text or work + '"' in text) and (name, index) not in sites:
            sites[(name, index)] = Site(name, index, text[:200])
    return sorted(sites.values(), key=lambda s: (s.syscall, s.index))


def _run_traced(strace_args, argv, cwd, stdin, timeout, env):
    """Runs argv under strace; returns (exit status or None after a timeout, stderr, log).
    strace and its tracee get a session of their own, so a timeout kills both."""
    fd, log = tempfile.mkstemp(prefix="strace-", suffix=".log")
    os.close(fd)
    try:
        with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
            p = subprocess.Popen([strace_path(), "-f", "-qq", "-o", log] + strace_args + ["--"] + argv, stdin=f,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=env,
                                 start_new_session=True)
            try:
                _, err = p.communicate(timeout=timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                _, err = p.communicate()
                rc = None
        with open(log, "r", errors="replace") as f:
            text = f.read()
        return rc, err.decode("utf-8", "replace"), text
    finally:
        os.remove(log)


def enumerate_sites(argv, work, cwd, stdin=None, timeout=120, env=None, syscalls=WRITE_PATH_SYSCALLS):
    """Runs argv once under `strace -f -y`, uninjected; returns (sites, rc, stderr).
    cwd should lie outside `work`, so relative lookups do not all look relevant.
    `syscalls` narrows the calls traced (e.g. ("fsync", "fdatasync"))."""
    rc, err, text = _run_traced(["-y", "-e", _trace_set(syscalls)], argv, cwd, stdin, timeout, env)
    return parse_sites(text, work, cwd), rc, err


def inject(argv, site, fault, cwd, stdin=None, timeout=60, env=None):
    """Runs argv with `fault` injected at `site`; returns an Outcome. rc is the exit
    status, or -9 when the process was killed (strace dies of the tracee's signal)."""
    action = "signal=SIGKILL" if fault == "SIGKILL" else "error=" + fault
    spec = "inject=%s:%s:when=%d" % (site.syscall, action, site.index)
    rc, err, text = _run_traced(["-y", "-e", "trace=" + site.syscall, "-e", spec], argv, cwd, stdin, timeout, env)
    lines = text.splitlines()
    if fault == "SIGKILL":
        injected = "+++ killed by SIGKILL +++" in text
        # The call it died in: the last one that never returned.
        hit = [l for l in lines if _CALL.match(l) and (l.endswith("= ?") or l.endswith("<unfinished ...>"))]
    else:
        hit = [l for l in lines if l.endswith("(INJECTED)")]
        injected = bool(hit)
    # Without the thread id; an injected call that another thread's output split shows
    # as "<... NAME resumed>".
    call = re.sub(r"^\d+\s+", "", hit[-1]) if injected and hit else ""
    return Outcome(rc, err, injected, call[:200], text)
