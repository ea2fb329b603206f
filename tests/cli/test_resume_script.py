#!/usr/bin/python3
"""The README's resume recipe, run as a whole script (issue 34, problem 4): a script is
the unit users rerun. The old recipe computed --from-length with `zrec info` at the top
of the script, so rerunning the script after a kill appended the input again (a SIGKILL
at 20,000 of 72,277 records left 92,277).

The recipe's two lines (read from README.md, so the test runs what the README shows)
run as a bash script, in a directory whose store already holds 300 records: the script
is SIGKILLed (its whole process group) at a random moment, three times, then run to the
end, then run once more after it finished; the store's digest must equal an
uninterrupted run's every time it completes, and the finished rerun appends nothing.
TRIALS (default 3) rounds, each with 3 kills.

Needs: ZREC (path of the zrec binary).
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, must, must_out, require_zrec, run_zrec  # noqa: E402

ZREC = require_zrec("test_resume_script")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRIALS = int(os.environ.get("TRIALS", "3"))
rnd = random.Random(int(os.environ.get("SEED", "34")))
CASES, case = case_runner.case_registry()
FIGURES = []


def recipe_lines():
    """The README's two lines of the recipe: the create, and the append with --resume-file."""
    readme = open(os.path.join(ROOT, "README.md")).read()
    create = re.search(r"^\[ -d tokens \] \|\| zrec create .*tokens/$", readme, re.M)
    append = re.search(r"^gen \| zrec append-stream .*--resume-file tokens\.resume tokens/$", readme, re.M)
    expect(create and append, "README.md no longer shows the --resume-file recipe")
    return [create.group(0), append.group(0)]


def write_script(d, lines):
    # `gen`: a producer that pauses between its thirds, so that kills land mid-run; the
    # README's 100000-record checkpoints become 200 so that a kill finds several.
    script = os.path.join(d, "build.sh")
    body = "\n".join(l.replace("--checkpoint-every 100000", "--checkpoint-every 200") for l in lines)
    with open(script, "w") as f:
        f.write("set -e -o pipefail\ncd \"$(dirname \"$0\")\"\n"
                "zrec() { \"$ZREC\" \"$@\"; }\n"
                "gen() { head -n 1000 gen.txt; sleep 0.2; sed -n 1001,2000p gen.txt; sleep 0.2; tail -n +2001 gen.txt; }\n"
                + body + "\n")
    return script


def setup(d, gen_text):
    os.makedirs(d)
    with open(os.path.join(d, "gen.txt"), "wb") as f:
        f.write(gen_text)
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", os.path.join(d, "tokens")])
    must(["append-stream", "--parse", "ints", os.path.join(d, "tokens")],
         stdin=b"".join(b"%d %d\n" % (i, i * i) for i in range(300)))


def run_script(script, kill_after=None):
    env = dict(os.environ, ZREC=ZREC)
    p = subprocess.Popen(["bash", script], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    if kill_after is None:
        _, err = p.communicate(timeout=120)
        return p.returncode, err.decode()
    try:
        p.wait(timeout=kill_after)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    # Waiting for bash is not waiting for its zrec: until every process of the group is
    # gone, the store's lock may still be held, and the next run would fail "locked by
    # another process" (it did once, under load).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.01)
    return p.returncode, ""


def digest(store):
    return must_out(["digest", store]).split()[0]


@case
def recipe_rerun_after_kills_appends_once(d):
    lines = recipe_lines()
    gen_text = b"".join(b" ".join(b"%d" % rnd.randrange(50000) for _ in range(rnd.randint(1, 20))) + b"\n"
                        for _ in range(3000))
    clean = os.path.join(d, "clean")
    setup(clean, gen_text)
    rc, err = run_script(write_script(clean, lines))
    expect(rc == 0, err)
    want = digest(os.path.join(clean, "tokens"))
    expect(json.loads(must_out(["info", "--json", os.path.join(clean, "tokens")]))["length"] == 3300,
           "a clean run holds 300 + 3000")
    killed_mid = 0
    for t in range(TRIALS):
        w = os.path.join(d, "trial%d" % t)
        setup(w, gen_text)
        script = write_script(w, lines)
        for _ in range(3):
            rc, _ = run_script(script, kill_after=rnd.uniform(0.0, 0.6))
            killed_mid += rc == -signal.SIGKILL or rc == 137
        rc, err = run_script(script)
        expect(rc == 0, err)
        expect(digest(os.path.join(w, "tokens")) == want, "trial %d: the rerun script's store differs" % t)
        rc, err = run_script(script)  # the finished script, run once more
        expect(rc == 0 and "appended 0 records" in err and "it now holds 3300" in err, err)
        expect(digest(os.path.join(w, "tokens")) == want, "trial %d: rerunning the finished script changed it" % t)
    FIGURES.append("resume recipe as a script: %d trials x 3 SIGKILLs (%d mid-run), then run to the end and once "
                   "more: every store equals a clean run's" % (TRIALS, killed_mid))


@case
def resume_file_rules(d):
    s = os.path.join(d, "s")
    must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    must(["append-stream", s], stdin=b"a\nb\n")
    rf = os.path.join(d, "s.resume")
    must(["append-stream", "--resume-file", rf, s], stdin=b"c\nd\n")
    expect(open(rf).read() == "2\n", "the first run writes the length it found: %r" % open(rf).read())
    out = json.loads(must_out(["append-stream", "--json", "--resume-file", rf, s], stdin=b"c\nd\ne\n"))
    expect((out["records_present"], out["records_appended"], out["length"]) == (2, 1, 5), str(out))
    with open(rf, "w") as f:
        f.write("two\n")
    before = open(os.path.join(s, "meta.zr"), "rb").read()
    rc, _, err = run_zrec(["append-stream", "--resume-file", rf, s], stdin=b"x\n")
    expect(rc == 1 and "resume file '%s' does not hold one length and a newline" % rf in err, err)
    expect(open(os.path.join(s, "meta.zr"), "rb").read() == before, "a refused run changed the store")
    rc, _, err = run_zrec(["append-stream", "--resume-file", rf, "--from-length", "0", s], stdin=b"x\n")
    expect(rc == 2 and "--from-length and --resume-file cannot be used together" in err, err)
    # append-tar keeps the root's committed samples the same way.
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for k in range(3):
            for e in ("txt", "cls"):
                data = b"%d" % k
                info = tarfile.TarInfo("%d.%s" % (k, e))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    tar = os.path.join(d, "a.tar")
    open(tar, "wb").write(buf.getvalue())
    root, trf = os.path.join(d, "root"), os.path.join(d, "root.resume")
    for _ in range(2):
        must(["append-tar", "--resume-file", trf, root, tar])
    expect(open(trf).read() == "0\n", open(trf).read())
    expect(json.loads(must_out(["info", "--json", root]))["committed_length"] == 3, "the rerun appended again")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-resume-script-", figures=FIGURES))
