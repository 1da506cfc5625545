#!/usr/bin/env bash
# Guards the Debian fixtures themselves (tests/fixtures/debian-rocm.sh): builds them
# when the cache is cold (needs root, debootstrap and the Debian mirror), then checks
# with the real dpkg that trixie-rocm carries HIP 5.7.1 and sid-rocm HIP 6.4, that
# the roots work as chroots (dpkg and apt run inside), and that the downloaded .debs
# are kept for offline rollbacks.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "building and chrooting into the fixtures needs root"
need_cmd debootstrap "debootstrap is not installed"
command -v dpkg-query >/dev/null || skip "dpkg-query is not installed"

mapfile -t roots < <("$GV_SRC/tests/fixtures/debian-rocm.sh" all) ||
    fail "debian-rocm.sh failed (log: \${GV_FIXTURE_CACHE:-~/.cache/gpuvet-fixtures}/build.log)"
TRIXIE=${roots[0]} SID=${roots[1]}
[[ -d $TRIXIE/var/lib/dpkg && -d $SID/var/lib/dpkg ]] || fail "roots missing: ${roots[*]}"

ver() { # ROOT PACKAGE : version when installed, else empty
    dpkg-query --admindir="$1/var/lib/dpkg" -W -f='${db:Status-Status} ${Version}\n' "$2" 2>/dev/null |
        awk '$1 == "installed" {print $2}'
}

v=$(ver "$TRIXIE" libamdhip64-5); [[ $v == 5.7.1-* ]] || fail "trixie libamdhip64-5 is '$v', expected 5.7.1-*"
v=$(ver "$TRIXIE" librocblas0); [[ $v == 5.5.1* ]] || fail "trixie librocblas0 is '$v', expected 5.5.1*"
v=$(ver "$TRIXIE" libhipblas0); [[ $v == 5.5.1* ]] || fail "trixie libhipblas0 is '$v'"
[[ -z $(ver "$TRIXIE" libamdhip64-6) ]] || fail "trixie has libamdhip64-6"
v=$(ver "$SID" libamdhip64-6); [[ $v == 6.4.* ]] || fail "sid libamdhip64-6 is '$v', expected 6.4.*"
v=$(ver "$SID" libhiprtc6); [[ $v == 6.4.* ]] || fail "sid libhiprtc6 is '$v', expected 6.4.*"
v=$(ver "$SID" librocblas4); [[ $v == 6.4.* ]] || fail "sid librocblas4 is '$v', expected 6.4.*"
v=$(ver "$SID" libhipblas2); [[ $v == 6.4.* ]] || fail "sid libhipblas2 is '$v', expected 6.4.*"
v=$(ver "$SID" libmiopen1); [[ $v == 6.4.* ]] || fail "sid libmiopen1 is '$v', expected 6.4.*"
for p in libamdhip64-5 librocblas0 libhipblas0; do
    [[ -z $(ver "$SID" "$p") ]] || fail "sid still has $p after the upgrade"
done

# dpkg's own records show the upgrade: the log of the sid root has the removal of
# the 5.x HIP runtime and the installation of the 6.4 one
grep -q " remove libamdhip64-5:amd64 5.7.1-" "$SID/var/log/dpkg.log" || fail "dpkg.log lacks removal of libamdhip64-5"
grep -q " install libamdhip64-6:amd64 <none> 6.4." "$SID/var/log/dpkg.log" || fail "dpkg.log lacks install of libamdhip64-6"

# real files with the real SONAMEs
lib=$TRIXIE/usr/lib/x86_64-linux-gnu
[[ -f $(readlink -f "$lib/libamdhip64.so.5") ]] || fail "trixie lacks libamdhip64.so.5"
if command -v readelf >/dev/null; then
    readelf -d "$lib/libamdhip64.so.5" | grep -q 'SONAME.*\[libamdhip64.so.5\]' || fail "SONAME of trixie HIP"
    readelf -d "$SID/usr/lib/x86_64-linux-gnu/libamdhip64.so.6" | grep -q 'SONAME.*\[libamdhip64.so.6\]' ||
        fail "SONAME of sid HIP"
fi

# usable as chroots: dpkg and apt run inside and agree with the outside view
# shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
inside=$(chroot "$SID" dpkg-query -W -f='${Version}' libamdhip64-6) || fail "dpkg does not run in the sid chroot"
[[ $inside == "$(ver "$SID" libamdhip64-6)" ]] || fail "dpkg inside the chroot says '$inside'"
chroot "$TRIXIE" apt-cache policy libamdhip64-5 >/dev/null || fail "apt-cache does not run in the trixie chroot"
grep -rqs 'Check-Valid-Until "false"' "$SID/etc/apt/apt.conf.d/" || fail "sid apt lacks Check-Valid-Until false"
grep -q ' sid main' "$SID/etc/apt/sources.list" || fail "sid sources.list does not point at sid"

# the trixie .debs stay available offline, in the sid root and in the pool
pool=$("$GV_SRC/tests/fixtures/debian-rocm.sh" pool)
for d in "$SID/var/cache/apt/archives" "$pool"; do
    ls "$d"/libamdhip64-5_5.7.1-*_amd64.deb >/dev/null 2>&1 || fail "no libamdhip64-5 .deb in $d"
    ls "$d"/librocblas0_5.5.1*_amd64.deb >/dev/null 2>&1 || fail "no librocblas0 .deb in $d"
done
debs=("$pool"/libamdhip64-5_5.7.1-*_amd64.deb)
deb=${debs[0]}
[[ $(dpkg-deb -f "$deb" Package) == libamdhip64-5 ]] || fail "$deb is not a valid .deb"

# every package installed in either root has its .deb in the pool: both states can be
# restored offline (file names are name_version_arch.deb, the epoch colon as %3a)
for root in "$TRIXIE" "$SID"; do
    # shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
    missing=$(dpkg-query --admindir="$root/var/lib/dpkg" -W \
                  -f='${db:Status-Status} ${Package} ${Version} ${Architecture}\n' |
              awk '$1 == "installed" { v = $3; gsub(":", "%3a", v); print $2 "_" v "_" $4 ".deb" }' |
              while read -r f; do [[ -e $pool/$f ]] || echo "$f"; done)
    [[ -z $missing ]] || fail "not in the pool ($root): $missing"
done

# a cache hit is quiet and fast: only the paths on stdout, nothing on stderr
t0=$(date +%s%N)
out=$("$GV_SRC/tests/fixtures/debian-rocm.sh" all 2>"${GV_TEST_TMP:-/tmp}/fixture_err")
t1=$(date +%s%N)
[[ $out == "$TRIXIE"$'\n'"$SID" ]] || fail "cache hit printed '$out'"
[[ ! -s ${GV_TEST_TMP:-/tmp}/fixture_err ]] || fail "cache hit wrote to stderr"
echo "fixture_debian: ok (warm call $(( (t1 - t0) / 1000000 )) ms; trixie HIP $(ver "$TRIXIE" libamdhip64-5), sid HIP $(ver "$SID" libamdhip64-6))"
