#!/usr/bin/env bash
# The compile half of the 64-lane proof (docs/port.md, "What the emulation
# proves" and "The compile check"), on the real hipcc 5.7.1 of the
# trixie-hipcc fixture root and hipcc 7.0.2 of sid-hipcc
# (tests/fixtures/debian-rocm.sh), no GPU:
#  1. tests/port/emu/check.hip (the kernels of kernels.h) compiled for gfx90a
#     and gfx1100 in the root: as written (CUDA's *_sync calls) every warp
#     call is rejected, 32-lane ones and warpSize ones alike (HIP 5.7 has no
#     *_sync functions); in HIP 5.7's own mask-free spelling everything
#     compiles, and only the ballot kept in 32 bits is caught, by
#     -Werror=shorten-64-to-32; the 16-offset and 0xffffffff reductions
#     compile and are wrong (tests/cli/port_emu.sh shows it). With sid's
#     hipcc 7.0.2 and HIP 6.4.3 (sid-hipcc) the *_sync calls exist (behind
#     HIP_ENABLE_WARP_SYNC_BUILTINS) with 64-bit masks: 0xffffffff fails to
#     compile, the ballot draws a warning, the 16 offsets compile.
#  2. `gpuvet port check --root` on the same file: the compiler's errors as
#     findings of rule "compile" for both targets;
#  3. `gpuvet port scan --extensions --root`: the root's gvext_hip module
#     (built for gfx90a only) named for gfx1100, not for gfx90a.
#  2 and 3 are skipped (exit 77) while this gpuvet has no `port` command.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "chroot into the fixture root needs root"
need_cmd debootstrap "debootstrap is not installed (scripts/install-deps.sh --test)"
need_cmd unshare "unshare is needed for a private mount namespace"
need_cmd python3 "python3 is needed to read the output"

fixture() { # NAME : the root's path
    local r
    r=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" "$1" 2>"$GV_TEST_TMP/port_check-$1.log") ||
        fail "fixture $1 unavailable: $(tail -1 "$GV_TEST_TMP/port_check-$1.log")"
    r=$(printf '%s\n' "$r" | tail -1)
    [[ -x $r/usr/bin/hipcc ]] || fail "no hipcc in $r"
    echo "$r"
}
root=$(fixture trixie-hipcc)
sid=$(fixture sid-hipcc)

tmp="" && gv_tmpdir tmp
cp "$GV_SRC/tests/port/emu/check.hip" "$GV_SRC/tests/port/emu/kernels.h" "$tmp/"
chmod 755 "$tmp"
hdr=$GV_SRC/tests/port/emu/kernels.h

# hipcc in a root, the sources bound on the root's /tmp, /proc mounted (hipcc 7
# finds itself through /proc/self/exe), all in a private mount namespace.
hipcc_in() { # ROOT OUT ARGS...
    local r=$1 out=$2; shift 2
    # shellcheck disable=SC2016
    unshare --mount --propagation private bash -c \
        'mount -t proc proc "$1/proc" && mount --bind "$2" "$1/tmp" && exec /usr/sbin/chroot "$1" "${@:3}"' \
        _ "$r" "$tmp" env -i PATH=/usr/bin:/bin HOME=/tmp TMPDIR=/tmp LC_ALL=C \
        /usr/bin/hipcc -fsyntax-only -fno-color-diagnostics "$@" >"$out" 2>&1
}
in_root_hipcc() { hipcc_in "$root" "$@"; }

# "LINE" of each error in kernels.h, sorted and unique.
error_lines() { grep -o '^/tmp/kernels.h:[0-9]*:[0-9]*: error' "$1" | cut -d: -f2 | sort -un | tr '\n' ' '; }
line_of() { grep -n -m1 -F "$1" "$hdr" | cut -d: -f1; }

