#!/usr/bin/env bash
# Running the PyTorch worker inside a container image (issue 33, docs/image.md "Running
# inside an image"), on the torch-full fixture (tests/fixtures/images.sh: all of trixie-torch,
# Debian's PyTorch 2.6 CPU build, as one uncompressed layer; Env OMP_NUM_THREADS=1 and the
# secret HF_TOKEN=hf_notreal):
# - check --image: runs, its result names the image and the run way, the torch that ran is
#   the image's 2.6 and its threads are the image's OMP_NUM_THREADS=1 (the caller's is 3);
#   a second run reuses the cached rootfs; the secret is in no output file;
# - torch capture --image: the model sees the image's OMP_NUM_THREADS, not the caller's (the
#   input's shape says it); torch bisect --image of that capture: all identical;
# - two gpuvets unpacking one image at once: one unpacks, the other uses its rootfs;
# - the host driver binds (torch_proc.c's bind list): a host file bound onto its placeholder
#   in gpuvet's rootfs, LD_LIBRARY_PATH led by /.gpuvet/host-driver; a root without the
#   placeholder is refused; torch:cuda here (no NVIDIA driver) says no host driver was found;
# - ab --a image=REF --b python-root=<trixie-torch>: the same torch, the same output bits;
# - a bad reference fails with exit 3 naming it; a tampered image fails and leaves no rootfs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
need_root "the image fixtures are built as root and --python-root runs need a mount namespace"
for c in umoci jq tar python3; do need_cmd "$c"; done
torch_roots
gv_images torch-full tampered
[[ -n ${img[torch-full]:-} && -n ${img[tampered]:-} ]] || fail "images.sh gave no torch-full or tampered"
REF=${img[torch-full]}:2.6
gv_tmpdir T
export XDG_CACHE_HOME=$T/cache
ROOTFS=$T/cache/gpuvet/images/rootfs
M=$T/models
mkdir -p "$M"
# a model whose input's first dimension is 1 + the OMP_NUM_THREADS it sees
cat >"$M/omp.py" <<'EOF'
import os
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x * 2)


def make():
    return Model(), torch.ones(int(os.environ.get("OMP_NUM_THREADS") or 0) + 1, 3)
EOF
# a model whose input's shape is (the size of the bound host file, 1 when LD_LIBRARY_PATH
# starts with the host driver's directory else 2)
cat >"$M/hostlib.py" <<'EOF'
import os
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x + 1


def make():
    n = os.path.getsize("/.gpuvet/host-driver/libcuda.so.1")
    ld = os.environ.get("LD_LIBRARY_PATH", "").startswith("/.gpuvet/host-driver")
    return Model(), torch.ones(n, 1 if ld else 2)
EOF
first_shape() { # FILE.gvcap : the shape of the capture's first tensor (its input)
    python3 - "$1" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
off, n = struct.unpack("<QQ", b[-24:-8])
print(json.loads(b[off:off + n])["tensors"][0]["shape"])
PY
}

# 1. check --image, twice: unpacked, then reused
for run in 1 2; do
    expect_rc 0,1 env OMP_NUM_THREADS=3 "$GPUVET" check --device torch:cpu --image "$REF" \
        --suite quick -o "$T/r$run.json"
    python3 - "$T/r$run.json" "$REF" "$run" "$(deb_version "$TRIXIE_TORCH" python3-torch)" \
        "${img[torch-full]}" <<'PY'
import json, sys
r, ref, run, version, layout = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
d = r["device"]["description"]
im = d["image"]
index = json.load(open(layout + "/index.json"))
manifest = [m for m in index["manifests"]
            if m["annotations"]["org.opencontainers.image.ref.name"] == "2.6"][0]["digest"]
