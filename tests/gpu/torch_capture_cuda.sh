#!/usr/bin/env bash
# gpuvet torch capture / compare / bisect on a real NVIDIA GPU (skipped, 77, without one
# or without a CUDA build of torch):
#  1. ResNet-18 (batch 8, 224x224) captured twice on an unchanged stack: nothing flagged;
#  2. TF32: ResNet-18 at PyTorch's defaults bisected with NVIDIA_TF32_OVERRIDE=1 in B (what
#     is culprit is printed: fp32 convolutions already run TF32 at PyTorch's defaults,
#     cudnn.allow_tf32); ResNet-18 in exact fp32 (NVIDIA_TF32_OVERRIDE=0) bisected at
#     PyTorch's defaults: the convolutions are the culprits; three linear layers bisected
#     with the override: the matmuls are the culprits, the GELUs inherit;
#  3. a sitecustomize in B swaps the exact GELU for tanh: that GELU call is named;
#  4. a model that calls .cpu() inside forward is reported as falling back, at module
#     block.post, and --strict exits 1;
#  5. a model writing into earlier values (view, in place, out=) records the same bits
#     whatever the size of the queue that holds values on the device before copying;
#  6. a model under torch.autocast (float16): bisected unchanged, and with B's fp16 matmuls
#     accumulating in bfloat16: the two fp16 addmm ops are the culprits, the rest inherit;
#  7. the recorder in C records on the GPU what the Python one records, message for message.
# Also: the recorded ResNet-18 pass takes no new device memory from the driver (the
# warm-up pass grew the allocator's cache) and stays within 1.5x the plain GPU peak, and the
# queue grows in the warm-up from 0.4x the plain peak while the peak stays within 1.4x.
# Speed: tests/bench/bench_capture.sh.
set -uo pipefail
. "$(dirname "$0")/../cli/lib.sh"
out=$GV_TEST_TMP/torch_capture_cuda
mkdir -p "$out"
[[ -e /dev/nvidiactl ]] || skip "no NVIDIA GPU"
PY=${GV_TORCH_PYTHON:-$(command -v python3)}
"$PY" -c 'import torch, sys; sys.exit(0 if torch.version.cuda and torch.cuda.is_available() else 1)' \
    2>/dev/null || skip "$PY has no CUDA build of torch that sees the GPU"
# bisect runs a capture's model only from the current directory or the capture's own
# (docs/security.md): the models are copied beside the captures
rm -rf "$out/models" && cp -r "$GV_SRC/tests/cli/models" "$out/models"
M=$out/models
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cap() { # OUT MODEL ARGS...
    local o=$1 m=$2
    shift 2
    "$GPUVET" torch capture --model "$M/$m" --python "$PY" --device cuda:0 -o "$out/$o" "$@" \
        >"$out/$o.txt" 2>&1
    local rc=$?
    cat "$out/$o.txt"
    return $rc
}

echo "== 1. unchanged stack"
cap r1.gvcap resnet18_224.py:make || bad "capture r1"
cap r2.gvcap resnet18_224.py:make --json >/dev/null || bad "capture r2"
# the warm-up pass grew PyTorch's allocator: the recorded pass took no new device
# memory from the driver (no cudaMalloc among its ops), and the queue held values
python3 - "$out/r2.gvcap.txt" <<'PY' || bad "the recorded pass allocated device memory or the queue did not hold"
import json, sys
text = open(sys.argv[1]).read()  # gpuvet's JSON, after anything the worker printed
h = json.JSONDecoder().raw_decode(text[text.index("{\n") if "{\n" in text else text.index("{"):])[0]
t, m = h["timing"], h["memory"]
print("  queue %.0f MB: emptied %d times, %d values copied on the device; warm-up %d pass(es), "
      "%d new segments; recorded pass %d new segments, %d retries; GPU peak %.2fx plain" % (
          t["queue_bytes"] / 1e6, t["queue_flushes"], t["queue_device_copies"], t["warmup_passes"],
          m["warmup_new_gpu_segments"], m["capture_new_gpu_segments"], m["capture_alloc_retries"],
          m["capture_gpu_peak_bytes"] / m["plain_gpu_peak_bytes"]))
