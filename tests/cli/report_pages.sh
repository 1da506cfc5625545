#!/usr/bin/env bash
# gpuvet report, every kind of page in a real headless Chromium (Debian's chromium and
# chromium-driver; tests/report/check_page.py): documents made here by gpuvet itself on
# the CPU (a snapshot, a check result with failures, a comparison with saved outputs of a
# run with emulated TF32 + fp16 accumulation, ab, doctor, a snapshot diff) and a version
# matrix written to the contract of `gpuvet matrix --json` (tests/report/make_matrix.py), and
# a fleet comparison of five Slurm ranks run here (`gpuvet fleet run`, `fleet compare`).
# Each page is loaded from file:// with JavaScript on and off: no console errors, no
# request but the file, the values of the documents (read here with json), every figure
# present, sorting, A4 printing without a table wider than the page, and a screenshot
# per kind under $GV_TEST_TMP/report_pages/shots; at 1280 px and on A4 each page's verdict
# on the first screen, nothing wider than the page, and the verdict in the words
# `compare` and `fleet compare` print.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_workdir T
mkdir -p "$T/shots"
cd "$T"
export XDG_CACHE_HOME=$T/cache
need_browser
CHECK=(python3 "$GV_SRC/tests/report/check_page.py")
page() { # KIND OUT.html INPUT... -- EXTRA... : make the page and check it
    local kind=$1 out=$2 inputs=() extra=()
    shift 2
    while [[ $# -gt 0 && $1 != -- ]]; do inputs+=("$1"); shift; done
    [[ ${1:-} == -- ]] && { shift; extra=("$@"); }
    "$GPUVET" report "${inputs[@]}" -o "$out" 2>"$out.err" || fail "report of ${inputs[*]}: $(cat "$out.err")"
    "${CHECK[@]}" "$kind" "$out" "$T/shots" "${inputs[0]}" "${extra[@]}" || fail "the $kind page"
}
ONLY='gemm.f32*,gemm.f16acc32*,softmax.*,sum.*,conv2d.f32*'
expect_rc 0 "$GPUVET" snapshot -o s.json
expect_rc 0 "$GPUVET" check --device cpu --only "$ONLY" -o r1.json --save-outputs o1.safetensors
expect_rc 1 "$GPUVET" check --device cpu:emulate=tf32+fp16acc --only "$ONLY" -o r2.json --save-outputs o2.safetensors
expect_rc 1 "$GPUVET" compare --json r1.json r2.json
cp "$T/last.out" c.json
expect_rc 1 "$GPUVET" ab --a system,device=cpu --b device=cpu:emulate=ftz --only 'gemm.f16*,gemm.bf16*' --keep ab --json
cp "$T/last.out" ab.json
rc=0; "$GPUVET" doctor --json >d.json || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "doctor exited $rc"
python3 - s.json s2.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
items = s["packages"]["items"]
items[0]["version"] += "+upgraded"          # a package upgrade
s["environment"]["variables"]["NVIDIA_TF32_OVERRIDE"] = "1"  # an allowlisted variable appears
json.dump(s, open(sys.argv[2], "w"))
PY
expect_rc 1 "$GPUVET" diff --json s.json s2.json
cp "$T/last.out" df.json
python3 "$GV_SRC/tests/report/make_matrix.py" m.json
python3 - c.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["flagged"] and any(c["flagged"] and c["elementwise"] for c in d["cases"]), "no flagged case with saved outputs"
PY

page snapshot s.html s.json
page results r2.html r2.json
page compare c.html c.json -- r1.json r2.json o1.safetensors o2.safetensors
page compare ab.html ab.json -- ab/a.json ab/b.json ab/a.safetensors ab/b.safetensors
page doctor d.html d.json
page diff df.html df.json
page matrix m.html m.json
# a database URL that still holds a password: never on the page
python3 - m.json mp.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["db"] = "postgresql://gpuvet:s3cr3t-pw@db.example:5432/gpuvet"
json.dump(d, open(sys.argv[2], "w"))
PY
"$GPUVET" report mp.json -o mp.html 2>/dev/null || fail "report of a matrix with a password in its URL"
grep -q 's3cr3t-pw' mp.html && fail "the database password is on the page"
grep -q 'postgresql://gpuvet:\*\*\*@db.example:5432/gpuvet' mp.html || fail "the database URL is not shown without its password"

# every page opens with its verdict in the command's own words (src/report/verdict.c serves
# both): compare's and fleet compare's verdict lines, as printed, are the pages' first lines
verdict_is() { # PAGE LINE WHAT
    local shown
    shown=$(python3 "$GV_SRC/tests/report/verdict_line.py" "$1") || fail "$3: no verdict on the page"
    [[ $shown == "$2" ]] || fail "$3: the page opens with '$shown', the command says '$2'"
}
rc=0; NO_COLOR=1 "$GPUVET" compare r1.json r2.json >c.txt || rc=$?
[[ $rc == 1 ]] || fail "compare (text) exited $rc"
verdict_is c.html "$(tail -1 c.txt)" compare

# several documents on one page, each its own section
"$GPUVET" report s.json c.json d.json m.json -o multi.html 2>/dev/null || fail "a page of four documents"
python3 - multi.html <<'PY'
import re, sys
h = open(sys.argv[1], encoding="utf-8").read()
schemas = re.findall(r'<section class="doc" id="doc\d+" data-schema="([^"]+)"', h)
assert schemas == ["gpuvet.snapshot", "gpuvet.compare", "gpuvet.doctor", "gpuvet.matrix"], schemas
PY
"${CHECK[@]}" multi multi.html "$T/shots" s.json || fail "the page of four documents"

# a comparison whose result files cannot be found still renders, and says so
mkdir -p alone && cp c.json alone/
(cd alone && "$GPUVET" report c.json -o c.html 2>/dev/null) || fail "a comparison without its result files"
grep -q "result file r1.json was not found" alone/c.html || fail "the page does not say the result files are missing"

# --json: what was written
"$GPUVET" report c.json -o j.html --json >j.json || fail "report --json"
python3 - j.json j.html <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuvet.report" and d["bytes"] == os.path.getsize(sys.argv[2]), d
assert d["inputs"] == [{"path": "c.json", "schema": "gpuvet.compare"}], d
PY
# stdout without -o: the same page
"$GPUVET" report c.json >stdout.html || fail "report to stdout"
cmp -s stdout.html j.html || fail "the page on stdout differs from the one written with -o"
# a fleet comparison (docs/fleet.md) of real CPU runs gathered in a directory, Slurm's
# variables set by hand as tests/cli/fleet_gate.sh does: two alike, one that flips a bit of
# one output in its second repeat (numerics outlier), one with another allowlisted variable
# (stack drift), one that cannot run (no such GPU); rank 5 of 6 never writes (missing)
FLIP=gemm.f32.256x256x256.normal.s1
fleet_run() { # RANK RC ARGS...
    local r=$1 rc=$2
    shift 2
    SLURM_PROCID=$r SLURM_NTASKS=6 SLURMD_NODENAME=node$r SLURM_JOB_ID=34 expect_rc "$rc" \
        "$GPUVET" fleet run --only 'gemm.f32.256*' --dir fleet "$@"
}
unset GPUVET_TEST_FLIP GPUVET_FLEET_NODE OMPI_COMM_WORLD_RANK PMIX_RANK
fleet_run 0 0 --device cpu
fleet_run 1 0 --device cpu
GPUVET_TEST_FLIP=$FLIP fleet_run 2 0 --device cpu --repeat 2
OPENBLAS_VERBOSE=0 fleet_run 3 0 --device cpu
fleet_run 4 1 --device cuda:7
expect_rc 1 "$GPUVET" fleet compare fleet --json -o fl.json
python3 - fl.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
odd = sorted((o["node"], o["class"]) for g in d["groups"] for o in g["odd"])
assert odd == [("node2", "numerics_outlier"), ("node3", "stack_drift"), ("node4", "could_not_run")], odd
assert d["missing"] == [5] and d["nodes"] == 5, d
PY
page fleet fl.html fl.json
rc=0; NO_COLOR=1 "$GPUVET" fleet compare fleet >fl.txt || rc=$?
[[ $rc == 1 ]] || fail "fleet compare (text) exited $rc"
verdict_is fl.html "$(head -1 fl.txt)" "fleet compare"
ls "$T"/shots/*.png
echo "report pages: all checks passed"
