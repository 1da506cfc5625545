#!/bin/bash
# gpuvet bench through a real PyTorch (Debian's python3-torch, torch:cpu): the
# GEMMs run in the worker (python/gpuvet_bench.py) with the same document and
# checks as gpuvet's own routes; a wrong product is withheld; what PyTorch is
# not asked for is said, not guessed.
set -u
. "$(dirname "$0")/lib.sh"
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
GPUVET_PYTHON=$HOST_PY "$GPUVET" bench --device torch:cpu --quick --no-snapshot -o "$T/b.json" \
    >"$T/out.txt" 2>&1 || { cat "$T/out.txt"; fail "bench --device torch:cpu --quick"; }
grep -q "collectives: through PyTorch only GEMMs" "$T/out.txt" || fail "says what is not measured"
python3 - "$T/b.json" <<'PY' || fail "document"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuvet.bench"
res = {r["id"]: r for r in d["results"]}
for dt in ("f32", "f64"):
    r = res["gemm.torch_mm.%s.256x256x256" % dt]
    assert r["status"] == "ok", r
    assert r["check"]["ok"] and "fp64 product" in r["check"]["what"], r["check"]
    assert math.isfinite(r["value"]) and r["value"] > 0
    assert "torch.mm(a, w.t(), out=c)" in r["impl"], r["impl"]
assert all(r["group"] == "gemm" for r in d["results"]), "GEMMs only through PyTorch"
assert d["device"]["torch_device"] == "cpu"
PY
GPUVET_TEST_BENCH_CORRUPT=1 GPUVET_PYTHON=$HOST_PY "$GPUVET" bench --device torch:cpu --quick \
    --only 'gemm.torch_mm.f32.*' --no-snapshot --json >"$T/bad.json"
[ $? -eq 1 ] || fail "a wrong product exits 1"
python3 -c "
import json; r=json.load(open('$T/bad.json'))['results'][0]
assert r['status']=='failed' and r['value'] is None and 'beyond' in r['check']['what'], r" ||
    fail "a wrong product is withheld"
GPUVET_PYTHON=/nonexistent/python "$GPUVET" bench --device torch:cpu --quick -o "$T/x.json" \
    >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "a missing interpreter exits 3"
[ ! -e "$T/x.json" ] || fail "nothing written"
echo ok
