#!/usr/bin/env bash
# Rollback for real with dnf (Debian's dnf 4 and rpm, a local repository made
# by createrepo_c, an installroot): RPMs built here with the names ROCm ships
# under (rocm-core with an epoch, hip-runtime-amd, rocblas, hipblaslt; a
# non-GPU hello-gpuvet that must be left alone) at a 5.7 and a 6.0 version,
# the dependencies between them as in ROCm's packages.
#   baseline: the 5.7 stack installed by dnf; then `dnf upgrade` + hipblaslt;
#   verify before -> exit 1;
#   a baseline version no repository offers -> the plan's script stops before
#     the transaction, naming it, and nothing changes (dnf shell alone would
#     carry on and resolve to another version: found by this test);
#   the plan -> shellcheck -> runs twice -> rpm shows every baseline version,
#     hipblaslt removed, hello-gpuvet untouched, the versions locked (a later
#     dnf upgrade does nothing) -> verify exit 0.
# The script's dnf and rpm are the real ones, given --installroot/--root, the
# local repository and a private versionlock list by two small wrappers first
# on PATH; /var/backups is bind-mounted in a private mount namespace so the
# backup stays in the test. Nothing outside the test directory is written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "needs root (mount namespace for the backup directory)"
for tool in dnf rpm rpmbuild createrepo_c unshare python3; do
    need_cmd "$tool" "$tool is not installed (scripts/install-deps.sh --test)"
done
command -v shellcheck >/dev/null || fail "shellcheck is not installed (scripts/install-deps.sh --test)"
[[ -f /usr/lib/python3/dist-packages/dnf-plugins/versionlock.py ]] ||
    skip "the dnf versionlock plugin is not installed (dnf-plugins-core)"

gv_tmpdir T rollback_dnf
mkdir -p "$T/top" "$T/repo" "$T/bin" "$T/home" "$T/backups" "$T/root"
R=$T/root
# Debian's rpm keeps its own database under ~/.rpmdb; the root gets Fedora's place.
export HOME=$T/home
echo '%_dbpath /var/lib/rpm' >"$HOME/.rpmmacros"

