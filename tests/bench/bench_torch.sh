#!/bin/bash
# Benchmark: the PyTorch device, worker start included.
#   - `import torch` on its own in the interpreter (best of 3), and the worker's own
#     measure of it (import_seconds in the result);
#   - torch:cuda:0 standard suite with a warm reference cache (target < 20 s), where a
#     GPU and a CUDA build of torch are present;
#   - torch:cpu quick suite with a warm cache (target < 30 s on a 2-core machine).
# usage: tests/bench/bench_torch.sh GPUVET [PYTHON]   (default python3)
# Prints one line per measurement; exit 1 when a target is missed.
set -u
G=${1:?usage: bench_torch.sh GPUVET [PYTHON]}
PY=${2:-$(command -v python3)}
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir W
export XDG_CACHE_HOME=$W/cache
echo "cpus: $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg), python: $PY"
best=
for _ in 1 2 3; do
    s=$(date +%s%N)
    "$PY" -c 'import torch' 2>/dev/null || { echo "$PY cannot import torch"; exit 1; }
    ms=$(( ($(date +%s%N) - s) / 1000000 ))
    [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
done
echo "import torch alone (interpreter start included): best of 3 ${best} ms"
status=0
run() { # DEVICE SUITE TARGET-SECONDS
    local dev=$1 suite=$2 target=$3
    "$G" check --device "$dev" --python "$PY" --suite "$suite" -o "$W/warmup.json" >/dev/null 2>&1
    local rc=$?
    if [ "$rc" = 3 ]; then
        echo "$dev $suite: cannot run here ($("$G" check --device "$dev" --python "$PY" --only 'sum.*' 2>&1 | tail -1))"
        return
    fi
    for i in 1 2 3; do
        s=$(date +%s%N)
        "$G" check --device "$dev" --python "$PY" --suite "$suite" -o "$W/r$i.json" >/dev/null 2>&1
        wall=$(( ($(date +%s%N) - s) / 1000000 ))
        python3 - "$W/r$i.json" "$dev" "$suite" "$wall" "$target" <<'PY' || status=1
import json, sys
f, dev, suite, wall, target = sys.argv[1:]
d = json.load(open(f))
cases = d["cases"]
t = d["device"]["description"]["torch"]
backend = sum(c["timing"]["seconds"] for c in cases)
hits = sum(c["timing"]["reference_cache_hit"] for c in cases)
v = {}
for c in cases:
    v[c["verdict"]] = v.get(c["verdict"], 0) + 1
w = int(wall) / 1000
prof = "" if any("kernels:" in c["impl"] or ">" in c["impl"] for c in cases) else " [profiler off]"
print(f"{dev} {suite}{prof}: {len(cases)} cases {v}, wall {w:.2f} s (import torch in the worker "
      f"{t['import_seconds']:.2f} s, PyTorch calls {backend:.2f} s, {hits} cache hits)"
      f"{'' if w < float(target) else '  MISSES TARGET ' + target + ' s'}")
sys.exit(0 if w < float(target) else 1)
PY
    done
}
run torch:cuda:0 standard 20
# the share of the profiler that names what PyTorch ran (GPUVET_TORCH_PROFILE=0 turns it off)
GPUVET_TORCH_PROFILE=0 run torch:cuda:0 standard 20
run torch:cpu quick 30
exit $status
