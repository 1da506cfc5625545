#!/bin/bash
# gpuvet fleet run --bench on a CUDA GPU (docs/fleet.md): the prolog tier with
# its bench runs (status ran: inside the 60 s budget, the bench counted), the
# node document's hardware.uuid is the GPU's UUID as nvidia-smi writes it
# (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx; the same string nvidia-smi lists
# for the device where nvidia-smi is there), and the bench figures are GEMMs on
# cuBLASLt (the first route: the prolog's budget is under 120 s) in TFLOP/s,
# positive, at least f32, f16 and bf16. The gate with --bench keeps the node.
# The wall time and seconds are printed, not asserted. Skipped (77) without a
# CUDA GPU.
set -u
. "$(dirname "$0")/../cli/lib.sh"
need_cmd python3
unset GPUVET_TEST_FLIP GPUVET_FLEET_GATHER GPUVET_FLEET_BUDGET OMPI_COMM_WORLD_RANK \
      PMIX_RANK SLURM_PROCID GPUVET_RECORD
gv_workdir T
export GPUVET_FLEET_NODE=gpu0

"$GPUVET" fleet run --tier prolog --device cuda:0 --only 'sum.*' --dir "$T/probe" \
    >/dev/null 2>"$T/probe.err"
if python3 -c "import json,glob,sys; d=json.load(open(glob.glob(sys.argv[1]+'/nodes/*.json')[0])); sys.exit(0 if (d['reason'] or '').startswith('no GPU') else 1)" "$T/probe" 2>/dev/null; then
    skip "no CUDA GPU"
fi

s=$(date +%s%N)
"$GPUVET" fleet run --tier prolog --device cuda:0 --bench --dir "$T/run" >"$T/run.out" 2>&1
rc=$?
echo "fleet run --tier prolog --bench: exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms wall"
cat "$T/run.out"
[ $rc -eq 0 ] || fail "fleet run exit $rc"
smi=""
if command -v nvidia-smi >/dev/null; then
    smi=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | tr -d ' ')
fi
python3 - "$T/run/nodes/gpu0.r0.json" "$smi" <<'PY' || fail "node document"
import json, re, sys
d = json.load(open(sys.argv[1]))
smi = [u for u in sys.argv[2].split("\n") if u]
bad = []
if d["status"] != "ran": bad.append("status %s: %s" % (d["status"], d["reason"]))
uuid = d["hardware"].get("uuid")
print("uuid:", uuid, "nvidia-smi:", smi, "seconds:", d["seconds"])
if not isinstance(uuid, str) or not re.fullmatch(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", uuid):
    bad.append("hardware.uuid %r is not GPU-8-4-4-4-12 lowercase hex" % uuid)
if smi and uuid not in smi: bad.append("uuid %r is none of nvidia-smi's %s" % (uuid, smi))
if len(smi) == 1 and uuid != smi[0]: bad.append("uuid %r, nvidia-smi %s" % (uuid, smi[0]))
run = d["runs"][0]
if "bench_error" in run: bad.append("bench_error: %s" % run["bench_error"])
figs = run.get("bench") or []
for f in figs:
    print("  %-40s %10.1f %s  spread %.3f" % (f["id"], f["median"], f["unit"], f["spread"]))
    if not f["id"].startswith("gemm.cublaslt."): bad.append("id %s: not the first route" % f["id"])
    if f["unit"] != "TFLOP/s": bad.append("%s: unit %s" % (f["id"], f["unit"]))
    if not (f["median"] > 0): bad.append("%s: median %r" % (f["id"], f["median"]))
dts = {f["id"].split(".")[2] for f in figs}
if not {"f32", "f16", "bf16"} <= dts: bad.append("precisions %s" % sorted(dts))
if bad: sys.exit("\n".join(bad))
PY

"$GPUVET" fleet gate --tier prolog --device cuda:0 --bench --json -o "$T/gate.json" \
    >/dev/null 2>"$T/gate.err"
rc=$?
cat "$T/gate.err"
[ $rc -eq 0 ] || fail "fleet gate --bench exit $rc"
expect_json "$T/gate.json" "[d['gate']['decision'], len(d['runs'][0]['bench']) > 0]" "['keep', True]"
echo "fleet run/gate --bench on cuda:0: uuid as nvidia-smi writes it, bench figures in TFLOP/s"