for arch in gfx90a gfx1100; do
    # As written: each line with a *_sync call or __activemask is an error.
    rc=0; in_root_hipcc "$tmp/as-written-$arch" --offload-arch=$arch /tmp/check.hip || rc=$?
    [[ $rc -ne 0 ]] || fail "$arch: check.hip as written compiled; HIP 5.7 has no *_sync calls"
    want="$(line_of 'v += __shfl_down_sync(0xffffffff') $(line_of 'v += __shfl_down_sync(__activemask()') "
    want+="$(grep -n -F 'v += __shfl_down_sync(__activemask()' "$hdr" | sed -n 2p | cut -d: -f1) "
    want+="$(line_of 'unsigned votes = __ballot_sync') $(line_of 'unsigned long long votes = __ballot_sync') "
    got=$(error_lines "$tmp/as-written-$arch")
    [[ $got == "$want" ]] || { cat "$tmp/as-written-$arch" >&2; fail "$arch: errors on lines [$got], want [$want]"; }
    grep -q "use of undeclared identifier '__shfl_down_sync'" "$tmp/as-written-$arch" ||
        fail "$arch: no 'undeclared __shfl_down_sync' error"

    # HIP 5.7's spelling: compiles; only the 32-bit ballot fails with -Werror.
    in_root_hipcc "$tmp/pre-sync-$arch" --offload-arch=$arch -DGV_HIP_PRE_SYNC /tmp/check.hip ||
        { cat "$tmp/pre-sync-$arch" >&2; fail "$arch: check.hip in HIP 5.7's spelling does not compile"; }
    rc=0
    in_root_hipcc "$tmp/werror-$arch" --offload-arch=$arch -DGV_HIP_PRE_SYNC \
        -Werror=shorten-64-to-32 /tmp/check.hip || rc=$?
    [[ $rc -ne 0 ]] || fail "$arch: -Werror=shorten-64-to-32 let the 32-bit ballot through"
    want="$(line_of 'unsigned votes = __ballot_sync') "
    got=$(error_lines "$tmp/werror-$arch")
    [[ $got == "$want" ]] || { cat "$tmp/werror-$arch" >&2; fail "$arch: -Werror errors on [$got], want [$want]"; }
done
echo "ok: hipcc 5.7.1 for gfx90a and gfx1100: *_sync rejected; ballot_u32 caught only by -Werror=shorten-64-to-32; reduce_w32 and reduce_off16 compile"

# sid's hipcc 7.0.2 with HIP 6.4.3's headers: the *_sync functions exist behind
# HIP_ENABLE_WARP_SYNC_BUILTINS and take 64-bit masks only, so reduce_w32's
# 0xffffffff is a static_assert (in the header, instantiated from its line);
# the 32-bit ballot is a warning; reduce_off16 compiles.
for arch in gfx90a gfx1100; do
    rc=0; hipcc_in "$sid" "$tmp/sid-$arch" --offload-arch=$arch -DHIP_ENABLE_WARP_SYNC_BUILTINS \
        -Wshorten-64-to-32 /tmp/check.hip || rc=$?
    [[ $rc -ne 0 ]] || fail "$arch: hipcc 7 accepted the 32-bit mask 0xffffffff"
    grep -q 'error: static assertion failed.*The mask must be a 64-bit integer' "$tmp/sid-$arch" ||
        { cat "$tmp/sid-$arch" >&2; fail "$arch: no 64-bit mask static_assert"; }
    want="$(line_of 'v += __shfl_down_sync(0xffffffff')"
    got=$(grep -o '^/tmp/kernels.h:[0-9]*:[0-9]*: note: in instantiation' "$tmp/sid-$arch" | cut -d: -f2 | sort -u | tr '\n' ' ')
    [[ $got == "$want " ]] || { cat "$tmp/sid-$arch" >&2; fail "$arch: mask errors instantiated from [$got], want [$want]"; }
    [[ $(grep -c ': error:' "$tmp/sid-$arch") == 1 ]] || { cat "$tmp/sid-$arch" >&2; fail "$arch: more than the mask error"; }
    grep -q "^/tmp/kernels.h:$(line_of 'unsigned votes = __ballot_sync'):[0-9]*: warning: .*-Wshorten-64-to-32" \
        "$tmp/sid-$arch" || { cat "$tmp/sid-$arch" >&2; fail "$arch: no warning on the 32-bit ballot"; }
