#!/bin/bash
# Bad result files give exit 3 and a message naming the file and the case or
# field; mismatched inputs are refused; degraded cases give exit 1.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$GV_TEST_TMP/cache"
ONLY='gemm.f32.256x256x256.normal.s1,softmax.f16.*,convert.f32-f16.*'

"$GPUVET" check --device cpu --only "$ONLY" -o "$T/good.json" --save-outputs "$T/good.st" \
    > /dev/null || fail "good run exit $?"
G="$T/good.json"

expect3() { # file, pattern...
    local f=$1; shift
    "$GPUVET" compare "$G" "$f" > /dev/null 2> "$T/err"
    local rc=$?
    [ $rc -eq 3 ] || fail "$(basename "$f"): exit $rc, expected 3 ($(cat "$T/err"))"
    for p in "$@"; do
        grep -qF -- "$p" "$T/err" || fail "$(basename "$f"): message lacks '$p': $(cat "$T/err")"
    done
}
mutate() { # name, python expression over d
    python3 - "$G" "$T/$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}

# truncated at several points, and corrupt bytes
size=$(stat -c %s "$G")
for cut in 0 1 100 $((size / 2)) $((size - 2)); do
    head -c "$cut" "$G" > "$T/trunc$cut.json"
    if [ "$cut" -eq 0 ]; then expect3 "$T/trunc$cut.json" "trunc$cut.json" "empty"
    else expect3 "$T/trunc$cut.json" "trunc$cut.json" "not valid JSON"; fi
done
printf '\x00\xff garbage {{{' > "$T/garbage.json"
expect3 "$T/garbage.json" "garbage.json"
# missing file, directory
expect3 "$T/nonexistent.json" "nonexistent.json"
expect3 "$T" "$T"
# wrong schema, newer and older versions
mutate snap.json 'd["schema"] = "gpuvet.snapshot"'
expect3 "$T/snap.json" "snap.json" "gpuvet.snapshot" "gpuvet.results"
mutate newer.json 'd["schema_version"] = 2'
expect3 "$T/newer.json" "newer.json" "newer"
mutate older.json 'd["schema_version"] = 0'
expect3 "$T/older.json" "older.json" "older"
# fields of a case: missing, wrong type, bad values
mutate nometrics.json 'd["cases"][1]["metrics"] = None'
expect3 "$T/nometrics.json" "nometrics.json" "case 1 (softmax.f16" "metrics"
mutate badbits.json 'd["cases"][0]["metrics"]["effective_bits"] = "many"'
expect3 "$T/badbits.json" "case 0 (gemm.f32.256x256x256.normal.s1)" "metrics.effective_bits"
mutate baddigest.json 'd["cases"][2]["input_digest"] = "xyz"'
expect3 "$T/baddigest.json" "case 2 (convert.f32-f16" "input_digest"
mutate badverdict.json 'd["cases"][0]["verdict"] = "great"'
expect3 "$T/badverdict.json" "verdict"
mutate dup.json 'd["cases"].append(d["cases"][0])'
expect3 "$T/dup.json" "appears twice"
mutate nocases.json 'del d["cases"]'
expect3 "$T/nocases.json" "cases"
mutate baddtype.json 'd["cases"][0]["out_dtype"] = "f99"'
expect3 "$T/baddtype.json" "out_dtype"
# same id, different inputs: not like with like
mutate mismatch.json 'd["cases"][0]["input_digest"] = "0" * 64'
expect3 "$T/mismatch.json" "case gemm.f32.256x256x256.normal.s1" "not computed from the same inputs"
# outputs that do not belong to the result file
"$GPUVET" check --device cpu --only 'convert.f32-f16.*' --save-outputs "$T/other.st" > /dev/null
"$GPUVET" compare "$G" "$G" --outputs-b "$T/other.st" > /dev/null 2> "$T/err" \
    || fail "outputs file lacking cases should only skip them"
"$GPUVET" check --device cpu:emulate=tf32 --only "$ONLY" -o "$T/tf.json" --save-outputs "$T/tf.st" > /dev/null
"$GPUVET" compare "$G" "$G" --outputs-b "$T/tf.st" > /dev/null 2> "$T/err"
[ $? -eq 3 ] || fail "outputs of another run accepted"
grep -q "do not match its result file" "$T/err" || fail "outputs mismatch message: $(cat "$T/err")"
head -c 100 "$T/good.st" > "$T/short.st"
"$GPUVET" compare "$G" "$G" --outputs-b "$T/short.st" > /dev/null 2> "$T/err"
[ $? -eq 3 ] || fail "truncated outputs accepted"
grep -q "short.st" "$T/err" || fail "truncated outputs not named"

# usage
"$GPUVET" compare "$G" 2> /dev/null; [ $? -eq 2 ] || fail "one file should be a usage error"

# a real degradation: exit 1, element-wise ULP difference, JUnit failure
"$GPUVET" compare "$G" "$T/tf.json" --junit "$T/c.xml" --json > "$T/c.json"
[ $? -eq 1 ] || fail "degradation should exit 1"
python3 - "$T/c.json" <<'PY' || fail "degradation content"
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["id"]: x for x in d["cases"]}
g = c["gemm.f32.256x256x256.normal.s1"]
assert g["change"] == "newly_failing" and g["flagged"], g
assert g["delta_effective_bits"] < -8, g
assert g["elementwise"]["differing"] > 60000 and g["elementwise"]["max_ulp"] > 1000, g
assert c["softmax.f16.16x4096.normal.s1"]["change"] == "identical"
PY
grep -q '<failure' "$T/c.xml" || fail "no JUnit failure for a degraded case"
# and the reverse is an improvement, not a failure
"$GPUVET" compare "$T/tf.json" "$G" > "$T/rev" || fail "improvement should exit 0"
grep -q newly_passing "$T/rev" || fail "reverse comparison: $(cat "$T/rev")"
echo ok
