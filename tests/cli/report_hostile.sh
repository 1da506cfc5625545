#!/usr/bin/env bash
# gpuvet report escapes every string from the inspected machine: a real snapshot and a
# real capture comparison (two captures of the encoder with Debian's PyTorch) are edited
# to hold hostile strings (tests/report/hostile.py: <script>, attribute breakers,
# </title> and </desc> inside figures, an iframe, entities) in package names and
# versions, library paths, environment values, the Python prefix, the OS name and the
# model's module names; a doctor report of the edited snapshot carries them in its
# evidence; a fleet document written here holds them where nodes put their own text.
# The one page of all four runs no injected script, loads nothing, has no
# element with an event handler, and shows every hostile string as text.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
mkdir -p "$T/shots" "$T/h"
cd "$T"
export XDG_CACHE_HOME=$T/cache
M=$GV_SRC/tests/cli/models
"$GPUVET" snapshot -o s.json || fail "snapshot"
for n in 1 2; do
    "$GPUVET" torch capture --model "$M/encoder.py:make" --python "$HOST_PY" --device cpu -o e$n.gvcap \
        >/dev/null 2>&1 || fail "capture $n"
done
"$GPUVET" compare --json e1.gvcap e2.gvcap >cc.json || fail "two captures of one stack differ"
python3 "$GV_SRC/tests/report/hostile.py" s.json cc.json h
grep -q '<script>' h/snapshot.json || fail "the edited snapshot holds no hostile string"
rc=0
"$GPUVET" doctor --snapshot h/snapshot.json --json >h/doctor.json || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "doctor of the edited snapshot exited $rc"
# a fleet document (docs/fleet.md) written here with the hostile strings where the nodes put
# their own text: names, hardware, stack digests, diff lines, reasons, case and figure ids
python3 - h/strings.json h/fleet.json <<'PY'
import json, sys
H = json.load(open(sys.argv[1]))
odd = [{"node": "n" + H[0], "rank": 1, "class": "stack_drift", "classes": ["stack_drift", H[1]],
        "evidence": {"stack_digest": "sha256:" + H[2], "diff": ["libraries." + H[3] + ": 1 → 2", H[4]]}},
       {"node": H[1], "rank": H[5], "class": "numerics_outlier", "classes": ["numerics_outlier"],
        "evidence": {"cases": [{"id": "gemm" + H[0], "digest": H[1], "majority_digest": H[2], "nodes_agreeing": 2,
                                "repeats_differing": H[3], "outputs_note": H[4], "elements_differing": 1,
                                "max_bits": 1}]}},
       {"node": H[2], "rank": 3, "class": "slow", "classes": ["slow"],
        "evidence": {"bench": [{"id": H[3], "unit": H[4], "value": 1.0, "group_median": 2.0, "group_mad": 0.1,
                                "limit": 1.8, "nodes": 5}]}},
       {"node": H[3], "rank": 4, "class": H[0], "classes": [H[0]], "evidence": {"reason": H[5]}}]
doc = {"schema": "gpuvet.fleet", "schema_version": 1, "gpuvet_version": H[0], "created": H[1],
       "nodes": 6, "ranks_expected": 8, "missing": [6, H[4]],
       "groups": [{"key": {"model": H[0], "compute_units": 2, "driver": H[1]}, "nodes": 6,
                   "stack_digest": H[4], "stack_nodes": 4, "stack_distinct": 2, "odd": odd,
                   "cases": [{"id": H[3], "voters": 4, "majority_digest": H[2], "nodes_agreeing": 3}],
                   "split": [{"id": H[5], "voters": 4, "digests": 2, "largest": 2}]}],
       "summary": {"odd": 4, "could_not_run": 1, "stack_drift": 1, "numerics_outlier": 1, "slow": 1,
                   "missing": 2, "split_cases": 1}}
json.dump(doc, open(sys.argv[2], "w"))
PY
"$GPUVET" report h/snapshot.json h/doctor.json h/capture-compare.json h/fleet.json -o h/page.html 2>h/err ||
    fail "report: $(cat h/err)"
python3 "$GV_SRC/tests/report/check_page.py" hostile h/page.html "$T/shots" h/snapshot.json h/strings.json ||
    fail "the hostile page"
# and the raw file: no hostile string survives unescaped anywhere in it
python3 - h/page.html h/strings.json <<'PY'
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
for s in json.load(open(sys.argv[2])):
    assert s not in page, "unescaped in the page: %r" % s
assert page.count("<script") == 1, page.count("<script")
PY
echo "hostile strings: escaped everywhere"
