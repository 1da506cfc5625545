#!/bin/bash
# gpuvet compare / ab --bench / report on real CUDA bench documents. Nothing here
# depends on how fast the GPU is: the live comparisons only have to be readable and
# exit 0 or 1; the judged changes are edits of a real GPU document (a GEMM halved,
# a clock lowered, an NCCL version changed). Skipped (77) without a CUDA GPU.
set -u
. "$(dirname "$0")/../cli/lib.sh"
gv_workdir T && cd "$T"
"$GPUVET" bench --device cuda:0 --quick --only 'gemm.*,memory.*,latency.*,coll.*' -o a.json >a.out 2>a.err
rc=$?
if [ $rc -eq 3 ] && grep -qiE "no NVIDIA GPU|libcuda|CUDA_ERROR_NO_DEVICE|stub|no CUDA" a.err; then
  skip "no CUDA GPU"
fi
[ $rc -eq 0 ] || [ $rc -eq 1 ] || { cat a.err; fail "bench on cuda:0: exit $rc"; }
rc=0; "$GPUVET" compare a.json a.json >same.txt || rc=$?
[ $rc -eq 0 ] || fail "a GPU document against itself: exit $rc"
python3 - <<'PY' || fail "making the edited document"
import json, copy
a = json.load(open("a.json"))
b = copy.deepcopy(a)
gemm = [r for r in b["results"] if r["group"] == "gemm" and r["status"] == "ok"]
assert gemm, "no ok GEMM result on the GPU"
g = gemm[0]
for k in ("value", "min", "max"):
    g[k] *= 0.5
g["samples"] = [s * 0.5 for s in g["samples"]]
a["conditions"]["before"]["sm_clock_mhz"] = 1980
b["conditions"]["before"]["sm_clock_mhz"] = 1200
if isinstance(b.get("collectives"), dict) and "version" in b["collectives"]:
    b["collectives"]["version"] = "0.0.1"
json.dump(a, open("a2.json", "w"), indent=1)
json.dump(b, open("b.json", "w"), indent=1)
open("gid", "w").write(g["id"])
PY
G=$(cat gid)
rc=0; "$GPUVET" compare a2.json b.json --json >c.json || rc=$?
[ $rc -eq 1 ] || fail "halved GEMM: exit $rc, not 1"
python3 - "$G" <<'PY' || fail "the comparison of the edited GPU document"
import json, sys
d = json.load(open("c.json")); g = sys.argv[1]
r = {x["id"]: x for x in d["results"]}
# halving is beyond any plausible noise, but only regressed when the ranges are apart
assert r[g]["change"] in ("regressed", "within_noise"), r[g]
if r[g]["noise"] < 0.5:
    assert r[g]["change"] == "regressed", r[g]
c = {x["name"]: x for x in d["causes"]}
assert c["sm_clock_mhz"]["kind"] == "conditions", c
if r[g]["change"] == "regressed":
    assert g in c["sm_clock_mhz"]["touched_results"].split(", "), c["sm_clock_mhz"]
if "version" in (json.load(open("b.json")).get("collectives") or {}):
    assert any(x["kind"] == "library" and "0.0.1" in (x["after"] or "") for x in d["causes"]), d["causes"]
print("regressed:", g, "causes:", [(x["kind"], x["name"], x["rank"]) for x in d["causes"]][:6])
PY
"$GPUVET" report a.json -o a.html >/dev/null 2>&1 || fail "report of the GPU bench document"
"$GPUVET" report c.json -o c.html >/dev/null 2>&1 || fail "report of the comparison"
if command -v chromium >/dev/null && command -v chromedriver >/dev/null && [ -n "${GV_SRC:-}" ]; then
  python3 "$GV_SRC/tests/report/check_page.py" bench a.html "$T/shots" a.json || fail "the GPU bench page"
  python3 "$GV_SRC/tests/report/check_page.py" bench-compare c.html "$T/shots" c.json || fail "the comparison page"
fi
# ab --bench: TF32 off in B; timings are whatever they are, the variable must be named
rc=0
"$GPUVET" ab --bench --quick --device cuda:0 --only 'gemm.*.f32.*' --a system \
  --b env=NVIDIA_TF32_OVERRIDE=0 --keep kd --json >ab.json 2>ab.err || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || { cat ab.err; fail "ab --bench: exit $rc"; }
python3 - <<'PY' || fail "ab --bench output"
import json
d = json.load(open("ab.json"))
assert d["kind"] == "bench" and d["results"]
assert any(c["name"] == "NVIDIA_TF32_OVERRIDE" for c in d["causes"]), d["causes"]
print("ab --bench:", d["summary"])
PY
echo ok
