#!/bin/bash
# gpuvet probe on a CUDA GPU: properties that hold whatever the paper says.
# Skipped (77) without a CUDA GPU.
set -u
. "$(dirname "$0")/../cli/lib.sh"
gv_workdir T
"$GPUVET" check --device cuda:0 --list >/dev/null 2>&1 || true
"$GPUVET" probe --device cuda:0 --route cublas --dtype f64 --json -o "$T/f64.json" >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 3 ] && grep -qiE "no NVIDIA GPU|libcuda|CUDA_ERROR_NO_DEVICE|stub" "$T/err"; then
  skip "no CUDA GPU"
fi
start=$(date +%s)
"$GPUVET" probe --device cuda:0 --json -o "$T/all.json" >/dev/null || fail "probe --device cuda:0 (exit $?)"
echo "all routes and precisions: $(( $(date +%s) - start )) s"
NVIDIA_TF32_OVERRIDE=1 "$GPUVET" probe --device cuda:0 --route cublas --dtype tf32 --json -o "$T/tf32.json" >/dev/null || fail "tf32 probe"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
python3 - "$T/all.json" "$T/tf32.json" "${cc:-0}" <<'PY' || fail "properties"
import json, sys
d = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
def props(doc, route, prec, op="gemm"):
    for r in doc["routes"]:
        if r["route"] == route:
            for p in r["precisions"]:
                if p["op"] == op and p["precision"] == prec:
                    assert p["status"] == "probed", (route, prec, p.get("reason"))
                    return {k: v["value"] for k, v in p["properties"].items()}
    raise SystemExit("missing %s %s" % (route, prec))
f64 = props(d, "cublas", "f64")
assert f64["input_subnormals"] == "kept", f64
assert f64["output_subnormals"] == "kept", f64
assert f64["deterministic"] == "yes", f64
assert f64["input_mantissa_bits"] == "52", f64
tf = props(t, "cublas", "tf32")
assert tf["input_mantissa_bits"] == "10", tf          # TF32: fp32 inputs keep 10 mantissa bits
for r in ("cublas", "cublaslt"):
    f32 = props(d, r, "f32")
    assert f32["input_mantissa_bits"] in ("23", "10"), f32
# gpuvet's reduction kernels sum in a fixed tree order: the same inputs give the same bits
# on every run, on every route (an upload not waited for made them differ, issue 32's run)
for r in d["routes"]:
    for p in r["precisions"]:
        if p["op"] == "sum" and p["status"] == "probed":
            det = p["properties"]["deterministic"]
            assert det["value"] == "yes", (r["route"], p["precision"], det)
# fp8 goes through cuBLASLt on a GPU with fp8 tensor cores (compute capability 8.9+)
if float(sys.argv[3] or 0) >= 8.9:
    for r in d["routes"]:
        for p in r["precisions"] if r["route"] == "cublaslt" else []:
            if p["precision"] == "f8e4m3":
                assert any("cublasLtMatmul" in i for i in p["impl"]), p["impl"]
                assert p["properties"]["input_mantissa_bits"]["value"] == "3", p["properties"]
                print("fp8 e4m3 through", p["impl"][0])
print("ok")
PY
