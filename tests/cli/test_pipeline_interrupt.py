#!/usr/bin/python3
"""SIGINT and SIGTERM in the middle of an append, with and without checkpoints.

A producer writes some records into a pipe and then stalls with the pipe open, so zrec
is blocked in read(2) when the signal comes (the case a plain SA_RESTART handler would
never get out of). Then:
- with --checkpoint-every N: exit 130 (SIGINT) / 143 (SIGTERM), stderr says
  "interrupted; 'S' holds K records (resume: the same command with --from-length N)", and
  the store verifies and holds exactly the published prefix; rerunning the producer with
  --from-length N completes the store with no record twice;
- without checkpoints: the store is byte-for-byte as it was before the run;
- the same for append-npy (a stream of .npy arrays) and append-files (blocked reading
  its list of names, and interrupted between checkpoints of a long run).
The published length is watched in meta.zr's first 8 bytes (the static page's
`length`, docs/format.md section 2), which needs no lock.

Needs: ZREC (path of the zrec binary), python3-numpy.
"""
import io
import json
import os
import signal
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import must, read_all_of_pipe, wait_until  # noqa: E402  (tests/cli/cli_helpers.py)

ZREC = os.environ.get("ZREC")
if not ZREC or not os.access(ZREC, os.X_OK):
    sys.exit("test_pipeline_interrupt: set ZREC to the zrec binary (got %r)" % ZREC)




def create(path, dtype="|u1", codec="zstd"):
    must(["create", "--ragged", "--ndim", "1", "--dtype", dtype, "--codec", codec, path])
    return path


def published_length(store):
    with open(os.path.join(store, "meta.zr"), "rb") as f:
        return struct.unpack("<Q", f.read(8))[0]


def store_files(store):
    return {n: open(os.path.join(store, n), "rb").read() for n in sorted(os.listdir(store))}


def byte_records(store):
    data = must(["cat", "--format", "npy", store])[0]
    buf = io.BytesIO(data)
    out = []
    while buf.tell() < len(data):
        out.append(np.lib.format.read_array(buf).tobytes())
    return out


# Writes `count` records (lines, or .npy arrays with "npy"), flushes; given a file name,
# creates that file to say it has written everything, then stalls with stdout open until
# killed (10 minutes at most, longer than any wait here, so that a test that fails
# leaves no producer behind for long).
PRODUCER = r"""
import io, sys, time
kind, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = sys.stdout.buffer
for i in range(first, first + count):
    if kind == "npy":
        import numpy as np
        buf = io.BytesIO(); np.save(buf, np.arange(i % 7 + 1, dtype="<i4") + i); out.write(buf.getvalue())
    else:
        out.write(b"line %d\n" % i)
out.flush()
if len(sys.argv) > 4:
    open(sys.argv[4], "w").close()
    time.sleep(600)
"""


