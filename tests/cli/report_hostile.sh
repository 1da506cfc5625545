#!/usr/bin/env bash
# gpuvet report escapes every string from the inspected machine: a real snapshot and a
# real capture comparison (two captures of the encoder with Debian's PyTorch) are edited
# to hold hostile strings (tests/report/hostile.py: <script>, attribute breakers,
# </title> and </desc> inside figures, an iframe, entities) in package names and
# versions, library paths, environment values, the Python prefix, the OS name and the
# model's module names; a doctor report of the edited snapshot carries them in its
# evidence. The one page of all three runs no injected script, loads nothing, has no
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
"$GPUVET" report h/snapshot.json h/doctor.json h/capture-compare.json -o h/page.html 2>h/err ||
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
