#!/usr/bin/python3
"""zrec cat --shuffle / --sample [--distinct] / --seed / --with-ids: a shuffle is a permutation of
the selection (each ID exactly once), a sample is IID with replacement and roughly
uniform, both are the same for a seed whatever --threads, and memory does not grow
with the store's length (a keyed bijection, no ID array)."""
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import SANITIZED, ZREC, npy_bytes, run, run_all  # noqa: E402


root = tempfile.mkdtemp(prefix="zrec_cat_sample.")
N = 1000
store = f"{root}/ids"  # record i holds the value i
run("create", "--dense", "--dtype", "<i8", "--shape", "1", "--shards", "3", store)
run("-q", "append-npy", store, "-", stdin=npy_bytes(np.arange(N, dtype="<i8").reshape(N, 1)))


def ids_out(*args, threads=1):
    out = run("--threads", str(threads), "cat", store, *args).stdout
    return np.load(io.BytesIO(out)).reshape(-1)


def shuffle_is_a_permutation():
    for sel, want in ((["100:900:3"], np.arange(100, 900, 3)), ([], np.arange(N)), (["5,7,5,-1"], [5, 7, 5, N - 1])):
        got = ids_out(*sel, "--shuffle", "--seed", "11")
        assert sorted(got.tolist()) == sorted(list(want)), sel
        if len(want) > 10:
            assert got.tolist() != list(want), "a shuffle left the order unchanged"
    idx = f"{root}/idx.txt"
    with open(idx, "w") as f:
        f.write("\n".join(str(i) for i in range(0, N, 7)) + "\n")
    got = ids_out("--indices-from", idx, "--shuffle", "--seed", "2")
    assert sorted(got.tolist()) == list(range(0, N, 7))


def deterministic_across_threads_and_seeds():
    for extra in (["--shuffle"], ["--sample", "300"]):
        a = ids_out(*extra, "--seed", "5", threads=1)
        b = ids_out(*extra, "--seed", "5", threads=2)
        c = ids_out(*extra, "--seed", "6", threads=2)
        assert a.tolist() == b.tolist(), f"{extra}: --threads changed the order"
        assert a.tolist() != c.tolist(), f"{extra}: seeds 5 and 6 gave the same order"
    # No --seed is seed 0.
    assert ids_out("--shuffle").tolist() == ids_out("--shuffle", "--seed", "0").tolist()


def sample_is_iid_and_uniform():
    draws = 20000 if not SANITIZED else 4000
    got = ids_out("10:60", "--sample", str(draws), "--seed", "9")
    assert len(got) == draws and got.min() >= 10 and got.max() < 60
    counts = np.bincount(got - 10, minlength=50)
    expect = draws / 50
    # Binomial sd = sqrt(draws * p * (1 - p)); 6 sd is a bound a correct sampler never
    # crosses in practice, a biased or stuck one does.
    sd = (draws * (1 / 50) * (49 / 50)) ** 0.5
    assert np.all(np.abs(counts - expect) < 6 * sd), counts
    chi2 = float(((counts - expect) ** 2 / expect).sum())
    assert chi2 < 120, f"chi-square {chi2:.1f} with 49 degrees of freedom"
    # With replacement: a sample larger than the selection repeats IDs, a small one may.
    assert len(set(ids_out("0:3", "--sample", "10").tolist())) <= 3
    print(f"figure: sample of {draws} over 50 IDs, chi-square {chi2:.1f} (49 dof)")


def with_ids_and_usage_errors():
    lines = run("cat", store, "--sample", "7", "--seed", "3", "--format", "jsonl", "--with-ids").stdout.decode().splitlines()
    assert len(lines) == 7
    for line in lines:
        obj = json.loads(line)
        assert list(obj) == ["id", "record"] and obj["record"] == [obj["id"]], line
    for args, msg in ((["--with-ids"], "--with-ids needs --format jsonl"),
                      (["--seed", "3"], "--seed needs --sample or --shuffle"),
                      (["5:5", "--sample", "3"], "--sample: the selection is empty")):
        p = run("cat", store, *args, "-o", f"{root}/x.npy", check=False)
        assert p.returncode in (1, 2) and msg in p.stderr.decode(), (args, p.returncode, p.stderr)
    p = run("cat", store, "--sample", "3", "--shuffle", check=False)
    assert p.returncode == 2, p.stderr
    assert ids_out("0:0", "--shuffle").size == 0 and ids_out("--sample", "0").size == 0


def sample_without_replacement():
    # --distinct: N different records, the first N of --shuffle's order for the seed.
    got = ids_out("--sample", "200", "--distinct", "--seed", "5")
    assert len(set(got.tolist())) == 200, "--distinct drew a record twice"
    assert got.tolist() == ids_out("--shuffle", "--seed", "5").tolist()[:200]
    with_replacement = ids_out("--sample", str(N), "--seed", "5")
    assert len(set(with_replacement.tolist())) < N, "IID draws of N from N had no repeat"
    p = run("cat", store, "--sample", str(N + 1), "--distinct", check=False)
    assert p.returncode == 1 and b"--distinct: the selection holds only %d records" % N in p.stderr, p.stderr
    p = run("cat", store, "--distinct", check=False)
    assert p.returncode == 2 and b"--distinct needs --sample N" in p.stderr, p.stderr


def memory_does_not_grow_with_length():
    big_n = 2_000_000 if not SANITIZED else 200_000
    big = f"{root}/big"
    run("create", "--ragged", "--dtype", "|u1", "--ndim", "1", "--codec", "raw", big)
    run("-q", "append-stream", big, stdin=b"x\n" * big_n)

    def peak_kib(path):
        p = subprocess.run(["/usr/bin/python3", "-c",
                            "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
                            " check=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                            ZREC, "cat", path, "--shuffle", "--seed", "1", "-1:", "--format", "raw", "-o", "-"],
                           capture_output=True, check=True)
        return int(p.stdout)

    small = peak_kib(store)
    large = peak_kib(big)
    # An ID array over the store would cost 8 bytes per record (16 MB at 2M records).
    assert large - small < 4096, f"peak RSS {small} KiB for {N} records, {large} KiB for {big_n}"
    # A shuffle over the whole big store is still each ID once.
    out = run("cat", big, "--shuffle", "--seed", "4", "--format", "text", "-o", "-").stdout.split(b"\n")[:-1]
    ids = np.array([int(l.split(b"\t")[0]) for l in out])
    assert ids.size == big_n and np.array_equal(np.sort(ids), np.arange(big_n))
    print(f"figure: shuffle of {big_n} records a permutation; peak RSS {small} KiB ({N} records) vs {large} KiB")


sys.exit(run_all((shuffle_is_a_permutation, deterministic_across_threads_and_seeds, sample_is_iid_and_uniform,
                  with_ids_and_usage_errors, sample_without_replacement, memory_does_not_grow_with_length), root, "cat sample/shuffle cases"))
