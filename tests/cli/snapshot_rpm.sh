#!/usr/bin/env bash
# gpuvet snapshot on an rpm-based root: real rpm packages built with rpmbuild
# and installed by the real rpm into a root (database in /var/lib/rpm, then
# in /usr/lib/sysimage/rpm as on newer Fedora/openSUSE), checked against the
# names, versions and epochs this script gave them and against rpm -qa.
set -euo pipefail
: "${GPUVET:?}" "${GV_TEST_TMP:?}"
for tool in rpm rpmbuild python3; do
    command -v "$tool" >/dev/null || { echo "skipped: $tool not installed (Debian package rpm)"; exit 77; }
done
[[ -x /usr/bin/rpm || -x /bin/rpm ]] || { echo "skipped: gpuvet looks for rpm in /usr/bin or /bin"; exit 77; }
T="$GV_TEST_TMP/snapshot_rpm.$$"
rm -rf "$T"
mkdir -p "$T/top"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
expect() {
    local got
    got=$(j "$1" "$2") || fail "cannot evaluate $2"
    [[ "$got" == "$3" ]] || fail "$2: expected '$3', got '$got'"
}
mkrpm() { # mkrpm NAME VERSION RELEASE [EPOCH]
    {
        echo "Name: $1"; echo "Version: $2"; echo "Release: $3"
        [[ -n "${4:-}" ]] && echo "Epoch: $4"
        echo "Summary: gpuvet test"; echo "License: MIT"; echo "BuildArch: noarch"
        echo "%description"; echo "gpuvet test package"; echo "%files"
    } >"$T/$1.spec"
    rpmbuild --quiet --define "_topdir $T/top" --define "_build_id_links none" -bb "$T/$1.spec" >/dev/null 2>&1 ||
        fail "rpmbuild $1 failed"
}
mkrpm rocm-core 6.0.0 1.el9 1
mkrpm hip-runtime-amd 6.0.32830 1.el9
mkrpm hello-gpuvet 2.10 3.el9
for db in /var/lib/rpm /usr/lib/sysimage/rpm; do
    R="$T/root${db//\//_}"
    mkdir -p "$R"
    rpm --root "$R" --dbpath "$db" --initdb
    rpm --root "$R" --dbpath "$db" -i --nodeps --noscripts "$T"/top/RPMS/noarch/*.rpm 2>/dev/null ||
        fail "rpm -i into $R failed"
    timeout 120 "$GPUVET" snapshot --no-hash --root "$R" -o "$T/s.json" || fail "snapshot failed"
    S="$T/s.json"
    expect "$S" "d['packages']['collected']" True
    expect "$S" "d['packages']['manager']" rpm
    expect "$S" "'--dbpath $db' in d['packages']['source']" True
    expect "$S" "[(i['name'], i['version'], i['arch'], i['gpu'], i['hold']) for i in d['packages']['items']]" \
        "[('hello-gpuvet', '2.10-3.el9', 'noarch', False, False), ('hip-runtime-amd', '6.0.32830-1.el9', 'noarch', True, False), ('rocm-core', '1:6.0.0-1.el9', 'noarch', True, False)]"
    expect "$S" "d['packages']['items'][2]['source_package']" "rocm-core-6.0.0-1.el9.src.rpm"
    # the same list as rpm itself gives with another query format
    rpm --root "$R" --dbpath "$db" -qa --qf '%{NAME} %{VERSION}-%{RELEASE}\n' | LC_ALL=C sort >"$T/oracle"
    j "$S" "'\n'.join(i['name']+' '+i['version'].split(':')[-1] for i in d['packages']['items'])" >"$T/ours"
    diff -u "$T/oracle" "$T/ours" || fail "rpm list differs from rpm -qa"
    want=$(printf '%s\n' "hello-gpuvet=2.10-3.el9:noarch" "hip-runtime-amd=6.0.32830-1.el9:noarch" \
        "rocm-core=1:6.0.0-1.el9:noarch" | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
    expect "$S" "d['packages']['digest']" "$want"
    echo "ok: rpm database in $db"
done
