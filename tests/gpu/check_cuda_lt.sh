#!/usr/bin/env bash
# GEMM through cuBLASLt on a real NVIDIA GPU (skipped, 77, where there is none).
# The Lt path (src/dev/lt.c) is the same code hipBLASLt runs on ROCm, with the
# vendor's enum values; here it is proven on hardware:
#  1. --blas lt: every GEMM case of the full suite (fp32, TF32, fp16/bf16 with
#     fp32 accumulation, fp16 accumulation, fp64, batched, odd sizes, K=8192)
#     passes, and each one says cublasLtMatmul ran it;
#  2. auto follows PyTorch: cuBLAS by default, cuBLASLt with
#     TORCH_BLAS_PREFER_CUBLASLT=1 (fp64 and fp16 accumulation stay on cuBLAS),
#     and the result file's device description names the route and why;
#  3. --blas classic vs lt: compare runs and says how many cases differ in bits;
#  4. a bad GPUVET_BLAS value stops the run (usage error, exit 2) naming it.
set -uo pipefail
. "$(dirname "$0")/../cli/lib.sh"
out=$GV_TEST_TMP/check_cuda_lt
mkdir -p "$out"
py() { python3 - "$@"; }

"$GPUVET" check --device cuda:0 --only 'sum.f32.*' -o "$out/probe.json" >"$out/probe.txt" 2>&1
if [[ $? == 3 ]]; then
    skip "no GPU ($(tail -1 "$out/probe.txt"))"
fi
fail=0

echo "== --blas lt: every GEMM case through cuBLASLt"
"$GPUVET" check --device cuda:0 --suite full --only 'gemm.*' --blas lt -o "$out/lt.json" \
    --save-outputs "$out/lt.safetensors" >"$out/lt.txt" 2>&1
rc=$?
tail -4 "$out/lt.txt"
[[ $rc == 0 ]] || { echo "FAIL: check --blas lt exited $rc"; cat "$out/lt.txt"; fail=1; }
py "$out/lt.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
cases = d["cases"]
bad = [c["id"] for c in cases if c["verdict"] != "pass"]
notlt = [(c["id"], c.get("impl")) for c in cases if not str(c.get("impl", "")).startswith("cublasLtMatmul")]
route = d["device"]["description"].get("gemm", "")
precs = sorted({c["precision"] for c in cases})
print("cuBLASLt: %d GEMM cases (%s), %d not passing %s, %d not run by cublasLtMatmul %s" % (len(cases), ",".join(precs), len(bad), bad[:5], len(notlt), notlt[:3]))
print("route:", route)
for c in cases[:3]: print("  %s: %s" % (c["id"], c.get("impl")))
ok = len(cases) >= 20 and not bad and not notlt and route.startswith("cuBLASLt (GPUVET_BLAS=lt)")
ok &= {"f32", "tf32", "f64", "f16acc16", "f16acc32", "bf16acc32"} <= set(precs)
sys.exit(0 if ok else 1)
PY

echo "== auto: cuBLAS by default, cuBLASLt with TORCH_BLAS_PREFER_CUBLASLT=1"
"$GPUVET" check --device cuda:0 --suite full --only 'gemm.*' -o "$out/classic.json" \
    --save-outputs "$out/classic.safetensors" >"$out/classic.txt" 2>&1 ||
    { echo "FAIL: check (auto) exited $?"; fail=1; }
TORCH_BLAS_PREFER_CUBLASLT=1 "$GPUVET" check --device cuda:0 --suite full --only 'gemm.*' \
    -o "$out/prefer.json" >"$out/prefer.txt" 2>&1 ||
    { echo "FAIL: check with TORCH_BLAS_PREFER_CUBLASLT=1 exited $?"; fail=1; }
py "$out/classic.json" "$out/prefer.json" <<'PY' || fail=1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ok = True
ra, rb = a["device"]["description"].get("gemm", ""), b["device"]["description"].get("gemm", "")
print("auto:", ra); print("TORCH_BLAS_PREFER_CUBLASLT=1:", rb)
ok &= ra.startswith("cuBLAS (auto") and rb.startswith("cuBLASLt") and "TORCH_BLAS_PREFER_CUBLASLT=1" in rb
for c in a["cases"]:
    ok &= str(c.get("impl", "")).startswith("cublas") and not str(c.get("impl")).startswith("cublasLt")
for c in b["cases"]:
    classic = c["precision"] in ("f64", "f16acc16")
    got = str(c.get("impl", ""))
    if classic == got.startswith("cublasLtMatmul"):
        print("  unexpected route for %s: %s" % (c["id"], got)); ok = False
    ok &= c["verdict"] == "pass"
print("auto: %d cases on cuBLAS; prefer-Lt: %d on cuBLASLt, %d on cuBLAS" % (len(a["cases"]),
      sum(str(c.get("impl")).startswith("cublasLt") for c in b["cases"]),
      sum(not str(c.get("impl")).startswith("cublasLt") for c in b["cases"])))
sys.exit(0 if ok else 1)
PY

echo "== compare cuBLAS vs cuBLASLt (informational: which cases differ in bits)"
"$GPUVET" compare "$out/classic.json" "$out/lt.json" >"$out/compare.txt" 2>&1
rc=$?
tail -6 "$out/compare.txt"
[[ $rc == 0 || $rc == 1 ]] || { echo "FAIL: compare exited $rc"; fail=1; }

echo "== a bad GPUVET_BLAS is refused, naming it"
GPUVET_BLAS=fastest "$GPUVET" check --device cuda:0 --only 'gemm.f32.*' >"$out/bad.txt" 2>&1
rc=$?
if [[ $rc != 2 ]] || ! grep -q "GPUVET_BLAS='fastest'" "$out/bad.txt"; then
    echo "FAIL: GPUVET_BLAS=fastest: exit $rc: $(tail -2 "$out/bad.txt")"
    fail=1
fi
exit $fail
