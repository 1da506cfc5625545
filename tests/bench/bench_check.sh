#!/bin/bash
# Benchmark: `gpuvet check --device cpu` wall time for the quick and standard
# suites with a COLD reference cache (a fresh XDG_CACHE_HOME), then warm, in a
# Release build. Targets on a 2-core machine: quick < 10 s, standard < 60 s.
#   usage: tests/bench/bench_check.sh [BUILD_DIR]    (default: build-bench)
# Prints one line per run; exit 1 if a cold run misses its target.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$SRC/build-bench}
cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF > /dev/null
cmake --build "$B" -j2 > /dev/null
G="$B/gpuvet"
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir W
echo "cpus: $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for suite in quick standard; do
    target=10; [ "$suite" = standard ] && target=60
    cache="$W/cache-$suite"
    for temp in cold warm; do
        s=$(date +%s%N)
        XDG_CACHE_HOME="$cache" /usr/bin/time -f "%U %S" -o "$W/t" \
            "$G" check --device cpu --suite "$suite" -o "$W/$suite-$temp.json" > "$W/out" || {
            echo "$suite ($temp): check failed"; tail -3 "$W/out"; status=1; }
        wall=$(( ($(date +%s%N) - s) / 1000000 ))
        read -r u sy < "$W/t"
        python3 - "$W/$suite-$temp.json" "$suite" "$temp" "$wall" "$u" "$sy" "$target" <<'PY' || status=1
import json, sys
f, suite, temp, wall, u, s, target = sys.argv[1:]
d = json.load(open(f))
cases = d["cases"]
dev = sum(c["timing"]["seconds"] for c in cases)
ref = sum(c["timing"]["reference_seconds"] for c in cases)
hits = sum(c["timing"]["reference_cache_hit"] for c in cases)
passed = sum(c["verdict"] == "pass" for c in cases)
w = int(wall) / 1000
print(f"{suite:8s} {temp}: {len(cases)} cases, {passed} passed, wall {w:.2f} s "
      f"(cpu {float(u) + float(s):.2f} s; backend {dev:.2f} s, references {ref:.2f} s, "
      f"{hits} cache hits){'' if temp == 'warm' or w < float(target) else '  MISSES TARGET ' + target + ' s'}")
sys.exit(0 if temp == "warm" or w < float(target) else 1)
PY
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
