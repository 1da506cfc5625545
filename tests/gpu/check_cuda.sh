#!/usr/bin/env bash
# gpuvet check on a real NVIDIA GPU (skipped, 77, where there is none):
#  1. the full suite passes at default settings, and the result says, for each
#     installed PyTorch build, whether it has code for this GPU;
#  2. with NVIDIA_TF32_OVERRIDE=1 the fp32 GEMM cases are flagged (cuBLAS is
#     called the way PyTorch calls it by default, so the override shows);
#  3. a deliberately faulting kernel (GPUVET_TEST_FAULT=fault) fails exactly the
#     selected cases with a clear message and every other case still runs;
#  4. so does running out of device memory (GPUVET_TEST_FAULT=oom asks for 1 PiB):
#     the driver's CUDA_ERROR_OUT_OF_MEMORY is named with the size asked for.
# Result files and logs go to $GV_TEST_TMP/check_cuda.
set -uo pipefail
. "$(dirname "$0")/../cli/lib.sh"
out=$GV_TEST_TMP/check_cuda
mkdir -p "$out"
py() { python3 - "$@"; }

# Is there a GPU at all? The backend answers through gpuvet itself.
"$GPUVET" check --device cuda:0 --only 'sum.f32.*' -o "$out/probe.json" >"$out/probe.txt" 2>&1
rc=$?
if [[ $rc == 3 ]]; then
    skip "no GPU ($(tail -1 "$out/probe.txt"))"
fi
fail=0

echo "== full suite at default settings"
"$GPUVET" check --device cuda:0 --suite full -o "$out/full.json" >"$out/full.txt" 2>&1
rc=$?
cat "$out/full.txt"
[[ $rc == 0 ]] || { echo "FAIL: gpuvet check --suite full exited $rc"; fail=1; }
py "$out/full.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
cases = d["cases"]
bad = [c["id"] for c in cases if c["verdict"] != "pass"]
print("full suite: %d cases, %d not passing: %s" % (len(cases), len(bad), bad[:10]))
ops = sorted({c["op"] for c in cases if c["verdict"] == "pass"})
print("ops passing:", ops)
need = {"gemm", "conv2d", "softmax", "layernorm", "rmsnorm", "sdpa", "sum", "mean", "unary", "convert"}
# the installed PyTorch builds judged against this GPU's compute capability
desc = d["device"]["description"]
fw = desc.get("frameworks")
cc = desc.get("compute_capability")
print("frameworks on %s (%s):" % (desc.get("name"), cc))
for f in fw or []:
    print("  %s: %s" % (f.get("cover"), f.get("message")))
fw_ok = isinstance(fw, list) and all(f.get("cover") in ("sass", "ptx", "none") and f.get("message") for f in fw)
# a CUDA build whose targets include this GPU's sm_XY must be judged runnable
for e in d["snapshot"]["python"]["environments"]:
    t = (e.get("torch") or {}).get("gpu_targets") or {}
    if cc and "sm_" + cc.replace(".", "") in (t.get("targets") or []):
        fw_ok &= any(f["prefix"] == e["prefix"] and f["cover"] == "sass" for f in fw or [])
sys.exit(1 if bad or not need <= set(ops) or not fw_ok else 0)
PY

echo "== NVIDIA_TF32_OVERRIDE=1: fp32 GEMM must be flagged"
NVIDIA_TF32_OVERRIDE=1 "$GPUVET" check --device cuda:0 --suite full --only 'gemm.f32.*' \
    -o "$out/tf32.json" >"$out/tf32.txt" 2>&1
rc=$?
cat "$out/tf32.txt"
[[ $rc == 1 ]] || { echo "FAIL: expected exit 1 (findings) with NVIDIA_TF32_OVERRIDE=1, got $rc"; fail=1; }
py "$out/tf32.json" <<'PY' || fail=1
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
flagged = [c["id"] for c in cases if c["verdict"] not in ("pass", "skipped")]
print("fp32 GEMM flagged under NVIDIA_TF32_OVERRIDE=1: %d of %d" % (len(flagged), len(cases)))
for c in cases:
    m = c.get("metrics") or {}
    print("  %-40s %-8s normwise %.3g eff.bits %s" % (c["id"], c["verdict"], m.get("normwise", float("nan")), m.get("effective_bits")))
sys.exit(0 if flagged else 1)
PY

# injected MODE TEXT...: GPUVET_TEST_FAULT=MODE on the softmax cases; each of
# them must be an error whose message holds every TEXT, every other case passes.
injected() {
    local mode=$1; shift
    GPUVET_TEST_FAULT=$mode GPUVET_TEST_FAULT_CASE=softmax "$GPUVET" check --device cuda:0 \
        --only 'softmax.*,sum.*' --suite full -o "$out/$mode.json" >"$out/$mode.txt" 2>&1
    local rc=$?
    [[ $rc == 1 ]] || { echo "FAIL: GPUVET_TEST_FAULT=$mode: expected exit 1, got $rc"; fail=1; }
    py "$out/$mode.json" "$mode" "$@" <<'PY' || fail=1
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
mode, texts = sys.argv[2], sys.argv[3:]
sm = [c for c in cases if c["id"].startswith("softmax.")]
other = [c for c in cases if not c["id"].startswith("softmax.")]
ok = bool(sm) and bool(other)
for c in sm:
    e = c.get("error") or ""
    print("  %s: %s: %s" % (c["id"], c["verdict"], e[:200]))
    ok &= c["verdict"] == "error" and all(t in e for t in texts)
ok &= all(c["verdict"] == "pass" for c in other)
print("%s: %d cases reported, others passing: %d/%d" % (mode, len(sm), sum(c["verdict"] == "pass" for c in other), len(other)))
sys.exit(0 if ok else 1)
PY
}

echo "== a GPU fault fails only the faulting cases"
injected fault ILLEGAL_ADDRESS
echo "== out of device memory fails only those cases"
injected oom CUDA_ERROR_OUT_OF_MEMORY "1125899906842624 bytes"
exit $fail
