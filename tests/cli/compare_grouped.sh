#!/bin/bash
# Explanations read once (issue 35, part 4). Two result files as a stand-in
# cuBLAS with TF32 inside leaves them (written here: 12 fp32 GEMMs from SIMT to
# TF32 kernels, 23 -> 11 bits; 2 fp16 GEMMs to another fp16 kernel; the library
# loaded from LD_LIBRARY_PATH): compare says each signature once for its group
# of cases, one route line per kind of change, the library first with the
# variable as its mechanism; --all shows every id and kernel; --json and the
# report page carry the same structure.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
gv_tmpdir T
python3 - "$T" <<'PY'
import json, sys
d = sys.argv[1]
SIMT = ["aten::mm, kernels: ampere_sgemm_128x64_nn",
        "aten::mm, kernels: cutlass_80_simt_sgemm_128x128_8x4_nn_align1"]
TF32 = "aten::mm, kernels: sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_kernel"
HA = "aten::mm, kernels: ampere_h16816gemm_256x128_ldg8_stages_32x3_nn"
HB = "aten::mm, kernels: ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_nn"
def case(i, dt, out, bits, impl):
    return {"id": i, "op": "gemm", "in_dtype": dt, "compute_dtype": "f32", "out_dtype": "f32",
            "input_digest": "a" * 64, "output_digest": out * 64, "verdict": "pass", "impl": impl,
            "metrics": {"err_over_bound": 0.1, "effective_bits": bits, "mean_signed_error": 0,
                        "max_abs": 0, "max_rel": 0, "normwise": 0, "count": 4, "nan_count": 0,
                        "inf_count": 0}}
def doc(env, lib, cases):
    return {"schema": "gpuvet.results", "schema_version": 1, "suite": "quick", "created": "x",
            "device": {"description": {"name": "x"}},
            "snapshot": {"environment": {"collected": True, "variables": env},
                         "libraries": {"collected": True, "items": [
                             {"name": "cublas", "version": "13.0.0", "path": lib,
                              "sha256": ("b" if lib.startswith("/tmp") else "a") * 64}]}},
            "cases": cases}
a = [case("gemm.f32.k%d" % i, "f32", "1", 23, SIMT[i % 2]) for i in range(1, 13)]
b = [case("gemm.f32.k%d" % i, "f32", "2", 11, TF32) for i in range(1, 13)]
for x in "ab":
    a.append(case("gemm.f16." + x, "f16", "1", 10, HA))
    b.append(case("gemm.f16." + x, "f16", "2", 7, HB))
a.append(case("gemm.f16.c", "f16", "1", 10, HA))  # unchanged: the fp16 pair is not gemm.f16.*
b.append(case("gemm.f16.c", "f16", "1", 10, HB))
json.dump(doc({}, "/usr/lib/x86_64-linux-gnu/libcublas.so.13", a), open(d + "/a.json", "w"))
json.dump(doc({"LD_LIBRARY_PATH": "/tmp/x", "NVIDIA_TF32_OVERRIDE": "1"}, "/tmp/x/libcublas.so.13", b),
          open(d + "/b.json", "w"))
PY
[ -s "$T/b.json" ] || fail "could not write the result files"

expect_rc 1 "$GPUVET" compare "$T/a.json" "$T/b.json"
cp "$GV_OUT" "$T/text"
n=$(grep -c "signature of TF32 inputs" "$T/text")
[ "$n" -eq 1 ] || { cat "$T/text"; fail "the TF32 signature said $n times, not once"; }
grep -q "^  gemm.f32.\* (12): an fp32 GEMM left with about 11-12 effective bits" "$T/text" \
    || { cat "$T/text"; fail "no grouped signature line for gemm.f32.* (12)"; }
grep -q "^  gemm.f16.a, gemm.f16.b (2): a half-precision GEMM" "$T/text" \
    || { cat "$T/text"; fail "no grouped signature line for the fp16 cases"; }
n=$(grep -cE '^  [0-9]+\. route ' "$T/text")
[ "$n" -eq 2 ] || { cat "$T/text"; fail "$n route causes, not 2 (one per kind of change)"; }
grep -qE '^  [0-9]+\. route +SIMT fp32 kernel -> TF32 tensor-op kernel$' "$T/text" \
    || { cat "$T/text"; fail "no route line SIMT fp32 -> TF32"; }
grep -qE '^  1\. library +cuBLAS: /usr/lib/x86_64-linux-gnu/libcublas.so.13 .* -> /tmp/x/libcublas.so.13 .*\(through LD_LIBRARY_PATH=/tmp/x\)$' "$T/text" \
    || { cat "$T/text"; fail "the library is not the first cause with LD_LIBRARY_PATH as its mechanism"; }
