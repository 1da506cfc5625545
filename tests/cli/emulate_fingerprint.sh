#!/bin/bash
# --device cpu:emulate=FINGERPRINT.json: GEMMs computed by the block-FMA model
# a probe fingerprint describes. Fingerprints are written here by hand:
#   fp_block.json: f32 GEMMs with inputs truncated to TF32, blocks of 4 products,
#     no extra alignment bit, sums toward zero; f16 -> f32 -> f16 GEMMs in
#     blocks of 4 with no extra bit; bf16 ones as plain as the CPU; no
#     f16acc16 precision. Expected: the f32 and f16acc32 cases' outputs differ
#     from --device cpu, the f32 ones fail their bound; bf16acc32 is
#     bit-identical; f16acc16 is unsupported, with a reason naming it.
#   fp_plain.json: every precision as the CPU computes it (one product per
#     rounding, full input bits, nearest-even): every modelled GEMM case is
#     bit-identical to --device cpu ("identical" in compare); f64 (not
#     modelled) is skipped.
# Then the real probe of the CPU (f32) emulated: bit-identical again; the
# probe of the fp_block emulation: fp_block's f32 properties again. And the
# reader's errors name the file and the field.
set -u
. "$(dirname "$0")/lib.sh"
gv_tmpdir T
export XDG_CACHE_HOME="$T/cache"

ONLY='gemm.f32.64x64x1024.*,gemm.f16acc32.128x128x128.*,gemm.f16acc32.64x64x256.*'
ONLY="$ONLY,gemm.f16acc16.*,gemm.bf16acc32.64x64x256.*,gemm.f64.*"

python3 - "$T" <<'PY' || fail "writing the fingerprints"
import json, sys
t = sys.argv[1]
def prec(name, i, c, o, **p):
    props = {k: {"value": v, "method": "by hand", "observations": []} for k, v in p.items()}
    return {"op": "gemm", "precision": name, "in": i, "compute": c, "out": o,
            "status": "probed", "properties": props}
def plain(in_bits, sum_bits, products, extra="0", in_round="not applicable", sub_out="kept"):
    return dict(input_subnormals="kept", output_subnormals=sub_out,
                input_mantissa_bits=str(in_bits), sum_mantissa_bits=str(sum_bits),
                input_rounding=in_round, sum_rounding="nearest-even", extra_bits=extra,
                product_rounding=products, fused_terms="1", deterministic="yes")
def doc(precs):
    return {"schema": "gpuvet.probe", "schema_version": 1, "device_spec": "hand",
            "device": {"name": "a hand-written device"},
            "routes": [{"route": "unused", "status": "unavailable", "precisions": []},
                       {"route": "hand", "status": "probed", "precisions": precs},
                       {"route": "other", "status": "probed", "precisions": precs[:1]}]}
block = dict(input_subnormals="kept", output_subnormals="kept", input_rounding="toward-zero",
             input_mantissa_bits="10", sum_mantissa_bits="23", sum_rounding="toward-zero",
             extra_bits="0", product_rounding="exact", fused_terms="4")
block16 = dict(block, input_mantissa_bits="10", input_rounding="not applicable",
               sum_mantissa_bits="10", sum_rounding="nearest-even")
json.dump(doc([prec("f32", "f32", "f32", "f32", **block),
               prec("f16.out16", "f16", "f32", "f16", **block16),
               prec("bf16.out16", "bf16", "f32", "bf16", **plain(7, 7, "exact", ">=2"))]),
          open(f"{t}/fp_block.json", "w"))
json.dump(doc([prec("f64", "f64", "f64", "f64", **plain(52, 52, "rounded")),
               prec("f32", "f32", "f32", "f32", **plain(23, 23, "rounded")),
               prec("tf32", "f32", "tf32", "f32",
                    **plain(10, 23, "not applicable", in_round="nearest-even")),
               prec("f16.out16", "f16", "f32", "f16", **plain(10, 10, "exact", ">=2")),
               prec("f16acc16", "f16", "f16", "f16", **plain(10, 10, "fma")),
               prec("bf16.out16", "bf16", "f32", "bf16", **plain(7, 7, "exact", ">=2"))]),
          open(f"{t}/fp_plain.json", "w"))