def start(tmp, zrec_args, kind, first, count):
    """Starts producer | zrec; returns (zrec process, producer process). The producer
    creates the file producer.flushed (its .flushed) once all it writes is in the pipe."""
    gen = os.path.join(tmp, "producer.py")
    open(gen, "w").write(PRODUCER)
    flushed = os.path.join(tmp, "producer.flushed")
    if os.path.exists(flushed):
        os.unlink(flushed)
    producer = subprocess.Popen(["/usr/bin/python3", gen, kind, str(first), str(count), flushed],
                                stdout=subprocess.PIPE)
    producer.flushed = flushed
    z = subprocess.Popen([ZREC] + zrec_args, stdin=producer.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    producer.stdout.close()
    return z, producer


def wait_blocked_in_read(z, producer, what):
    """Until zrec has read all the producer wrote and sleeps waiting for more: the
    producer says it wrote everything, the pipe holds no byte zrec has not read, and zrec
    sleeps in read(2)/poll(2). `what`: what zrec has read by then, for the message."""
    wait_until(lambda: os.path.exists(producer.flushed) and read_all_of_pipe(z.pid),
               "zrec blocked reading its stdin after %s" % what, proc=z)


def handlers_installed(pid):
    """True once the process catches SIGINT and SIGTERM (its SigCgt mask in /proc)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("SigCgt:"):
                caught = int(line.split()[1], 16)
                return all(caught >> (s - 1) & 1 for s in (signal.SIGINT, signal.SIGTERM))
    return False


def stop(z, producer, sig, rc_want):
    # A signal sent before zrec installs its handlers would kill it outright (a slow
    # start under ASan on a loaded machine), which is not what these cases test.
    wait_until(lambda: handlers_installed(z.pid), "zrec's signal handlers", proc=z)
    z.send_signal(sig)
    try:
        out, err = z.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        z.kill()
        producer.kill()
        raise AssertionError("zrec did not stop within 10 s of signal %d" % sig)
    producer.kill()
    producer.wait()
    err = err.decode()
    assert z.returncode == rc_want, "rc %d, want %d; stderr: %s" % (z.returncode, rc_want, err)
    return err


def producer_output(tmp, kind, first, count):
    gen = os.path.join(tmp, "producer.py")
    return subprocess.run(["/usr/bin/python3", gen, kind, str(first), str(count)], stdout=subprocess.PIPE,
                          check=True).stdout


CASES, case = case_runner.case_registry()


@case
def sigint_with_checkpoints_then_resume(tmp):
    s = create(os.path.join(tmp, "s"))
    z, p = start(tmp, ["append-stream", "--checkpoint-every", "1000", s], "lines", 0, 2500)
    wait_until(lambda: published_length(s) == 2000, "the second checkpoint", proc=z)
    # The last 500 lines sit in the unpublished window, zrec blocked in read.
    wait_blocked_in_read(z, p, "2500 lines")
    err = stop(z, p, signal.SIGINT, 130)
    assert ("zrec append-stream: interrupted; '%s' holds 2000 records (resume: the same command with "
            "--from-length 0)" % s) in err, err
    must(["verify", s])
    assert byte_records(s) == [b"line %d" % i for i in range(2000)]
    # Resume: the same command, with --from-length 0: the first 2000 are found present.
    _, err = must(["append-stream", "--checkpoint-every", "1000", "--from-length", "0", s],
                  producer_output(tmp, "lines", 0, 3000))
    assert "appended 1000 records" in err and "after skipping 2000 already present" in err, err
    assert byte_records(s) == [b"line %d" % i for i in range(3000)]


@case
def sigterm_without_checkpoints(tmp):
    s = create(os.path.join(tmp, "s"), codec="raw")
    must(["append-stream", s], b"a\nb\nc\n")
    before = store_files(s)
    z, p = start(tmp, ["append-stream", s], "lines", 0, 5000)
    wait_blocked_in_read(z, p, "5000 lines")  # it has read (and windowed) what the producer wrote
    err = stop(z, p, signal.SIGTERM, 143)
    assert "interrupted; '%s' holds 3 records" % s in err and "resume" not in err, err
    assert store_files(s) == before, "an interrupted all-or-nothing append changed the store"
    must(["verify", s])


@case
def sigint_before_any_input(tmp):
    s = create(os.path.join(tmp, "s"))
    before = store_files(s)
    z, p = start(tmp, ["append-stream", "--parse", "ints", s], "lines", 0, 0)
    wait_blocked_in_read(z, p, "no input")
    err = stop(z, p, signal.SIGINT, 130)
    assert "holds 0 records" in err, err
    assert store_files(s) == before


@case
def sigterm_with_checkpoints_second_signal_kind(tmp):
    s = create(os.path.join(tmp, "s"))
    z, p = start(tmp, ["append-stream", "--checkpoint-every", "100", s], "lines", 0, 250)
    wait_until(lambda: published_length(s) == 200, "two checkpoints", proc=z)
    wait_blocked_in_read(z, p, "250 lines")
    err = stop(z, p, signal.SIGTERM, 143)
    assert "holds 200 records (resume: the same command with --from-length 0)" in err, err
    assert byte_records(s) == [b"line %d" % i for i in range(200)]


@case
def append_npy_interrupted(tmp):
    s = create(os.path.join(tmp, "s"), dtype="<i4")
    z, p = start(tmp, ["append-npy", "--checkpoint-every", "10", s, "-"], "npy", 0, 25)
    wait_until(lambda: published_length(s) == 20, "two append-npy checkpoints", proc=z)
    wait_blocked_in_read(z, p, "25 arrays")
    err = stop(z, p, signal.SIGINT, 130)
    assert ("zrec append-npy: interrupted; '%s' holds 20 records (resume: the same command with --from-length 0)"
            % s) in err, err
    must(["verify", s])
    # Resume from the full stream.
    must(["append-npy", "--from-length", "0", s, "-"], producer_output(tmp, "npy", 0, 30))
    data = must(["cat", "--format", "jsonl", s])[0].decode().splitlines()
    assert [json.loads(x) for x in data] == [list(range(i, i + i % 7 + 1)) for i in range(30)]


@case
def append_files_interrupted(tmp):
    s = create(os.path.join(tmp, "s"))
    before = store_files(s)
    # Blocked reading the list of names from a stalled pipe.
    z, p = start(tmp, ["append-files", s, "-"], "lines", 0, 3)
    wait_blocked_in_read(z, p, "3 names")
    err = stop(z, p, signal.SIGINT, 130)
    assert "zrec append-files: interrupted; '%s' holds 0 records" % s in err, err
    assert store_files(s) == before
    # A long checkpointed run, interrupted once something is published. Each checkpoint
    # syncs the store, which makes the run last long enough to be interrupted; if it
    # finishes first, it must simply be complete.
    d = os.path.join(tmp, "files")
    os.mkdir(d)
    names = []
    for i in range(4000):
        path = os.path.join(d, "%05d" % i)
        with open(path, "wb") as f:
            f.write(b"%d " % i * (1 + i % 50))
        names.append(path)
    manifest = os.path.join(tmp, "map.tsv")
    z = subprocess.Popen([ZREC, "--threads", "1", "append-files", "--checkpoint-every", "20", "--window-mib", "1",
                          "--manifest", manifest, s, "--files-from", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    z.stdin.write("\n".join(names).encode() + b"\n")
    z.stdin.close()
    wait_until(lambda: published_length(s) >= 100 or z.poll() is not None, "append-files checkpoints")
    z.send_signal(signal.SIGINT)
    z.wait(timeout=30)
    err = z.stderr.read().decode()
    z.stdout.close()
    z.stderr.close()
    n = published_length(s)
    if z.returncode == 0:
        print("note: append-files finished before the signal; only completeness checked", file=sys.stderr)
        assert n == 4000, n
    else:
        assert z.returncode == 130, (z.returncode, err)
        assert n % 20 == 0 and 100 <= n < 4000, n
        assert "holds %d records (resume: the same command with --from-length 0)" % n in err, err
    must(["verify", s])
    got = byte_records(s)
    assert got == [open(x, "rb").read() for x in names[:n]]
    lines = open(manifest).read().splitlines()
    assert lines == ["%d\t%s\t%d" % (i, names[i], len(got[i])) for i in range(n)], "manifest != published records"
    # Resume.
    must(["append-files", "--from-length", "0", "--manifest", manifest, s, "--files-from", "-"],
         ("\n".join(names) + "\n").encode())
    assert published_length(s) == 4000
    assert len(open(manifest).read().splitlines()) == 4000


def main():
    return case_runner.run_cases(CASES, "zrec_interrupt_")


if __name__ == "__main__":
    sys.exit(main())
