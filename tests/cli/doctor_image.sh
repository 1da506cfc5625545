#!/usr/bin/env bash
# gpuvet doctor on container images (issue 33, docs/doctor.md "image-*" rules):
#   - --image REF that cannot be read: exit 3, the message names REF;
#   - --host without an image: exit 2; --host on a snapshot with no image section: exit 3;
#   - image rules from REAL snapshots of the Debian roots (debian-rocm.sh) with an `image`
#     section added by jq (test input): image-env (HSA_OVERRIDE_GFX_VERSION, TF32
#     switches, an LD_LIBRARY_PATH directory the image lacks), image-tag (a tag naming
#     ROCm 6.4 on the ROCm 5.7 root, a label naming a torch the root does not have);
#   - host rules against host snapshots edited with jq: an amdgpu-dkms outside the
#     image's window (image-kmd), a gfx90a host for an image whose torch has only gfx942
#     (image-gpu-targets), an NVIDIA driver too old for the image's CUDA
#     (image-cuda-driver, a warning with the forward-compatibility package), the device
#     flags with the host's numeric gids (image-devices), a host without /dev/kfd.
# Each rule also has a control input that must not fire it.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd jq "jq builds the test documents"
need_cmd python3 "python3 reads the JSON output"
gv_tmpdir tmp doctor-image
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

rocm_root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-rocm) ||
    skip "the Debian ROCm fixture root cannot be built here"
torch_root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-torch) ||
    skip "the Debian torch fixture root cannot be built here"
"$GPUVET" snapshot --no-hash --root "$rocm_root" -o "$tmp/rocm.json" >/dev/null 2>&1 ||
    fail "snapshot --root $rocm_root"
"$GPUVET" snapshot --no-hash --root "$torch_root" -o "$tmp/torch.json" >/dev/null 2>&1 ||
    fail "snapshot --root $torch_root"
# the real roots: ROCm 5.7.1 (distro layout), a CPU torch
[[ $(jq -r '.stacks.installs[] | select(.kind == "rocm") | .version' "$tmp/rocm.json") == 5.7.1 ]] ||
    fail "the trixie-rocm root no longer holds ROCm 5.7.1: update this test"

digest="sha256:$(printf 'ab%.0s' {1..32})"

# ---- an image that cannot be read (today's stub, later a missing file): exit 3, names REF
ref="$tmp/no-such-image.tar:6.4"
expect_rc 3 "$GPUVET" doctor --image "$ref"
grep -qF -- "$ref" "$GV_ERR" || bad "--image error does not name the reference: $(cat "$GV_ERR")"
expect_rc 3 "$GPUVET" doctor --image "$ref" --host-snapshot "$tmp/rocm.json"
grep -qF -- "$ref" "$GV_ERR" || bad "--image --host error does not name the reference"

# ---- command line
expect_rc 2 "$GPUVET" doctor --host
expect_rc 2 "$GPUVET" doctor --image x --root /
expect_rc 3 "$GPUVET" doctor --snapshot "$tmp/rocm.json" --host-snapshot "$tmp/rocm.json"
grep -q "no image section" "$GV_ERR" || bad "--host on a host snapshot: $(cat "$GV_ERR")"

# ---- the image documents (test input: real snapshots plus an image section)
image_section() { # TAG ENV-JSON
    jq -n --arg tag "$1" --arg d "$digest" --argjson env "$2" '{collected: true,
        source: "oci-archive /srv/rocm.tar", reference: "/srv/rocm.tar", form: "oci-archive",
        tags: [$tag], manifest_digest: $d, config_digest: $d,
        labels: {"org.opencontainers.image.title": "rocm"}, env: $env, layers: []}'
}
env_bad='[{"name": "PATH", "value": "/usr/bin:/bin"},
          {"name": "HSA_OVERRIDE_GFX_VERSION", "value": "11.0.0"},
          {"name": "NVIDIA_TF32_OVERRIDE", "value": "0"},
          {"name": "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "value": "1"},
          {"name": "LD_LIBRARY_PATH", "value": "/opt/rocm-6.4.0/lib:/usr/lib/x86_64-linux-gnu"},
          {"name": "HSA_OVERRIDE_GFX_VERSION_1\u0027$(touch /tmp/gv-pwned)", "value": "9.0.0"},
          {"name": "HF_TOKEN", "redacted": true}]'
env_ok='[{"name": "PATH", "value": "/usr/bin:/bin"},
         {"name": "LD_LIBRARY_PATH", "value": "/usr/lib/x86_64-linux-gnu"}]'
jq --argjson img "$(image_section localhost/rocm:6.4 "$env_bad")" '.image = $img' \
    "$tmp/rocm.json" >"$tmp/img-bad.json"
jq --argjson img "$(image_section localhost/rocm:5.7 "$env_ok")" '.image = $img' \
    "$tmp/rocm.json" >"$tmp/img-ok.json"
