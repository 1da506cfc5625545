#!/usr/bin/env bash
# gpuvet bench --device hip:0 against REAL HIP stacks with no AMD GPU: the
# sanitizer build of gpuvet itself runs inside chroots of the Debian ROCm
# fixture roots (tests/fixtures/debian-rocm.sh; /proc mounted in a private
# mount namespace, as AddressSanitizer needs it) and must
#   - load that root's libamdhip64 (trixie: HIP 5.7, libamdhip64.so.5, hipRTC
#     inside it; sid: HIP 6.4, libamdhip64.so.6 with libhiprtc.so.6), find
#     rocBLAS (librocblas.so.0 / .so.4, with rocblas_gemm_ex) and, on sid,
#     hipBLASLt (libhipblaslt.so.1), and say that every runtime entry gpuvet
#     bench needs (events, asynchronous copies, pinned host memory, ...) resolved;
#   - report the absence of a GPU plainly: "no AMD GPU: hipGetDeviceCount:
#     hipErrorNoDevice (100)", exit status 3 ("the device could not be opened",
#     as `gpuvet bench --device cuda:0` without a GPU: tests/cli/gpu_absent.sh),
#     with --json and without;
#   - with --json write no partial document (stdout empty, or valid JSON);
#   - not crash: no signal, no AddressSanitizer or UBSan report.
# The bench kernels' hipRTC compilation for gfx90a/gfx942 is tests/cli/hip_fixture.sh.
# Skips (77) when not root (chroot), or when no fixture root can be had.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_root "chroot needs root"
need_cmd python3 "python3 is needed to read the output"
need_cmd unshare "unshare is needed to mount /proc privately"
mkdir -p "$GV_TEST_TMP"

# gpuvet's own libraries that a root lacks (the sanitizer runtimes, OpenBLAS, ...);
# the root's libc, libstdc++ and the rest stay the root's.
copy_deps() { # ROOT DIR
    local root=$1 dir=$2 lib name
    while read -r lib; do
        name=${lib##*/}
        case $name in libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) continue ;; esac
        if ! ls "$root"/usr/lib/x86_64-linux-gnu/"$name" "$root"/lib/x86_64-linux-gnu/"$name" >/dev/null 2>&1; then
            cp -L "$lib" "$dir/"
        fi
    done < <(ldd "$GPUVET" | awk '$3 ~ /^\// {print $3}')
}

fail=0 ran=0
check_root() { # NAME HIP-SONAME HIP_VERSION HIPRTC-SONAME ROCBLAS-SONAME HIPBLASLT-SONAME|none
    local name=$1 hip=$2 version=$3 rtc=$4 rb=$5 lt=$6 root
    if ! root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" "$name" 2>"$GV_TEST_TMP/bfixture-$name.log"); then
        echo "FAIL: fixture $name unavailable: $(tail -1 "$GV_TEST_TMP/bfixture-$name.log")"
        fail=1
        return
    fi
    root=$(printf '%s\n' "$root" | tail -1)
    [[ -d $root/usr/lib ]] || { echo "FAIL: fixture $name: no root at '$root'"; fail=1; return; }
    ran=$((ran + 1))
    local dir; dir=$(mktemp -d "$root/tmp/gvbench.XXXXXX")
    cp "$GPUVET" "$dir/gpuvet" && copy_deps "$root" "$dir"
    local inner=/tmp/${dir##*/} json
    for json in --json ""; do
        local tag=$name${json:+-json} out=$GV_TEST_TMP/bhip-$name${json:+-json}
        # shellcheck disable=SC2016
        unshare --mount --propagation private bash -c \
            'mount -t proc proc "$1/proc" && exec /usr/sbin/chroot "$1" "${@:2}"' _ "$root" \
            env -i LD_LIBRARY_PATH="$inner" HOME=/tmp ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            "$inner/gpuvet" bench --device hip:0 --quick --no-snapshot $json >"$out.out" 2>"$out.err"
        local rc=$?
        python3 - "$out.out" "$out.err" "$rc" "$tag" "$hip" "$version" "$rtc" "$rb" "$lt" <<'PY' || fail=1
import json, re, sys
out, errf, rc, tag, hip, version, rtc, rb, lt = sys.argv[1:]
so, se, rc = open(out).read(), open(errf, errors="replace").read(), int(rc)
bad = []
if rc != 3: bad.append("exit status %d, wanted 3 (the device could not be opened)" % rc)
for s in ("AddressSanitizer", "runtime error:", "LeakSanitizer", "Segmentation"):
    if s in se: bad.append("sanitizer/crash report in stderr: %s" % s)
if so.strip():
    try: json.loads(so)
    except ValueError as e: bad.append("stdout is not valid JSON: %s: %r" % (e, so[:200]))
q = re.escape
want = [q("gpuvet: error: no AMD GPU: hipGetDeviceCount: hipErrorNoDevice (100)"),
        r"gpuvet bench's libraries: /\S*/%s\S* \(HIP_VERSION %s\): every entry gpuvet bench "
        r"needs resolved;" % (q(hip), version),
        r"hipRTC /\S*/%s\S*;" % q(rtc), r"rocBLAS /\S*/%s\S*;" % q(rb),
        r"hipBLASLt /\S*/%s" % q(lt) if lt != "none" else r"hipBLASLt not found"]
for w in want:
    if not re.search(w, se): bad.append("stderr does not match %r" % w)
if "lacks" in se: bad.append("a library lacks an entry: %s" % se)
for b in bad: print("FAIL %s: %s" % (tag, b))
if bad: print("stderr was: %s" % se[:2000])
else: print("ok %s: exit 3, stdout %s; %s" % (tag, "empty" if not so.strip() else "valid JSON", se.strip()[:700]))
sys.exit(1 if bad else 0)
PY
    done
    rm -rf "$dir"
}

check_root trixie-rocm libamdhip64.so.5 50731921 libamdhip64.so.5 librocblas.so.0 none
check_root sid-rocm libamdhip64.so.6 60443484 libhiprtc.so.6 librocblas.so.4 libhipblaslt.so.1
[[ $ran == 0 ]] && skip "no Debian ROCm fixture root could be built"
exit $fail
