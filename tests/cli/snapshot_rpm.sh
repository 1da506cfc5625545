#!/usr/bin/env bash
# gpuvet snapshot on an rpm-based root: real rpm packages built with rpmbuild
# and installed by the real rpm into a root (database in /var/lib/rpm, then
# in /usr/lib/sysimage/rpm as on newer Fedora/openSUSE), checked against the
# names, versions and epochs this script gave them and against rpm -qa.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for tool in rpm rpmbuild python3; do
    need_cmd "$tool" "$tool not installed (Debian package rpm)"
done
[[ -x /usr/bin/rpm || -x /bin/rpm ]] || skip "gpuvet looks for rpm in /usr/bin or /bin"
gv_tmpdir T snapshot_rpm
mkdir -p "$T/top"
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
    expect_json "$S" "d['packages']['collected']" True
    expect_json "$S" "d['packages']['manager']" rpm
    expect_json "$S" "'--dbpath $db' in d['packages']['source']" True
    expect_json "$S" "[(i['name'], i['version'], i['arch'], i['gpu'], i['hold']) for i in d['packages']['items']]" \
        "[('hello-gpuvet', '2.10-3.el9', 'noarch', False, False), ('hip-runtime-amd', '6.0.32830-1.el9', 'noarch', True, False), ('rocm-core', '1:6.0.0-1.el9', 'noarch', True, False)]"
    expect_json "$S" "d['packages']['items'][2]['source_package']" "rocm-core-6.0.0-1.el9.src.rpm"
    # the same list as rpm itself gives with another query format
    rpm --root "$R" --dbpath "$db" -qa --qf '%{NAME} %{VERSION}-%{RELEASE}\n' | LC_ALL=C sort >"$T/oracle"
    json_get "$S" "'\n'.join(i['name']+' '+i['version'].split(':')[-1] for i in d['packages']['items'])" >"$T/ours"
    diff -u "$T/oracle" "$T/ours" || fail "rpm list differs from rpm -qa"
    want=$(printf '%s\n' "hello-gpuvet=2.10-3.el9:noarch" "hip-runtime-amd=6.0.32830-1.el9:noarch" \
        "rocm-core=1:6.0.0-1.el9:noarch" | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
    expect_json "$S" "d['packages']['digest']" "$want"
    echo "ok: rpm database in $db"
done
