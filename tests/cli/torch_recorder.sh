#!/usr/bin/env bash
# The capture's recorder in C (python/native/_gpuvet_capture_record.c) against the Python one, with
# real PyTorch on the CPU: host torch 1.13 (Python 3.11), trixie's 2.6 (3.13) and sid's
# 2.14 (3.14), one build of the extension for all of them (CPython's stable ABI):
#   - every test model captured by both recorders in one process (recorder_same.py): the
#     same messages, byte for byte (tensors, op records, the header), apart from times
#     and memory figures; also with the GPU's copy-out queue forced onto the CPU (a queue
#     of 1000 bytes, emptied again and again, and one that holds the whole pass) and
#     with the copied values sent one at a time;
#   - the GPU branch, which only a GPU takes, driven without one (--gpu-branch: the models
#     on the meta device, stand-ins for the CUDA events): the same records, the same events
#     taken and recorded in the same order, the same copies before in-place writes;
#   - gpuvet torch capture runs the recorder in C by default and says so in its header,
#     the test setting GPUVET_TEST_CAPTURE_RECORDER=python runs the Python one, and the
#     two captures compare identical op for op;
#   - a recorder in C that does not load (the test setting =corrupt cuts it in half)
#     is named in the header, and the capture is made by the Python one;
#   - a worker inside a root (--python-root) loads it too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
SO=$GV_BUILD/_gpuvet_capture_record.abi3.so
[[ -f $SO ]] || fail "$SO was not built (CMake found no Python headers: make test installs python3-dev)"
torch_roots
M=$GV_SRC/tests/cli/models
gv_workdir T
export XDG_CACHE_HOME=$T/cache
MODELS=(mlp.py:make inplace.py:make kwargs.py:make noisy.py:make paths.py:make
        structs.py:make encoder.py:make resnet18.py:make scripted10.py:make fallback.py:make
        stats.py:make)
# the GPU branch on the meta device: not fallback.py, which copies a value to the CPU
# (that needs data, which a meta tensor has none of)
GPU_MODELS=()
for m in "${MODELS[@]}"; do
    [[ $m == fallback.py:make ]] || GPU_MODELS+=("$m")
done

