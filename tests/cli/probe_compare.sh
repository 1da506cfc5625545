#!/bin/bash
# gpuvet probe and the explanation in compare, on the CPU oracle: compare of a
# plain run against each emulation (check --probe on both sides) names the
# changed fingerprint property; the causes are readable and ranked.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
"$GPUVET" probe --help | grep -q "usage: gpuvet probe" || fail "probe --help"
"$GPUVET" probe --route nosuch >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown route is a usage error"
"$GPUVET" probe --dtype f32 --json -o "$T/fp.json" > "$T/fp.out" || fail "probe --json"
python3 - "$T/fp.json" <<'PY' || fail "fingerprint document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuvet.probe" and d["schema_version"] == 1
p = d["routes"][0]["precisions"][0]["properties"]
assert p["input_mantissa_bits"]["value"] == "23", p["input_mantissa_bits"]
assert p["input_subnormals"]["value"] == "kept"
assert all(v["observations"] for k, v in p.items() if v["value"] != "not applicable"), "observations"
PY
ONLY='gemm.f32*,gemm.f16acc32*,gemm.f16acc16*'
"$GPUVET" check --device cpu --only "$ONLY" --determinism none --probe -o "$T/plain.json" >/dev/null || fail "plain check"
while read -r emu want; do
  "$GPUVET" check --device "cpu:emulate=$emu" --only "$ONLY" --determinism none --probe -o "$T/$emu.json" >/dev/null
  "$GPUVET" compare "$T/plain.json" "$T/$emu.json" > "$T/$emu.out"; rc=$?
  [ $rc -eq 1 ] || fail "$emu: compare exit $rc (expected 1: degraded)"
  grep -qF "$want" "$T/$emu.out" || { cat "$T/$emu.out"; fail "$emu: no '$want'"; }
  grep -q '\["' "$T/$emu.out" && fail "$emu: a raw JSON array in the causes"
  grep -q '^  1\. device      emulate: (none) -> '"$emu" "$T/$emu.out" || { cat "$T/$emu.out"; fail "$emu: the emulation is not the first cause"; }
done <<'LIST'
tf32 fp32 GEMM on cpu: inputs now rounded to 10 mantissa bits (was 23)
tf32rz fp32 GEMM on cpu: inputs now truncated to 10 mantissa bits (was 23)
trunc fp32 GEMM on cpu: sums now round toward-zero (was nearest-even)
fp16acc fp16 GEMM on cpu: sums now keep 10 mantissa bits (was 23)
bf16gemm fp16 GEMM on cpu: inputs now rounded to 7 mantissa bits (was 10)
ftz fp16 GEMM on cpu: input subnormals now flushed (were kept)
LIST
# signatures: TF32 and truncation
grep -q "signature of TF32 inputs" "$T/tf32.out" || fail "tf32 signature"
grep -q "biased toward zero" "$T/trunc.out" || fail "truncation signature"
grep -q "flushed to zero" "$T/ftz.out" || fail "flush-to-zero signature"
# JSON carries the same
"$GPUVET" compare --json "$T/plain.json" "$T/tf32.json" > "$T/tf32.json.out"
python3 - "$T/tf32.json.out" <<'PY' || fail "compare --json explanation"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["causes"][0]["rank"] == 0 and d["causes"][0]["name"] == "emulate", d["causes"][0]
assert any(c["property"] == "input_mantissa_bits" and c["after"] == "10" for c in d["fingerprint_changes"])
assert any(s["signature"] == "tf32-inputs" for s in d["signatures"])
PY
echo ok
