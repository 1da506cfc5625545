#!/usr/bin/env bash
# The HIP backend's start-up against REAL HIP runtimes, with no AMD GPU: inside
# chroots of the Debian ROCm fixture roots (tests/fixtures/debian-rocm.sh), a
# small program built from gpuvet's own loader, hipRTC driver and kernels
# (tests/fixtures/hip_probe_main.c) must
#   - load that root's libamdhip64 and report its version from hipRuntimeGetVersion
#     (trixie: HIP 5.7 = 50731921, sid: HIP 6.4 = 60443484),
#   - report "no AMD GPU" cleanly (hipGetDeviceCount: hipErrorNoDevice, 100),
#   - find hipRTC (5.7: inside libamdhip64.so.5; 6.4: libhiprtc.so.6),
#   - compile every embedded kernel for gfx90a, gfx942 and gfx1100 into an ELF
#     code object that names every entry point (gpuvet bench's gv_bench_* among
#     them, checked to be in the list),
#   - resolve rocBLAS's symbol list against the root's real librocblas and read
#     its version (hipBLASLt is reported where the root has it),
#   - MIOpen (in a child process of the probe, so an abort cannot take it down):
#     sid (libMIOpen.so.1, MIOpen 3.4.0): every symbol of src/dev/syms/syms_miopen.h
#     resolves; the miopenDataType_t values gpuvet declares give the element sizes
#     MIOpen itself computes (miopenGetTensorNumBytes: half 2, float 4, int32 4,
#     int8 1, bfloat16 2, double 8); the descriptors gpuvet builds for a conv2d
#     case give, by miopenGetConvolutionForwardOutputDim, the NKPQ shape of
#     src/num/types.h (computed here, independently); miopenCreate without a GPU
#     returns a failure status instead of crashing; the backend's route for
#     conv2d is "miopen 3.4.0".
#     trixie (no MIOpen): MIOpen is reported not found, the conv2d route is the
#     kernel with that reason, and the backend's MIOpen entry declines
#     (GV_E_UNSUPPORTED = -10) so gv_gpu_run falls back to the kernel.
#   - hipBLASLt (child process too): sid (libhipblaslt.so.1, hipBLASLt 7.1.1):
#     every symbol of src/dev/syms/syms_hipblaslt.h resolves; the attribute ids gpuvet
#     declares mean what it thinks, read back through the library (batch count 3
#     and stride 123 set and read through gpuvet's ids; TRANSA set to gpuvet's
#     HIPBLAS_OP_T reads back; TRANSB keeps the library's default, which must be
#     gpuvet's HIPBLAS_OP_N = 111; the workspace limit reads back); the matmul
#     descriptors for fp32, TF32, fp64 and fp16/bf16 with fp32 accumulation are
#     accepted, and so are gv_lt_gemm's descriptors (layouts, batches, strides) of
#     every GEMM case of the full suite but the fp16-accumulation ones; hipblasLtCreate without a GPU does not hand out a handle (7.1.1
#     ends the process: why the backend creates it only once a device is open).
#     The default GEMM route is hipBLASLt on gfx90a and gfx942 and rocBLAS on
#     gfx1100 (PyTorch's rule); trixie (no hipBLASLt): rocBLAS everywhere, saying
#     hipBLASLt is not loaded.
# Skips (77) when not root (chroot) or when no fixture root can be had.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
: "${GV_BUILD:?}"
need_root "chroot needs root"
need_cmd python3 "python3 is needed to read the report"
CC=${CC:-cc}
need_cmd "$CC" "no C compiler to build the probe"
embed=$GV_BUILD/generated/kernels_embed.c
[[ -f $embed ]] || { echo "FAIL: $embed missing"; exit 1; }

# gpuvet bench's kernels (spin gate, operand fill, STREAM, iota, empty) are among the
# entries every compile below must contain (src/dev/rtc.c's list)
for k in spin fill copy scale add triad read iota empty; do
    grep -q "\"gv_bench_$k\"" "$GV_SRC/src/dev/rtc.c" ||
        { echo "FAIL: gv_bench_$k is not in gv_kernel_entries (src/dev/rtc.c)"; exit 1; }