bad = doc([prec("f32", "f32", "f32", "f32", **dict(block, extra_bits="9"))])
# extra alignment bits the probe must find again exactly (issue 35: up to 8),
# with sums truncated or rounded to nearest, in blocks of 16 and 8
# and how products are aligned (by their exponent sum, or their leading bit)
for name, extra, blk, rnd, al in (
        ("x0", "0", "16", "toward-zero", "exponent sum"),
        ("x3", "3", "16", "toward-zero", "leading bit"),
        ("x6", "6", "8", "nearest-even", "exponent sum"),
        ("x8", ">=8", "16", "toward-zero", "leading bit")):
    props = dict(block, extra_bits=extra, fused_terms=blk, sum_rounding=rnd,
                 input_mantissa_bits="23", input_rounding="not applicable",
                 product_alignment=al)
    json.dump(doc([prec("f32", "f32", "f32", "f32", **props)]), open(f"{t}/fp_{name}.json", "w"))
# a summation tree per K (order.kN), as cuBLAS shows on an H100: the probe of
# the emulation must recover each tree again, and how the chunk sums are added
orders = {"order.k16": "chunks of 8 (sequential, 8 terms per rounding), combined sequentially",
          "order.k64": "chunks of 16 (sequential, 16 terms per rounding), combined sequentially",
          "order.k256": "chunks of 32 (sequential, 8 terms per rounding), combined sequentially"}
props = dict(block, extra_bits="3", fused_terms="undetermined", input_mantissa_bits="23",
             input_rounding="not applicable", combine_rounding="nearest-even", **orders)
# the probe measures at K = 32 (nearest tree: K = 16's, chunks of 8): chunk sums
# added to nearest, the sums within a chunk truncated
orders = dict(orders, combine_rounding="nearest-even", sum_rounding="toward-zero")
json.dump(doc([prec("f32", "f32", "f32", "f32", **props)]), open(f"{t}/fp_orders.json", "w"))
json.dump(orders, open(f"{t}/orders.json", "w"))
# a kernel structure per K (model.kN), as cuBLASLt shows on an H100: the
# partial K tile first at K = 255, split-K slices at K = 2048, the fp32
# datapath at K = 1; the probe of the emulation must fit each again
ea = "block 16, extra 2, exponent aligned"
fits = {"model.k16": ea, "model.k32": ea, "model.k64": ea, "model.k256": ea,
        "model.k255": "block 8, extra 2, exponent aligned, tile 128",
        "model.k2048": ea + ", chunks 320 nearest-even",
        "model.k1": "fp32 fma", "model.k300": "undetermined"}
props = dict(block, extra_bits="2", fused_terms="16", input_mantissa_bits="10",
             input_rounding="nearest-even", product_alignment="exponent sum", **fits)
json.dump(doc([prec("tf32", "f32", "tf32", "f32", **props)]), open(f"{t}/fp_fits.json", "w"))
json.dump(bad, open(f"{t}/fp_bad.json", "w"))
PY

run_check() { # NAME DEVICE
    "$GPUVET" check --device "$2" --only "$ONLY" --determinism none -o "$T/$1.json" \
        > "$T/$1.out" 2> "$T/$1.err"
}
run_check cpu cpu || fail "check --device cpu exit $?"
run_check block "cpu:emulate=$T/fp_block.json"
rc=$?
[ $rc -eq 1 ] || fail "emulate=block.json: check should find failures (exit 1), got $rc"
run_check plain "cpu:emulate=$T/fp_plain.json,route=hand"
rc=$?
# 1: the f64 case is unsupported (skipped); every other case must pass (below)
[ $rc -eq 1 ] || fail "emulate=plain.json: check exit $rc, not 1; $(tail -3 "$T/plain.err")"
for n in block plain; do
    "$GPUVET" compare "$T/cpu.json" "$T/$n.json" --json > "$T/cmp_$n.json"
    rc=$?
    [ $rc -le 1 ] || fail "compare cpu $n: exit $rc"