assert m["capture_new_gpu_segments"] == 0 and m["capture_alloc_retries"] == 0, m
assert t["queue_flushes"] < h["ops"] / 2, t
assert m["capture_gpu_peak_bytes"] <= 1.5 * m["plain_gpu_peak_bytes"], m
# the queue started at 0.4x the plain peak, emptied itself several times there, and grew
# in the warm-up (emptied less often) while each pass's peak stayed within 1.4x
sizes, plain = m["warmup_queue_sizes"], m["plain_gpu_peak_bytes"]
print("  queue sizes in the warm-up: " + ", ".join("%.0f MB (peak %.2fx, emptied %d times)" % (
    s["queue_bytes"] / 1e6, s["gpu_peak_bytes"] / plain, s["queue_flushes"]) for s in sizes))
assert sizes[0]["queue_bytes"] == int(0.4 * plain) and sizes[0]["queue_flushes"] >= 2, sizes
assert t["queue_bytes"] > sizes[0]["queue_bytes"] and t["queue_flushes"] < sizes[0]["queue_flushes"], (t, sizes)
assert all(s["gpu_peak_bytes"] <= 1.4 * plain for s in sizes if s["queue_bytes"] == t["queue_bytes"]), sizes
assert m["recorded_pass_gpu_peak_bytes"] <= 1.4 * plain, m
# the recorded pass has no timing events: the GPU ops' device times come from the last
# warm-up pass, which ran the same ops (times_from), and they add up to a real forward
print("  op times from %s: %.2f ms, plain forward %.2f ms" % (
    t["op_times_from"], t["capture_ops_seconds"] * 1e3, t["plain_forward_seconds"] * 1e3))
assert t["op_times_from"].startswith("the last warm-up pass"), t["op_times_from"]
assert 0.1 * t["plain_forward_seconds"] < t["capture_ops_seconds"] < 20 * t["plain_forward_seconds"], t
PY
"$GPUVET" compare "$out/r1.gvcap" "$out/r2.gvcap" >"$out/same.txt" 2>&1 || bad "unchanged stack flagged: $(cat "$out/same.txt")"
grep -E "^ops:|model outputs" "$out/same.txt"

# bisect_tf32 A.gvcap NAME ENV... : bisect with the environment of B, summary printed
bisect_env() {
    local a=$1 name=$2
    shift 2
    env "$@" "$GPUVET" torch bisect "$out/$a" --python "$PY" --json -o "$out/$name.json" \
        >/dev/null 2>"$out/$name.err"
    local rc=$?
    python3 - "$out/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("  summary:", {k: v for k, v in d["summary"].items() if v})
for c in d["culprits"][:6]:
    o = c["outputs"][0]
    print("  culprit op %d %s in %s: error %.3g -> %.3g units of roundoff; ran %s" % (
        c["op"], c["name"], c["module"], o["error_a_units"], o["error_b_units"], c.get("impl_b", "")[:110]))
print("  %d culprits, %d ops inherited" % (len(d["culprits"]), len(d.get("inherited", []))))
for o in d.get("outputs", []):
    print("  output %s here against A: %s, %.3g units apart" % (o.get("name"), o["status"], o.get("units") or 0))
PY
    return $rc
}
echo "== 2a. ResNet-18 at PyTorch's defaults; B with NVIDIA_TF32_OVERRIDE=1"
bisect_env r1.gvcap tf32-defaults NVIDIA_TF32_OVERRIDE=1
echo "== 2b. ResNet-18 in exact fp32 (A with NVIDIA_TF32_OVERRIDE=0); B at PyTorch's defaults"
NVIDIA_TF32_OVERRIDE=0 cap r0.gvcap resnet18_224.py:make || bad "capture with the override off"
bisect_env r0.gvcap tf32-convs
[[ $? == 1 ]] || bad "TF32 convolutions at PyTorch's defaults should be culprits against exact fp32"
python3 - "$out/tf32-convs.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
names = {c["name"] for c in d["culprits"]}
assert "aten.convolution.default" in names and names <= {"aten.convolution.default", "aten.addmm.default"}, names
assert d["inherited"]
# the model's one output in its run here, by name, as far from A's as the summary says
outs = d["outputs"]
assert [o["name"] for o in outs] == ["output"] and outs[0]["status"] == d["outputs_status"] != "identical", outs
PY
echo "== 2c. linear layers at PyTorch's defaults; B with NVIDIA_TF32_OVERRIDE=1"
cap m.gvcap mlp.py:make || bad "capture mlp"
bisect_env m.gvcap tf32-mlp NVIDIA_TF32_OVERRIDE=1
[[ $? == 1 ]] || bad "TF32 matmuls should be culprits"
python3 - "$out/tf32-mlp.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
cul = [(c["name"], c["module"]) for c in d["culprits"]]
assert cul == [("aten.addmm.default", "l1"), ("aten.addmm.default", "l2"), ("aten.addmm.default", "l3")], cul
assert {i["name"] for i in d["inherited"]} <= {"aten.gelu.default"} and d["inherited"], d["inherited"]
PY

