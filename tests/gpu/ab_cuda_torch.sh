#!/usr/bin/env bash
# gpuvet ab between the system CUDA libraries and the copies PyTorch bundles
# (site-packages/nvidia/*/lib): it must run and say honestly whether bits differ.
set -euo pipefail
. "$(dirname "$0")/../cli/lib.sh"
[[ -e /dev/nvidia0 ]] || skip "no NVIDIA GPU"
sys=/usr/local/cuda/lib64
[[ -d $sys ]] || skip "no CUDA toolkit libraries in $sys"
torchlibs=$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site
dirs = []
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    dirs += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib")))
    t = os.path.join(sp, "torch", "lib")
    if os.path.isdir(t):
        dirs.append(t)
print(",".join("lib-path=" + d for d in dirs))
PY
)
[[ -n $torchlibs ]] || skip "no PyTorch-bundled CUDA libraries found"
work=$GV_TEST_TMP/ab-gpu.$$
mkdir -p "$work"
export XDG_CACHE_HOME=$work/cache
set +e
"$GPUVET" ab --a "lib-path=$sys" --b "$torchlibs" --device cuda:0 --suite quick \
    --keep "$work/kept" --json >"$work/ab.json"
rc=$?
set -e
[[ $rc -eq 0 || $rc -eq 1 ]] || fail "ab exited $rc"
python3 - "$work/ab.json" "$work/kept/a.json" "$work/kept/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2])); b = json.load(open(sys.argv[3]))
def libs(r):
    return sorted({(l.get("name"), l.get("path")) for l in r["device"]["description"].get("libraries", [])})
print("side a libraries:", libs(a))
print("side b libraries:", libs(b))
assert libs(a) != libs(b), "both sides loaded the same library files: the test did not test anything"
changes = {}
for c in d["cases"]:
    changes[c["change"]] = changes.get(c["change"], 0) + 1
print("changes:", changes)
PY
echo "ab between system CUDA and PyTorch-bundled libraries ran; see the changes above"