grep -q "environment *LD_LIBRARY_PATH" "$T/text" && { cat "$T/text"; fail "LD_LIBRARY_PATH listed as a cause of its own"; }
grep -q "touches every degraded case (14): gemm.f32.k1, gemm.f32.k2, gemm.f32.k3 and 11 more" "$T/text" \
    || { cat "$T/text"; fail "the library's cases not named readably"; }
grep -q "sm80_xmma_gemm" "$T/text" && fail "full kernel names without --all"

expect_rc 1 "$GPUVET" compare --all "$T/a.json" "$T/b.json"
cp "$GV_OUT" "$T/all"
n=$(grep -c "sm80_xmma_gemm" "$T/all")
[ "$n" -eq 12 ] || { cat "$T/all"; fail "--all: $n kernel lines for the TF32 route, not 12"; }
grep -q "^       gemm.f32.k2: aten::mm, kernels: ampere_sgemm_128x64_nn -> aten::mm, kernels: sm80_xmma" "$T/all" \
    || { cat "$T/all"; fail "--all: a case's kernels before and after"; }
grep -q "^  gemm.f32.k1, gemm.f32.k2, .*, gemm.f32.k12 (12): an fp32 GEMM" "$T/all" \
    || { cat "$T/all"; fail "--all: every id of the group"; }

"$GPUVET" compare --json "$T/a.json" "$T/b.json" > "$T/c.json"
python3 - "$T/c.json" <<'PY' || fail "compare --json: the grouped explanation"
import json, sys
d = json.load(open(sys.argv[1]))
k = d["causes"]
assert k[0]["kind"] == "library" and k[0]["name"] == "cublas", k[0]
assert k[0]["mechanism"] == {"kind": "environment", "name": "LD_LIBRARY_PATH", "before": None,
                             "after": "/tmp/x"}, k[0]
assert not [c for c in k if c["name"] == "LD_LIBRARY_PATH"]
routes = [c for c in k if c["kind"] == "route"]
assert [(r["from_class"], r["to_class"], len(r["impls"])) for r in routes] == \
    [("simt-fp32", "tf32-tensor-op", 12), ("half-tensor-op", "half-tensor-op", 2)], routes
assert routes[0]["cases"] == ["gemm.f32.k%d" % i for i in range(1, 13)], routes[0]["cases"]
assert routes[0]["cases_text"] == "gemm.f32.*" and routes[0]["touches"] == 12
assert routes[0]["impls"][1] == {"case": "gemm.f32.k2", "before": "aten::mm, kernels: ampere_sgemm_128x64_nn",
    "after": "aten::mm, kernels: sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_kernel"}
for c in k:  # the old fields stay
    assert all(f in c for f in ("kind", "name", "before", "after", "rank", "touches", "touched_cases")), c
g = d["signature_groups"]
assert [(x["count"], x["cases_text"], [s["signature"] for s in x["signatures"]]) for x in g] == \
    [(12, "gemm.f32.*", ["tf32-inputs"]), (2, "gemm.f16.a, gemm.f16.b", ["narrow-accumulation"])], g
names = [k[i]["name"] for i in g[0]["causes"]]
assert names[0] == "cublas" and "SIMT fp32 kernel -> TF32 tensor-op kernel" in names \
    and "NVIDIA_TF32_OVERRIDE" in names, names
assert len(d["signatures"]) == 14  # per case, as before
PY

"$GPUVET" report "$T/c.json" -o "$T/c.html" 2>"$T/report.err" || fail "report: $(cat "$T/report.err")"
python3 - "$T/c.html" <<'PY' || fail "the report page's causes and signatures are not grouped"
import html, re, sys
page = open(sys.argv[1]).read()
def section(cls):
    m = re.search(r'<section[^>]*class="[^"]*\b%s\b[^"]*"[^>]*>(.*?)</section>' % cls, page, re.S)
    assert m, "no section " + cls
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))
sig, causes = section("signatures"), section("causes")
assert sig.count("signature of TF32 inputs") == 1, sig
assert "gemm.f32.* (12)" in sig and "gemm.f16.a, gemm.f16.b (2)" in sig, sig
assert causes.count("SIMT fp32 kernel -> TF32 tensor-op kernel") == 1, causes
assert "through LD_LIBRARY_PATH: (unset) → /tmp/x" in causes, causes
assert "the kernels of each case (12)" in causes, causes
assert "LD_LIBRARY_PATH" not in [l.strip() for l in causes.splitlines()], "a cause of its own"
PY
echo ok
