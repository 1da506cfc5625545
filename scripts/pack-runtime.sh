#!/usr/bin/env bash
# Copies the non-libc shared libraries a gpuvet build needs into BUILD/rt, so
# that the build can run on a GPU machine that lacks jansson/OpenBLAS (the
# device machines have a GPU stack but not our build dependencies).
# Usage: scripts/pack-runtime.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: pack-runtime.sh BUILD_DIR}
mkdir -p "$build/rt"
ldd "$build/gpuvet" | awk '/=> \//{print $3}' | while read -r lib; do
    case $(basename "$lib") in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) continue ;;
    esac
    cp -L "$lib" "$build/rt/"
done
ls "$build/rt"
