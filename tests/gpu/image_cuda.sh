#!/usr/bin/env bash
# Running the suite inside a container image on a real NVIDIA GPU, through gpuvet's
# isolated root (issue 33: "where no engine exists, an image built there from its own
# PyTorch runs the suite through the isolated-root path on the real GPU"). Skipped (77)
# without an NVIDIA GPU or a Python with a CUDA build of torch ($GV_TORCH_PYTHON or the
# python3 on PATH).
#  1. image_from_python.py makes an OCI layout of that Python's environment (its
#     interpreter, standard library, packages and every library they load, but not the
#     driver's libcuda: a container gets that from the host);
#  2. snapshot --image finds that torch, with its CUDA version;
#  3. check --device torch:cuda:0 --image, standard suite: passes on the GPU, the worker
#     ran the image's interpreter (the one the image's PATH names) with the image's
#     OMP_NUM_THREADS=1, the host's libcuda bound in, and the result says which way ran;
#  4. ab of the image against the same Python run directly: the same bits, case by case.
# Logs and result files go to $GV_TEST_TMP/image_cuda (and $OUT on the device machine).
# GV_IMAGE_SUITE picks the suite of 3 and 4 (default standard).
set -uo pipefail
. "$(dirname "$0")/../cli/lib.sh"
out=$GV_TEST_TMP/image_cuda
rm -rf "$out"
mkdir -p "$out"
[[ -e /dev/nvidiactl ]] || skip "no NVIDIA GPU"
PY=${GV_TORCH_PYTHON:-$(command -v python3)}
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.version.cuda and torch.cuda.is_available() else 1)' \
    2>/dev/null; then
    skip "$PY has no CUDA build of torch that sees the GPU"
fi
[[ $(id -u) == 0 ]] || skip "an isolated root needs root here (a mount namespace)"
export XDG_CACHE_HOME=$out/cache
SUITE=${GV_IMAGE_SUITE:-standard}
fail=0
bad() { echo "FAIL: $*"; fail=1; }
timed() { # NAME CMD... : runs CMD, its output to $out/NAME.txt, says how long it took
    local name=$1 t0 rc
    shift
    t0=$(date +%s%N)
    "$@" >"$out/$name.txt" 2>&1
    rc=$?
    echo "$name: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    return $rc
}
read -r TV CV < <("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)')
echo "== 1. image of $PY (torch $TV, CUDA $CV)"
timed build "$PY" "$GV_SRC/tests/gpu/image_from_python.py" "$PY" "$out/img" cuda ||
    { cat "$out/build.txt"; fail "image_from_python.py failed"; }
cat "$out/build.txt"
REF=$out/img:cuda

echo "== 2. snapshot --image"
timed snapshot "$GPUVET" snapshot --image "$REF" -o "$out/snap.json" || bad "snapshot --image"
grep -q "\"$TV\"" "$out/snap.json" || bad "the snapshot does not name torch $TV"

echo "== 3. check --device torch:cuda:0 --image, $SUITE suite"
timed check env OMP_NUM_THREADS=3 "$GPUVET" check --device torch:cuda:0 --image "$REF" \
    --suite "$SUITE" -o "$out/image.json" || bad "check --image (see check.txt)"
tail -3 "$out/check.txt"
python3 - "$out/image.json" "$TV" "$(readlink -f "$(dirname "$PY")")" <<'PY' || bad "the result"
import json, sys
r, version = json.load(open(sys.argv[1])), sys.argv[2]
d = r["device"]["description"]
im = d["image"]
assert im["run"] == "isolated root (no container engine)", im
assert "libcuda.so.1" in im.get("host_driver", ""), im
assert d["python_root"] == im["rootfs"], d["python_root"]
assert d["torch"]["version"] == version, (d["torch"]["version"], version)
assert d["torch"]["threads"] == 1, "the worker's OMP_NUM_THREADS is not the image's 1"
print("ran on", json.dumps(d.get("torch", {}).get("device") or d.get("name")))
cases = r["cases"]
assert len(cases) >= 10, len(cases)
bad = [c["id"] for c in cases if c["verdict"] not in ("pass", "skip")]
assert not bad, bad
PY
echo "== 4. ab: the image against the same Python run directly"
timed ab "$GPUVET" ab --device torch:cuda:0 --a "image=$REF" \
    --b "python=$PY,env=OMP_NUM_THREADS=1" --suite "$SUITE" --keep "$out/ab" --json
rc=$?
[[ $rc == 0 ]] || bad "ab exit $rc (see ab.txt)"
python3 - "$out/ab.txt" "$out/ab" <<'PY' || bad "ab: the image and the direct run differ"
import json, sys
text = open(sys.argv[1]).read()  # ab.txt: its messages (stderr), then the JSON
ab = json.loads(text[text.index("\n{") + 1:] if not text.startswith("{") else text)
a = json.load(open(sys.argv[2] + "/a.json")); b = json.load(open(sys.argv[2] + "/b.json"))
assert "image" in a["device"]["description"] and "image" not in b["device"]["description"]
assert a["device"]["description"]["torch"]["version"] == b["device"]["description"]["torch"]["version"]
odd = [(c["id"], c["change"]) for c in ab["cases"] if c["change"] not in ("identical", "still_failing")]
print("ab: %d cases, %d not identical" % (len(ab["cases"]), len(odd)), odd[:5])
assert ab["cases"] and not odd and not ab["flagged"], ab["summary"]
PY
exit $fail
