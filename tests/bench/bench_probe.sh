#!/bin/bash
# Benchmark: `gpuvet probe` wall time, every route and precision of a device,
# in a Release build; with the number of backend calls and where the time goes
# (per precision). Target: one GPU's routes and precisions in under 60 s; the CPU
# figure bounds the probe's own cost (calls, inputs, tree recovery).
#   usage: tests/bench/bench_probe.sh [BUILD_DIR] [DEVICE]   (default: build-bench, cpu)
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$SRC/build-bench}
DEV=${2:-cpu}
if [ ! -x "$B/gpuvet" ] || [ "$B" = "$SRC/build-bench" ]; then
    cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF > /dev/null
    cmake --build "$B" -j2 > /dev/null
fi
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir W
echo "cpus: $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
s=$(date +%s%N)
"$B/gpuvet" probe --device "$DEV" --json -o "$W/fp.json" > /dev/null || { rc=$?; [ $rc -eq 1 ] || exit $rc; }
wall=$(( ($(date +%s%N) - s) / 1000000 ))
python3 - "$W/fp.json" "$wall" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); wall = int(sys.argv[2]) / 1000
calls = 0; dev = 0.0; n = 0
for r in d["routes"]:
    for p in r["precisions"]:
        calls += p["calls"]; dev += p["seconds"]; n += p["status"] == "probed"
        print(f"  {r['route']:14s} {p['op']}.{p['precision']:10s} {p['status']:11s} {p['calls']:4d} calls {p['seconds']:6.2f} s")
print(f"{d['device_spec']}: {len(d['routes'])} routes, {n} precisions probed, {calls} backend calls, "
      f"wall {wall:.2f} s (backend {dev:.2f} s){'' if wall < 60 else '  MISSES TARGET 60 s'}")
sys.exit(0 if wall < 60 else 1)
PY
