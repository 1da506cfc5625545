#!/usr/bin/env bash
# All-reduce bus bandwidth: nccl-tests built from source against the system's
# NCCL, and gpuvet's collective benchmark (bench_coll, gv_coll_bench), same
# sizes, same GPUs, same run; prints both and their ratio per size.
# Usage: tests/bench/nccl_tests_ref.sh NCCL_TESTS_SRC BUILD_DIR [NGPUS]
#   NCCL_TESTS_SRC  a nccl-tests source tree (github NVIDIA/nccl-tests)
#   BUILD_DIR       a gpuvet build with BUILD_TESTING=ON (holds tests/bench_coll;
#                   BUILD_DIR/rt is put on LD_LIBRARY_PATH when present)
#   NGPUS           default: every GPU nvidia-smi lists
# Environment: CUDA_HOME (/usr/local/cuda), NCCL_HOME (/usr: nccl.h in
#   /usr/include, libnccl.so.2 where the linker finds it), NVCC_GENCODE (sm_90),
#   OUT (./nccl-ref): logs and JSON; MIN/MAX/FACTOR (8, 1G, 2), ITERS (20).
# NCCL_NVLS_ENABLE=0 for both (the GPU machine's rule; gpuvet sets it too).
set -euo pipefail
src=$(cd "${1:?usage: nccl_tests_ref.sh NCCL_TESTS_SRC BUILD_DIR [NGPUS]}" && pwd)
build=$(cd "${2:?usage: nccl_tests_ref.sh NCCL_TESTS_SRC BUILD_DIR [NGPUS]}" && pwd)
ngpus=${3:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 1)}
out=$(mkdir -p "${OUT:-$PWD/nccl-ref}" && cd "${OUT:-$PWD/nccl-ref}" && pwd)
: "${CUDA_HOME:=/usr/local/cuda}" "${NCCL_HOME:=/usr}" "${MIN:=8}" "${MAX:=1G}" "${FACTOR:=2}"
: "${ITERS:=20}" "${NVCC_GENCODE:=-gencode=arch=compute_90,code=sm_90}"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
[[ -d $build/rt ]] && export LD_LIBRARY_PATH=$build/rt${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bench=$build/tests/bench_coll
[[ -x $bench ]] || { echo "no $bench (build with -DBUILD_TESTING=ON)"; exit 2; }

# nccl-tests: only all_reduce_perf, out of tree, for this GPU's architecture
nt=$out/nccl-tests-build
if [[ ! -x $nt/all_reduce_perf ]]; then
    echo "== building nccl-tests' all_reduce_perf ($(git -C "$src" log -1 --format=%h 2>/dev/null || echo '?'))"
    make -C "$src/src" MPI=0 CUDA_HOME="$CUDA_HOME" NCCL_HOME="$NCCL_HOME" BUILDDIR="$nt" \
        NVCC_GENCODE="$NVCC_GENCODE" "$nt/all_reduce_perf" >"$out/nccl-tests-build.log" 2>&1 ||
        { tail -20 "$out/nccl-tests-build.log"; exit 1; }
fi

echo "== nccl-tests all_reduce_perf -b $MIN -e $MAX -f $FACTOR -g $ngpus -n $ITERS"
"$nt/all_reduce_perf" -b "$MIN" -e "$MAX" -f "$FACTOR" -g "$ngpus" -n "$ITERS" \
    >"$out/nccl-tests.txt" 2>&1 || { cat "$out/nccl-tests.txt"; exit 1; }
grep -E '^#|Avg bus' "$out/nccl-tests.txt" | head -40

echo "== gpuvet bench_coll -o all_reduce -b $MIN -e $MAX -f $FACTOR -g $ngpus -n $ITERS"
rc=0
"$bench" -o all_reduce -b "$MIN" -e "$MAX" -f "$FACTOR" -g "$ngpus" -n "$ITERS" \
    >"$out/gpuvet.json" 2>"$out/gpuvet.err" || rc=$?
cat "$out/gpuvet.err"

python3 - "$out/nccl-tests.txt" "$out/gpuvet.json" <<'PY'
import json, sys
ref = {}
for line in open(sys.argv[1]):
    f = line.split()
    # size count type redop root | out-of-place: time algbw busbw #wrong | in-place ...
    if len(f) >= 9 and f[0].isdigit() and f[2] == "float":
        ref[int(f[0])] = {"time": float(f[5]), "algbw": float(f[6]), "busbw": float(f[7]),
                          "wrong": f[8]}
doc = json.load(open(sys.argv[2]))
info = doc.get("info") or {}
n = info.get("nranks") or 0
print("gpuvet: NCCL %s (%s), %s GPUs, env %s" % (info.get("version"),
      (info.get("library") or {}).get("path"), n, info.get("env")))
if doc.get("error"):
    print("gpuvet error:", doc["error"])
# one GPU: busbw is 0 by the formula for both, so algbw is compared
key = "busbw" if n > 1 else "algbw"
print("compared: out-of-place %s (GB/s); nccl-tests times with the host clock over its "
      "iterations, gpuvet with events per iteration (median)" % key)
print("gv_batch: gpuvet's first-start-to-last-end time over the iterations (nccl-tests' way)")
print("%12s %11s %11s %11s %11s %8s %11s %8s %9s %s" % ("bytes", "nt_time_us", "gv_time_us",
      "nt_" + key, "gv_" + key, "gv/nt", "gv_batch", "batch/nt", "gv_spread",
      "gv_status/nt_wrong"))
ratios = []
for r in doc.get("results", []):
    p = r["params"]
    b = p["bytes"]
    nt = ref.get(b)
    gv = p.get(key + "_gbps") if r["status"] == "ok" else None
    ratio = gv / nt[key] if nt and gv is not None and nt[key] > 0 else None
    if ratio is not None and b >= (1 << 20):
        ratios.append((b, ratio))
    gb = p.get("batch_" + key + "_gbps") if r["status"] == "ok" else None
    bratio = gb / nt[key] if nt and gb is not None and nt[key] > 0 else None
    print("%12d %11s %11s %11s %11s %8s %11s %8s %9s %s/%s" % (
        b, nt["time"] if nt else "-", "%.2f" % p["time_us"] if "time_us" in p else "-",
        nt[key] if nt else "-", "%.2f" % gv if gv is not None else "-",
        "%.3f" % ratio if ratio else "-", "%.2f" % gb if gb is not None else "-",
        "%.3f" % bratio if bratio else "-", "%.3f" % r["spread"] if "spread" in r else "-",
        r["status"], nt["wrong"] if nt else "-"))
if ratios:
    b, last = ratios[-1]
    print("largest size %d B: gpuvet/nccl-tests %s = %.3f (target >= 0.95)" % (b, key, last))
    print("sizes >= 1 MiB: min ratio %.3f, median %.3f" % (min(x for _, x in ratios),
          sorted(x for _, x in ratios)[len(ratios) // 2]))
PY
exit $rc
