#!/usr/bin/env bash
# gpuvet report of a gpuvet.bench document made here on the CPU, and of a bench
# comparison (a real document against a copy with one result halved and one failed, made
# here with python), each in a real headless Chromium (tests/report/check_page.py, kinds
# bench and bench-compare): every result row with the value, min, max, spread and status
# the JSON holds, the best-GEMM figure and table, verdicts, topology warnings,
# collectives; the comparison's changes, ratios, noise and ranked causes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_workdir T
mkdir -p "$T/shots" && cd "$T"
export XDG_CACHE_HOME=$T/cache
need_browser
CHECK=(python3 "$GV_SRC/tests/report/check_page.py")
rc=0
"$GPUVET" bench --device cpu --quick --only 'memory.*,gemm.*' -o a.json >/dev/null 2>&1 || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "bench: exit $rc"
"$GPUVET" report a.json -o a.html 2>/dev/null || fail "report of a.json"
"${CHECK[@]}" bench a.html "$T/shots" a.json || fail "the bench page"
# a GPU-like document (topology warnings, a verdict, collectives, a peak): the CPU run's
# results with those parts written to the contract of docs/bench.md
python3 - <<'PY' || fail "making the edited documents"
import json, copy
a = json.load(open("a.json"))
g = copy.deepcopy(a)
g["topology"] = {"gpus": [{"index": 0, "name": "NVIDIA H200", "pci_bus_id": "0000:19:00.0"}],
                 "pairs": [], "warnings": ["GPU 0 is on a PCIe link at Gen4 x8 (capable of Gen5 x16)"]}
g["verdicts"] = [{"id": "verdict.bf16_vs_fp16.4096x4096x4096", "text": "bf16 is 1.01x the speed of fp16 here: no clear difference"}]
g["collectives"] = {"library": {"name": "nccl", "path": "/usr/lib/libnccl.so.2", "version": "2.28.9"},
                    "version": "2.28.9", "nranks": 2}
for r in g["results"]:
    if r["group"] == "gemm" and r["status"] == "ok":
        r["peak"] = 1.0
        r["of_peak"] = r["value"] / 1.0
        break
json.dump(g, open("g.json", "w"), indent=1)
b = copy.deepcopy(a)
oks = [r for r in b["results"] if r["status"] == "ok"]
for k in ("value", "min", "max"):
    oks[0][k] *= 0.5
oks[0]["samples"] = [s * 0.5 for s in oks[0]["samples"]]
oks[1]["status"], oks[1]["reason"] = "failed", "3 of 4096 sampled results wrong"
for k in ("value", "min", "max", "spread", "samples"):
    oks[1].pop(k, None)
b["snapshot"]["environment"]["variables"]["OMP_NUM_THREADS"] = "1"
json.dump(b, open("b.json", "w"), indent=1)
PY
"$GPUVET" report g.json -o g.html 2>/dev/null || fail "report of g.json"
"${CHECK[@]}" bench g.html "$T/shots" g.json || fail "the GPU-like bench page"
rc=0
"$GPUVET" compare a.json b.json --json >c.json || rc=$?
[[ $rc == 1 ]] || fail "compare: exit $rc, not 1"
"$GPUVET" report c.json -o c.html 2>/dev/null || fail "report of the comparison"
"${CHECK[@]}" bench-compare c.html "$T/shots" c.json || fail "the bench comparison page"
echo ok
