#!/bin/bash
# gpuvet fleet run --bench (docs/fleet.md): three real CPU runs of the prolog
# tier, each a Slurm rank named by GPUVET_FLEET_NODE, carry bench figures
# (GEMM ids of the CPU's route, GFLOP/s, positive medians, a spread) and a null
# uuid; without --bench no figures; the budget counts the bench. Then
# fleet compare's slow rule on copies of those documents: every node given
# n0's figures (so nothing depends on how fast this loaded machine was), one
# node's figures scaled by the test: x0.5 is slow, the others not; x1 and x0.95
# (within 10%) nobody; x0.5 with a spread that covers the gap (a busy machine)
# nobody; x0.5 among two nodes only nobody (fewer than 3 to judge by).
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
unset GPUVET_TEST_FLIP GPUVET_FLEET_GATHER GPUVET_FLEET_BUDGET GPUVET_FLEET_NODE \
      OMPI_COMM_WORLD_RANK PMIX_RANK SLURM_PROCID GPUVET_RECORD
gv_tmpdir T
export XDG_CACHE_HOME="$T/cache"

run_rank() { # RANK [ARGS...]: a rank of a 3-task Slurm step, in the directory mode
    local i=$1
    shift
    SLURM_PROCID=$i SLURM_NTASKS=3 SLURM_JOB_ID=41 GPUVET_FLEET_NODE=n$i \
        "$GPUVET" fleet run --tier prolog --device cpu "$@"
}

for i in 0 1 2; do
    expect_rc 0 run_rank "$i" --only 'gemm.f32.*' --bench --dir "$T/real"
done
for i in 0 1 2; do
    python3 - "$T/real/nodes/n$i.r$i.json" <<'PY' || fail "node n$i: bench figures"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
if d["status"] != "ran": bad.append("status %s: %s" % (d["status"], d["reason"]))
if d["hardware"].get("uuid", "absent") is not None: bad.append("uuid %r on the CPU" % d["hardware"].get("uuid"))
run = d["runs"][0]
figs = run.get("bench")
if "bench_error" in run: bad.append("bench_error: %s" % run["bench_error"])
if not figs: bad.append("no bench figures: %r" % figs)
dtypes = set()
for f in figs or []:
    if set(f) != {"id", "unit", "median", "spread"}: bad.append("fields %s" % sorted(f))
    if not f["id"].startswith("gemm.openblas."): bad.append("id %s" % f["id"])
    if f["unit"] != "GFLOP/s": bad.append("%s: unit %s" % (f["id"], f["unit"]))
    if not (isinstance(f["median"], float) and f["median"] > 0): bad.append("%s: median %r" % (f["id"], f["median"]))
    if not (isinstance(f["spread"], float) and f["spread"] >= 0): bad.append("%s: spread %r" % (f["id"], f["spread"]))
    dtypes.add(f["id"].split(".")[2])
if dtypes != {"f32", "f64"}: bad.append("precisions %s, the CPU has f32 and f64" % sorted(dtypes))
if bad: sys.exit("\n".join(bad))
PY
done

# without --bench: no figures
expect_rc 0 run_rank 0 --only 'gemm.f32.*' --dir "$T/plain"
expect_json "$T/plain/nodes/n0.r0.json" "'bench' in d['runs'][0]" "False"

# the budget counts the bench: 9 s leave room for one case, not for the bench's
# first estimate (10 s), whatever the speed of this machine
GPUVET_FLEET_BUDGET=9 expect_rc 1 run_rank 0 --only 'gemm.f32.256x256x256.normal.s1' \
    --bench --dir "$T/budget"
expect_json "$T/budget/nodes/n0.r0.json" "[d['status'], 'the bench would overrun it' in d['reason'], len(d['runs'][0]['cases'])]" \
    "['could_not_run', True, 1]"

