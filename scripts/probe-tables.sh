#!/bin/bash
# For the lead on the GPU machine: fingerprints of cuda:0 (and torch:cuda:0 when
# a PyTorch is found) and the docs/probe.md tables made from them.
# usage: scripts/probe-tables.sh [OUTDIR]   (GPUVET=path/to/gpuvet)
set -u
OUT=${1:-probe-out}; mkdir -p "$OUT"
GPUVET=${GPUVET:-gpuvet}
{ time "$GPUVET" probe --device cuda:0 --json -o "$OUT/cuda0.json" >/dev/null; } 2> "$OUT/cuda0.time"
NVIDIA_TF32_OVERRIDE=1 "$GPUVET" probe --device cuda:0 --json -o "$OUT/cuda0-tf32override.json" >/dev/null
if [ -n "${GPUVET_PYTHON:-}" ] || python3 -c 'import torch' 2>/dev/null; then
  { time "$GPUVET" probe --device torch:cuda:0 --json -o "$OUT/torch.json" >/dev/null; } 2> "$OUT/torch.time"
fi
"$GPUVET" check --device cuda:0 --probe -o "$OUT/check-default.json" >/dev/null
NVIDIA_TF32_OVERRIDE=1 "$GPUVET" check --device cuda:0 --probe -o "$OUT/check-tf32.json" >/dev/null
"$GPUVET" compare "$OUT/check-default.json" "$OUT/check-tf32.json" > "$OUT/compare-tf32.txt"
python3 - "$OUT"/*.json <<'PY' > "$OUT/tables.md"
import json, sys
cols = ["input_subnormals", "output_subnormals", "input_mantissa_bits", "input_rounding",
        "sum_mantissa_bits", "sum_rounding", "extra_bits", "product_rounding", "fused_terms",
        "order.k16", "order.k64", "order.k256", "deterministic", "batch_invariant"]
for f in sys.argv[1:]:
    d = json.load(open(f))
    if d.get("schema") != "gpuvet.probe":
        continue
    print("### %s (`%s`, %.1f s)\n" % (f.split("/")[-1], d["device_spec"], d["seconds"]))
    for r in d["routes"]:
        print("#### route %s\n" % r["route"])
        if r["status"] != "probed":
            print("unavailable: %s\n" % r.get("reason")); continue
        print("| op.precision | impl | " + " | ".join(cols) + " |")
        print("|" + "---|" * (len(cols) + 2))
        for p in r["precisions"]:
            name = p["op"] + "." + p["precision"]
            if p["status"] != "probed":
                print("| %s | %s: %s |" % (name, p["status"], p.get("reason", "")[:80])); continue
            pr = p["properties"]
            impl = (p["impl"] or ["?"])[0]
            print("| %s | %s | " % (name, impl) + " | ".join(pr.get(c, {}).get("value", "-") for c in cols) + " |")
        print()
PY
echo "wrote $OUT/tables.md"
