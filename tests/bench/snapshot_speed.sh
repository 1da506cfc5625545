#!/usr/bin/env bash
# Benchmark: gpuvet snapshot --root over a Debian ROCm root (sid-rocm when it is
# in the fixture cache, else trixie-rocm, or ROOT given as $1).
#   cold    digest cache off, page cache warm: every GPU library is hashed
#   warm    digest cache on and filled: unchanged big files are not read
#   nohash  --no-hash
# Prints the median of N runs (default 5) for each, and the bytes hashed.
# Use a Release build: GPUVET=build-rel/gpuvet tests/bench/snapshot_speed.sh
set -euo pipefail
GPUVET=${GPUVET:-build-rel/gpuvet}
N=${N:-5}
cache=${GV_FIXTURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuvet-fixtures}
root=${1:-}
if [[ -z $root ]]; then
    for n in sid-rocm trixie-rocm; do
        [[ -f $cache/$n.stamp ]] && { root=$cache/$n; break; }
    done
fi
[[ -n $root && -d $root ]] || { echo "no fixture root (tests/fixtures/debian-rocm.sh all)"; exit 77; }
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir tmp
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # LABEL ENV...   ($EXTRA: more snapshot arguments)
    local label=$1 t0 t1 _
    shift
    for _ in $(seq "$N"); do
        t0=$(date +%s%N)
        # shellcheck disable=SC2086
        env "$@" "$GPUVET" snapshot --root "$root" -o "$tmp/s.json" ${EXTRA:-}
        t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000000))
    done | median | xargs printf '%-7s %6s ms\n' "$label"
}
echo "root: $root"
XDG_CACHE_HOME="$tmp/w" "$GPUVET" snapshot --root "$root" -o "$tmp/s.json"   # warm the page cache and fill the digest cache
python3 -c 'import json,sys; it=json.load(open(sys.argv[1]))["libraries"]["items"]; print("libraries: %d files, %.1f MB hashed" % (len(it), sum(i.get("size",0) for i in it if "sha256" in i)/1e6))' "$tmp/s.json"
run cold XDG_CACHE_HOME="$tmp/c" GPUVET_HASH_CACHE=0
run warm XDG_CACHE_HOME="$tmp/w"
EXTRA=--no-hash run nohash XDG_CACHE_HOME="$tmp/n"
