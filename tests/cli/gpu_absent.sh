#!/usr/bin/env bash
# gpuvet check (and gpuvet bench) on a GPU device whose libraries cannot be had fails cleanly
# (exit 3, a message naming the library and what was tried), through the
# worker process, whatever this machine has: the system search is turned off
# (GPUVET_LIB_NO_SYSTEM=1) and --lib-path points at an empty directory, then
# at the CUDA toolkit's stub libcuda when it is installed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir dir gpu_absent
mkdir -p "$dir/empty"
fail=0
expect() { # NAME WANTED-RC PATTERN -- command...
    local name=$1 want=$2 pat=$3; shift 4
    "$@" >"$dir/out" 2>"$dir/err"
    local rc=$?
    if [[ $rc != "$want" ]] || ! grep -q -- "$pat" "$dir/err"; then
        echo "FAIL $name: rc=$rc (wanted $want), stderr:"; cat "$dir/err"; fail=1
    else
        echo "ok $name: $(head -c 300 "$dir/err")"
    fi
}
export GPUVET_LIB_NO_SYSTEM=1
expect cuda-missing 3 "libcuda not found" -- \
    "$GPUVET" check --device cuda:0 --only 'sum.f32.*' --lib-path "$dir/empty"
expect hip-missing 3 "amdhip64 not found" -- \
    "$GPUVET" check --device hip:0 --only 'sum.f32.*' --lib-path "$dir/empty"
# gpuvet bench follows the same convention (exit 3, the library named)
expect bench-cuda-missing 3 "libcuda not found" -- \
    "$GPUVET" bench --device cuda:0 --json --no-snapshot --lib-path "$dir/empty"
expect bench-hip-missing 3 "amdhip64 not found" -- \
    "$GPUVET" bench --device hip:0 --json --no-snapshot --lib-path "$dir/empty"
expect bench-hip-bad-device 2 "expected a device number" -- \
    "$GPUVET" bench --device hip:x
expect bad-device 2 "expected a device number" -- \
    "$GPUVET" check --device cuda:x --only 'sum.f32.*'
stubs=/usr/local/cuda/lib64/stubs
if [[ -e $stubs/libcuda.so ]]; then
    expect cuda-stub 3 "link-time stub" -- \
        "$GPUVET" check --device cuda:0 --only 'sum.f32.*' --lib-path "$stubs"
else
    echo "note: no $stubs/libcuda.so, stub check not run"
fi
exit $fail