done
echo "ok: hipcc 7.0.2 (HIP 6.4.3) for gfx90a and gfx1100: 0xffffffff rejected (64-bit masks only); ballot_u32 a warning; reduce_off16 compiles"

# 2. gpuvet port check (P1's command; skipped until it exists).
rc=0; "$GPUVET" port --help >/dev/null 2>&1 || rc=$?
[[ $rc -eq 0 ]] || skip "this gpuvet has no 'port' command yet (compiler half above passed)"
expect_rc 1 "$GPUVET" port check "$tmp/check.hip" --root "$root" --target gfx90a,gfx1100 --json
line=$(line_of 'v += __shfl_down_sync(0xffffffff')
n=$(json_get "$GV_OUT" "len([f for f in (d['findings'] if isinstance(d, dict) else d)
    if f['rule'] == 'compile' and f['line'] == $line and f['file'].endswith('kernels.h')
    and sorted(f.get('targets', [])) == ['gfx1100', 'gfx90a']])")
[[ $n == 1 ]] || { cat "$GV_OUT" >&2; fail "no compile finding on kernels.h:$line for both targets"; }
echo "ok: gpuvet port check reports the compiler's errors for both targets"

# 3. port scan --extensions: the fixture's gvext_hip (gfx90a only) named for gfx1100.
mkdir -p "$tmp/empty"
expect_rc 1 "$GPUVET" port scan "$tmp/empty" --extensions --root "$root" --target gfx1100 --json
n=$(json_get "$GV_OUT" "len([f for f in (d['findings'] if isinstance(d, dict) else d)
    if f['rule'] == 'ext-no-target' and f['file'].endswith('/gvext_hip.cpython-313-x86_64-linux-gnu.so')])")
[[ $n == 1 ]] || { cat "$GV_OUT" >&2; fail "gvext_hip not named for gfx1100"; }
expect_rc 0 "$GPUVET" port scan "$tmp/empty" --extensions --root "$root" --target gfx90a --json
echo "ok: gpuvet port scan --extensions names the gfx90a-only module for gfx1100, not for gfx90a"

# 4. the same module inside a container image (port scan --image): an OCI layout made with
#    umoci holding only the module in dist-packages, unpacked by gpuvet into its cache.
if command -v umoci >/dev/null; then
    export XDG_CACHE_HOME=$tmp/cache
    umoci init --layout "$tmp/img" >/dev/null && umoci new --image "$tmp/img:ext" >/dev/null &&
        umoci unpack --image "$tmp/img:ext" "$tmp/bundle" >/dev/null || fail "umoci could not make the image"
    mkdir -p "$tmp/bundle/rootfs/usr/lib/python3/dist-packages"
    cp "$root"/usr/lib/python3/dist-packages/gvext_hip.cpython-313-x86_64-linux-gnu.so \
        "$tmp/bundle/rootfs/usr/lib/python3/dist-packages/"
    umoci repack --image "$tmp/img:ext" "$tmp/bundle" >/dev/null || fail "umoci repack failed"
    expect_rc 1 "$GPUVET" port scan "$tmp/empty" --extensions --image "$tmp/img:ext" --target gfx1100 --json
    n=$(json_get "$GV_OUT" "len([f for f in d['findings'] if f['rule'] == 'ext-no-target'
        and f['file'] == '/usr/lib/python3/dist-packages/gvext_hip.cpython-313-x86_64-linux-gnu.so'])")
    [[ $n == 1 ]] || { cat "$GV_OUT" >&2; fail "port scan --image: gvext_hip not named for gfx1100"; }
    expect_rc 0 "$GPUVET" port scan "$tmp/empty" --extensions --image "$tmp/img:ext" --target gfx90a
    echo "ok: gpuvet port scan --extensions --image reads the image's modules"
else
    fail "umoci is needed for the --image part (scripts/install-deps.sh --test installs it)"
fi
