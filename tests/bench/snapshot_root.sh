#!/usr/bin/env bash
# Times `gpuvet snapshot --root` of the sid-rocm fixture (tests/fixtures/debian-rocm.sh):
# median of 10 runs (hyperfine when installed). Target: < 300 ms.
# Usage: tests/bench/snapshot_root.sh [path/to/gpuvet] [--no-hash]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
GPUVET=${1:-${GPUVET:-$here/build/gpuvet}}
extra=()
[[ -n ${2:-} ]] && extra=("$2")
[[ -x $GPUVET ]] || { echo "no gpuvet binary at $GPUVET (build first, or pass its path)" >&2; exit 2; }
SID=$("$here/tests/fixtures/debian-rocm.sh" sid-rocm)
runs=10
if command -v hyperfine >/dev/null; then
    hyperfine -N -w 2 -r "$runs" "$GPUVET snapshot ${extra[*]} --root $SID -o /dev/null"
    exit 0
fi
"$GPUVET" snapshot "${extra[@]}" --root "$SID" -o /dev/null # warm the page cache
ms=()
for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    "$GPUVET" snapshot "${extra[@]}" --root "$SID" -o /dev/null
    t1=$(date +%s%N)
    ms+=($(( (t1 - t0) / 1000000 )))
done
mapfile -t sorted < <(printf '%s\n' "${ms[@]}" | sort -n)
median=$(( (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2 ))
echo "gpuvet snapshot ${extra[*]:+${extra[*]} }--root sid-rocm: median ${median} ms of $runs runs (min ${sorted[0]}, max ${sorted[runs - 1]}); target < 300 ms"