echo "== 3. GELU swapped by a sitecustomize in B"
cap e.gvcap encoder.py:make || bad "capture encoder"
mkdir -p "$out/site"
cat >"$out/site/sitecustomize.py" <<'PYS'
import torch.nn.functional as F
_gelu = F.gelu
def gelu(x, approximate="none"):
    return _gelu(x, approximate="tanh")
F.gelu = gelu
PYS
PYTHONPATH=$out/site "$GPUVET" torch bisect "$out/e.gvcap" --python "$PY" --json -o "$out/gelu.json" \
    >/dev/null 2>"$out/gelu.err"
[[ $? == 1 ]] || bad "bisect with the GELU swap should flag: $(tail -3 "$out/gelu.err")"
python3 - "$out/gelu.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
c = d["call_changes"][0]
print("call change:", c["name"], "in", c["module"], "\n  A:", c["call_a"], "\n  B:", c["call_b"])
assert c["name"] == "aten.gelu.default" and c["module"] == "head" and "tanh" in c["call_b"]
PY

echo "== 4. CPU fallback inside forward"
cap f.gvcap fallback.py:make --strict
[[ $? == 1 ]] || bad "--strict should exit 1 for a model that falls back to the CPU"
"$GPUVET" torch capture --model "$M/fallback.py:make" --python "$PY" --device cuda:0 -o "$out/f2.gvcap" \
    --json >"$out/f.json" 2>/dev/null
python3 - "$out/f.json" <<'PY' || fail=1
import json, sys
h = json.load(open(sys.argv[1]))
fb = h["cpu_fallback"]
cpu = [(o["name"], o["module"]) for o in fb["cpu_ops"]]
moves = [(o["name"], o["module"]) for o in fb["transfers"]]
print("cpu ops:", cpu, "\ntransfers:", moves, "\nshares: cpu %.1f%%, transfers %.1f%%" % (100 * fb["cpu_share"], 100 * fb["transfer_share"]))
assert cpu and all(m == "block.post" for _, m in cpu), cpu
assert any(m == "block.post" for _, m in moves), moves
assert not any(m.startswith("block.fc") or m == "out" for _, m in cpu + moves)
# the GPU ops have their (warm-up pass) device times: CPU ops and transfers are not all of it
assert fb["cpu_share"] > 0 and fb["cpu_share"] + fb["transfer_share"] < 0.999, fb
PY
echo "== 5. values written over later, held in the copy-out queue: recorded as produced"
cap q0.gvcap inplace.py:make || bad "capture inplace (queue of 0.4x the peak)"
GPUVET_TEST_CAPTURE_QUEUE=1 cap q1.gvcap inplace.py:make || bad "capture inplace (queue of 1 byte)"
GPUVET_TEST_CAPTURE_QUEUE=1000000000 cap qbig.gvcap inplace.py:make || bad "capture inplace (1 GB queue)"
for q in q1 qbig; do
    "$GPUVET" compare "$out/q0.gvcap" "$out/$q.gvcap" >"$out/$q.cmp" 2>&1 ||
        bad "the queue changed what was recorded ($q): $(cat "$out/$q.cmp")"
