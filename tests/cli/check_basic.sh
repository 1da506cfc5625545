#!/bin/bash
# gpuvet check on the CPU backend: every quick case passes, and the result file,
# safetensors outputs and JUnit report are real, readable files of their formats.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$GV_TEST_TMP/cache"

# --list and --only
"$GPUVET" check --list > "$T/list" || fail "--list exit $?"
n_quick=$(wc -l < "$T/list")
[ "$n_quick" -ge 30 ] || fail "quick suite has only $n_quick cases"
"$GPUVET" check --list --suite standard > "$T/list_std" || fail "--list --suite standard"
[ "$(wc -l < "$T/list_std")" -gt "$n_quick" ] || fail "standard is not larger than quick"
"$GPUVET" check --list --only 'gemm.f16*' > "$T/list_f16" || fail "--only"
grep -qv '^gemm\.f16' "$T/list_f16" && fail "--only let a non-matching case through"
grep -q '^gemm\.f16acc32\.64x64x8192\.uniform\.s1 ' "$T/list_f16" || fail "large-K fp16 case missing"

# usage errors: exit 2 with a message
"$GPUVET" check --suite huge 2> "$T/err"; [ $? -eq 2 ] || fail "--suite huge should exit 2"
grep -q "quick, standard or full" "$T/err" || fail "no explanation for a bad --suite"
"$GPUVET" check --only 'nomatch*' 2> "$T/err"; [ $? -eq 2 ] || fail "--only with no match should exit 2"
"$GPUVET" check --device cpu:emulate=bogus 2> "$T/err"; [ $? -eq 2 ] || fail "bad emulation should exit 2"
grep -q "unknown emulation 'bogus'" "$T/err" || fail "bad emulation not named: $(cat "$T/err")"
"$GPUVET" check --device nosuch 2> "$T/err"; [ $? -eq 2 ] || fail "unknown device kind should exit 2"
# a device that cannot be opened (no CUDA GPU or library here) is an error, exit 3
if ! ls /dev/nvidia0 > /dev/null 2>&1; then
    "$GPUVET" check --device cuda:0 --only 'convert.*' > /dev/null 2> "$T/err"
    rc=$?; [ $rc -eq 3 ] || fail "--device cuda:0 without a GPU: exit $rc, expected 3"
    grep -q "error" "$T/err" || fail "--device cuda:0 without a GPU: no message"
fi

# the help documents the emulations as a testing aid
"$GPUVET" check --help > "$T/help" || fail "--help"
grep -q "TESTING AID" "$T/help" || fail "--help does not call emulation a testing aid"
for e in tf32 fp16acc ftz trunc bf16gemm; do grep -q "^  $e " "$T/help" || fail "--help lacks $e"; done

# the whole quick suite passes on the CPU; no --device says which device it picked
"$GPUVET" check -o "$T/r.json" --junit "$T/j.xml" --save-outputs "$T/o.safetensors" \
    > "$T/out" 2> "$T/stderr"
rc=$?
[ $rc -eq 0 ] || { cat "$T/out"; fail "quick suite on the CPU exit $rc"; }
grep -q "^device: .* — no GPU found, using the CPU (" "$T/out" ||
    fail "the CPU fallback was not announced: $(cat "$T/out")"
grep -q "cases: $n_quick passed, 0 failed" "$T/out" || fail "summary line: $(tail -1 "$T/out")"

python3 - "$T" "$n_quick" <<'PY' || fail "result/outputs/junit content"
import json, struct, sys, hashlib
import xml.etree.ElementTree as ET
t, n = sys.argv[1], int(sys.argv[2])
r = json.load(open(t + "/r.json"))
assert r["schema"] == "gpuvet.results" and r["schema_version"] == 1
assert r["device"]["description"]["backend"] == "cpu"
assert r["snapshot"]["schema"] == "gpuvet.snapshot", "snapshot not embedded"
assert len(r["cases"]) == n, len(r["cases"])
for c in r["cases"]:
    assert c["verdict"] == "pass", c["id"]
    m = c["metrics"]
    assert m["err_over_bound"] <= 1.0 and m["nan_count"] == 0 and m["inf_count"] == 0, c["id"]
    assert len(c["input_digest"]) == 64 and len(c["output_digest"]) == 64
    # every quick case is run twice and must repeat bit for bit on the CPU
    assert c["determinism"] == {"checked": True, "run_to_run_identical": True}, c["id"]
# safetensors, parsed independently of gpuvet's reader
b = open(t + "/o.safetensors", "rb").read()
hl = struct.unpack("<Q", b[:8])[0]
assert (8 + hl) % 8 == 0, "data not 8-byte aligned"
h = json.loads(b[8:8 + hl])
data = b[8 + hl:]
meta = h.pop("__metadata__")
sizes = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1}
covered = 0
for c in r["cases"]:
    e = h[c["id"]]
    s, f = e["data_offsets"]
    cnt = 1
    for d in e["shape"]:
        cnt *= d
    assert f - s == cnt * sizes[e["dtype"]], c["id"]
    assert s % sizes[e["dtype"]] == 0, "tensor not aligned to its element size"
    assert hashlib.sha256(data[s:f]).hexdigest() == c["output_digest"], c["id"]
    assert meta[c["id"] + ".input_digest"] == c["input_digest"]
    covered += f - s
assert covered == len(data), "holes in the data buffer"
assert r["outputs"]["file"].endswith("o.safetensors")
root = ET.parse(t + "/j.xml").getroot()
ts = root.find("testsuite")
assert int(ts.get("tests")) == n and int(ts.get("failures")) == 0
assert len(ts.findall("testcase")) == n
PY

# --json prints the same kind of document on stdout
"$GPUVET" check --device cpu --only 'convert.*' --json > "$T/j.json" || fail "--json exit $?"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']=='gpuvet.results'" \
    "$T/j.json" || fail "--json output is not a result document"

# a failing case exits 1 and is a JUnit failure
"$GPUVET" check --device cpu:emulate=tf32 --only 'gemm.f32.256x256x256.normal.s1' \
    --junit "$T/f.xml" > "$T/out"; [ $? -eq 1 ] || fail "a failing case should exit 1"
grep -q '<failure message="error/bound' "$T/f.xml" || fail "no JUnit failure element"
echo ok
