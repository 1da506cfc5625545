#!/usr/bin/env bash
# Benchmark: the first `gpuvet snapshot` of this machine (an empty digest cache, so
# every GPU library is hashed) against later ones, with the peak resident memory of
# each; and what the memory is: --no-hash, and hashing on 2 threads (gpuvet before
# parallel hashing) for comparison. With root, also after dropping the page cache
# (the files then come from disk). Prints the largest libraries hashed.
# usage: tests/bench/snapshot_first.sh GPUVET [N]      (N runs of each, median; default 3)
set -uo pipefail
G=${1:?usage: snapshot_first.sh GPUVET [N]}
N=${2:-3}
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir W
echo "cpus: $(nproc) ($(sort -u /sys/devices/system/cpu/cpu*/topology/core_id 2>/dev/null | wc -l) cores), load: $(cut -d' ' -f1-3 /proc/loadavg)"
measure() { # LABEL FRESH-CACHE(0/1) ENV... : median wall ms and max RSS of N snapshots
    local label=$1 fresh=$2
    shift 2
    for _ in $(seq "$N"); do
        [[ $fresh == 1 ]] && rm -rf "$W/cache"
        [[ $label == cold-disk* ]] && { sync; echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null
        python3 - "$W" "$G" "$@" <<'PY'
import os, resource, subprocess, sys, time
w, g, env = sys.argv[1], sys.argv[2], dict(os.environ)
for kv in sys.argv[3:]:
    k, _, v = kv.partition("=")
    env[k] = v
env["XDG_CACHE_HOME"] = w + "/cache"
t = time.perf_counter()
extra = ["--no-hash"] if env.get("NOHASH") else []
subprocess.run([g, "snapshot", "-o", w + "/s.json"] + extra, env=env, check=True)
print("%d %d" % ((time.perf_counter() - t) * 1000, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
PY
    done | sort -n | awk -v l="$label" '{ms[NR]=$1; if ($2 > rss) rss = $2} END {printf "%-28s median %6d ms (min %d, max %d), max RSS %d MB\n", l, ms[int((NR+1)/2)], ms[1], ms[NR], rss/1024}'
}
measure "first (empty digest cache)" 1
measure "later (digest cache filled)" 0
measure "first, 2 hash threads" 1 GPUVET_HASH_THREADS=2
measure "first, one thread per vCPU" 1 "GPUVET_HASH_THREADS=$(nproc)"
measure "first, 1 hash thread" 1 GPUVET_HASH_THREADS=1
measure "no hashing (--no-hash)" 1 NOHASH=1
if [[ $(id -u) == 0 ]] && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
    measure "cold-disk first" 1
else
    echo "cold-disk first: page cache cannot be dropped here"
fi
python3 - "$W/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
it = d["libraries"]["items"]
h = [i for i in it if "sha256" in i or "sha256_skipped" in i]
print("libraries: %d files, %.2f GB" % (len(it), sum(i.get("size", 0) for i in it) / 1e9))
for i in sorted(it, key=lambda i: -i.get("size", 0))[:6]:
    print("  %8.1f MB  %s" % (i.get("size", 0) / 1e6, i["path"]))
PY
