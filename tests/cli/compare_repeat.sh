#!/bin/bash
# 20 repeated runs of an unchanged setup: compare flags nothing, every case is
# bit-identical, the element-wise diff finds 0 differing elements, and no
# environment/library/device difference is invented.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$GV_TEST_TMP/cache"
ONLY='gemm.f16acc32.128x128x128.*,gemm.f32.127x253x511.*,softmax.f16.*,sum.f32.*,sdpa.f32.*,gelu.f16.*,convert.f32-e4m3.*'

"$GPUVET" check --device cpu --only "$ONLY" -o "$T/r0.json" --save-outputs "$T/o0.st" > /dev/null \
    || fail "first run exit $?"
n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cases']))" "$T/r0.json")
[ "$n" -eq 7 ] || fail "expected 7 cases, got $n"
for i in $(seq 1 20); do
    "$GPUVET" check --device cpu --only "$ONLY" --determinism none -o "$T/r$i.json" \
        --save-outputs "$T/o$i.st" > /dev/null || fail "run $i exit $?"
    "$GPUVET" compare "$T/r0.json" "$T/r$i.json" --json > "$T/c$i.json"
    rc=$?
    [ $rc -eq 0 ] || fail "run $i: compare exit $rc on an unchanged setup"
    python3 - "$T/c$i.json" <<'PY' || fail "run $i: comparison content"
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["flagged"]
assert d["summary"]["identical"] == 7, d["summary"]
assert d["causes"] == [], d["causes"]
for c in d["cases"]:
    assert c["elementwise"]["differing"] == 0 and c["elementwise"]["max_ulp"] == 0, c
PY
done
# the human form says the same
"$GPUVET" compare "$T/r0.json" "$T/r20.json" > "$T/human" || fail "human compare exit $?"
grep -q "^7 identical$" "$T/human" || fail "human summary: $(cat "$T/human")"
echo ok
