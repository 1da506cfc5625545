#!/usr/bin/env bash
# Benchmark: ELF reading and offload scanning of a ~500 MB libtorch-like
# library (the speed target: no quadratic scan, no full read where mapping
# suffices). Builds, from the make-devcode.sh fixtures:
#   big-plain.so  .hip_fatbin of 40 plain bundles, 3 x 4 MiB code objects each
#   big-zstd.so   the same bundles compressed by clang-offload-bundler --compress
#   small         the fixtures' libtorch_hip.so and libtorch_cuda.so
# and prints the median of 5 runs of each step.
# Usage: tests/bench/offload_scan.sh [BUILD_DIR]   (a Release build; default build)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
build=$(cd "$build" && pwd)
[[ -f $build/libgpuvet_core.a ]] || { echo "no $build/libgpuvet_core.a: make build first"; exit 77; }
v=${GV_CLANG_VERSION:-19}
bundler=clang-offload-bundler-$v
command -v "$bundler" >/dev/null || { echo "needs clang-offload-bundler-$v"; exit 77; }
work=${GV_BENCH_TMP:-$(mktemp -d)}
trap '[[ -z ${GV_BENCH_TMP:-} ]] && rm -rf "$work"' EXIT
dc=$work/devcode
bash "$src/tests/fixtures/make-devcode.sh" "$dc"
read -ra libs <<<"$(pkg-config --libs libzstd jansson)"
cc -O2 -I"$src/src" "$src/tests/bench/bench_offload.c" "$build/libgpuvet_core.a" \
    "${libs[@]}" -lz -lopenblas -lm -ldl -lpthread -o "$work/bench_offload"

# Code objects padded to 4 MiB with text-like, compressible bytes.
python3 - "$dc/amd" "$work" <<'PY'
import os, random, sys
amd, work = sys.argv[1], sys.argv[2]
rnd = random.Random(1)
words = [bytes(rnd.getrandbits(8) for _ in range(8)) for _ in range(512)]
pad = b"".join(rnd.choice(words) for _ in range((4 << 20) // 8))
for g in ("gfx90a", "gfx942", "gfx1100"):
    co = open(os.path.join(amd, g + ".co"), "rb").read()
    open(os.path.join(work, g + "-big.co"), "wb").write(co + pad[: (4 << 20) - len(co)])
PY
tg=host-x86_64-unknown-linux-gnu-,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-
tg+=,hipv4-amdgcn-amd-amdhsa--gfx942,hipv4-amdgcn-amd-amdhsa--gfx1100
in=(--input=/dev/null --input="$work/gfx90a-big.co" --input="$work/gfx942-big.co" --input="$work/gfx1100-big.co")
"$bundler" --type=o --targets="$tg" "${in[@]}" --output="$work/b.bin"
"$bundler" --type=o --compress --targets="$tg" "${in[@]}" --output="$work/bz.bin"
python3 - "$work" <<'PY'
import sys
w = sys.argv[1]
for src, dst in (("b.bin", "plain.sec"), ("bz.bin", "zstd.sec")):
    b = open(f"{w}/{src}", "rb").read()
    with open(f"{w}/{dst}", "wb") as f:
        for i in range(40):
            f.write(b + b"\0" * (-len(b) % 4096))
PY
for k in plain zstd; do
    objcopy --add-section .hip_fatbin="$work/$k.sec" --set-section-flags .hip_fatbin=alloc,readonly \
        --set-section-alignment .hip_fatbin=4096 "$dc/amd/base.so" "$work/big-$k.so" 2>/dev/null
    rm -f "$work/$k.sec"
done
stat -c '%n %s' "$work"/big-*.so | awk '{printf "%s %.0f MB\n", $1, $2 / 1e6}'
cat "$work"/big-*.so >/dev/null # page cache warm
files=("$work/big-plain.so" "$work/big-zstd.so" "$dc/libtorch_hip.so")
[[ -f $dc/libtorch_cuda.so ]] && files+=("$dc/libtorch_cuda.so")
"$work/bench_offload" "${files[@]}"
