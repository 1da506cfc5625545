#!/bin/bash
# gpuvet probe through a real PyTorch (Debian's python3-torch, torch:cpu): the
# torch routes are probed by the same code as every other route; fp64 matmul
# keeps subnormals, 52 mantissa bits and is deterministic; a precision PyTorch
# has no call for is "unsupported" with the reason, not an error. Under sid's
# PyTorch (2.14, a fixture root; needs root), fp8 GEMMs go through torch._scaled_mm
# on the CPU: e4m3 and e5m2 inputs keep 3 and 2 mantissa bits, fp32 sums.
set -u
. "$(dirname "$0")/lib.sh"
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
GPUVET_PYTHON=$HOST_PY "$GPUVET" probe --device torch:cpu --route torch.matmul --dtype f64 --json -o "$T/f64.json" >/dev/null ||
    fail "probe torch:cpu f64"
GPUVET_PYTHON=$HOST_PY "$GPUVET" probe --device torch:cpu --route torch.linear --dtype f16 --json -o "$T/f16.json" >/dev/null 2>&1
rc=$?
[ $rc -eq 3 ] || fail "probe torch:cpu f16: exit $rc (expected 3: nothing could be probed)"
python3 - "$T/f64.json" "$T/f16.json" <<'PY' || fail "torch fingerprint"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["routes"][0]
assert r["route"] == "torch.matmul" and r["status"] == "probed", r
p = r["precisions"][0]
assert p["status"] == "probed", p
assert any("torch.matmul" in i for i in p["impl"]), p["impl"]
v = {k: x["value"] for k, x in p["properties"].items()}
assert v["input_subnormals"] == "kept" and v["output_subnormals"] == "kept", v
assert v["input_mantissa_bits"] == "52" and v["deterministic"] == "yes", v
assert not v["order.k16"].startswith("undetermined"), v
f = json.load(open(sys.argv[2]))["routes"][0]["precisions"][0]
assert f["status"] == "unsupported" and "torch.matmul returns" in f["reason"], f
PY
if [[ $(id -u) -eq 0 ]]; then
    torch_roots
    for d in f8e4m3 f8e5m2; do
        GPUVET_PYTHON_ROOT=$SID_TORCH "$GPUVET" probe --device torch:cpu --route torch.matmul \
            --dtype $d --json -o "$T/$d.json" >/dev/null || fail "probe sid torch:cpu $d"
    done
    # the linear route hands over the weight as stored, [out, in]
    GPUVET_PYTHON_ROOT=$SID_TORCH "$GPUVET" probe --device torch:cpu --route torch.linear \
        --dtype f8e4m3 --json -o "$T/lin8.json" >/dev/null || fail "probe sid torch:cpu linear f8e4m3"
    python3 - "$T/f8e4m3.json" "$T/f8e5m2.json" "$T/lin8.json" <<'PY' || fail "fp8 through torch._scaled_mm"
import json, sys
for f, bits in zip(sys.argv[1:], ("3", "2", "3")):
    p = json.load(open(f))["routes"][0]["precisions"][0]
    assert p["status"] == "probed", p
    assert any(i.startswith("torch._scaled_mm") for i in p["impl"]), p["impl"]
    v = {k: x["value"] for k, x in p["properties"].items()}
    assert v["input_mantissa_bits"] == bits and v["deterministic"] == "yes", v
    print(p["precision"], "via", p["impl"][0].split(",")[0], v["input_mantissa_bits"], "bits,",
          "sums", v["sum_mantissa_bits"], v["sum_rounding"])
PY
else
    echo "sid part skipped: the PyTorch fixture roots need root"
fi
echo ok