done

python3 - "$T" <<'PY' || fail "emulation expectations"
import json, sys
t = sys.argv[1]
def load(n): return {c["id"]: c for c in json.load(open(f"{t}/{n}.json"))["cases"]}
def cmp(n): return {c["id"]: c for c in json.load(open(f"{t}/cmp_{n}.json"))["cases"]}
cpu, block, plain = load("cpu"), load("block"), load("plain")
prec = lambda c: (c["in_dtype"], c["compute_dtype"], c["out_dtype"])
errors = []
assert len(cpu) == 6, sorted(cpu)
for i, c in cpu.items():
    p = prec(c)
    b, q = block[i], plain[i]
    if p in (("f32", "f32", "f32"), ("f16", "f32", "f16")):
        if b["output_digest"] == c["output_digest"]: errors.append(f"block: {i} did not change")
        if p[0] == "f32" and b["verdict"] != "fail": errors.append(f"block: {i} should fail")
    elif p == ("bf16", "f32", "bf16"):
        if b["output_digest"] != c["output_digest"]: errors.append(f"block: {i} changed")
    elif b["verdict"] != "skipped": errors.append(f"block: {i} should be unsupported")
    if p == ("f64", "f64", "f64"):
        if q["verdict"] != "skipped": errors.append(f"plain: {i} (f64) should be unsupported")
    elif q["output_digest"] != c["output_digest"] or q["verdict"] != "pass":
        errors.append(f"plain: {i} differs or does not pass")
same = {i for i, c in cmp("plain").items() if c["change"] == "identical"}
want = {i for i, c in cpu.items() if prec(c)[0] != "f64"}
if same != want: errors.append(f"compare: identical {sorted(same)}, want {sorted(want)}")
d = json.load(open(f"{t}/plain.json"))["device"]["description"]["emulate_fingerprint"]
if d["route"] != "hand" or len(d["sha256"]) != 64 or len(d["models"]) != 5:
    errors.append(f"description: {d}")
d = json.load(open(f"{t}/block.json"))["device"]["description"]["emulate_fingerprint"]
m = {x["precision"]: x for x in d["models"]}["f32"]
want = {"in_frac_bits": 10, "in_round": "toward-zero", "block": 4, "extra_bits": 0,
        "acc_round": "toward-zero", "products": "exact"}
got = {k: m["parameters"][k] for k in want}
if got != want: errors.append(f"block f32 parameters {got}")
m = {x["precision"]: x for x in d["models"]}["f16.out16"]
if not any("measured through the f16 output" in a for a in m["assumptions"]):
    errors.append(f"block f16.out16 assumptions {m['assumptions']}")
if errors:
    print("\n".join(errors)); sys.exit(1)
PY
grep -q 'f16acc16.*has no probed GEMM precision f16->f16->f16' "$T/block.out" \
    || fail "the unsupported f16acc16 case should say what the fingerprint lacks"

# The CPU's own fingerprint predicts it bit for bit.
"$GPUVET" probe --device cpu --dtype f32 --json -o "$T/probe.json" > /dev/null 2>&1 \
    || fail "probe exit $?"
"$GPUVET" check --device "cpu:emulate=$T/probe.json" --only 'gemm.f32.64x64x1024.*' \
    --determinism none -o "$T/probed.json" > /dev/null 2>&1 || fail "emulate=probe.json exit $?"
