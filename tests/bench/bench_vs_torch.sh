#!/bin/bash
# gpuvet bench against the references users trust, on the same GPU in the same
# run: GEMM TFLOP/s against torch.mm / torch._scaled_mm for the same shapes and
# precisions, device copy against PyTorch's tensor copy, host<->device against
# PyTorch's pinned copy, launch latency against PyTorch's smallest kernel
# (tests/bench/torch_ref.py); all-reduce against nccl-tests when a built
# all_reduce_perf is given. Targets (issue 13): GEMM >= 0.97x, copies >= 0.95x,
# launch no worse, collectives >= 0.95x.
# usage: tests/bench/bench_vs_torch.sh GPUVET PYTHON OUTDIR [--quick|--full] [ONLY]
set -u
G=${1:?usage: bench_vs_torch.sh GPUVET PYTHON OUTDIR [MODE] [ONLY]}
PY=${2:?python with torch}
OUT=${3:?outdir}
MODE=${4:-}
ONLY=${5:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
s=$(date +%s%N)
"$G" bench --device cuda:0 $MODE ${ONLY:+--only "$ONLY"} -o "$OUT/bench.json" >"$OUT/bench.txt" 2>&1
rc=$?
echo "gpuvet bench $MODE: exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms wall"
cat "$OUT/bench.txt"
PYTHONUNBUFFERED=1 "$PY" "$SRC/tests/bench/torch_ref.py" "$OUT/bench.json" 10 | tee "$OUT/vs_torch.txt"
