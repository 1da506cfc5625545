#!/usr/bin/env bash
# End to end on real Debian roots (tests/fixtures/debian-rocm.sh): snapshot trixie-rocm
# (HIP 5.7.1) and sid-rocm (the same root really upgraded to HIP 6.4) with --root, diff
# them, and check that the package transitions gpuvet reports are exactly those computed
# independently from dpkg-query on the two roots, and that the HIP runtime change
# 5.7 -> 6.4 is reported under the runtime layer.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "the Debian fixtures need root to build"
need_cmd debootstrap "debootstrap is not installed"
command -v dpkg-query >/dev/null || skip "dpkg-query is not installed"
need_cmd python3 "python3 is needed to read the JSON"
gv_workdir T
mapfile -t roots < <("$GV_SRC/tests/fixtures/debian-rocm.sh" all) || fail "fixture build failed"
TRIXIE=${roots[0]} SID=${roots[1]}

for r in trixie:"$TRIXIE" sid:"$SID"; do
    name=${r%%:*} root=${r#*:}
    env -i PATH=/usr/bin:/bin "$GPUVET" snapshot --no-hash --root "$root" -o "$T/$name.json" ||
        fail "snapshot of $root"
    dpkg-query --admindir="$root/var/lib/dpkg" -W \
        -f='${db:Status-Status}\t${Package}\t${Architecture}\t${Version}\n' >"$T/$name.dpkg"
done
# two snapshots of the same root diff clean (nothing spurious such as times or order)
env -i PATH=/usr/bin:/bin "$GPUVET" snapshot --no-hash --root "$SID" -o "$T/sid2.json"
"$GPUVET" diff "$T/sid.json" "$T/sid2.json" >"$T/same.txt" || fail "sid vs sid: $(cat "$T/same.txt")"
rc=0
"$GPUVET" diff --json "$T/trixie.json" "$T/sid.json" >"$T/diff.json" || rc=$?
[[ $rc == 1 ]] || fail "diff exited $rc, expected 1 (differences)"
"$GPUVET" diff "$T/trixie.json" "$T/sid.json" >"$T/diff.txt" || true

python3 - "$T" <<'PY'
import json, sys, collections
T = sys.argv[1]
def dpkg(name):
    rows = [l.rstrip("\n").split("\t") for l in open(f"{T}/{name}.dpkg") if l.strip()]
    rows = [r for r in rows if r[0] == "installed"]
    n = collections.Counter(r[1] for r in rows)
    return {(r[1] if n[r[1]] == 1 else f"{r[1]}:{r[2]}"): r[3] for r in rows}
a, b = dpkg("trixie"), dpkg("sid")
exp = {}
for k in a.keys() | b.keys():
    if k not in b: exp[k] = ("removed", a[k], None)
    elif k not in a: exp[k] = ("added", None, b[k])
    elif a[k] != b[k]: exp[k] = ("changed", a[k], b[k])
d = json.load(open(f"{T}/diff.json"))
got = {c["subject"]: (c["kind"], c["before"], c["after"]) for c in d["changes"]
       if c["layer"] == "packages" and " (" not in c["subject"]}
missing = {k: v for k, v in exp.items() if got.get(k) != v}
extra = {k: v for k, v in got.items() if k not in exp}
assert not missing and not extra, f"missing/wrong: {missing}\nextra: {extra}"
kinds = collections.Counter(v[0] for v in exp.values())
assert exp.get("libamdhip64-5", ("",))[0] == "removed" and exp.get("libamdhip64-6", ("",))[0] == "added"
# GPU packages come first within the packages layer
pk = [c for c in d["changes"] if c["layer"] == "packages" and " (" not in c["subject"]]
gpu_pos = [i for i, c in enumerate(pk) if c["subject"] in ("libamdhip64-6", "librocblas4", "libamdhip64-5")]
non_gpu = [i for i, c in enumerate(pk) if c["subject"] in ("libc6", "coreutils", "apt")]
if gpu_pos and non_gpu:
    assert max(gpu_pos) < min(non_gpu), "GPU packages should come before the others"
snap = json.load(open(f"{T}/sid.json"))
assert snap["libraries"]["collected"], "libraries were not collected"
hip = [c for c in d["changes"] if c["layer"] == "runtime" and c["subject"].startswith("hip-runtime")]
assert any((c["before"] or "").startswith("5.7") and (c["after"] or "").startswith("6.4") for c in hip) or \
       (any(c["kind"] == "removed" and (c["before"] or "").startswith("5.7") for c in hip) and
        any(c["kind"] == "added" and (c["after"] or "").startswith("6.4") for c in hip)), \
    f"HIP runtime 5.7 -> 6.4 not under the runtime layer: {hip}"
ranks = [c["rank"] for c in d["changes"]]
assert ranks == sorted(ranks)
first_hip = min(i for i, c in enumerate(d["changes"]) if c in hip)
first_pkg = min(i for i, c in enumerate(d["changes"]) if c["layer"] == "packages")
assert first_hip < first_pkg
print(f"diff_debian_upgrade: ok: {kinds['changed']} changed, {kinds['added']} added, "
      f"{kinds['removed']} removed packages match dpkg-query exactly; HIP 5.7 -> 6.4 under the runtime layer")
PY
