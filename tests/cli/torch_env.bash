# Sourced by the torch_*.sh tests: the real PyTorch builds they run.
#   HOST_PY         /usr/bin/python3 with Debian's python3-torch (installed by make test);
#                   GV_HOST_PY names another (the GPU machine's PyTorch, to run a CPU test there)
#   TRIXIE_TORCH    root with trixie's python3-torch 2.6 (tests/fixtures/debian-rocm.sh torch)
#   SID_TORCH       the same root upgraded to sid (python3-torch 2.14)
# torch_roots builds/finds the roots; it needs root and debootstrap on a cold cache.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# the roots' cache, fixed here: a test that points XDG_CACHE_HOME at its own directory
# for gpuvet afterwards still finds the roots the other tests built
export GV_FIXTURE_CACHE=${GV_FIXTURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuvet-fixtures}
HOST_PY=${GV_HOST_PY:-/usr/bin/python3}
host_torch() {
    "$HOST_PY" -c 'import torch' 2>/dev/null ||
        fail "$HOST_PY cannot import torch: make test installs Debian's python3-torch (scripts/install-deps.sh --test)"
}
torch_roots() {
    need_root "the PyTorch fixture roots need root to build"
    command -v debootstrap >/dev/null || fail "debootstrap is not installed (make test installs it)"
    local roots
    mapfile -t roots < <("$GV_SRC/tests/fixtures/debian-rocm.sh" torch) ||
        fail "building the PyTorch fixture roots failed (see ~/.cache/gpuvet-fixtures/build.log)"
    TRIXIE_TORCH=${roots[0]}
    SID_TORCH=${roots[1]}
    [[ -d $TRIXIE_TORCH && -d $SID_TORCH ]] || fail "debian-rocm.sh torch gave no roots"
}
# The upstream version of a Debian package in ROOT ("2.6.0" of "2.6.0+dfsg-7").
deb_version() { # ROOT PACKAGE
    dpkg-query --admindir="$1/var/lib/dpkg" -W -f='${Version}' "$2" | sed 's/[+~-].*//'
}
# Whether sid's PyTorch computes fp32 matmuls in bf16 under precision "medium" on this CPU:
# that depends on the CPU and on oneDNN's choice, not on a cpuinfo flag alone (avx512_bf16
# EPYCs were seen where it does not), so ask it. Sets MEDIUM_EFFECT (the relative change).
sid_medium_is_bf16() {
    MEDIUM_EFFECT=$(unshare -m sh -c "mount --bind /proc '$SID_TORCH/proc' && chroot '$SID_TORCH' python3 -c '
import torch
torch.manual_seed(0); a = torch.randn(64, 256); b = torch.randn(256, 64)
x = a @ b; torch.set_float32_matmul_precision(\"medium\"); y = a @ b
print(float((x - y).abs().max() / x.abs().max()))'" 2>/dev/null | tail -1)
    python3 -c "import sys; sys.exit(0 if float('${MEDIUM_EFFECT:-0}') > 1e-4 else 1)" 2>/dev/null
}