[ "$(json_get "$T/probed.json" 'd["cases"][0]["output_digest"]')" = \
  "$(json_get "$T/cpu.json" '[c for c in d["cases"] if c["id"].startswith("gemm.f32.64x64x1024")][0]["output_digest"]')" ] \
    || fail "the probed CPU fingerprint does not reproduce the CPU"

# Probing the emulated device finds the hand-written f32 fingerprint again.
"$GPUVET" probe --device "cpu:emulate=$T/fp_block.json" --dtype f32 --fit-k none --json -o "$T/reprobe.json" \
    > /dev/null 2>&1 || fail "probe of the emulation exit $?"
python3 - "$T" <<'PY' || fail "the probe of the emulated device does not give its fingerprint"
import json, sys
t = sys.argv[1]
p = [p for r in json.load(open(f"{t}/reprobe.json"))["routes"] for p in r["precisions"]
     if p["op"] == "gemm" and p["precision"] == "f32"][0]["properties"]
got = {k: p[k]["value"] for k in ("input_mantissa_bits", "input_rounding", "fused_terms",
                                  "extra_bits", "sum_mantissa_bits", "sum_rounding")}
want = {"input_mantissa_bits": "10", "input_rounding": "toward-zero", "fused_terms": "4",
        "extra_bits": "0", "sum_mantissa_bits": "23", "sum_rounding": "toward-zero"}
if got != want:
    print(f"got {got}"); sys.exit(1)
PY

# Extra alignment bits and block sizes found again exactly: the emulations
# written above (x8: 8 taken for ">=8", then every test up to 8 passes again).
for x in x0:0:16:'exponent sum' x3:3:16:'leading bit' x6:6:8:'exponent sum' x8:'>=8':16:undetermined; do
    IFS=: read -r name extra blk align <<<"$x"
    "$GPUVET" probe --device "cpu:emulate=$T/fp_$name.json,route=hand" --dtype f32 --fit-k none --json \
        -o "$T/re_$name.json" > /dev/null 2>&1 || fail "probe of emulation $name exit $?"
    got=$(json_get "$T/re_$name.json" '[p for r in d["routes"] for p in r["precisions"] if p["precision"] == "f32"][0]["properties"]["extra_bits"]["value"]')
    [ "$got" = "$extra" ] || fail "emulation $name: the probe found extra_bits $got, not $extra"
    got=$(json_get "$T/re_$name.json" '[p for r in d["routes"] for p in r["precisions"] if p["precision"] == "f32"][0]["properties"]["fused_terms"]["value"]')
    [ "$got" = "$blk" ] || fail "emulation $name: the probe found fused_terms $got, not $blk"
    got=$(json_get "$T/re_$name.json" '[p for r in d["routes"] for p in r["precisions"] if p["precision"] == "f32"][0]["properties"]["product_alignment"]["value"]')
    [ "$got" = "$align" ] || fail "emulation $name: the probe found product_alignment $got, not $align"
done

"$GPUVET" probe --device "cpu:emulate=$T/fp_orders.json,route=hand" --dtype f32 --fit-k none --json \
    -o "$T/re_orders.json" > /dev/null 2>&1 || fail "probe of emulation orders exit $?"
python3 - "$T" <<'PY' || fail "the probe of the emulation does not recover its trees"
import json, sys
t = sys.argv[1]
want = json.load(open(f"{t}/orders.json"))
p = [p for r in json.load(open(f"{t}/re_orders.json"))["routes"] for p in r["precisions"]
     if p["precision"] == "f32"][0]["properties"]
got = {k: p[k]["value"] for k in want}
if got != want:
    print(f"got {got}"); sys.exit(1)
# blocks of 8, 16 and 8 at the three K: fused_terms undetermined, saying why
if p["fused_terms"]["value"] != "undetermined" or not any(
        o.startswith("undetermined: the trees of different K") for o in p["fused_terms"]["observations"]):
    print(f"fused_terms {p['fused_terms']}"); sys.exit(1)
