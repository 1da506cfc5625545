#!/bin/bash
# Benchmark: `gpuvet report` of a full-suite comparison with saved outputs, in a Release
# build: the two result files (the CPU, and the CPU emulating TF32 and bf16 GEMM inputs)
# and their outputs (check --save-outputs) are made first, then the page is made five
# times. Target on this 2-core machine: < 1 s per page; a standard-suite comparison page
# under 2 MB. Figures: wall time (min, median), the page's size, flagged cases.
#   usage: tests/bench/bench_report.sh [BUILD_DIR] [INPUT_DIR]
#   (default build-bench; INPUT_DIR keeps the result files between runs)
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$SRC/build-bench}
cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON >/dev/null
cmake --build "$B" -j2 --target gpuvet >/dev/null
G=$B/gpuvet
W=${2:-$(mktemp -d)}
mkdir -p "$W"
[ -n "${2:-}" ] || trap 'rm -rf "$W"' EXIT
export XDG_CACHE_HOME=$W/cache
echo "cpus: $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for suite in standard full; do
    for side in a b; do
        dev=cpu; [ $side = b ] && dev=cpu:emulate=tf32+bf16gemm
        [ -s "$W/$suite-$side.json" ] && [ -s "$W/$suite-$side.safetensors" ] && continue
        "$G" check --suite $suite --device $dev -o "$W/$suite-$side.json" \
            --save-outputs "$W/$suite-$side.safetensors" >/dev/null || [ $? = 1 ]
    done
    "$G" compare --json "$W/$suite-a.json" "$W/$suite-b.json" >"$W/$suite-c.json" || [ $? = 1 ]
    times=()
    for _ in 1 2 3 4 5; do
        s=$(date +%s%N)
        "$G" report "$W/$suite-c.json" -o "$W/$suite.html" 2>/dev/null
        times+=($(( ($(date +%s%N) - s) / 1000000 )))
    done
    python3 - "$W/$suite-c.json" "$W/$suite.html" "$W/$suite-a.safetensors" "$suite" "${times[@]}" <<'PY' || status=1
import json, os, statistics, sys
c, page, st, suite = sys.argv[1:5]
ms = sorted(int(t) for t in sys.argv[5:])
d = json.load(open(c))
flagged = sum(x["flagged"] for x in d["cases"])
size = os.path.getsize(page)
ok_time = ms[0] < 1000 if suite == "full" else True
ok_size = size < 2 << 20 if suite == "standard" else True
print(f"{suite:8s}: {len(d['cases'])} cases, {flagged} flagged, outputs 2 x {os.path.getsize(st) / 1e6:.0f} MB; "
      f"report min {ms[0] / 1000:.3f} s, median {statistics.median(ms) / 1000:.3f} s; page {size / 1e3:.0f} kB"
      + ("" if ok_time else "  MISSES TARGET 1 s") + ("" if ok_size else "  MISSES TARGET 2 MB"))
sys.exit(0 if ok_time and ok_size else 1)
PY
done
exit $status
