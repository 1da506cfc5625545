#!/bin/bash
# gpuvet bench against the references users trust, on the same GPU in the same
# run: GEMM TFLOP/s against torch.mm / torch._scaled_mm for the same shapes and
# precisions, device copy against PyTorch's tensor copy, host<->device against
# PyTorch's pinned copy, launch latency against PyTorch's smallest kernel
# (tests/bench/torch_ref.py). Targets (issue 13): GEMM >= 0.97x, copies >= 0.95x,
# launch no worse. ROUNDS (default 2) alternating rounds, gpuvet then PyTorch,
# each tool's best over them compared (tests/bench/vs_best.py); all-reduce
# against nccl-tests is tests/bench/nccl_tests_ref.sh.
# usage: tests/bench/bench_vs_torch.sh GPUVET PYTHON OUTDIR [--quick|--full] [ONLY]
set -u
G=${1:?usage: bench_vs_torch.sh GPUVET PYTHON OUTDIR [MODE] [ONLY]}
PY=${2:?python with torch}
OUT=${3:?outdir}
MODE=${4:-}
ONLY=${5:-}
ROUNDS=${ROUNDS:-2}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
pairs=()
rc=0
for r in $(seq 1 "$ROUNDS"); do
    s=$(date +%s%N)
    "$G" bench --device cuda:0 ${MODE:+"$MODE"} ${ONLY:+--only "$ONLY"} -o "$OUT/bench.$r.json" \
        >"$OUT/bench.$r.txt" 2>&1 || rc=$?
    echo "== round $r: gpuvet bench $MODE: exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms wall"
    cat "$OUT/bench.$r.txt"
    echo "== round $r: PyTorch"
    PYTHONUNBUFFERED=1 "$PY" "$SRC/tests/bench/torch_ref.py" "$OUT/bench.$r.json" 10 \
        --save "$OUT/ref.$r.json" | tee "$OUT/vs_torch.$r.txt"
    pairs+=("$OUT/bench.$r.json" "$OUT/ref.$r.json")
done
echo "== best of $ROUNDS rounds each"
python3 "$SRC/tests/bench/vs_best.py" "${pairs[@]}" | tee "$OUT/vs_best.txt"
exit $rc
