#!/bin/bash
# Each CPU emulation (a testing aid standing in for a GPU stack's behaviour)
# must move exactly the cases it should and nothing else. Expected sets are
# derived here from the case properties recorded in the result files (op,
# formats, distribution, reduction length), never from gpuvet's own verdicts.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$GV_TEST_TMP/cache"

"$GPUVET" check --device cpu --determinism none -o "$T/base.json" > /dev/null \
    || fail "baseline run exit $?"
for e in tf32 fp16acc ftz trunc bf16gemm; do
    "$GPUVET" check --device "cpu:emulate=$e" --determinism none -o "$T/$e.json" > /dev/null
    rc=$?
    [ $rc -eq 1 ] || fail "emulate=$e: check should find failures (exit 1), got $rc"
    "$GPUVET" compare "$T/base.json" "$T/$e.json" --json > "$T/cmp_$e.json"
    rc=$?
    [ $rc -eq 1 ] || fail "emulate=$e: compare should flag it (exit 1), got $rc"
done

python3 - "$T" <<'PY' || fail "emulation expectations"
import json, sys
t = sys.argv[1]
def load(n): return {c["id"]: c for c in json.load(open(f"{t}/{n}.json"))["cases"]}
base = load("base")
assert all(c["verdict"] == "pass" for c in base.values()), "baseline must pass"

def red_len(c):
    s = c["shape"]
    if c["op"] == "gemm": return s["k"]
    if c["op"] == "conv2d": return s["c"] * s["r"] * s["s"]
    return 0
mm = lambda c: c["op"] in ("gemm", "conv2d")
half_in = lambda c: c["in_dtype"] in ("f16", "bf16")
# class: the cases the emulation touches at all; must: the ones it must break.
rules = {
  "tf32": (lambda c: mm(c) and c["in_dtype"] == "f32" and c["compute_dtype"] == "f32",) * 2,
  "fp16acc": (lambda c: c["op"] == "gemm" and c["in_dtype"] == "f16" and c["compute_dtype"] == "f32",) * 2,
  "bf16gemm": (lambda c: c["op"] == "gemm" and c["in_dtype"] == "f16" and c["compute_dtype"] == "f32",) * 2,
  "ftz": (lambda c: mm(c) and half_in(c),
          lambda c: mm(c) and half_in(c) and c["dist"] == "subnormal"),
  "trunc": (lambda c: mm(c) and c["compute_dtype"] != "f64",
            lambda c: mm(c) and c["compute_dtype"] == "f32" and c["out_dtype"] == "f32" and red_len(c) >= 128),
}
exact = {"tf32", "fp16acc", "bf16gemm"}
errors = []
for e, (cls, must) in rules.items():
    emu = load(e)
    cmp = {c["id"]: c for c in json.load(open(f"{t}/cmp_{e}.json"))["cases"]}
    in_cls = {i for i, c in base.items() if cls(c)}
    must_set = {i for i, c in base.items() if must(c)}
    failing = {i for i, c in emu.items() if c["verdict"] != "pass"}
    flagged = {i for i, c in cmp.items() if c["flagged"]}
    moved = {i for i, c in emu.items() if c["output_digest"] != base[i]["output_digest"]}
    if not must_set: errors.append(f"{e}: the quick suite has no case it must break")
    # nothing outside the class moves, not even by one bit
    if moved - in_cls: errors.append(f"{e}: cases outside its class changed: {sorted(moved - in_cls)}")
    if not must_set <= failing: errors.append(f"{e}: should fail but pass: {sorted(must_set - failing)}")
    if not must_set <= flagged: errors.append(f"{e}: compare did not flag: {sorted(must_set - flagged)}")
    if e in exact:
        if failing != must_set: errors.append(f"{e}: failing {sorted(failing)} != expected {sorted(must_set)}")
        if flagged != must_set: errors.append(f"{e}: flagged {sorted(flagged)} != expected {sorted(must_set)}")
    else:
        if not failing <= in_cls: errors.append(f"{e}: failures outside its class: {sorted(failing - in_cls)}")
        if not flagged <= in_cls: errors.append(f"{e}: flags outside its class: {sorted(flagged - in_cls)}")
    # the attribution names the emulation as a device change
    causes = json.load(open(f"{t}/cmp_{e}.json"))["causes"]
    if not any(c["kind"] == "device" and c["name"] == "emulate" and e in (c["after"] or "") for c in causes):
        errors.append(f"{e}: compare did not name the device change: {causes}")
    print(f"{e}: class {len(in_cls)}, must {len(must_set)}, failing {len(failing)}, flagged {len(flagged)}, moved {len(moved)}")

# the effect is visible in the metrics
tf = load("tf32")
for i, c in tf.items():
    if c["op"] == "gemm" and c["in_dtype"] == "f32" and c["compute_dtype"] == "f32" and c["dist"] != "positive":
        b = tf[i]["metrics"]["effective_bits"]
        if not (10.0 <= b <= 12.5): errors.append(f"tf32: {i} has {b:.2f} effective bits, expected about 11")
        if base[i]["metrics"]["effective_bits"] < 20: errors.append(f"baseline {i} below 20 bits")
tr = load("trunc")["gemm.f32.64x64x1024.positive.s1"]["metrics"]["mean_signed_error"]
b0 = base["gemm.f32.64x64x1024.positive.s1"]["metrics"]["mean_signed_error"]
if not (tr < 0 and abs(tr) > 100 * abs(b0)): errors.append(f"trunc: signed mean error {tr} vs baseline {b0}")
fa = load("fp16acc")["gemm.f16acc32.64x64x8192.uniform.s1"]["metrics"]
if not fa["err_over_bound"] > 10: errors.append(f"fp16acc: large-K case only {fa['err_over_bound']} x bound")
if errors:
    print("\n".join(errors), file=sys.stderr); sys.exit(1)
PY
echo ok