config = json.load(open(layout + "/blobs/sha256/" + manifest[7:]))["config"]["digest"]
assert im["reference"] == ref and im["manifest_digest"] == manifest, im
assert im["config_digest"] == config and im["run"] == "isolated root (no container engine)", im
assert im["rootfs"].endswith("/gpuvet/images/rootfs/" + manifest[7:]), im
assert im["reused"] is (run == "2"), (run, im["reused"])
assert d["python_root"] == im["rootfs"], d["python_root"]
assert d["torch"]["version"].startswith(version), (d["torch"]["version"], version)
assert d["torch"]["threads"] == 1, "the worker's OMP_NUM_THREADS is not the image's 1"
assert len(r["cases"]) > 20 and not [c for c in r["cases"] if c["verdict"] == "error"]
# the embedded snapshot is of the image's tree, not of this machine
s = r["snapshot"]
assert s["root"] == ref and s["live"] is False, (s.get("root"), s.get("live"))
assert version in json.dumps(s.get("python")), "the image's torch is not in the embedded snapshot"
PY
    grep -q "reusing its unpacked rootfs" "$GV_ERR" || [[ $run == 1 ]] ||
        fail "the second run does not say it reused the rootfs"
done
key=$(jq -r .device.description.image.rootfs "$T/r1.json")
[[ -f $key.complete && -f $key.env && -d $key/usr/lib/python3/dist-packages/torch ]] ||
    fail "no complete rootfs at $key"
[[ $(find "$T/cache/gpuvet/images" -mindepth 1 -maxdepth 1 | wc -l) == 1 ]] ||
    fail "staging directories left beside rootfs/: $(ls "$T/cache/gpuvet/images")"

# 2. capture and bisect inside the image: the model sees the image's environment
expect_rc 0 env OMP_NUM_THREADS=3 "$GPUVET" torch capture --model "$M/omp.py:make" --device cpu \
    --image "$REF" -o "$T/omp.gvcap"
[[ $(first_shape "$T/omp.gvcap") == "[2, 3]" ]] ||
    fail "the model saw OMP_NUM_THREADS=$(( $(first_shape "$T/omp.gvcap" | tr -d '[' | cut -d, -f1) - 1 )), not the image's 1"
expect_rc 0 "$GPUVET" torch capture --model "$GV_SRC/tests/cli/models/mlp.py:make" --device cpu \
    --image "$REF" -o "$T/mlp.gvcap"
expect_rc 0 "$GPUVET" torch bisect "$T/mlp.gvcap" --device cpu --image "$REF" --json -o "$T/bisect.json"
python3 - "$T/bisect.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["summary"]
assert not d["flagged"] and s["identical"] > 3 and s["identical"] == sum(s.values()), s
PY

# 3. two gpuvets unpack one image at once (a fresh cache): one unpacks, the other waits for
# it and uses its rootfs; no second copy, no staging directory left
C2=$T/cache2
for k in 1 2; do
    XDG_CACHE_HOME=$C2 "$GPUVET" torch capture --model "$M/omp.py:make" --device cpu \
        --image "$REF" -o "$T/par$k.gvcap" >"$T/par$k.out" 2>"$T/par$k.err" &
    eval "pid$k=$!"
done
wait "$pid1" || fail "parallel capture 1: $(cat "$T/par1.err")"
wait "$pid2" || fail "parallel capture 2: $(cat "$T/par2.err")"
[[ $(cat "$T/par1.err" "$T/par2.err" | grep -c "reusing its unpacked rootfs") == 1 &&
   $(cat "$T/par1.err" "$T/par2.err" | grep -c "unpacked into") == 1 ]] ||
    fail "two parallel runs: not one unpack and one reuse: $(cat "$T/par1.err" "$T/par2.err")"
[[ $(find "$C2/gpuvet/images" -mindepth 1 -maxdepth 1 | wc -l) == 1 &&
   $(find "$C2/gpuvet/images/rootfs" -mindepth 1 -maxdepth 1 -type d | wc -l) == 1 ]] ||
    fail "two parallel runs left $(find "$C2/gpuvet/images" -mindepth 1 -maxdepth 2 | grep -v '\.lock$')"
