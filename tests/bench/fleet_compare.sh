#!/usr/bin/env bash
# Benchmark: gpuvet fleet compare over 10,000 node documents (issue 34's scale
# target: under 10 s and under 1 GB). The documents are made from one real
# CPU run of 'gpuvet check --suite quick' (tests/cli/fleet_nodes.py), each
# with the run's cases, a stack of the snapshot's libraries plus 80 made-up
# ones (the size of a GPU node's stack summary) and a bench figure, and with
# planted differences: drifted stacks, numerics outliers (one repeat of two),
# slow nodes, nodes that could not run, missing ranks. The comparison must
# name exactly the planted nodes. Prints the wall time, the peak RSS and the
# bytes per node document (the gather's cost per node).
# Usage: tests/bench/fleet_compare.sh [BUILD_DIR]   (a Release build; default build)
#        NODES overrides 10000.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:-build}" && pwd)
G=${GPUVET:-$B/gpuvet}
NODES=${NODES:-10000}
. "$here/../cli/lib.sh"
need_cmd python3
TIME=${GV_GNU_TIME:-/usr/bin/time}
[[ -x $TIME ]] || skip "$TIME is not installed (GNU time, for the peak RSS)"
"$G" fleet compare --help > /dev/null 2>&1 || skip "$G has no 'fleet compare'"
gv_tmpdir work fleet-bench
export XDG_CACHE_HOME=$work/cache

"$G" check --device cpu --suite quick --json > "$work/result.json" ||
    fail "check --device cpu exited $?"
# planted: ranks spread over the fleet, each kind its own
drift=(17 4242 9001) flip=(33 5000 9998) slow=(40 6000 7777) cannot=(41 8000) missing=(5 9999)
case_id=$(python3 -c 'import json,sys; print([c["id"] for c in json.load(open(sys.argv[1]))["cases"] if c["output_digest"]][0])' "$work/result.json")
args=()
for r in "${drift[@]}"; do args+=(--drift "$r:libhipblaslt.so.0:0.12.0"); done
for r in "${flip[@]}"; do args+=(--flip "$r:$case_id:2"); done
for r in "${slow[@]}"; do args+=(--slow "$r:0.7"); done
for r in "${cannot[@]}"; do args+=(--cannot "$r:timeout"); done
for r in "${missing[@]}"; do args+=(--missing "$r"); done
t0=$(date +%s)
python3 "$here/../cli/fleet_nodes.py" "$work/result.json" "$work/fleet" "$NODES" --repeats 2 \
    --pad-libs 80 "${args[@]}" || fail "making $NODES node documents"
echo "   made $NODES node documents in $(( $(date +%s) - t0 )) s"
docs=$(find "$work/fleet/nodes" -name '*.json' | wc -l)
bytes=$(du -sb "$work/fleet/nodes" | cut -f1)
cases=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$work/result.json")

rc=0
"$TIME" -v "$G" fleet compare "$work/fleet" --json -o "$work/fleet.json" \
    > /dev/null 2> "$work/time.txt" || rc=$?
[[ $rc == 1 ]] || { cat "$work/time.txt" >&2; fail "fleet compare exited $rc, not 1"; }
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
secs=$(python3 -c 'import sys; p=sys.argv[1].split(":"); print(sum(float(x)*60**i for i,x in enumerate(reversed(p))))' "$wall")

want=$(printf '%s\n' "${drift[@]/#/stack_drift }" "${flip[@]/#/numerics_outlier }" \
    "${slow[@]/#/slow }" "${cannot[@]/#/could_not_run }" | sort)
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["groups"]:
    for o in g["odd"]:
        print(o["class"], o["rank"])' "$work/fleet.json" | sort)
[[ $got == "$want" ]] || fail "odd nodes named: $(echo $got), planted: $(echo $want)"
expect_json "$work/fleet.json" "sorted(d['missing'])" "[$(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')]"

printf '   %d node documents (%d cases, 2 repeats each): %.2f s wall, peak RSS %d MB\n' \
    "$docs" "$cases" "$secs" $((rss_kb / 1024))
printf '   %d bytes per node document (%d MB in all); the planted 13 odd nodes and 2 missing named, no other\n' \
    $((bytes / docs)) $((bytes >> 20))
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 10 and int(sys.argv[2]) < 1024*1024 else 1)' \
    "$secs" "$rss_kb" || fail "target missed: under 10 s and under 1 GB"
echo "   target met: under 10 s and under 1 GB"
