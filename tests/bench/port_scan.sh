#!/usr/bin/env bash
# Benchmark: gpuvet port scan of a large real source tree, against reading the
# same files twice with cat (the target: the scan is faster than that). The
# trees: the CUDA toolkit headers and /usr/include where present (a few thousand
# C, C++ and CUDA headers), or the directories given. Caches cannot be dropped
# here, so every file is read once first and both sides run warm; each figure is
# the median of 5 runs.
# Usage: tests/bench/port_scan.sh [GPUVET] [DIR...]   (a Release build; default build/gpuvet)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
G=${1:-$src/build/gpuvet}
[[ -x $G ]] || { echo "no $G: make build first"; exit 77; }
shift || true
trees=("$@")
if ((${#trees[@]} == 0)); then
    for d in /usr/local/cuda/include /usr/include; do
        [[ -d $d ]] && trees+=("$d")
    done
fi
((${#trees[@]})) || { echo "no source tree to scan (give one)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the files the scan reads: regular files (no links below the tree) by extension
find -H "${trees[@]}" -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.hip' \
    -o -name '*.cpp' -o -name '*.cc' -o -name '*.cxx' -o -name '*.c' -o -name '*.h' \
    -o -name '*.hpp' -o -name '*.hh' -o -name '*.hxx' -o -name '*.inl' -o -name '*.py' \) \
    -size -8M -print0 >"$work/files"
nfiles=$(tr -cd '\0' <"$work/files" | wc -c)
bytes=$(xargs -0 cat <"$work/files" | wc -c)
xargs -0 cat <"$work/files" >/dev/null # warm

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
seconds() { # CMD...: wall seconds of one run
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
}
cat_twice() { xargs -0 cat <"$work/files" >/dev/null; xargs -0 cat <"$work/files" >/dev/null; }
scan() { "$G" port scan --target gfx942,gfx1100 -o "$work/out.json" "${trees[@]}" >/dev/null 2>&1; }
scan || true # warm, and the figures below
read -r files lines findings < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stats"]
print(s["files"], s["lines"], len(d["findings"]))' "$work/out.json")

for i in 1 2 3 4 5; do seconds cat_twice; done | median >"$work/cat"
for i in 1 2 3 4 5; do seconds scan; done | median >"$work/scan"
t_cat=$(cat "$work/cat") t_scan=$(cat "$work/scan")
printf 'trees: %s\n' "${trees[*]}"
calc() { awk "BEGIN {print $1}"; }
printf 'files: %d listed by find, %d scanned, %d lines, %.1f MB, %d findings\n' \
    "$nfiles" "$files" "$lines" "$(calc "$bytes / 1000000")" "$findings"
printf 'cat of every file twice: %.3f s (median of 5, warm)\n' "$t_cat"
printf 'gpuvet port scan:        %.3f s (median of 5, warm; %.0f MB/s, %.0f files/s)\n' \
    "$t_scan" "$(calc "$bytes / 1000000 / $t_scan")" "$(calc "$files / $t_scan")"
if (($(calc "$t_scan < $t_cat"))); then
    printf 'target met: the scan takes %.2f of the time of reading the files twice\n' \
        "$(calc "$t_scan / $t_cat")"
else
    printf 'TARGET MISSED: the scan takes %.2f times as long as reading the files twice\n' \
        "$(calc "$t_scan / $t_cat")"
    exit 1
fi
