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
#     code object that names every entry point,
#   - resolve rocBLAS's symbol list against the root's real librocblas and read
#     its version (hipBLASLt and MIOpen are reported where the root has them).
# Skips (77) when not root (chroot) or when no fixture root can be had.
set -uo pipefail
: "${GV_SRC:?}" "${GV_BUILD:?}" "${GV_TEST_TMP:=/tmp}"
[[ $(id -u) == 0 ]] || { echo "skipped: chroot needs root"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 is needed to read the report"; exit 77; }
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "skipped: no C compiler to build the probe"; exit 77; }
embed=$GV_BUILD/generated/kernels_embed.c
[[ -f $embed ]] || { echo "FAIL: $embed missing"; exit 1; }

mkdir -p "$GV_TEST_TMP"
probe=$GV_TEST_TMP/hipprobe.$$
trap 'rm -f "$probe"' EXIT
# Plain build: the sanitizer runtimes are not inside the roots.
$CC -O1 -std=gnu11 -D_GNU_SOURCE -DGPUVET_VERSION='"test"' -I"$GV_SRC/src" -o "$probe" \
    "$GV_SRC/tests/fixtures/hip_probe_main.c" "$GV_SRC"/src/dev/{vendor,rtc,hip,gpu_run}.c \
    "$GV_SRC/src/base/err.c" "$GV_SRC/src/num/types.c" "$embed" -ljansson -ldl -lm ||
    { echo "FAIL: building the probe"; exit 1; }
jansson=$(ldd "$probe" | awk '/libjansson/ {print $3}')

fail=0 ran=0
check_root() { # NAME SONAME VERSION RTCFILE
    local name=$1 soname=$2 version=$3 rtcfile=$4 root
    if ! root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" "$name" 2>"$GV_TEST_TMP/fixture-$name.log"); then
        echo "note: fixture $name unavailable: $(tail -1 "$GV_TEST_TMP/fixture-$name.log")"
        return
    fi
    root=$(printf '%s\n' "$root" | tail -1)
    [[ -d $root/usr/lib ]] || { echo "note: fixture $name: no root at '$root'"; return; }
    ran=$((ran + 1))
    local dir; dir=$(mktemp -d "$root/tmp/gvprobe.XXXXXX")
    cp "$probe" "$dir/hipprobe" && cp -L "$jansson" "$dir/"
    local inner=/tmp/${dir##*/} out=$GV_TEST_TMP/hip-$name.json
    env -i LD_LIBRARY_PATH="$inner" /usr/sbin/chroot "$root" "$inner/hipprobe" gfx90a gfx942 gfx1100 \
        >"$out" 2>"$GV_TEST_TMP/hip-$name.err"
    local rc=$?
    rm -rf "$dir"
    python3 - "$out" "$soname" "$version" "$rtcfile" "$name" <<'PY' || fail=1
import json, sys
path, soname, version, rtcfile, name = sys.argv[1:]
d = json.load(open(path))
bad = []
rt = d.get("runtime", {})
if soname not in rt.get("path", ""): bad.append("runtime path %r lacks %s" % (rt.get("path"), soname))
if d.get("hip_runtime_version") != int(version): bad.append("hipRuntimeGetVersion %r != %s" % (d.get("hip_runtime_version"), version))
dev = str(d.get("devices"))
if "hipErrorNoDevice (100)" not in dev or "no AMD GPU" not in dev: bad.append("device answer: %s" % dev)
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
for b in bad: print("FAIL %s: %s" % (name, b))
if not bad:
    print("ok %s: HIP %s (%s), %s, hipRTC %s compiled %s; %s" % (name, rt.get("version"), rt.get("path"), dev.split(":")[0], d["hiprtc"].get("version"), ", ".join("%s (%d bytes)" % (c["arch"], c["bytes"]) for c in d["compile"]), "; ".join("%s %s" % (k, v.get("version") or v.get("error", "")[:80]) for k, v in libs.items())))
sys.exit(1 if bad else 0)
PY
    [[ $rc == 0 ]] || { echo "FAIL $name: probe exited $rc"; fail=1; }
}

check_root trixie-rocm libamdhip64.so.5 50731921 libamdhip64.so.5
check_root sid-rocm libamdhip64.so.6 60443484 libhiprtc.so.6
[[ $ran == 0 ]] && { echo "skipped: no Debian ROCm fixture root could be built"; exit 77; }
exit $fail
