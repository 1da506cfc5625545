#!/bin/bash
# gpuvet bench on the CPU backend (OpenBLAS GEMM, memory loops): the document,
# its checks, --only, a wrong result withheld, GPU absence said plainly, usage
# errors, and nothing written when the command fails.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T

"$GPUVET" bench --device cpu --quick -o "$T/b.json" >"$T/out.txt" 2>"$T/err" ||
    { cat "$T/out.txt" "$T/err"; fail "bench --device cpu --quick (exit $?)"; }
grep -q "gemm.openblas.f32.256x256x256" "$T/out.txt" || { cat "$T/out.txt"; fail "human output lists the GEMM"; }
grep -q "collectives: no GPU" "$T/out.txt" || fail "GPU absence said plainly"
python3 - "$T/b.json" <<'PY' || fail "document"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuvet.bench" and d["schema_version"] == 1, d.get("schema")
assert d["snapshot"]["schema"] == "gpuvet.snapshot", "embedded snapshot"
ids = {r["id"]: r for r in d["results"]}
want = ["gemm.openblas.f32.256x256x256", "gemm.openblas.f64.256x256x256"] + [
    "memory.%s.67108864B" % op for op in ("copy", "scale", "add", "triad", "read")]
for i in want:
    r = ids[i]
    assert r["status"] == "ok", (i, r.get("reason"))
    assert r["check"]["ok"] is True, (i, r["check"])
    v = r["value"]
    assert math.isfinite(v) and v > 0, (i, v)
    assert r["min"] <= v <= r["max"], (i, r["min"], v, r["max"])
    assert len(r["samples"]) == 5, i
# FLOP and bytes counted as documented
g = ids["gemm.openblas.f32.256x256x256"]["params"]
assert g["flop"] == 2 * 256 ** 3, g
assert ids["memory.triad.67108864B"]["params"]["bytes_counted"] == 3 * 67108864
assert ids["memory.read.67108864B"]["params"]["bytes_counted"] == 67108864
assert not any(r["group"] in ("transfer", "latency", "peer", "collective") for r in d["results"])
assert d["collectives"].get("skipped"), d["collectives"]
assert [b["dtype"] for b in d["best"]] == ["f64", "f32"], d["best"]
for k in ("timer", "statistic", "checks", "bytes"):
    assert d["method"][k], k
assert "before" in d["conditions"] and "after" in d["conditions"]
# whether the machine was busy: the fields exist, whatever the load (never a timing assertion)
ml = d["machine_load"]
for k in ("cpus", "load1_before", "load1_after", "steal_fraction", "max_spread", "max_spread_id",
          "busy", "why"):
    assert k in ml, k
assert isinstance(ml["busy"], bool) and isinstance(ml["why"], list) and ml["busy"] == bool(ml["why"]), ml
assert ml["cpus"] >= 1 and ml["max_spread_id"] in ids, ml
PY
# the text: a CPU GEMM in a unit that fits (never 0.00 TFLOP/s), a busy machine said
! grep -q " 0.00 TFLOP/s" "$T/out.txt" || { cat "$T/out.txt"; fail "a CPU GEMM printed as 0.00 TFLOP/s"; }
if python3 -c "import json,sys; sys.exit(0 if json.load(open('$T/b.json'))['machine_load']['busy'] else 1)"; then
    grep -q "warning: the machine was busy" "$T/out.txt" || fail "a busy machine not said in the text"
else
    ! grep -q "machine was busy" "$T/out.txt" || fail "busy said of a machine judged quiet"
fi

# --only selects by id; a pattern that selects nothing is an error, not a pass
"$GPUVET" bench --device cpu --quick --only 'memory.tri*' --no-snapshot --json >"$T/only.json" ||
    fail "--only"
python3 -c "
import json,sys; d=json.load(open('$T/only.json'))
ids=[r['id'] for r in d['results']]; assert ids==['memory.triad.67108864B'], ids" || fail "--only ids"
"$GPUVET" bench --device cpu --quick --only 'nothing.*' --no-snapshot >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "--only matching nothing exits 3"
grep -q "no benchmark ran" "$T/err" || fail "says no benchmark ran"

# a wrong result never scores: status failed, no value, exit 1
GPUVET_TEST_BENCH_CORRUPT=1 "$GPUVET" bench --device cpu --quick --only 'gemm.*,memory.add*' \
    --no-snapshot --json >"$T/bad.json"
[ $? -eq 1 ] || fail "a wrong result exits 1"
python3 -c "
import json; d=json.load(open('$T/bad.json'))
for r in d['results']:
    assert r['status']=='failed' and r['value'] is None and r['check']['ok'] is False, r
assert len(d['results'])==3 and d['best']==[], d['best']" || fail "wrong results withheld"

# usage and device errors; a failed run writes nothing
"$GPUVET" bench --quick --full >/dev/null 2>&1; [ $? -eq 2 ] || fail "--quick --full is a usage error"
"$GPUVET" bench --device nosuch:0 -o "$T/x.json" >/dev/null 2>"$T/err"; [ $? -eq 2 ] || fail "unknown device exits 2"
grep -q "nosuch" "$T/err" || fail "names the device"
"$GPUVET" bench --device hip:0 -o "$T/x.json" >/dev/null 2>"$T/err"; [ $? -eq 3 ] || fail "hip is unsupported (3)"
[ ! -e "$T/x.json" ] || fail "nothing written on failure"
GPUVET_LIB_NO_SYSTEM=1 GPUVET_LIB_PATH=/nonexistent "$GPUVET" bench --device cuda:0 -o "$T/x.json" \
    >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "cuda without libcuda exits 3"
grep -q "libcuda" "$T/err" || { cat "$T/err"; fail "names libcuda"; }
[ ! -e "$T/x.json" ] || fail "nothing written when the device cannot open"
"$GPUVET" bench --help | grep -q "verdict.bf16_vs_fp16" || fail "--help"
echo ok