# fleet compare on copies: every node n0's figures with a spread of 2%, then
# NODE's times FACTOR with SPREAD (MISSING: leave that node out)
plant() { # DIR NODE FACTOR SPREAD [MISSING]
    rm -rf "$1" && mkdir -p "$1/nodes" && cp "$T"/real/nodes/*.json "$1/nodes/" &&
        python3 - "$@" <<'PY'
import glob, json, os, sys
out, node, factor, spread = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
missing = sys.argv[5] if len(sys.argv) > 5 else None
ref = json.load(open(os.path.join(out, "nodes", "n0.r0.json")))["runs"][0]["bench"]
for path in glob.glob(os.path.join(out, "nodes", "*.json")):
    d = json.load(open(path))
    if d["node"] == missing:
        os.unlink(path)
        continue
    k = factor if d["node"] == node else 1.0
    d["runs"][0]["bench"] = [dict(f, median=f["median"] * k,
                                  spread=spread if d["node"] == node else 0.02) for f in ref]
    json.dump(d, open(path, "w"))
PY
}
slow_nodes() { # FILE: the slow nodes, sorted
    json_get "$1" "sorted(o['node'] for g in d['groups'] for o in g['odd'] if 'slow' in o['classes'])"
}

plant "$T/same" n2 1.0 0.02 || fail "planting"
expect_rc 0 "$GPUVET" fleet compare "$T/same" --json
expect_json "$GV_OUT" "[d['summary']['odd'], d['summary']['slow']]" "[0, 0]"

plant "$T/half" n2 0.5 0.02 || fail "planting"
expect_rc 1 "$GPUVET" fleet compare "$T/half" --json -o "$T/half.json"
[[ $(slow_nodes "$T/half.json") == "['n2']" ]] || fail "x0.5: slow $(slow_nodes "$T/half.json")"
expect_json "$T/half.json" "[d['summary']['odd'], [o['classes'] for g in d['groups'] for o in g['odd']]]" "[1, [['slow']]]"
python3 - "$T/half.json" "$T/real/nodes/n0.r0.json" <<'PY' || fail "x0.5: evidence"
import json, sys
f, n0 = (json.load(open(p)) for p in sys.argv[1:])
ev = [o for g in f["groups"] for o in g["odd"]][0]["evidence"]["bench"]
ref = {b["id"]: b["median"] for b in n0["runs"][0]["bench"]}
if sorted(e["id"] for e in ev) != sorted(ref): sys.exit("evidence ids %s, figures %s" % ([e["id"] for e in ev], sorted(ref)))
for e in ev:
    if e["unit"] != "GFLOP/s" or e["nodes"] != 3: sys.exit("evidence %s" % e)
    if abs(e["value"] - 0.5 * ref[e["id"]]) > 1e-9 * ref[e["id"]] or abs(e["group_median"] - ref[e["id"]]) > 1e-9 * ref[e["id"]]:
        sys.exit("evidence %s, n0's median %s" % (e, ref[e["id"]]))
PY
expect_rc 1 "$GPUVET" fleet compare "$T/half"
grep -q "n2 slow (gemm.openblas" "$GV_OUT" || fail "x0.5 text: $(head -3 "$GV_OUT")"

plant "$T/near" n2 0.95 0.02 || fail "planting"
expect_rc 0 "$GPUVET" fleet compare "$T/near" --json
expect_json "$GV_OUT" "d['summary']['slow']" "0"

plant "$T/busy" n2 0.5 1.2 || fail "planting"
expect_rc 0 "$GPUVET" fleet compare "$T/busy" --json
expect_json "$GV_OUT" "d['summary']['slow']" "0"

plant "$T/two" n2 0.5 0.02 n1 || fail "planting"
expect_rc 1 "$GPUVET" fleet compare "$T/two" --json
expect_json "$GV_OUT" "[d['summary']['slow'], d['summary']['missing']]" "[0, 1]"
echo "fleet run --bench: figures on 3 CPU nodes, the budget counts it; slow: x0.5 of 3, not x0.95, a busy node or 2 nodes"
