#!/usr/bin/env bash
# Smoke test of `zrec bench` on tiny sizes: every workload and codec runs, the output
# has its documented shape (Markdown rows, JSON keys), --cold, --export and the STORE
# form work, misuse is a usage error, and temporary stores are removed. No timing
# assertions: CI machines are too noisy for them (figures come from docs/bench.md runs).
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_bench_smoke.sh  (CTest sets ZREC).
set -u

source "$(dirname "$0")/testlib.sh"
require_zrec
py=/usr/bin/python3
mkdir "$tmp/stores"
tiny=(--records 40 --batch 8 --seconds 0.02 --rounds 1 --dir "$tmp/stores")

run() {
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# --- every workload and codec, JSON ----------------------------------------------
run "$zrec" --threads 2 bench "${tiny[@]}" --json
check "bench --json exits 0 (stderr: $(head -c 400 "$tmp/err"))" [ "$rc" -eq 0 ]
check "the environment comes first on stderr" grep -q '^zrec bench: zrec [0-9]' "$tmp/err"
check "stdout is one line" [ "$(wc -l <"$tmp/out")" -eq 1 ]
cp "$tmp/out" "$tmp/all.json"
check "the JSON has the documented keys" "$py" - "$tmp/all.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
env = j["environment"]
for k in ["zrec_version", "zstd_version", "cpu_model", "kernel", "cpus", "physical_cores", "read_lanes",
          "write_lanes", "optimized", "assertions", "load_average_1m", "load_average_5m"]:
    assert k in env, k
assert env["read_lanes"] == 2 and env["write_lanes"] == 2, env
for k in ["seconds", "rounds", "seed", "sync", "data_shards"]:
    assert k in j["options"], k
ws = j["workloads"]
assert [w["workload"] for w in ws] == ["vision", "vision-var", "tokens", "tokens-var"], ws
t_keys = ["records", "bytes", "batches", "elapsed_s", "bytes_per_s", "records_per_s", "p50_ms", "p95_ms", "p99_ms"]
for w in ws:
    for k in ["kind", "dtype", "ndim", "item_shape", "records", "logical_bytes", "batch", "read_lanes",
              "write_lanes", "cold", "pread_limit", "codecs"]:
        assert k in w, (w["workload"], k)
    assert w["records"] == 40 and w["batch"] == 8 and w["cold"] is False
    assert (w["kind"] == "dense") == (w["item_shape"] is not None)
    assert all(k in w["pread_limit"] for k in t_keys)
    assert [c["codec"] for c in w["codecs"]] == ["raw", "zstd", "zstd_dict"]
    for c in w["codecs"]:
        for k in ["backend", "write", "gather", "memory_encode", "memory_decode", "disk_bytes", "payload_bytes",
                  "dict_bytes", "disk_ratio", "gather_vs_pread_limit", "gather_vs_memory_decode",
                  "write_vs_memory_encode"]:
            assert k in c, (w["workload"], c["codec"], k)
        for t in ["write", "gather", "memory_encode", "memory_decode"]:
            assert all(k in c[t] for k in t_keys), (c["codec"], t)
        assert c["write"]["bytes"] == w["logical_bytes"]
        assert c["gather"]["records"] == 8 * c["gather"]["batches"] > 0
        assert c["disk_bytes"] > 0 and c["disk_ratio"] > 0
        assert "compression_ratio" not in c and "seconds" not in c["gather"]  # renamed (docs/json.md)
        assert (c["dict_bytes"] > 0) == (c["codec"] == "zstd_dict")
        assert "path" not in c  # not kept
PY
check "temporary stores are removed" [ -z "$(ls -A "$tmp/stores")" ]

# --- text output ------------------------------------------------------------------
run "$zrec" bench -w tokens -c raw,zstd "${tiny[@]}"
check "bench (text) exits 0" [ "$rc" -eq 0 ]
check "text has the table header" grep -q '^| backend | logical write | logical gather | krecords/s | p50 | p95 | p99 | disk | ratio ' "$tmp/out"
check "text has a zrecord-raw row" grep -q '^| zrecord-raw | [0-9]* MiB/s | [0-9]* MiB/s | ' "$tmp/out"
check "text has a zrecord-zstd row" grep -q '^| zrecord-zstd | ' "$tmp/out"
check "text has no zstd_dict row" bash -c "! grep -q zstd_dict '$tmp/out'"
check "text has the pread limit row" grep -q '^| pread limit | - | ' "$tmp/out"
check "text has the in-memory rows" grep -q '^| in-memory zstd | ' "$tmp/out"

# --- --cold, --export, --keep -----------------------------------------------------
run "$zrec" bench -w tokens-var,vision -c raw,zstd "${tiny[@]}" --cold --json --keep --export "$tmp/export"
check "bench --cold exits 0 (stderr: $(head -c 400 "$tmp/err"))" [ "$rc" -eq 0 ]
cp "$tmp/out" "$tmp/cold.json"
check "--cold is reported and --keep names the stores" "$py" - "$tmp/cold.json" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
for w in j["workloads"]:
    assert w["cold"] is True
    for c in w["codecs"]:
        assert os.path.isfile(os.path.join(c["path"], "meta.zr")), c["path"]
PY
if "$py" -c "import numpy" 2>/dev/null; then
  check "--export writes the records as .npy" "$py" - "$tmp/export" <<'PY'
import numpy as np, sys
d = sys.argv[1]
v = np.load(d + "/vision/records.npy")
assert v.shape == (40, 3, 224, 224) and v.dtype == np.uint8, (v.shape, v.dtype)
p = np.load(d + "/tokens-var/payload.npy")
o = np.load(d + "/tokens-var/offsets.npy")
s = np.load(d + "/tokens-var/shapes.npy")
assert p.dtype == np.dtype("<i4") and o.shape == (41,) and s.shape == (40, 1)
assert o[0] == 0 and o[-1] == p.size and (np.diff(o) == s[:, 0]).all()
assert p.min() >= 0 and p.max() < 32000
PY
else
  echo "skip: numpy not installed, --export output not checked" >&2
fi

# --- bench STORE ------------------------------------------------------------------
store=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["workloads"][0]["codecs"][1]["path"])' "$tmp/cold.json")
run "$zrec" bench --batch 4 --seconds 0.02 --rounds 1 --json "$store"
check "bench STORE --json exits 0 (stderr: $(head -c 400 "$tmp/err"))" [ "$rc" -eq 0 ]
cp "$tmp/out" "$tmp/store.json"
check "bench STORE has the documented keys" "$py" - "$tmp/store.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in ["environment", "path", "kind", "dtype", "ndim", "item_shape", "codec", "length", "logical_bytes",
          "payload_bytes", "disk_bytes", "batch", "lanes", "cold", "gather", "pread_limit", "memory_decode",
          "gather_vs_pread_limit", "gather_vs_memory_decode"]:
    assert k in j, k
assert j["codec"] == "zstd" and j["kind"] == "ragged" and j["length"] == 40 and j["batch"] == 4
assert "store" not in j and "records" not in j  # renamed to info's names (docs/json.md)
assert j["gather"]["records"] > 0 and j["memory_decode"] is not None
PY
run "$zrec" bench --batch 4 --seconds 0.02 --rounds 1 "$store"
check "bench STORE (text) has a zrecord row and the pread limit" \
  bash -c "grep -q '^| zrecord-zstd | ' '$tmp/out' && grep -q '^| pread limit | ' '$tmp/out'"

# --- misuse -----------------------------------------------------------------------
for args in "--workload nope" "--codec lz4" "--records 5 --bytes 1M" "--bytes 12X" "--seconds 0" \
  "--workload vision $store" "--batch 0"; do
  # shellcheck disable=SC2086
  run "$zrec" bench $args
  check "zrec bench $args: exit $rc, want 2 with a message on stderr" bash -c "[ $rc -eq 2 ] && [ -s '$tmp/err' ]"
done
run "$zrec" bench --seconds 0.02 "$tmp/no-such-store"
check "bench on a missing store fails with exit 1" [ "$rc" -eq 1 ]

finish