rm -rf "$C2"

# 4. the host driver's bind list, with a stand-in host file (no NVIDIA driver here)
printf 'not a driver' >"$T/libcuda.so.1" # 12 bytes
expect_rc 0 env GPUVET_PYTHON_HOST_DRIVER="$T/libcuda.so.1" "$GPUVET" torch capture \
    --model "$M/hostlib.py:make" --device cpu --python-root "$key" -o "$T/host.gvcap"
[[ $(first_shape "$T/host.gvcap") == "[12, 1]" ]] ||
    fail "the host file was not bound onto its placeholder, or LD_LIBRARY_PATH does not lead with it: shape $(first_shape "$T/host.gvcap")"
[[ ! -s $key/.gpuvet/host-driver/libcuda.so.1 ]] || fail "the bind wrote into the cached rootfs"
expect_rc 3 env GPUVET_PYTHON_HOST_DRIVER="$T/libcuda.so.1" "$GPUVET" torch capture \
    --model "$M/hostlib.py:make" --device cpu --python-root "$TRIXIE_TORCH" -o "$T/no.gvcap"
grep -q "no placeholder" "$GV_ERR" || fail "a root without placeholders: $(cat "$GV_ERR")"
expect_rc 3 "$GPUVET" check --device torch:cuda:0 --image "$REF" --only 'gemm.f32.*'
grep -q "no host driver found" "$GV_ERR" || fail "torch:cuda without a host driver: no note"

# 5. ab: the image against the same root as --python-root
expect_rc 0 env OMP_NUM_THREADS=1 "$GPUVET" ab --a "image=$REF" --b "python-root=$TRIXIE_TORCH" \
    --keep "$T/ab" --json
cp "$GV_OUT" "$T/ab.json"
python3 - "$T/ab.json" "$T/ab" <<'PY'
import json, sys
ab = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2] + "/a.json")); b = json.load(open(sys.argv[2] + "/b.json"))
assert a["device"]["description"]["image"]["reused"] is True
assert "image" not in b["device"]["description"]
assert a["device"]["description"]["torch"]["version"] == b["device"]["description"]["torch"]["version"]
# the same torch computes the same bits: every case identical, or failing the same way on both
assert not ab["flagged"] and ab["cases"], ab["summary"]
assert all(c["change"] in ("identical", "still_failing") for c in ab["cases"]), \
    [(c["id"], c["change"]) for c in ab["cases"] if c["change"] not in ("identical", "still_failing")]
da = {c["id"]: c["output_digest"] for c in a["cases"]}
db = {c["id"]: c["output_digest"] for c in b["cases"]}
assert da == db and all(da.values()), [k for k in da if da[k] != db.get(k)]
PY

# 6. the secret of the image's Env reaches no output
if grep -rl hf_notreal "$T" --exclude-dir=cache --exclude-dir=models; then
    fail "the image's HF_TOKEN reached an output file"
fi

# 7. a bad reference; a tampered image leaves no rootfs
expect_rc 3 "$GPUVET" check --device torch:cpu --image "$T/nothing-here:1" -o "$T/bad.json"
grep -q "nothing-here" "$GV_ERR" || fail "the bad reference is not named: $(cat "$GV_ERR")"
[[ ! -e $T/bad.json ]] || fail "a bad reference wrote a result"
C3=$T/cache3
expect_rc 3 env XDG_CACHE_HOME="$C3" "$GPUVET" check --device torch:cpu \
    --image "${img[tampered]}:6.4" -o "$T/tampered.json"
grep -q "layer 1" "$GV_ERR" || fail "the tampered layer is not named: $(cat "$GV_ERR")"
left=$(find "$C3/gpuvet/images" -mindepth 1 -not -name .lock -not -path "$C3/gpuvet/images/rootfs")
[[ -z $left && ! -e $T/tampered.json ]] || fail "a tampered image left: $left"
echo "image_run: check, capture, bisect and ab ran inside $REF"
