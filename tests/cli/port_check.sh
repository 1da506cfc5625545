#!/usr/bin/env bash
# The compile half of the 64-lane proof (docs/port.md, "What the emulation
# proves" and "The compile check"), on the real hipcc 5.7.1 of the
# trixie-hipcc fixture root (tests/fixtures/debian-rocm.sh), no GPU:
#  1. tests/port/emu/check.hip (the kernels of kernels.h) compiled for gfx90a
#     and gfx1100 in the root: as written (CUDA's *_sync calls) every warp
#     call is rejected, 32-lane ones and warpSize ones alike (HIP 5.7 has no
#     *_sync functions); in HIP 5.7's own mask-free spelling everything
#     compiles, and only the ballot kept in 32 bits is caught, by
#     -Werror=shorten-64-to-32; the 16-offset and 0xffffffff reductions
#     compile and are wrong (tests/cli/port_emu.sh shows it).
#  2. `gpuvet port check --root` on the same file: the compiler's errors as
#     findings of rule "compile" for both targets (skipped, exit 77, while
#     this gpuvet has no `port` command).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "chroot into the fixture root needs root"
need_cmd debootstrap "debootstrap is not installed (scripts/install-deps.sh --test)"
need_cmd unshare "unshare is needed for a private mount namespace"
need_cmd python3 "python3 is needed to read the output"

root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-hipcc 2>"$GV_TEST_TMP/port_check-fixture.log") ||
    fail "fixture trixie-hipcc unavailable: $(tail -1 "$GV_TEST_TMP/port_check-fixture.log")"
root=$(printf '%s\n' "$root" | tail -1)
[[ -x $root/usr/bin/hipcc ]] || fail "no hipcc in $root"

tmp="" && gv_tmpdir tmp
cp "$GV_SRC/tests/port/emu/check.hip" "$GV_SRC/tests/port/emu/kernels.h" "$tmp/"
chmod 755 "$tmp"
hdr=$GV_SRC/tests/port/emu/kernels.h

# hipcc in the root, the sources bound on the root's /tmp/src (private mount).
in_root_hipcc() { # OUT ARGS...
    local out=$1; shift
    # shellcheck disable=SC2016
    unshare --mount --propagation private bash -c \
        'mkdir -p "$1/tmp" && mount --bind "$2" "$1/tmp" && exec /usr/sbin/chroot "$1" "${@:3}"' \
        _ "$root" "$tmp" env -i PATH=/usr/bin:/bin HOME=/tmp TMPDIR=/tmp LC_ALL=C \
        /usr/bin/hipcc -fsyntax-only -fno-color-diagnostics "$@" >"$out" 2>&1
}

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
