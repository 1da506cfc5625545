#!/usr/bin/env bash
# A GPU stack without its math libraries, on a real NVIDIA GPU (skipped, 77,
# where there is none): only libcuda and NVRTC are offered (--lib-path to a
# directory holding just those two, GPUVET_LIB_NO_SYSTEM=1), so cuBLAS,
# cuBLASLt and cuDNN are missing. The run must go on: the description names
# each missing library and where it was looked for; fp32-accumulating GEMMs
# and every convolution run on gpuvet's kernels and pass, saying why; the GEMMs
# that need a vendor BLAS (fp64, TF32, fp16 accumulation) are reported, with that
# reason instead of a result; every other case passes.
set -uo pipefail
. "$(dirname "$0")/../cli/lib.sh"
gv_workdir out
mkdir -p "$out/libs"
"$GPUVET" check --device cuda:0 --only 'sum.f32.*' -o "$out/probe.json" >"$out/probe.txt" 2>&1
if [[ $? == 3 ]]; then
    skip "no GPU ($(tail -1 "$out/probe.txt"))"
fi
# the files the normal run loaded for libcuda and NVRTC
python3 - "$out/probe.json" "$out/libs" <<'PY' || { echo "FAIL: cannot find libcuda/NVRTC in the probe"; exit 1; }
import json, os, re, sys
d = json.load(open(sys.argv[1]))
libs = {l["name"]: l for l in d["device"]["description"]["libraries"]}
for name in ("libcuda", "nvrtc"):
    path = libs[name]["path"]
    link = "libcuda.so.1" if name == "libcuda" else \
        re.sub(r"(\.so\.\d+).*$", r"\1", os.path.basename(path))  # libnvrtc.so.13
    os.symlink(path, os.path.join(sys.argv[2], link))
    print("offered:", name, path, "as", link)
PY
fail=0
GPUVET_LIB_NO_SYSTEM=1 "$GPUVET" check --device cuda:0 --lib-path "$out/libs" --suite standard \
    -o "$out/run.json" >"$out/run.txt" 2>&1
rc=$?
tail -3 "$out/run.txt"
[[ $rc == 1 ]] || { echo "FAIL: exit $rc, want 1 (cases that could not run)"; fail=1; }
python3 - "$out/run.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
desc = d["device"]["description"]
libs = {l["name"]: l for l in desc["libraries"]}
ok = True
for name in ("cublas", "cublasLt", "cudnn"):
    e = libs.get(name, {}).get("error", "")
    print("%-9s %s" % (name, e[:160]))
    ok &= "not found" in e and "GPUVET_LIB_NO_SYSTEM" in e
print("gemm:", desc.get("gemm")); print("conv2d:", desc.get("conv2d"))
counts = {}
for c in d["cases"]:
    impl, err, v = str(c.get("impl", "")), str(c.get("error", "")), c["verdict"]
    if c["op"] == "gemm" and c["precision"] in ("f64", "f16acc16", "tf32"):
        good = v != "pass" and "needs the vendor BLAS" in err
        key = "blas-only gemm reported"
    elif c["op"] == "gemm":
        good = v == "pass" and impl.startswith("kernel gv_gemm_f32") and "cuBLAS not loaded" in impl
        key = "gemm on the kernel"
    elif c["op"] == "conv2d":
        good = v == "pass" and impl.startswith("kernel gv_conv2d_f32")
        key = "conv2d on the kernel"
    else:
        good = v == "pass"
        key = "other ops pass"
    counts.setdefault(key, [0, 0])[0 if good else 1] += 1
    if not good:
        print("  unexpected: %s %s impl=%s error=%s" % (c["id"], v, impl[:100], err[:160]))
    ok &= good
for k, (g, b) in sorted(counts.items()):
    print("%-26s %d as expected, %d not" % (k, g, b))
ok &= len(counts) == 4
sys.exit(0 if ok else 1)
PY
exit $fail
