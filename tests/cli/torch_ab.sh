#!/usr/bin/env bash
# gpuvet ab between two real PyTorch installations: trixie's 2.6 and sid's 2.14 (the same
# root filesystem really upgraded), each run inside its root (python-root=). Reported
# case by case; the comparison must name the torch version and the library files that
# changed as likely causes, and each side's result file must be that side's own run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
torch_roots
gv_workdir T
export XDG_CACHE_HOME=$T/cache
rc=0
"$GPUVET" ab --a "python-root=$TRIXIE_TORCH" --b "python-root=$SID_TORCH" --keep "$T/kept" \
    --json >"$T/ab.json" 2>"$T/ab.err" || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "ab exited $rc: $(cat "$T/ab.err")"
crc=0
"$GPUVET" compare "$T/kept/a.json" "$T/kept/b.json" >"$T/compare.txt" || crc=$?
[[ $crc == "$rc" ]] || fail "compare of the kept files exited $crc, ab exited $rc"
python3 - "$T" "$rc" "$(deb_version "$TRIXIE_TORCH" python3-torch)" "$(deb_version "$SID_TORCH" python3-torch)" <<'PY'
import json, sys
T, rc, va, vb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ab = json.load(open(T + "/ab.json"))
a = json.load(open(T + "/kept/a.json")); b = json.load(open(T + "/kept/b.json"))
ta, tb = a["device"]["description"]["torch"], b["device"]["description"]["torch"]
assert ta["version"].startswith(va) and tb["version"].startswith(vb), (ta["version"], tb["version"])
assert a["device"]["description"]["python_root"].endswith("trixie-torch")
assert b["device"]["description"]["python_root"].endswith("sid-torch")
ida = {c["id"] for c in a["cases"]}; idb = {c["id"] for c in b["cases"]}
assert ida == idb and len(ab["cases"]) == len(ida), "both sides ran the same cases"
# every case judged from the two files: identical means the same output digest
for c in ab["cases"]:
    x = next(k for k in a["cases"] if k["id"] == c["id"]); y = next(k for k in b["cases"] if k["id"] == c["id"])
    if c["change"] == "identical":
        assert x["output_digest"] == y["output_digest"] and x["output_digest"], c["id"]
    if c["flagged"]:
        assert c["change"] in ("degraded", "newly_failing"), c
flagged = [c for c in ab["cases"] if c["flagged"]]
assert (rc == 1) == bool(flagged), (rc, len(flagged))
causes = {(k["kind"], k["name"]): k for k in ab["causes"]}
v = causes[("device", "torch.version")]
assert v["before"].strip('"').startswith(va) and v["after"].strip('"').startswith(vb), v
lib = causes[("library", "libtorch_cpu")]
assert va in lib["before"] and vb in lib["after"] and "/libtorch_cpu.so." in lib["after"], lib
summary = {k: n for k, n in ab["summary"].items() if n}
print("torch %s -> %s: %s" % (ta["version"], tb["version"], summary))
for c in ab["cases"]:
    if c["change"] not in ("identical",):
        print("  %-44s %-14s bits %s -> %s" % (c["id"], c["change"],
              c["before"].get("effective_bits"), c["after"].get("effective_bits")))
print("causes: " + "; ".join("%s %s" % k for k in causes))
PY
grep -q "torch.version" "$T/compare.txt" || fail "the human comparison does not name the torch version"
