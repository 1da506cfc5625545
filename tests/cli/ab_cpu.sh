#!/usr/bin/env bash
# gpuvet ab on the CPU backend: two child processes with different set-ups,
# compared like `gpuvet compare`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir work ab
export XDG_CACHE_HOME=$work/cache
only='gemm.f32.*'

# The same stack twice: every case bit-identical, exit 0.
"$GPUVET" ab --a system --b system --device cpu --only "$only" --json >"$work/same.json" ||
    fail "ab of identical sides exited $?"
python3 - "$work/same.json" <<'PY' || fail "identical sides were not all identical"
import json, sys
d = json.load(open(sys.argv[1]))
cases = d["cases"]
assert cases, "no cases compared"
assert all(c["change"] == "identical" for c in cases), [c["change"] for c in cases]
PY

# Side B emulates TF32 input rounding: every fp32 GEMM is flagged, exit 1, and
# the environment variable given to B shows up among the likely causes.
set +e
"$GPUVET" ab --a system --b device=cpu:emulate=tf32,env=NVIDIA_TF32_OVERRIDE=1 --device cpu \
    --only "$only" --keep "$work/kept" --json >"$work/tf32.json"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "ab with TF32 on side B exited $rc, expected 1"
python3 - "$work/tf32.json" <<'PY' || fail "TF32 side not flagged as expected"
import json, sys
d = json.load(open(sys.argv[1]))
cases = d["cases"]
assert cases and all(c["change"] in ("newly_failing", "degraded") for c in cases), cases
causes = json.dumps(d.get("causes", d.get("likely_causes", [])))
assert "NVIDIA_TF32_OVERRIDE" in causes, causes
PY
for f in a.json b.json a.safetensors b.safetensors; do
    [[ -s $work/kept/$f ]] || fail "--keep did not keep $f"
done

# Bad specs are usage errors.
set +e
"$GPUVET" ab --a system --b bogus=1 --device cpu --only "$only" 2>/dev/null; rc1=$?
"$GPUVET" ab --a lib-path=/nonexistent/dir --b system --device cpu --only "$only" 2>/dev/null; rc2=$?
"$GPUVET" ab --a 'env=1BAD=x' --b system --device cpu --only "$only" 2>/dev/null; rc3=$?
"$GPUVET" ab --a system --device cpu 2>/dev/null; rc4=$?
set -e
[[ $rc1 -eq 2 && $rc2 -eq 2 && $rc3 -eq 2 && $rc4 -eq 2 ]] ||
    fail "bad specs: exit codes $rc1 $rc2 $rc3 $rc4, expected 2 2 2 2"
echo "ab: identical sides identical, TF32 side flagged with its cause, bad specs refused"
