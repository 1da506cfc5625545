#!/usr/bin/env bash
# The GPU proof, in one go, on a machine with an NVIDIA GPU: every GPU test,
# the standard suite cold and warm, the full suite, the TF32 override (cuBLAS
# and cuBLASLt), cuBLAS against cuBLASLt with ab, ab against the CUDA libraries
# PyTorch bundles (in the GPU tests), the capture and probe benchmarks, the probe
# tables for docs/probe.md, a report page, snapshot and doctor. Logs go to $OUT
# (or ./gpu-proof).
# Usage: scripts/gpu-proof.sh BUILD_DIR   (a Release build with BUILD_TESTING=ON,
#        packed with scripts/pack-runtime.sh when the machine lacks our libraries)
# The device tool brings back at most 8 files: run it with OUT=/tmp/proof and tar
# that folder into the real $OUT. nccl-tests' source goes in .ref/nccl-tests (an
# ignored folder, carried) for the all-reduce comparison.
set -uo pipefail
build=$(cd "${1:?usage: gpu-proof.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-proof}
mkdir -p "$out"
[[ -d $build/rt ]] && export LD_LIBRARY_PATH=$build/rt${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GPUVET=$build/gpuvet GV_SRC=$src GV_BUILD=$build GV_TEST_TMP=/tmp/gv-proof
mkdir -p "$GV_TEST_TMP"
g=$GPUVET
{
    nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total --format=csv
    "$g" --version
} >"$out/device.txt" 2>&1

run() { # NAME CMD... : run, keep output and exit status
    local name=$1; shift
    local t0 t1 rc
    t0=$(date +%s%N)
    timeout "${GV_STEP_TIMEOUT:-200}" "$@" >"$out/$name.log" 2>&1
    rc=$?
    t1=$(date +%s%N)
    printf '%-28s rc=%-3s %6.1f s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print (b-a)/1e9}')" |
        tee -a "$out/summary.txt"
}

# The open issues' proofs first (capture, probe), then the rest.
torch_py=${GV_TORCH_PYTHON:-/opt/torch/.venv/bin/python}
for t in torch_capture_cuda probe_cuda; do
    run "gpu-$t" bash "$src/tests/gpu/$t.sh"
done
[[ -x $torch_py ]] && run bench-capture bash "$src/tests/bench/bench_capture.sh" "$g" "$torch_py" cuda:0
[[ -x $torch_py ]] && run profile-capture env PYTHONUNBUFFERED=1 "$torch_py" \
    "$src/tests/bench/profile_capture.py" "$src/tests/cli/models/resnet18_224.py:make" cuda:0
[[ -x $torch_py ]] && run bench-vs-torch-quick bash "$src/tests/bench/bench_vs_torch.sh" "$g" \
    "$torch_py" "$out/bench-quick" --quick
[[ -x $torch_py ]] && run bench-vs-torch bash "$src/tests/bench/bench_vs_torch.sh" "$g" \
    "$torch_py" "$out/bench-default"
[[ -d $src/.ref/nccl-tests ]] && OUT=$out/nccl run nccl-ref bash "$src/tests/bench/nccl_tests_ref.sh" \
    "$src/.ref/nccl-tests" "$build"
run probe-tables bash "$src/scripts/probe-tables.sh" "$out/probe"
run bench-probe bash "$src/tests/bench/bench_probe.sh" "$build" cuda:0
for t in "$src"/tests/gpu/*.sh; do
    case $t in *torch_capture_cuda.sh|*probe_cuda.sh) continue ;; esac
    run "gpu-$(basename "$t" .sh)" bash "$t"
done
[[ -x $build/tests/test_gpu_cuda ]] && run unit-test_gpu_cuda "$build/tests/test_gpu_cuda"

export XDG_CACHE_HOME=/tmp/gv-proof/cache-cold
rm -rf "$XDG_CACHE_HOME"
run standard-cold "$g" check --device cuda:0 --suite standard -o "$out/standard.json" \
    --save-outputs "$out/standard.safetensors"
run standard-warm "$g" check --device cuda:0 --suite standard -o "$out/standard-warm.json"
run quick-default "$g" check -o "$out/quick.json"
NVIDIA_TF32_OVERRIDE=1 run standard-tf32-override "$g" check --device cuda:0 --suite standard \
    -o "$out/standard-tf32.json" --save-outputs "$out/standard-tf32.safetensors"
run compare-tf32 "$g" compare "$out/standard.json" "$out/standard-tf32.json"
run compare-repeat "$g" compare "$out/standard.json" "$out/standard-warm.json"
run full "$g" check --device cuda:0 --suite full -o "$out/full.json"
run standard-lt "$g" check --device cuda:0 --suite standard --blas lt -o "$out/standard-lt.json"
NVIDIA_TF32_OVERRIDE=1 run standard-lt-tf32-override "$g" check --device cuda:0 --suite standard \
    --blas lt -o "$out/standard-lt-tf32.json"
run compare-lt-tf32 "$g" compare "$out/standard-lt.json" "$out/standard-lt-tf32.json"
run ab-blas "$g" ab --a env=GPUVET_BLAS=classic --b env=GPUVET_BLAS=lt --suite standard \
    --device cuda:0 --only 'gemm.*'
run bench-torch bash "$src/tests/bench/bench_torch.sh" "$g"
run report-tf32 "$g" report "$out/standard.json" "$out/standard-tf32.json" -o "$out/report-tf32.html"
run snapshot "$g" snapshot -o "$out/snapshot.json"
run doctor "$g" doctor
cat "$out/summary.txt"
