#!/usr/bin/env bash
# Rollback for real, in a Debian chroot: baseline = trixie's ROCm 5.7 packages;
# the machine was upgraded to sid's 6.4 stack and a stray HIP 6 library was
# left in the library directory. `gpuvet plan rollback` generates the script,
# the script runs inside the chroot (twice: it must be safe to repeat), and
# `gpuvet verify` must then pass. A baseline version that no source offers
# must give "cannot plan" and change nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_root "needs root (chroot, apt inside the fixture)"
need_cmd debootstrap "debootstrap is not installed"
command -v shellcheck >/dev/null || fail "shellcheck is not installed (scripts/install-deps.sh --test)"

mapfile -t roots < <("$GV_SRC/tests/fixtures/debian-rocm.sh" all)
trixie=${roots[0]}
sid=${roots[1]}
[[ -d $trixie && -d $sid ]] || fail "fixture roots missing: ${roots[*]}"

gv_tmpdir work rollback
root=$work/root

# A writable copy of the upgraded root. /usr and the .deb cache are hard-linked
# (dpkg replaces files by rename, so the cached fixture is never modified); the
# directories that are written in place are copied.
cp -al "$sid" "$root"
for d in etc var/lib var/log root; do
    rm -rf "${root:?}/$d"
    cp -a "$sid/$d" "$root/$d"
done
# a fresh /tmp: other tests use the cached root's /tmp for their own probes
rm -rf "${root:?}/tmp"
mkdir -m 1777 "$root/tmp"

# The baseline: the trixie root, before the upgrade.
"$GPUVET" snapshot --root "$trixie" -o "$work/baseline.json"

# A leftover of an older /opt install: a HIP 6 runtime no package owns.
libdir=$root/usr/lib/x86_64-linux-gnu
printf 'int hipInit(unsigned f){return (int)f;}\n' >"$work/stray.c"
cc -shared -fPIC -Wl,-soname,libamdhip64.so.6 -o "$libdir/libamdhip64.so.6.0.32830" "$work/stray.c"
dpkg-query --admindir="$root/var/lib/dpkg" -S /usr/lib/x86_64-linux-gnu/libamdhip64.so.6.0.32830 \
    >/dev/null 2>&1 && fail "the stray library is owned by a package: the test is wrong"

# Before the rollback verify must fail and name the HIP runtime change.
set +e
"$GPUVET" verify --root "$root" --baseline "$work/baseline.json" >"$work/verify-before.txt"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "verify before the rollback exited $rc, expected 1"
grep -q 'hip-runtime' "$work/verify-before.txt" || fail "verify did not name the HIP runtime change"

# A baseline version no source offers: cannot plan, nothing generated, nothing changed.
python3 - "$work/baseline.json" "$work/impossible.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for it in d["packages"]["items"]:
    if it["name"] == "libamdhip64-5":
        it["version"] = "5.7.1-99gpuvet"
json.dump(d, open(sys.argv[2], "w"))
EOF
status_before=$(sha256sum "$root/var/lib/dpkg/status")
touch "$work/before-planning"
sleep 1
set +e
"$GPUVET" plan rollback --to "$work/impossible.json" --root "$root" -o "$work/impossible.sh" \
    2>"$work/impossible.err"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "plan with an unavailable version exited $rc, expected 1"
grep -q 'cannot plan' "$work/impossible.err" || fail "no 'cannot plan' message"
grep -q '5.7.1-99gpuvet' "$work/impossible.err" || fail "the message does not name the version"
[[ ! -e $work/impossible.sh ]] || fail "a script was written for an impossible plan"
[[ $(sha256sum "$root/var/lib/dpkg/status") == "$status_before" ]] || fail "planning changed dpkg state"

# The real plan. Planning (availability queries, apt-get -s) writes nothing in the root.
"$GPUVET" plan rollback --to "$work/baseline.json" --root "$root" -o "$work/plan.sh"
written=$(find "$root" -newer "$work/before-planning" -not -type d | head -5)
[[ -z $written ]] || fail "planning wrote into the root: $written"
shellcheck -s bash "$work/plan.sh" || fail "the generated script does not pass shellcheck"
grep -q -- "--allow-downgrades" "$work/plan.sh" || fail "no single downgrade transaction"
grep -q "apt-mark' 'hold'" "$work/plan.sh" || fail "packages are not held"
grep -q "libamdhip64.so.6.0.32830" "$work/plan.sh" || fail "the leftover is not handled"

cp "$work/plan.sh" "$root/tmp/plan.sh"
run_plan() {
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 chroot "$root" bash /tmp/plan.sh \
        >>"$work/plan-run.log" 2>&1
}
run_plan || { tail -40 "$work/plan-run.log"; fail "the plan failed inside the chroot"; }
run_plan || { tail -40 "$work/plan-run.log"; fail "the plan failed when run a second time"; }

# dpkg's own records must now show the baseline's GPU packages and versions.
python3 - "$work/baseline.json" >"$work/want.txt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for it in sorted(d["packages"]["items"], key=lambda i: i["name"]):
    if it.get("gpu") and it.get("state") == "installed":
        print(it["name"], it["version"])
EOF
while read -r name version; do
    got=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version} ${db:Status-Abbrev}' "$name" \
          2>/dev/null || true)
    [[ $got == "$version hi "* || $got == "$version ii "* ]] ||
        fail "$name: want $version installed and held, dpkg says '$got'"
done <"$work/want.txt"
[[ ! -e $libdir/libamdhip64.so.6.0.32830 ]] || fail "the leftover is still in the library directory"
ls "$root"/var/backups/gpuvet/*/leftovers/libamdhip64.so.6.0.32830 >/dev/null ||
    fail "the leftover was not kept in the backup"

"$GPUVET" verify --root "$root" --baseline "$work/baseline.json" >"$work/verify-after.txt" ||
    { cat "$work/verify-after.txt"; fail "verify after the rollback did not pass"; }
grep -q 'matches the baseline' "$work/verify-after.txt" || fail "verify did not say the stack matches"
echo "rollback in a chroot: planned, ran twice, verified"