# the ROCm image with a ROCm torch compiled for gfx942 only
jq '.python.environments += [{prefix: "/opt/venv", kind: "venv",
        torch: {version: "2.5.1+rocm6.2", build: "rocm", hip: "6.2.41133-dd7f95766",
                cuda: null, bundled_libraries: [{name: "hip-runtime", file: "libamdhip64.so",
                                                 soname: "libamdhip64.so.6"}],
                gpu_targets: {collected: true, source: "test", targets: ["gfx942"]}}}]' \
    "$tmp/img-ok.json" >"$tmp/img-torch.json"
# a CUDA image: the real torch root with its torch made a CUDA 12.4 build
jq --argjson img "$(image_section nvcr.io/nvidia/pytorch:24.05-py3 "$env_ok")" \
    '.image = $img | .python.environments[0].torch.cuda = "12.4" |
     .python.environments[0].torch.build = "cuda"' "$tmp/torch.json" >"$tmp/img-cuda.json"
jq '.packages.items += [{name: "cuda-compat-12-4", version: "550.54.15-1", state: "installed"}]' \
    "$tmp/img-cuda.json" >"$tmp/img-cuda-compat.json"

# ---- hosts (real snapshots, edited)
kfd='[{"path": "/dev/kfd", "type": "char", "mode": "0660", "group": "render"}]'
amd_host() { # OUT DKMS-VERSION GFX [DEVICES-JSON]
    jq --arg dkms "$2" --arg gfx "$3" --argjson devs "${4:-$kfd}" '
        .drivers.dkms = {"amdgpu-dkms": {version: $dkms, state: "installed", source: "dpkg"}} |
        .gpus = {collected: true, source: "test", devices: [{pci_address: "0000:03:00.0",
            vendor: "amd", vendor_id: "0x1002", driver: "amdgpu",
            kfd: {node: 1, gfx_target: $gfx, render_node: "/dev/dri/renderD128"}}]} |
        .permissions.render_group = {exists: true, gid: 109} |
        .permissions.video_group = {exists: true, gid: 44} |
        .permissions.devices = $devs | del(.permissions.not_collected)' "$tmp/rocm.json" >"$1"
}
amd_host "$tmp/host-new.json" "1:6.16.6.30100000-2212064.22.04" gfx90a   # 30.10: ROCm 6.2-7.0
amd_host "$tmp/host-old.json" "1:6.3.6.60100-1756574.22.04" gfx942       # 6.1: ROCm 5.7-6.4
amd_host "$tmp/host-nokfd.json" "1:6.3.6.60100-1756574.22.04" gfx942 '[]'
nv_host() { # OUT DRIVER
    jq --arg v "$2" '.drivers.modules = {nvidia: {loaded: true, version: $v}} |
        .gpus = {collected: true, source: "test", devices: [{pci_address: "0000:41:00.0",
            vendor: "nvidia", vendor_id: "0x10de", driver: "nvidia"}]}' "$tmp/torch.json" >"$1"
}
nv_host "$tmp/host-nv-old.json" 470.57.02
nv_host "$tmp/host-nv-new.json" 550.54.15

doctor() { # NAME WANT-RC ARGS... : $tmp/out-NAME.json
    local name=$1 want=$2; shift 2
    "$GPUVET" doctor --json "$@" >"$tmp/out-$name.json" 2>"$tmp/out-$name.err"
    local rc=$?
    [[ $rc == "$want" ]] || bad "$name: doctor $* exited $rc, want $want: $(head -3 "$tmp/out-$name.err")"
}
# ids NAME : "rule:severity" of every image-* finding, sorted, one per line
ids() {
    jq -r '.findings[] | select(.rule | startswith("image-")) | "\(.rule):\(.severity)"' \
        "$tmp/out-$1.json" | sort
}
has() { # NAME RULE:SEVERITY
    ids "$1" | grep -qx -- "$2" || bad "$1: no $2 finding; got: $(ids "$1" | tr '\n' ' ')"
}
hasnt() { # NAME RULE
    ! ids "$1" | grep -q -- "^$2:" || bad "$1: unexpected $2: $(ids "$1" | tr '\n' ' ')"
}
# jqt NAME FILTER : the filter over the JSON document must print "true"
jqt() {
    [[ $(jq -r "$2" "$tmp/out-$1.json") == true ]] || bad "$1: not true: $2"
}

# ---- image rules, no host
doctor bad 0 --snapshot "$tmp/img-bad.json"
has bad image-tag:warning
jqt bad '[.findings[] | select(.rule == "image-tag") | .evidence] | .[0] |
         (any(.path == "image.tags[0]" and .value == "localhost/rocm:6.4") and
          any(.path == "stacks.installs[0].version" and .value == "5.7.1"))'
