#!/usr/bin/env bash
# gpuvet check --device torch:cpu through three real PyTorch builds: Debian bookworm's
# 1.13 on this machine (/usr/bin/python3), trixie's 2.6 and sid's 2.14 inside the fixture
# roots (--python-root: the interpreter runs with the root as its /). For each: the
# description is that build's (version against dpkg, its libraries from its own maps),
# every case is judged or skipped with a reason (never an error), functions the build
# lacks are skipped saying so, and the calls PyTorch made are recorded. What each build
# gets wrong is printed, case by case: that is the finding, not a test failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
torch_roots
gv_workdir T
export XDG_CACHE_HOME=$T/cache

run() { # NAME ARGS... : check --device torch:cpu, quick suite; exit 0 or 1 expected
    local name=$1 rc=0
    shift
    "$GPUVET" check --device torch:cpu -o "$T/$name.json" "$@" >"$T/$name.txt" 2>"$T/$name.err" ||
        rc=$?
    [[ $rc == 0 || $rc == 1 ]] || fail "$name: check exited $rc: $(cat "$T/$name.err")"
}
run host --python "$HOST_PY"
run trixie --python-root "$TRIXIE_TORCH" --python /usr/bin/python3
# no --python: the snapshot of the root finds its environment with torch, and says so
run sid --python-root "$SID_TORCH"
grep -q "torch device: using /usr/bin/python3: the system environment /usr has torch 2.14" \
    "$T/sid.err" || fail "the interpreter choice was not said: $(cat "$T/sid.err")"

check_build() { # NAME EXPECTED-MAJOR.MINOR
    python3 - "$T/$1.json" "$2" <<'PY'
import json, sys
path, want = sys.argv[1], sys.argv[2]
d = json.load(open(path))
desc = d["device"]["description"]
t = desc["torch"]
name = path.rsplit("/", 1)[1]
assert desc["backend"] == "torch" and desc["device"] == "cpu", desc
assert ".".join(t["version"].split(".")[:2]) == want, (t["version"], want)
assert t["build"] == "cpu" and t["cuda"] is None and t["hip"] is None, t
libs = {l["name"]: l for l in desc["libraries"]}
assert "libtorch_cpu" in libs and libs["libtorch_cpu"]["path"].startswith("/"), libs
assert libs["libtorch_cpu"]["version"].startswith(want), libs["libtorch_cpu"]
assert desc["worker"]["restarts"] == 0, desc["worker"]
by = {c["id"]: c for c in d["cases"]}
assert len(by) >= 40, len(by)
# PyTorch-only cases are part of the torch suite; fp16 accumulation is not (no way to ask)
assert "linear.f32.256x256x256.normal.s1" in by and "autocast.bf16.64x256x512x64.normal.s1" in by
assert not any("f16acc16" in i or "efficient" in i or "cudnn" in i for i in by), sorted(by)
for c in d["cases"]:
    v = c["verdict"]
    assert v in ("pass", "fail", "skipped"), (c["id"], v, c["error"])
    if v == "skipped":
        assert c["error"] and ("torch" in c["error"] or "PyTorch" in c["error"]), c
    else:
        assert c["metrics"]["count"] > 0 and c["input_digest"] and c["output_digest"], c["id"]
        assert c["impl"], c["id"]
g = by["gemm.f32.256x256x256.normal.s1"]
assert g["verdict"] == "pass" and g["impl"].startswith("torch.matmul") and "allow_tf32=0" in g["impl"], g
assert by["linear.f32.256x256x256.normal.s1"]["impl"].startswith("torch.nn.functional.linear")
assert "allow_tf32=1" in by["gemm.tf32.256x256x256.normal.s1"]["impl"]
assert "allow_tf32=0" in by["conv2d.f32.2x3x33x33-k8x3x3-s2p1.normal.s1"]["impl"]
assert by["convert.f32-bf16.65536.normal.s1"]["verdict"] == "pass"  # a conversion is exact or wrong
old = want == "1.13"
sd = by["sdpa.f32.4x128x64.causal.normal.s1"]
if old:  # functions 1.13 does not have
    assert sd["verdict"] == "skipped" and "added in 2.0" in sd["error"], sd
    assert "added in 2.4" in by["rmsnorm.bf16.32x4096.normal.s1"]["error"]
    assert "float8_e4m3fn" in by["convert.f32-e4m3.65536.normal.s1"]["error"]
    assert "not implemented for 'Half'" in by["softmax.f16.16x4096.normal.s1"]["error"]
else:
    assert sd["verdict"] == "pass" and "backend=" in sd["impl"], sd
    m = by["sdpa.f32.4x128x64.causal-math.normal.s1"]
    assert m["verdict"] == "pass" and "backend=math (forced)" in m["impl"], m
    assert by["convert.f32-e4m3.65536.normal.s1"]["verdict"] == "pass"
    assert by["autocast.f16.64x256x512x64.normal.s1"]["verdict"] != "skipped"
counts = {}
for c in d["cases"]:
    counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
print("%s: torch %s (%s), %s" % (name, t["version"], t["path"], counts))
for c in d["cases"]:
    if c["verdict"] == "fail":
        m = c["metrics"]
        print("  fails: %-44s error/bound %.3g, %.1f bits  [%s]" % (
            c["id"], m["err_over_bound"], m["effective_bits"], c["impl"][:70]))
PY
}
check_build host "$("$HOST_PY" -c 'import torch; print(".".join(torch.__version__.split(".")[:2]))')"
check_build trixie "$(deb_version "$TRIXIE_TORCH" python3-torch | cut -d. -f1,2)"
check_build sid "$(deb_version "$SID_TORCH" python3-torch | cut -d. -f1,2)"
[[ $(deb_version "$TRIXIE_TORCH" python3-torch) == 2.6* && $(deb_version "$SID_TORCH" python3-torch) == 2.14* ]] ||
    fail "the fixture roots do not hold torch 2.6 and 2.14"
echo "torch:cpu ran through PyTorch 1.13, 2.6 and 2.14"
