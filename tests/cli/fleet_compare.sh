#!/bin/bash
# gpuvet fleet compare (docs/fleet.md) over node documents made from a real CPU
# run of check (tests/cli/fleet_nodes.py): all alike names nobody (exit 0);
# planted differences are each named with their class and evidence (exit 1);
# hostile directories and documents give exit 3 naming the file and field;
# --write-reference writes the majority. Expected findings are the ones planted
# here. Skipped while 'gpuvet fleet' is not a command of this build.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd python3
gv_tmpdir T
export XDG_CACHE_HOME="$T/cache"
NODES="$GV_SRC/tests/cli/fleet_nodes.py"

"$GPUVET" fleet compare --help > /dev/null 2> "$T/help.err" ||
    fail "fleet compare --help exited $?: $(cat "$T/help.err")"

CASE=gemm.f32.256x256x256.normal.s1
expect_rc 0 "$GPUVET" check --device cpu --only 'gemm.f32.*' --json --save-outputs "$T/out.st"
cp "$GV_OUT" "$T/result.json"

# all alike, with repeats: no false alarm (48 nodes: the loader reads on several threads)
python3 "$NODES" "$T/result.json" "$T/alike" 48 --repeats 3 --outputs "$T/out.st" ||
    fail "making node documents"
expect_rc 0 "$GPUVET" fleet compare "$T/alike"
grep -q "^no odd node of 48" "$GV_OUT" || fail "alike: $(head -3 "$GV_OUT")"
expect_rc 0 "$GPUVET" fleet compare "$T/alike" --json
expect_json "$GV_OUT" "[d['summary']['odd'], d['summary']['missing'], len(d['groups'])]" "[0, 0, 1]"

# one of each class, planted
python3 "$NODES" "$T/result.json" "$T/odd" 8 --repeats 2 --outputs "$T/out.st" \
    --drift 2:libhipblaslt.so.0:0.12.0 --flip "3:$CASE:2" --slow 4:0.5 --cannot 5:no-gpu \
    --missing 6 || fail "making node documents"
expect_rc 1 "$GPUVET" fleet compare "$T/odd" -o "$T/fleet.json" --write-reference "$T/ref.json"
head -1 "$GV_OUT" | grep -qF "5 odd nodes of 8: gpu-a002 stack drift (libraries.libhipblaslt.so.0: 0.10.0 → 0.12.0), gpu-a003 numerics outlier ($CASE, 1 of 2 repeats)" ||
    fail "verdict line: $(head -1 "$GV_OUT")"
grep -q "1 element differs by up to 1 bit" "$GV_OUT" || fail "no element/bit count: $(cat "$GV_OUT")"
F=$T/fleet.json
expect_json "$F" "[d['schema'], d['nodes'], d['ranks_expected'], d['missing']]" "['gpuvet.fleet', 7, 8, [6]]"
expect_json "$F" "[d['summary'][k] for k in ('odd','stack_drift','numerics_outlier','slow','could_not_run','missing')]" \
    "[4, 1, 1, 1, 1, 1]"
expect_json "$F" "sorted((o['node'], o['class']) for g in d['groups'] for o in g['odd'])" \
    "[('gpu-a002', 'stack_drift'), ('gpu-a003', 'numerics_outlier'), ('gpu-a004', 'slow'), ('gpu-a005', 'could_not_run')]"
odd3="[o for g in d['groups'] for o in g['odd'] if o['node'] == 'gpu-a003'][0]['evidence']['cases'][0]"
expect_json "$F" "[$odd3[k] for k in ('id', 'repeats_differing', 'elements_differing', 'max_bits', 'nodes_agreeing')]" \
    "['$CASE', '1 of 2', 1, 1, 5]"
expect_json "$F" "[o for g in d['groups'] for o in g['odd'] if o['node'] == 'gpu-a002'][0]['evidence']['diff']" \
    "['libraries.libhipblaslt.so.0: 0.10.0 → 0.12.0']"
expect_json "$T/ref.json" "[d['schema'], len(d['groups']), d['groups'][0]['nodes'], d['groups'][0]['cases']['$CASE']['nodes']]" \
    "['gpuvet.fleet.reference', 1, 5, 5]"

# named files instead of a directory: the same judgement, no output counts
expect_rc 1 "$GPUVET" fleet compare --json "$T"/odd/nodes/*.json
expect_json "$GV_OUT" "[d['summary']['odd'], 'elements_differing' in str(d)]" "[4, False]"

# nodes run by hand (no launcher: each rank 0 of 1) into one directory: told apart by
# name, none missing; the same node twice is an error
python3 - "$T/alike/nodes" "$T/hand/nodes" <<'PY'
import json, os, sys
os.makedirs(sys.argv[2])
for i in range(3):
    d = json.load(open(f"{sys.argv[1]}/gpu-a00{i}.r{i}.json"))
    d.update(rank=0, size=1, launcher="none", job="")
    json.dump(d, open(f"{sys.argv[2]}/gpu-a00{i}.r0.json", "w"))
PY
expect_rc 0 "$GPUVET" fleet compare "$T/hand" --json
expect_json "$GV_OUT" "[d['nodes'], d['summary']['odd'], d['missing'], d['ranks_expected']]" "[3, 0, [], 3]"
mkdir -p "$T/hand2/nodes" && cp "$T/hand/nodes/gpu-a001.r0.json" "$T/hand2/nodes/"
expect_rc 3 "$GPUVET" fleet compare "$T/hand/nodes/gpu-a001.r0.json" "$T/hand2/nodes/gpu-a001.r0.json"
grep -q "node gpu-a001 appears twice" "$GV_ERR" || fail "by hand, twice: $(cat "$GV_ERR")"

# hostile input: exit 3, the file and the field named
cp -r "$T/alike" "$T/bad"
ln -s /etc/passwd "$T/bad/nodes/gpu-a100.r1.json"
expect_rc 3 "$GPUVET" fleet compare "$T/bad"
grep -q "gpu-a100.r1.json: a symbolic link" "$GV_ERR" || fail "link: $(cat "$GV_ERR")"
rm "$T/bad/nodes/gpu-a100.r1.json"
python3 - "$T/bad/nodes/gpu-a001.r1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["stack"]["libraries"][0]["version"] = "tampered"
json.dump(d, open(sys.argv[1], "w"))
PY
expect_rc 3 "$GPUVET" fleet compare "$T/bad"
grep -q 'gpu-a001.r1.json: field "stack_digest" is not the digest of "stack"' "$GV_ERR" ||
    fail "digest: $(cat "$GV_ERR")"
cp "$T/alike/nodes/gpu-a001.r1.json" "$T/bad/nodes/gpu-a001.r1.json"
cp "$T/alike/nodes/gpu-a001.r1.json" "$T/bad/nodes/gpu-a009.r1.json"
expect_rc 3 "$GPUVET" fleet compare "$T/bad"
grep -q 'gpu-a009.r1.json: its "node" and "rank" are not those of its name' "$GV_ERR" ||
    fail "name: $(cat "$GV_ERR")"
expect_rc 3 "$GPUVET" fleet compare "$T/nonexistent"
expect_rc 2 "$GPUVET" fleet compare
echo "fleet compare: ok"
