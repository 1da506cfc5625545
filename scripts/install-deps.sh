#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages gpuvet needs to build (and, with
# --test, to run its test suite). As root it runs apt-get; otherwise it uses
# sudo when that works without a password, and else prints the one command
# that would install them.
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config libjansson-dev libzstd-dev zlib1g-dev libopenblas-dev libisal2
            libsqlite3-dev python3-dev)
test_pkgs=(debootstrap shellcheck binutils file python3 python3-torch python3-torchvision dpkg-dev clang-19 lld-19 clang-tools-19
           libclang-rt-19-dev rpm groff-base
           dnf dnf-plugins-core createrepo-c
           chromium chromium-driver postgresql libpq5
           umoci skopeo podman jq zstd time
           slurmctld slurmd slurm-client munge
           openmpi-bin libopenmpi3)

want=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then
    want+=("${test_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [[ $(id -u) -eq 0 ]]; then
    echo "gpuvet: installing build dependencies: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    "${cmd[@]}" >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    echo "gpuvet: installing build dependencies: ${missing[*]}" >&2
    sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
    sudo -n env DEBIAN_FRONTEND=noninteractive "${cmd[@]}" >/dev/null
else
    echo "gpuvet: missing packages: ${missing[*]}" >&2
    echo "Install them with:" >&2
    echo "  sudo ${cmd[*]}" >&2
    exit 1
fi
