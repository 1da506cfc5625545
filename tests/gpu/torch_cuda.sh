#!/usr/bin/env bash
# The PyTorch device on a real NVIDIA GPU (skipped, 77, where there is none, or where no
# Python has a CUDA build of torch):
#  1. the standard suite through torch:cuda:0 passes at PyTorch's defaults, every case
#     says what PyTorch ran (its kernels, the attention backend, the flags set), and the
#     description records the build and every GPU library file the worker mapped;
#  2. with NVIDIA_TF32_OVERRIDE=1, and separately TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, the
#     fp32 matmul cases are flagged and compare names the variable;
#  3. ab between torch:cuda:0 and gpuvet's own cuda:0 on the shared cases: whether
#     PyTorch's route gives the same bits as the direct library call, and why not;
#  4. a worker killed mid-run and an out-of-memory fail only their cases.
# Logs and result files go to $GV_TEST_TMP/torch_cuda (and $OUT on the device machine).
set -uo pipefail
. "$(dirname "$0")/../cli/lib.sh"
out=$GV_TEST_TMP/torch_cuda
mkdir -p "$out"
[[ -e /dev/nvidiactl ]] || skip "no NVIDIA GPU"
PY=${GV_TORCH_PYTHON:-$(command -v python3)}
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.version.cuda and torch.cuda.is_available() else 1)' \
    2>/dev/null; then
    skip "$PY has no CUDA build of torch that sees the GPU"
fi
fail=0
bad() { echo "FAIL: $*"; fail=1; }
export XDG_CACHE_HOME=$out/cache
check() { # NAME ARGS... : torch:cuda:0 standard suite
    local name=$1
    shift
    local t0
    t0=$(date +%s%N)
    "$GPUVET" check --device torch:cuda:0 --python "$PY" --suite standard -o "$out/$name.json" \
        --save-outputs "$out/$name.safetensors" "$@" >"$out/$name.txt" 2>&1
    local rc=$?
    echo "$name: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    return $rc
}

echo "== 1. standard suite at defaults"
check default
rc=$?
cat "$out/default.txt"
[[ $rc == 0 ]] || bad "torch:cuda:0 at defaults exited $rc"
python3 - "$out/default.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
desc = d["device"]["description"]; t = desc["torch"]
print("torch %s (CUDA %s, cuDNN %s) on %s %s, python %s" % (t["version"], t["cuda"], t.get("cudnn"),
      desc["name"], desc["arch"], desc["python"]["executable"]))
print("validation:", desc["validation"])
print("flags at start:", t["flags"])
print("arch list:", t.get("arch_list"))
libs = {l["name"]: l for l in desc["libraries"]}
for n in sorted(libs):
    print("  mapped %-22s %s" % (n, libs[n]["path"]))
for need in ("libcuda", "libtorch_cuda", "libcublas", "libcublasLt"):
    assert need in libs, "%s not among the mapped libraries" % need
assert desc["validation"]["cuda_available"] and desc["compute_capability"], desc["validation"]
bad = [c for c in d["cases"] if c["verdict"] != "pass"]
for c in bad:
    print("NOT PASSING %s %s %s" % (c["id"], c["verdict"], c["error"] or c["metrics"]))
assert not bad
for c in d["cases"]:
    assert c["impl"], c["id"]
    if c["op"] in ("gemm", "conv2d", "sdpa", "softmax"):
        assert "kernels:" in c["impl"], (c["id"], c["impl"])
    if c["id"].startswith("sdpa.") and "-" not in c["id"].split(".")[3]:
        assert "backend=" in c["impl"], (c["id"], c["impl"])
print("%d cases pass; routes:" % len(d["cases"]))
for c in d["cases"]:
    if c["op"] in ("gemm", "sdpa", "conv2d", "mlp"):
        print("  %-46s %s" % (c["id"], c["impl"][:150]))
PY

for var in NVIDIA_TF32_OVERRIDE TORCH_ALLOW_TF32_CUBLAS_OVERRIDE; do
    echo "== 2. $var=1"
    export "$var=1"
    check "$var"
    [[ $? == 1 ]] || bad "with $var=1 check should find failing cases"
    unset "$var"
    "$GPUVET" compare --json "$out/default.json" "$out/$var.json" >"$out/compare-$var.json"
    [[ $? == 1 ]] || bad "compare default vs $var should exit 1"
    python3 - "$out/compare-$var.json" "$var" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); var = sys.argv[2]
f32 = [c for c in d["cases"] if c["id"].split(".")[0] in ("gemm", "linear") and c["id"].split(".")[1] == "f32"]
flagged = [c["id"] for c in f32 if c["flagged"]]
print("%s: %d of %d fp32 matmul cases flagged; other flagged: %s" % (var, len(flagged), len(f32),
      [c["id"] for c in d["cases"] if c["flagged"] and c not in f32]))
assert f32 and len(flagged) == len(f32), [c["id"] for c in f32 if not c["flagged"]]
names = [k["name"] for k in d["causes"] if k["kind"] == "environment"]
assert var in names, (var, names)
for k in d["causes"]:
    if k["name"] == var or k["kind"] == "route":
        print("  cause:", k["kind"], k["name"], k.get("before"), "->", k.get("after"), k.get("note", ""))
PY
done

echo "== 3. ab torch:cuda:0 against gpuvet's own cuda:0"
"$GPUVET" ab --a "device=torch:cuda:0,python=$PY" --b device=cuda:0 --suite standard --json \
    --keep "$out/ab" >"$out/ab.json" 2>"$out/ab.err"
rc=$?
[[ $rc == 0 || $rc == 1 ]] || bad "ab torch vs cuda exited $rc: $(tail -3 "$out/ab.err")"
python3 - "$out/ab.json" "$out/ab/a.json" "$out/ab/b.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
a = {c["id"]: c for c in json.load(open(sys.argv[2]))["cases"]}
b = {c["id"]: c for c in json.load(open(sys.argv[3]))["cases"]}
both = [c for c in d["cases"] if c["id"] in a and c["id"] in b]
same = [c["id"] for c in both if c["change"] == "identical"]
print("shared cases: %d, bit-identical between PyTorch and the direct call: %d" % (len(both), len(same)))
for c in both:
    x, y = a[c["id"]], b[c["id"]]
    print("  %-44s %-13s torch: %s | gpuvet: %s" % (c["id"], c["change"], x["impl"][:90], y["impl"][:60]))
assert len(both) > 80
PY

echo "== 4. faults: a killed worker, out of memory"
for f in kill oom; do
    GPUVET_TEST_FAULT=$f GPUVET_TEST_FAULT_CASE=softmax "$GPUVET" check --device torch:cuda:0 \
        --python "$PY" --only 'softmax.*,sum.*,gemm.f32.256*' --json >"$out/fault-$f.json" 2>"$out/fault-$f.err"
    [[ $? == 1 ]] || bad "fault $f: expected exit 1"
    python3 - "$out/fault-$f.json" "$f" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); f = sys.argv[2]
want = "died of signal 9" if f == "kill" else "out of memory"
for c in d["cases"]:
    if c["id"].startswith("softmax."):
        assert c["verdict"] == "error" and want in c["error"].lower().replace("outofmemory", "out of memory"), c
    else:
        assert c["verdict"] == "pass", (c["id"], c["verdict"], c["error"])
print("fault %s:" % f, [(c["id"], c["verdict"], (c["error"] or "")[:100]) for c in d["cases"]][:3],
      d["device"]["description"]["worker"])
PY
done
[[ $fail == 0 ]] && echo "torch:cuda:0: all checks passed"
exit $fail