done

mkdir -p "$GV_TEST_TMP"
probe=$GV_TEST_TMP/hipprobe.$$
at_exit 'rm -f "$probe"'
# Plain build: the sanitizer runtimes are not inside the roots.
$CC -O1 -std=gnu11 -D_GNU_SOURCE -DGPUVET_VERSION='"test"' -I"$GV_SRC/src" -o "$probe" \
    "$GV_SRC/tests/fixtures/hip_probe_main.c" "$GV_SRC"/src/dev/{vendor,rtc,gpu_run,lt}.c "$GV_SRC"/src/dev/hip/hip.c "$GV_SRC"/src/kb/gpu_uuid.c \
    "$GV_SRC"/src/base/{err,globs,json,fs}.c "$GV_SRC"/src/num/{types,catalog,op}.c "$embed" -ljansson -ldl -lm ||
    { echo "FAIL: building the probe"; exit 1; }
jansson=$(ldd "$probe" | awk '/libjansson/ {print $3}')

fail=0 ran=0
check_root() { # NAME SONAME VERSION RTCFILE MIOPEN_VERSION|none HIPBLASLT_SONAME|none
    local name=$1 soname=$2 version=$3 rtcfile=$4 miopen=$5 lt=$6 root
    if ! root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" "$name" 2>"$GV_TEST_TMP/fixture-$name.log"); then
        echo "FAIL: fixture $name unavailable: $(tail -1 "$GV_TEST_TMP/fixture-$name.log")"
        fail=1
        return
    fi
    root=$(printf '%s\n' "$root" | tail -1)
    [[ -d $root/usr/lib ]] || { echo "FAIL: fixture $name: no root at '$root'"; fail=1; return; }
    ran=$((ran + 1))
    local dir; dir=$(mktemp -d "$root/tmp/gvprobe.XXXXXX")
    cp "$probe" "$dir/hipprobe" && cp -L "$jansson" "$dir/"
    local inner=/tmp/${dir##*/} out=$GV_TEST_TMP/hip-$name.json
    env -i LD_LIBRARY_PATH="$inner" /usr/sbin/chroot "$root" "$inner/hipprobe" gfx90a gfx942 gfx1100 \
        >"$out" 2>"$GV_TEST_TMP/hip-$name.err"
    local rc=$?
    rm -rf "$dir"
    python3 - "$out" "$soname" "$version" "$rtcfile" "$name" "$miopen" "$lt" <<'PY' || fail=1
import json, sys
path, soname, version, rtcfile, name, miopen, lt = sys.argv[1:]
d = json.load(open(path))
bad = []
rt = d.get("runtime", {})
if soname not in rt.get("path", ""): bad.append("runtime path %r lacks %s" % (rt.get("path"), soname))
if d.get("hip_runtime_version") != int(version): bad.append("hipRuntimeGetVersion %r != %s" % (d.get("hip_runtime_version"), version))
dev = str(d.get("devices"))
if "hipErrorNoDevice (100)" not in dev or "no AMD GPU" not in dev: bad.append("device answer: %s" % dev)
if d.get("uuid_symbol") is not True: bad.append("hipDeviceGetUuid (optional, src/dev/syms/syms_hip.h) not resolved: %r" % d.get("uuid_symbol"))
if rtcfile not in d.get("hiprtc", {}).get("path", ""): bad.append("hipRTC from %r, expected %s" % (d.get("hiprtc"), rtcfile))
archs = [c["arch"] for c in d.get("compile", [])]
if archs != ["gfx90a", "gfx942", "gfx1100"]: bad.append("compiled for %s" % archs)
for c in d.get("compile", []):
    if "error" in c: bad.append("%s: %s" % (c["arch"], c["error"][:400]))
    elif not c.get("elf") or c.get("missing_entries") or c.get("bytes", 0) < 10000:
        bad.append("%s: code object %s bytes, elf=%s, missing %s" % (c["arch"], c.get("bytes"), c.get("elf"), c.get("missing_entries")))
libs = {l.get("name"): l for l in d.get("libraries", [])}
rb = libs.get("rocblas", {})
if not rb.get("path") or not rb.get("version"): bad.append("rocBLAS not resolved: %s" % rb)
mi = d.get("miopen", {})
route = d.get("conv2d", "")
if miopen == "none":
    if "not found" not in str(mi.get("error")): bad.append("MIOpen: expected not found, got %s" % mi)
    if not route.startswith("gpuvet kernel (MIOpen unavailable: MIOpen not found"): bad.append("conv2d route: %s" % route)
    cr = d.get("conv_raw") or {}
    if cr.get("status") != -10 or "MIOpen unavailable" not in cr.get("error", ""): bad.append("MIOpen conv entry did not decline: %s" % cr)
else:
    want_syms = {"miopenGetVersion", "miopenGetErrorString", "miopenCreate", "miopenCreateWithStream",
                 "miopenDestroy", "miopenSetStream", "miopenCreateTensorDescriptor",
                 "miopenSet4dTensorDescriptor", "miopenDestroyTensorDescriptor", "miopenGetTensorNumBytes",
                 "miopenCreateConvolutionDescriptor", "miopenInitConvolutionDescriptor",
                 "miopenDestroyConvolutionDescriptor", "miopenGetConvolutionForwardOutputDim",
                 "miopenConvolutionForwardGetWorkSpaceSize", "miopenFindConvolutionForwardAlgorithm",
                 "miopenConvolutionForward"}
    syms = mi.get("symbols", {})
    if set(syms) != want_syms: bad.append("MIOpen symbol list differs: %s" % sorted(set(syms) ^ want_syms))
    missing = [k for k, v in syms.items() if v is not True]
    if missing: bad.append("MIOpen symbols not resolved: %s" % missing)
    want_bytes = {"miopenHalf": 2, "miopenFloat": 4, "miopenInt32": 4, "miopenInt8": 1, "miopenBFloat16": 2, "miopenDouble": 8}
    if mi.get("tensor_bytes") != want_bytes: bad.append("element sizes %s != %s" % (mi.get("tensor_bytes"), want_bytes))
    shapes = mi.get("output_dims", [])
    if len(shapes) != 3: bad.append("output dims: %s" % shapes)
    for sh in shapes:
        n, c, h, w, k, r, s, st, pad = sh["case"]
        want = [n, k, (h + 2 * pad - r) // st + 1, (w + 2 * pad - s) // st + 1]
        if sh.get("output") != want: bad.append("case %s: MIOpen output %s, expected %s (%s)" % (sh["case"], sh.get("output"), want, sh.get("error")))
    cr = mi.get("create")
    if not isinstance(cr, dict) or not isinstance(cr.get("status"), int) or cr["status"] == 0 or not cr.get("name"):
        bad.append("miopenCreate without a GPU: expected a failure status, got %s (child %s)" % (cr, mi.get("child")))
    if mi.get("child") != "exited 0": bad.append("MIOpen probe child: %s" % mi.get("child"))
    if route != "miopen " + miopen: bad.append("conv2d route %r, expected 'miopen %s'" % (route, miopen))
    if libs.get("MIOpen", {}).get("version") != miopen: bad.append("MIOpen version %s" % libs.get("MIOpen"))
hl = d.get("hipblaslt", {})
routes = d.get("gemm", {})
if lt == "none":
    if "not found" not in str(hl.get("error")): bad.append("hipBLASLt: expected not found, got %s" % hl)
    for arch, r in routes.items():
        if not r.startswith("rocBLAS"): bad.append("GEMM route on %s without hipBLASLt: %s" % (arch, r))
    if "hipBLASLt is not loaded" not in routes.get("gfx942", ""): bad.append("gfx942 route does not say hipBLASLt is missing: %s" % routes.get("gfx942"))
else:
    if lt not in str(hl.get("path")): bad.append("hipBLASLt path %r lacks %s (%s)" % (hl.get("path"), lt, hl.get("error")))
    lay, desc, pref, ct = hl.get("layout", {}), hl.get("matmul_desc", {}), hl.get("preference", {}), hl.get("compute_types", {})
    if (lay.get("batch_count"), lay.get("batch_stride")) != (3, 123): bad.append("layout batch count/stride read back as %s" % lay)
    if desc.get("op_n") != 111 or desc.get("op_t") != 112: bad.append("gpuvet's HIPBLAS_OP_N/T are %s/%s, hipblas-common.h says 111/112" % (desc.get("op_n"), desc.get("op_t")))
    if desc.get("transa") != desc.get("op_t"): bad.append("TRANSA read back %s, set %s" % (desc.get("transa"), desc.get("op_t")))
    if desc.get("transb") != desc.get("op_n"): bad.append("TRANSB default %s is not gpuvet's OP_N %s" % (desc.get("transb"), desc.get("op_n")))
    if pref.get("max_workspace") != 3 << 20: bad.append("workspace limit read back as %s" % pref)
    for k in ("f32", "tf32", "f64", "f16_acc32"):
        if ct.get(k) != 0: bad.append("matmul descriptor %s refused: %s" % (k, ct))
    cd = hl.get("case_descriptors", {})
    refused = {k: v for k, v in cd.items() if v is not True}
    if len(cd) < 40: bad.append("descriptors built for only %d GEMM cases" % len(cd))
    if any(".f16acc16." not in k for k in refused): bad.append("hipBLASLt refused the descriptors of %s" % {k: v for k, v in refused.items() if ".f16acc16." not in k})
    cr = hl.get("create", {})
    if hl.get("child") == "exited 0" and cr.get("status") == 0 and cr.get("handle"): bad.append("hipblasLtCreate without a GPU gave a handle: %s" % cr)
    if not routes.get("gfx90a", "").startswith("hipBLASLt") or not routes.get("gfx942", "").startswith("hipBLASLt"): bad.append("GEMM route on gfx90a/gfx942: %s" % routes)
    if not routes.get("gfx1100", "").startswith("rocBLAS"): bad.append("GEMM route on gfx1100: %s" % routes.get("gfx1100"))
for b in bad: print("FAIL %s: %s" % (name, b))
if not bad:
    print("ok %s: HIP %s (%s), %s, hipRTC %s compiled %s; %s" % (name, rt.get("version"), rt.get("path"), dev.split(":")[0], d["hiprtc"].get("version"), ", ".join("%s (%d bytes)" % (c["arch"], c["bytes"]) for c in d["compile"]), "; ".join("%s %s" % (k, v.get("version") or v.get("error", "")[:80]) for k, v in libs.items())))
    if miopen == "none":
        print("ok %s: conv2d -> %s" % (name, route[:60]))
    if lt != "none":
        print("ok %s: hipBLASLt %s: batch %s/%s, TRANSA %s, TRANSB default %s, workspace %s read back; descriptors %s; %d of %d GEMM cases' descriptors accepted; hipblasLtCreate without a GPU: %s %s" % (name, hl.get("path"), hl["layout"].get("batch_count"), hl["layout"].get("batch_stride"), hl["matmul_desc"].get("transa"), hl["matmul_desc"].get("transb"), hl["preference"].get("max_workspace"), hl.get("compute_types"), sum(v is True for v in hl.get("case_descriptors", {}).values()), len(hl.get("case_descriptors", {})), hl.get("child"), hl.get("create", "")))
    print("ok %s: GEMM routes: %s" % (name, "; ".join("%s -> %s" % (a, r[:40]) for a, r in routes.items())))
    if miopen != "none":
        print("ok %s: conv2d -> %s; %d MIOpen symbols resolved; element sizes %s; output dims %s; miopenCreate without a GPU: %s (%d)" % (name, route, len(mi["symbols"]), mi["tensor_bytes"], [s["output"] for s in mi["output_dims"]], mi["create"]["name"], mi["create"]["status"]))
sys.exit(1 if bad else 0)
PY
    [[ $rc == 0 ]] || { echo "FAIL $name: probe exited $rc"; fail=1; }
}

check_root trixie-rocm libamdhip64.so.5 50731921 libamdhip64.so.5 none none
check_root sid-rocm libamdhip64.so.6 60443484 libhiprtc.so.6 3.4.0 libhipblaslt.so.1
[[ $ran == 0 ]] && skip "no Debian ROCm fixture root could be built"
exit $fail