same() { # LABEL N PYTHON-COMMAND... : recorder_same.py with N models, all must agree
    local label=$1 want=$2 out=$T/same-${1//[^a-z0-9]/_}.txt
    shift 2
    "$@" >"$out" 2>&1 || { cat "$out" >&2; fail "$label: the recorders differ (above)"; }
    local n
    n=$(grep -c ': the same [0-9]* messages\|: the same on the GPU branch' "$out" || true)
    [[ $n -eq $want ]] || { cat "$out" >&2; fail "$label: $n of $want models compared"; }
    echo "$label: $want models, the same"
}

# 1. host torch 1.13
host_models=() gpu_models=()
for m in "${MODELS[@]}"; do host_models+=("$M/$m"); done
for m in "${GPU_MODELS[@]}"; do gpu_models+=("$M/$m"); done
N=${#MODELS[@]} NG=${#GPU_MODELS[@]}
same "torch 1.13" "$N" "$HOST_PY" "$GV_SRC/tests/cli/recorder_same.py" "$SO" cpu "${host_models[@]}"
same "torch 1.13, queue 1000" "$N" env GPUVET_TEST_CAPTURE_QUEUE=1000 \
    "$HOST_PY" "$GV_SRC/tests/cli/recorder_same.py" "$SO" cpu "${host_models[@]}"
same "torch 1.13, queue 1e8, hold 1" "$N" env GPUVET_TEST_CAPTURE_QUEUE=100000000 \
    GPUVET_TEST_CAPTURE_HOLD=1 "$HOST_PY" "$GV_SRC/tests/cli/recorder_same.py" "$SO" cpu \
    "${host_models[@]}"

# the GPU branch (timing events around each op, the device queue and its copies) without
# a GPU: the models on the meta device, stand-ins for the events
same "torch 1.13, the GPU branch" "$NG" "$HOST_PY" "$GV_SRC/tests/cli/recorder_same.py" \
    --gpu-branch "$SO" "${gpu_models[@]}"

# 2. the fixture roots' PyTorch (their own Python), the source and the build bound in
in_root() { # ROOT QUEUE [--gpu-branch]
    local root=$1 queue=$2 mnt=/mnt/gpuvet-src bmnt=/mnt/gpuvet-build how="cpu"
    mkdir -p "$root$mnt" "$root$bmnt"
    local models="" list=("${MODELS[@]}") so=$bmnt/_gpuvet_capture_record.abi3.so
    [[ ${3:-} == --gpu-branch ]] && how="" so="--gpu-branch $so" list=("${GPU_MODELS[@]}")
    for m in "${list[@]}"; do models+=" $mnt/tests/cli/models/$m"; done
    unshare -m sh -c "mount --bind /proc '$root/proc' && mount --bind '$GV_SRC' '$root$mnt' &&
        mount --bind '$GV_BUILD' '$root$bmnt' &&
        chroot '$root' env GPUVET_TEST_CAPTURE_QUEUE='$queue' PYTHONWARNINGS=ignore \
            python3 $mnt/tests/cli/recorder_same.py $so $how $models"
}
for root in "$TRIXIE_TORCH" "$SID_TORCH"; do
    v=$(deb_version "$root" python3-torch)
    same "torch $v" "$N" in_root "$root" ""
    same "torch $v, queue 1000" "$N" in_root "$root" 1000
    same "torch $v, the GPU branch" "$NG" in_root "$root" "" --gpu-branch
done

# 3. gpuvet torch capture: C by default, Python on request, the two identical
capture() { # OUT [ENV...]
    local out=$1
    shift
    env "$@" "$GPUVET" torch capture --python "$HOST_PY" --model "$M/resnet18.py:make" \
        --device cpu -o "$T/$out.gvcap" --json >"$T/$out.json" 2>"$T/$out.err" ||
        { cat "$T/$out.err" >&2; fail "capture $out"; }
}
recorder_of() {
    "$HOST_PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["timing"]["recorder"])' "$1"
}
capture c
capture py GPUVET_TEST_CAPTURE_RECORDER=python
capture broken GPUVET_TEST_CAPTURE_RECORDER=corrupt
[[ $(recorder_of "$T/c.json") == native ]] || fail "the default capture ran: $(recorder_of "$T/c.json")"
[[ $(recorder_of "$T/py.json") == "python (GPUVET_TEST_CAPTURE_RECORDER=python)" ]] ||
    fail "GPUVET_TEST_CAPTURE_RECORDER=python ran: $(recorder_of "$T/py.json")"
why=$(recorder_of "$T/broken.json")
[[ $why == "python (the recorder in C did not load: "*")" ]] || fail "a broken recorder in C: '$why'"
echo "a broken recorder in C: $why"
for other in py broken; do
    "$GPUVET" compare "$T/c.gvcap" "$T/$other.gvcap" >"$T/cmp-$other.txt" 2>&1 ||
        { cat "$T/cmp-$other.txt" >&2; fail "compare C and $other"; }
    grep -q 'ops: 90 before, 90 after, 90 aligned, 90 identical' "$T/cmp-$other.txt" ||
        { cat "$T/cmp-$other.txt" >&2; fail "the captures by C and by $other differ"; }
done
# inside a root (--python-root: the worker chrooted into sid's), the recorder in C too
"$GPUVET" torch capture --python-root "$SID_TORCH" --model "$M/mlp.py:make" --device cpu \
    -o "$T/root.gvcap" --json >"$T/root.json" 2>"$T/root.err" ||
    { cat "$T/root.err" >&2; fail "capture inside sid's root"; }
[[ $(recorder_of "$T/root.json") == native ]] || fail "inside a root: $(recorder_of "$T/root.json")"
echo "PASS: torch_recorder"