mkrpm() { # NAME VERSION [EPOCH] [REQUIRES]
    {
        echo "Name: $1"; echo "Version: $2"; echo "Release: 1.el9"
        [[ -n ${3:-} ]] && echo "Epoch: $3"
        [[ -n ${4:-} ]] && echo "Requires: $4"
        echo "Summary: gpuvet test"; echo "License: MIT"; echo "BuildArch: noarch"
        echo "%description"; echo "gpuvet rollback test package"; echo "%files"
    } >"$T/$1-$2.spec"
    rpmbuild --quiet --define "_topdir $T/top" --define "_build_id_links none" -bb "$T/$1-$2.spec" \
        >/dev/null 2>&1 || fail "rpmbuild $1-$2"
}
mkrpm rocm-core 5.7.1 1
mkrpm rocm-core 6.0.0 1
mkrpm hip-runtime-amd 5.7.31921 "" "rocm-core = 1:5.7.1"
mkrpm hip-runtime-amd 6.0.32830 "" "rocm-core = 1:6.0.0"
mkrpm rocblas 3.1.0 "" "hip-runtime-amd"
mkrpm rocblas 4.0.0 "" "hip-runtime-amd >= 6.0"
mkrpm hipblaslt 0.6.0 "" "hip-runtime-amd >= 6.0"
mkrpm hello-gpuvet 2.10
cp "$T"/top/RPMS/noarch/*.rpm "$T/repo/"
createrepo_c -q "$T/repo" || fail "createrepo_c"

# The versionlock plugin keeps its list in the host's /etc/dnf/plugins even with
# --installroot: the test gives it its own.
mkdir -p "$T/plugins"
printf '[main]\nenabled = 1\nlocklist = %s\n' "$T/versionlock.list" >"$T/plugins/versionlock.conf"
: >"$T/versionlock.list"
cat >"$T/bin/dnf" <<EOF
#!/bin/sh
exec /usr/bin/dnf --installroot='$R' --releasever=9 --setopt=reposdir=/dev/null \\
    --setopt=pluginconfpath='$T/plugins' --setopt=cachedir='$T/cache' \\
    --setopt=metadata_expire=0 --nogpgcheck \\
    --repofrompath=local,'file://$T/repo' --repo=local "\$@"
EOF
cat >"$T/bin/rpm" <<EOF
#!/bin/sh
exec /usr/bin/rpm --root '$R' "\$@"
EOF
chmod +x "$T/bin/dnf" "$T/bin/rpm"
D() { "$T/bin/dnf" -y -q "$@" >>"$T/dnf.log" 2>&1 || fail "dnf $* (see below)$(tail -5 "$T/dnf.log")"; }
installed() { "$T/bin/rpm" -qa --qf '%{NAME}-%{EPOCHNUM}:%{VERSION}-%{RELEASE}\n' | sort | tr '\n' ' '; }
run_plan() { # SCRIPT LOG : runs it with the wrappers first on PATH, backup kept in $T/backups
    unshare -m sh -c "mount --bind '$T/backups' /var/backups && PATH='$T/bin':\$PATH bash '$1'" >"$2" 2>&1
}

# The baseline: the 5.7 stack and an unrelated package.
D install rocm-core-1:5.7.1-1.el9 hip-runtime-amd-5.7.31921 rocblas-3.1.0 hello-gpuvet
base_pkgs=$(installed)
"$GPUVET" snapshot --root "$R" -o "$T/baseline.json"
# The upgrade, as a user does it.
D upgrade
D install hipblaslt
upgraded=$(installed)
[[ $upgraded == *hip-runtime-amd-0:6.0.32830* && $upgraded == *hipblaslt-0:0.6.0* ]] ||
    fail "the upgrade did not happen: $upgraded"
"$GPUVET" snapshot --root "$R" -o "$T/current.json"

set +e
"$GPUVET" verify --root "$R" --baseline "$T/baseline.json" >"$T/verify-before.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "verify before the rollback exited $rc, expected 1: $(cat "$T/verify-before.txt")"

# A baseline version no repository offers: the script must stop before the transaction.
python3 - "$T/baseline.json" "$T/missing.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
assert '"3.1.0-1.el9"' in text
open(sys.argv[2], "w").write(text.replace('"3.1.0-1.el9"', '"3.0.9-1.el9"'))
PY
"$GPUVET" plan rollback --to "$T/missing.json" --from "$T/current.json" --format sh >"$T/missing.sh" ||
    fail "plan for the missing version exited $?"
set +e
run_plan "$T/missing.sh" "$T/missing.log"
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "the plan with a version no repository offers ran to the end: $(tail -5 "$T/missing.log")"
grep -q 'no enabled repository offers rocblas-3.0.9-1.el9' "$T/missing.log" ||
    fail "the stop does not name rocblas-3.0.9-1.el9: $(tail -3 "$T/missing.log")"
[[ $(installed) == "$upgraded" ]] || fail "packages changed although the plan stopped: $(installed)"
echo "ok: a version no repository offers stops the script before the transaction, nothing changed"

# The real plan.
"$GPUVET" plan rollback --to "$T/baseline.json" --from "$T/current.json" --format sh >"$T/plan.sh"
shellcheck "$T/plan.sh" || fail "shellcheck found problems in the plan"
grep -q "^printf .*'remove hipblaslt'.* | 'dnf' 'shell' '-y'" "$T/plan.sh" ||
    fail "no single dnf shell transaction removing hipblaslt in the plan"
grep -q "hello-gpuvet" "$T/plan.sh" && fail "the plan touches the non-GPU package hello-gpuvet"
for pass in 1 2; do
    run_plan "$T/plan.sh" "$T/run$pass.log" || fail "plan run $pass exited $?: $(tail -5 "$T/run$pass.log")"
    [[ $(installed) == "$base_pkgs" ]] ||
        fail "after run $pass: installed '$(installed)', baseline '$base_pkgs'"
done
echo "ok: plan ran twice; installed: $(installed)"
lists=("$T"/backups/gpuvet/rollback-*/packages.txt)
[[ -f ${lists[0]} ]] || fail "no backup package list"
grep -q 'hip-runtime-amd.*6.0.32830' "${lists[@]}" ||
    fail "no backup records the state before the rollback"
locks=$("$T/bin/dnf" -q versionlock list 2>/dev/null)
for p in rocm-core-1:5.7.1 hip-runtime-amd-0:5.7.31921 rocblas-0:3.1.0; do
    [[ $locks == *"$p"* ]] || fail "no versionlock for $p: $locks"
done
D upgrade
[[ $(installed) == "$base_pkgs" ]] || fail "dnf upgrade undid the rollback despite the locks: $(installed)"
echo "ok: versionlock holds the baseline through dnf upgrade"
"$GPUVET" verify --root "$R" --baseline "$T/baseline.json" >"$T/verify-after.txt" 2>&1 ||
    fail "verify after the rollback exited $?: $(cat "$T/verify-after.txt")"
grep -q "matches the baseline" "$T/verify-after.txt" || fail "verify: $(cat "$T/verify-after.txt")"
echo "ok: verify after the rollback: $(head -1 "$T/verify-after.txt")"
