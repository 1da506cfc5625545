#!/usr/bin/env bash
# gpuvet diff on AMD's /opt/rocm-X.Y.Z layout (tests/fixtures/amd-layout.sh): the same
# machine with /opt/rocm switched from 5.7.0 to 6.0.0, then with a stray 6.0 library
# left in the 5.7 directory, then with a profile.d file and LD_LIBRARY_PATH pointing at
# 5.7 (set in the image's /etc/environment: under --root the variables are the image's,
# not this process's). Expected changes are derived from how the fixture was built, not
# from gpuvet.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd gcc "gcc is needed to build the fixture libraries"
need_cmd python3 "python3 is needed to read the JSON"
gv_workdir T
FX=$GV_SRC/tests/fixtures/amd-layout.sh
"$FX" "$T/r57" --link 5.7.0
"$FX" "$T/r60"
"$FX" "$T/stray" --stray
"$FX" "$T/ldpath" --ldpath
"$FX" "$T/ldenv"
# what a login in this image gets from pam_env: LD_LIBRARY_PATH pointing at 5.7
printf '# set by hand after the upgrade\nLD_LIBRARY_PATH="/opt/rocm-5.7.0/lib"\n' \
    >"$T/ldenv/etc/environment"
snap() { # ROOT OUT: a snapshot in a fixed, minimal environment
    env -i PATH=/usr/bin:/bin "$GPUVET" snapshot --no-hash --root "$1" -o "$2"
}
snap "$T/r57" "$T/a.json"
snap "$T/r60" "$T/b.json"
snap "$T/stray" "$T/c.json"
snap "$T/ldpath" "$T/d.json"
snap "$T/ldenv" "$T/e.json"

d() { # A B OUT: diff --json, exit status must be 0 or 1
    local rc=0
    "$GPUVET" diff --json "$1" "$2" >"$3" || rc=$?
    [[ $rc -le 1 ]] || fail "diff $1 $2 exited $rc"
    echo "$rc"
}
[[ $(d "$T/b.json" "$T/b.json" "$T/same.json") == 0 ]] || fail "self diff reports changes"
[[ $(d "$T/a.json" "$T/b.json" "$T/ab.json") == 1 ]] || fail "switching /opt/rocm shows no change"
d "$T/b.json" "$T/c.json" "$T/bc.json" >/dev/null
d "$T/b.json" "$T/d.json" "$T/bd.json" >/dev/null
d "$T/b.json" "$T/e.json" "$T/be.json" >/dev/null

python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
load = lambda n: json.load(open(f"{T}/{n}.json"))
snap_b = load("b")
def collected(snap, sec):
    return snap[sec]["collected"]
def has(doc, layer, kind, subject, before="?", after="?"):
    for c in doc["changes"]:
        if (c["layer"], c["kind"], c["subject"]) == (layer, kind, subject) and \
           (before == "?" or c["before"] == before) and (after == "?" or c["after"] == after):
            return c
    raise AssertionError(f"missing {layer}/{kind}/{subject} {before} -> {after}: " +
                         json.dumps([c["subject"] for c in doc["changes"]]))
def not_comparable(doc, sec):
    assert sec in [n["section"] for n in doc["not_comparable"]], f"{sec} should be not comparable"
notes = []

ab = load("ab")
# /opt/rocm -> 6.0: the loader now picks the 6.0 files through /opt/rocm/lib (rocm.conf)
assert collected(snap_b, "loader")
has(ab, "loader", "added", "loader resolves libamdhip64.so.6", None, "/opt/rocm-6.0.0/lib/libamdhip64.so.6.0.32830")
has(ab, "loader", "removed", "loader resolves libamdhip64.so.5", "/opt/rocm-5.7.0/lib/libamdhip64.so.5.7.31921", None)
has(ab, "loader", "changed", "loader resolves librccl.so.1",
    "/opt/rocm-5.7.0/lib/librccl.so.1.0.50700", "/opt/rocm-6.0.0/lib/librccl.so.1.0.60000")
has(ab, "loader", "changed", "loader resolves libMIOpen.so.1",
    "/opt/rocm-5.7.0/lib/libMIOpen.so.1.0.50700", "/opt/rocm-6.0.0/lib/libMIOpen.so.1.0.60000")
# same dpkg database on both sides: not one package change
assert collected(snap_b, "packages")
assert not [c for c in ab["changes"] if c["layer"] == "packages"], \
    [c["subject"] for c in ab["changes"] if c["layer"] == "packages"]
if collected(snap_b, "stacks"):
    has(ab, "loader", "changed", "/opt/rocm link", "/opt/rocm-5.7.0", "/opt/rocm-6.0.0")
    has(ab, "loader", "changed", "alternative rocm", "/opt/rocm-5.7.0", "/opt/rocm-6.0.0")
else:
    not_comparable(ab, "stacks"); notes.append("stacks not collected yet")

bc = load("bc")
if collected(snap_b, "libraries"):
    c = has(bc, "math", "unowned", "/opt/rocm-5.7.0/lib/librocblas.so.4.0.0", None, "owned by no package")
    assert len([x for x in bc["changes"] if "librocblas.so.4.0.0" in x["subject"] + (x.get("detail") or "")
                and x["layer"] == "math"]) == 1, "the stray is reported once"
else:
    not_comparable(bc, "libraries"); notes.append("libraries not collected yet")

bd = load("bd")
assert collected(snap_b, "environment")
has(bd, "loader", "added", "profile script /etc/profile.d/zz-rocm-ldpath.sh", None, "sets LD_LIBRARY_PATH")
has(bd, "loader", "added", "LD_LIBRARY_PATH (/etc/profile.d/zz-rocm-ldpath.sh)")

be = load("be")
has(be, "loader", "added", "LD_LIBRARY_PATH (loader)", None, "/opt/rocm-5.7.0/lib")
has(be, "loader", "changed", "loader resolves librccl.so.1",
    "/opt/rocm-6.0.0/lib/librccl.so.1.0.60000", "/opt/rocm-5.7.0/lib/librccl.so.1.0.50700")
if collected(snap_b, "libraries") and any(i.get("rocm_release") for i in snap_b["libraries"]["items"]):
    # 5.7's librccl.so.1 picked through LD_LIBRARY_PATH next to the 6.0 HIP runtime
    has(be, "runtime", "mixed", "librccl.so.1")
    has(be, "runtime", "mixed", "libMIOpen.so.1")
    # 5.7's HSA runtime and comgr shadow the 6.0 ones that libamdhip64.so.6 needs
    has(be, "runtime", "mixed", "libhsa-runtime64.so.1")
    has(be, "runtime", "mixed", "libamd_comgr.so.2")
    # 5.7 libraries with 5.7-only SONAMEs run on their own HIP 5.7: not mixed
    assert not [c for c in be["changes"] if c["kind"] == "mixed" and
                c["subject"] in ("librocblas.so.3", "libhipblas.so.1", "libhiprtc.so.5")]
    assert not [c for c in load("ab")["changes"] if c["kind"] == "mixed"]
else:
    notes.append("mixed-set check needs libraries with rocm_release")
for doc in (ab, bc, bd, be):
    ranks = [c["rank"] for c in doc["changes"]]
    assert ranks == sorted(ranks)
print("diff_amd_layout: ok" + (" (partial: " + "; ".join(notes) + ")" if notes else ""))
PY
