#!/usr/bin/env bash
# Regenerates the seed corpora of fuzz_elf and fuzz_offload from real
# toolchain output (run by hand; the results are committed):
#   corpus/elf/      tiny shared objects from gcc (x86-64) and clang + ld.lld
#                    (i386, MIPS big-endian, PowerPC64 big-endian), an AMDGPU
#                    code object, and a relocatable object
#   corpus/offload/  small clang offload bundles (plain, CCOB v1/v2/v3) and
#                    .nv_fatbin sections from nvcc (one cubin, one PTX)
# Needs gcc, objcopy, clang-19/ld.lld-19/clang-offload-bundler-19, nvcc.
# shellcheck disable=SC2016 # $ORIGIN is for the linker, not the shell
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
v=${GV_CLANG_VERSION:-19}
clang=clang-$v lld=ld.lld-$v bundler=clang-offload-bundler-$v
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# ---- ELF ----
printf 'int gv_dep(void) { return 1; }\n' >dep.c
printf 'int gv_dep(void);\nint gv_f(void) { return gv_dep() + 1; }\n' >m.c
# shellcheck disable=SC2054 # linker options contain commas
small=(-Wl,-z,max-page-size=16 -Wl,-z,common-page-size=16 -Wl,-z,noseparate-code -Wl,--hash-style=gnu)
gcc -nostdlib -shared -Os -fPIC "${small[@]}" -Wl,-soname,libgvdep.so.1 dep.c -o libgvdep.so
gcc -nostdlib -shared -Os -fPIC "${small[@]}" -Wl,-soname,libamdhip64.so.6 \
    -Wl,-rpath,'$ORIGIN/../lib' -Wl,--enable-new-dtags m.c -L. -lgvdep -o x86_64-runpath.so
gcc -nostdlib -shared -Os -fPIC "${small[@]}" -Wl,-soname,libtorch_hip.so \
    -Wl,-rpath,'$ORIGIN' -Wl,--disable-new-dtags m.c -L. -lgvdep -o x86_64-rpath.so
strip -s -o x86_64-stripped.so x86_64-runpath.so
gcc -c -Os -fPIC m.c -o x86_64-rel.o
for t in i686-linux-gnu mips-linux-gnu powerpc64-linux-gnu; do
    "$clang" --target="$t" -fPIC -Os -c dep.c -o "dep-$t.o"
    "$clang" --target="$t" -fPIC -Os -c m.c -o "m-$t.o"
    "$lld" -shared -z max-page-size=16 -soname libgvdep.so.1 "dep-$t.o" -o "libgvdep-$t.so"
    "$lld" -shared -z max-page-size=16 -soname libgv.so.3 -rpath '/opt/gv:$ORIGIN' \
        "m-$t.o" "libgvdep-$t.so" -o "$t.so"
done
printf '__kernel void k(__global float *x) { x[0] = 1.0f; }\n' >k.cl
"$clang" --target=amdgcn-amd-amdhsa -mcpu=gfx908 -nogpulib -x cl -Os -c k.cl -o k.o
"$lld" -shared k.o -o gfx908.co
cp x86_64-runpath.so x86_64-rpath.so x86_64-stripped.so x86_64-rel.o i686-linux-gnu.so \
    mips-linux-gnu.so powerpc64-linux-gnu.so "$here/corpus/elf/"
cp gfx908.co "$here/corpus/elf/amdgpu-gfx908.co"

# ---- offload ----
"$clang" --target=amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib -x cl -Os -c k.cl -o k2.o
"$lld" -shared k2.o -o gfx1100.co
tg=host-x86_64-unknown-linux-gnu-,hipv4-amdgcn-amd-amdhsa--gfx908,hipv4-amdgcn-amd-amdhsa--gfx1100:xnack-
"$bundler" --type=o --targets="$tg" --input=/dev/null --input=gfx908.co \
    --input=gfx1100.co --output=bundle.bin
"$bundler" --type=o --compress --targets="$tg" --input=/dev/null --input=gfx908.co \
    --input=gfx1100.co --output=bundle-v2-zstd.bin
python3 - <<'PY'
import hashlib, struct, zlib
raw = open("bundle.bin", "rb").read()
comp = zlib.compress(raw, 9)
h = hashlib.md5(raw).digest()[:8]
open("bundle-v1-zlib.bin", "wb").write(b"CCOB" + struct.pack("<HHI", 1, 0, len(raw)) + h + comp)
open("bundle-v3-zlib.bin", "wb").write(
    b"CCOB" + struct.pack("<HHQQ", 3, 0, 32 + len(comp), len(raw)) + h + comp)
PY
printf 'extern "C" __global__ void k(float *x) { x[0] = 1.0f; }\n' >k.cu
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
"$nvcc" -shared -cudart shared -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 k.cu -o sm80.so
"$nvcc" -shared -cudart shared -Xcompiler -fPIC -gencode arch=compute_90,code=compute_90 k.cu -o ptx90.so
objcopy -O binary --only-section=.nv_fatbin sm80.so nv-sm80.bin
objcopy -O binary --only-section=.nv_fatbin ptx90.so nv-ptx90.bin
cp bundle.bin bundle-v1-zlib.bin bundle-v2-zstd.bin bundle-v3-zlib.bin nv-sm80.bin nv-ptx90.bin \
    "$here/corpus/offload/"
ls -l "$here/corpus/elf" "$here/corpus/offload"