PY

# The kernel structure per K found again: the probe's fit on the emulation of
# fp_fits (K = 64 and K = 1 cannot show the tile of 128 and keep the one of
# K = 255).
"$GPUVET" probe --device "cpu:emulate=$T/fp_fits.json,route=hand" --dtype tf32 \
    --fit-k 2048,255,64,1 --json -o "$T/re_fits.json" > /dev/null 2>&1 || fail "probe of emulation fits exit $?"
python3 - "$T" <<'PY' || fail "the probe of the emulation does not fit its structures"
import json, sys
t = sys.argv[1]
p = [p for r in json.load(open(f"{t}/re_fits.json"))["routes"] for p in r["precisions"]
     if p["precision"] == "tf32"][0]["properties"]
ea = "block 16, extra 2, exponent aligned"
want = {"model.k2048": ea + ", chunks 320 nearest-even",
        "model.k255": "block 8, extra 2, exponent aligned, tile 128", "model.k64": ea + ", tile 128",
        "model.k1": "fp32 fma, tile 128"}
got = {k: p[k]["value"] for k in want}
extra = sorted(k for k in p if k.startswith("model.k") and k not in want)
if got != want or extra:
    print(f"got {got}, extra {extra}"); sys.exit(1)
if not p["model.k255"]["observations"][0].startswith("1024 of 1024 outputs reproduced"):
    print(p["model.k255"]); sys.exit(1)
PY
# the text output gives runs of K with one structure
"$GPUVET" probe --dtype f32 --fit-k 255,16 > "$T/fit.txt" || fail "probe --fit-k exit $?"
grep -q "model K=16\.\.255 *block 1, extra exact" "$T/fit.txt" || fail "model runs: $(cat "$T/fit.txt")"
expect_rc 2 "$GPUVET" probe --fit-k 0
grep -q -- "--fit-k 0: not" "$GV_ERR" || fail "--fit-k 0: $(cat "$GV_ERR")"
expect_rc 2 "$GPUVET" probe --fit-k "16,x"
# the emulation says which structure it takes at each K
"$GPUVET" check --device "cpu:emulate=$T/fp_fits.json,route=hand" --only 'gemm.f32.64x64x1024.*' \
    --determinism none -o "$T/fits.json" > /dev/null 2>&1
json_get "$T/fits.json" 'd["device"]["description"]["emulate_fingerprint"]["models"][0]["by_k"]' \
    | grep -q "'k': 2048, 'structure': 'block 16, extra 2, exponent aligned, chunks 320 nearest-even'" \
    || fail "by_k: $(json_get "$T/fits.json" 'd["device"]["description"]["emulate_fingerprint"]')"

# Errors name the file and the field; nothing runs with a bad fingerprint.
expect_rc 2,3,4 "$GPUVET" check --device "cpu:emulate=$T/fp_bad.json" --only 'gemm.f32.*'
grep -q "fp_bad.json: routes\[1\].precisions\[0\].properties.extra_bits.value" "$GV_ERR" \
    || fail "bad extra_bits: $(cat "$GV_ERR")"
expect_rc 2,3,4 "$GPUVET" check --device "cpu:emulate=$T/fp_plain.json,route=nosuch" --only 'gemm.f32.*'
grep -q 'route "nosuch" is not in the fingerprint' "$GV_ERR" || fail "route=nosuch: $(cat "$GV_ERR")"
echo '{"schema": "gpuvet.results", "schema_version": 1}' > "$T/other.json"
expect_rc 2,3,4 "$GPUVET" check --device "cpu:emulate=$T/other.json" --only 'gemm.f32.*'
grep -q 'expected "gpuvet.probe"' "$GV_ERR" || fail "wrong schema: $(cat "$GV_ERR")"
expect_rc 2,3,4 "$GPUVET" check --device "cpu:route=hand" --only 'gemm.f32.*'
echo "ok"