jqt bad "[.findings[] | select(.rule == \"image-tag\") | .fix[]] |
         any(. == \"use the image by its digest, not its tag: 'localhost/rocm@$digest'\")"
for var in HSA_OVERRIDE_GFX_VERSION NVIDIA_TF32_OVERRIDE TORCH_ALLOW_TF32_CUBLAS_OVERRIDE; do
    jqt bad "[.findings[] | select(.rule == \"image-env\" and .severity == \"warning\") |
              .evidence[0].value.name] | index(\"$var\") != null"
done
jqt bad '[.findings[] | select(.rule == "image-env" and .severity == "info")] |
         length == 1 and (.[0].title | contains("/opt/rocm-6.4.0/lib"))'
jqt bad '[.findings[] | select(.rule == "image-env") | .evidence[0].value.name] |
         index("HF_TOKEN") == null and index("PATH") == null'
# a hostile variable name is reported, and never printed into a command
jqt bad '[.findings[] | select(.rule == "image-env") | .evidence[0].value.name] |
         any(startswith("HSA_OVERRIDE_GFX_VERSION_1"))'
jqt bad '[.findings[] | .fix[] | select(contains("touch"))] == []'
for r in image-kmd image-cuda-driver image-gpu-targets image-devices; do hasnt bad $r; done
jqt bad '.host_snapshot == null'
doctor ok 0 --snapshot "$tmp/img-ok.json"
hasnt ok image-tag
hasnt ok image-env
# the same document without an image section: no image rule speaks
jq 'del(.image)' "$tmp/img-bad.json" >"$tmp/noimg.json"
doctor noimg 0 --snapshot "$tmp/noimg.json"
[[ -z $(ids noimg) ]] || bad "image rules on a snapshot with no image: $(ids noimg)"

# ---- the image's ROCm 5.7 on an amdgpu 30.10 host (window 6.2-7.0)
doctor kmd 0 --snapshot "$tmp/img-ok.json" --host-snapshot "$tmp/host-new.json"
has kmd image-kmd:warning
jqt kmd '[.findings[] | select(.rule == "image-kmd") | .evidence[] | .path] |
         index("host:drivers.dkms.amdgpu-dkms.version") != null'
jqt kmd ".host_snapshot.source == \"$tmp/host-new.json\""
doctor kmd-ok 0 --snapshot "$tmp/img-ok.json" --host-snapshot "$tmp/host-old.json"
hasnt kmd-ok image-kmd

# ---- device flags, with the host's gids; a host without /dev/kfd
has kmd-ok image-devices:info
jqt kmd-ok "[.findings[] | select(.rule == \"image-devices\") | .fix[]] ==
    [\"docker run --device=/dev/kfd --device=/dev/dri --group-add 44 --group-add 109 'localhost/rocm@$digest'\",
     \"podman run --device=/dev/kfd --device=/dev/dri --group-add 44 --group-add 109 'localhost/rocm@$digest'\"]"
doctor nokfd 1 --snapshot "$tmp/img-ok.json" --host-snapshot "$tmp/host-nokfd.json"
has nokfd image-devices:error

# ---- torch built for gfx942 only, host gfx90a
doctor targets 1 --snapshot "$tmp/img-torch.json" --host-snapshot "$tmp/host-new.json"
has targets image-gpu-targets:error
jqt targets '[.findings[] | select(.rule == "image-gpu-targets") | .evidence[] | .value] |
             index("gfx90a") != null and index("gfx942") != null'
doctor targets-ok 0 --snapshot "$tmp/img-torch.json" --host-snapshot "$tmp/host-old.json"
hasnt targets-ok image-gpu-targets

# ---- the image's CUDA 12.4 on NVIDIA drivers 470 and 550; the forward-compatibility package
doctor cuda 1 --snapshot "$tmp/img-cuda.json" --host-snapshot "$tmp/host-nv-old.json"
has cuda image-cuda-driver:error
jqt cuda '[.findings[] | select(.rule == "image-cuda-driver") | .evidence[] | .value] |
          index("12.4") != null and index("470.57.02") != null'
has cuda image-devices:info
jqt cuda "[.findings[] | select(.rule == \"image-devices\") | .fix[0]] ==
          [\"docker run --gpus all 'nvcr.io/nvidia/pytorch@$digest'\"]"
hasnt cuda image-tag # NGC's 24.05 is a month, not a PyTorch version
doctor cuda-compat 0 --snapshot "$tmp/img-cuda-compat.json" --host-snapshot "$tmp/host-nv-old.json"
has cuda-compat image-cuda-driver:warning
doctor cuda-ok 0 --snapshot "$tmp/img-cuda.json" --host-snapshot "$tmp/host-nv-new.json"
hasnt cuda-ok image-cuda-driver

# ---- the terminal report names the host
"$GPUVET" doctor --snapshot "$tmp/img-ok.json" --host-snapshot "$tmp/host-new.json" >"$tmp/text" 2>&1
grep -qF "against host $tmp/host-new.json" "$tmp/text" || bad "terminal report does not name the host"
grep -qF "[image-kmd]" "$tmp/text" || bad "terminal report lacks image-kmd"

[[ $fails == 0 ]] || { echo "$fails failure(s)"; exit 1; }
echo "doctor_image: ok"