done
echo "== 6. half precision under torch.autocast (float16 on the GPU)"
cap amp.gvcap amp.py:make >/dev/null || bad "capture amp"
bisect_env amp.gvcap amp-same
[[ $? == 0 ]] || bad "bisect of the autocast model on an unchanged stack should pass"
# B's fp16 matmuls accumulate in bfloat16 (a sitecustomize replaces ATen's CUDA addmm,
# as a library with a reduced-precision accumulation would): the two linear layers' fp16
# addmm ops are the culprits, measured against float64 in fp16's units; the rest inherit
mkdir -p "$out/fp16site"
cat >"$out/fp16site/sitecustomize.py" <<'EOF'
import torch
_lib = torch.library.Library("aten", "IMPL")
def _addmm(bias, a, b, *, beta=1, alpha=1):
    if a.dtype != torch.float16:
        return bias * beta + torch.mm(a, b) * alpha
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.bfloat16, device=a.device)
    for k in range(a.shape[1]):
        acc = acc + (a[:, k:k + 1].float() * b[k:k + 1, :].float()).bfloat16()
    return (bias.float() * beta + acc.float() * alpha).half()
_lib.impl("addmm", _addmm, "CUDA")
EOF
bisect_env amp.gvcap amp-bf16acc PYTHONPATH="$out/fp16site"
[[ $? == 1 ]] || bad "fp16 matmuls accumulated in bfloat16 should be culprits"
python3 - "$out/amp-same.json" "$out/amp-bf16acc.json" <<'PY' || fail=1
import json, sys
same, acc = (json.load(open(p)) for p in sys.argv[1:3])
assert same["summary"]["identical"] == len(same["ops"]) and same["outputs_status"] == "identical", same["summary"]
dtypes = [(o["name"], o["module"], o["outputs"][0]["dtype"]) for o in same["ops"] if o["outputs"]]
assert ("aten.addmm.default", "fc1", "float16") in dtypes and ("aten.addmm.default", "fc2", "float16") in dtypes, dtypes
cul = [(c["name"], c["module"], c["outputs"][0]["dtype"]) for c in acc["culprits"]]
assert cul == [("aten.addmm.default", "fc1", "float16"), ("aten.addmm.default", "fc2", "float16")], cul
for c in acc["culprits"]:
    o = c["outputs"][0]
    assert o["error_b_units"] > 5 * max(o["error_a_units"], 0.5), o
assert acc["summary"]["replay_failed"] == 0 and acc["inherited"], acc["summary"]
assert all(i["name"] != "aten.addmm.default" for i in acc["inherited"]), acc["inherited"]
assert acc["outputs_status"] == "beyond_rounding", acc["outputs_status"]
PY
echo "== 7. the recorder in C against the Python one, on the GPU"
# every message of the capture the same (tests/cli/recorder_same.py), with the queue the
# capture sizes for itself and with one of 1 byte (emptied at every op); the counts of
# what the queue did, and the order of the tensor messages, are left out (GV_RECORDER_SAME_GPU:
# the second capture in a process finds the allocator warm and may settle on another queue)
SO=${GV_BUILD:-}/_gpuvet_capture_record.abi3.so
if [[ -f $SO ]]; then
    for q in "" 1; do
        GPUVET_TEST_CAPTURE_QUEUE=$q GV_RECORDER_SAME_GPU=1 "$PY" \
            "$GV_SRC/tests/cli/recorder_same.py" "$SO" cuda:0 "$M/resnet18_224.py:make" \
            "$M/inplace.py:make" "$M/fallback.py:make" "$M/amp.py:make" "$M/noisy.py:make" \
            "$M/stats.py:make" >"$out/same$q.txt" 2>&1 || bad "the recorders differ (queue '$q')"
        cut -c1-600 "$out/same$q.txt"
    done
else
    bad "$SO was not built"
fi
[[ $fail == 0 ]] && echo "capture on the GPU: all checks passed"
exit $fail
