#!/usr/bin/env bash
# The rollback verification page (gpuvet.verify) in a real headless Chromium
# (tests/report/check_page.py, kind "verify"): a verification that fails (the
# GPU stack's environment differs from the baseline, and the numerics rerun on
# the CPU with emulated TF32 differs from the baseline results) and one that
# passes (the baseline itself). Every value checked is read from the verify
# documents, not from the page's source.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_workdir T
mkdir -p "$T/shots"
cd "$T"
export XDG_CACHE_HOME=$T/cache
need_browser
page() { # DOC.json : make its page and check it against the document
    local out=${1%.json}.html
    expect_rc 0 "$GPUVET" report "$1" -o "$out"
    python3 "$GV_SRC/tests/report/check_page.py" verify "$out" "$T/shots" "$1" || fail "the page of $1"
}

expect_rc 0 "$GPUVET" snapshot -o base.json
expect_rc 0 "$GPUVET" check --device cpu --only 'gemm.f32*,softmax.f32*' -o base-results.json
python3 - base.json now.json base-results.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["environment"]["variables"]["NVIDIA_TF32_OVERRIDE"] = "1"   # the stack's environment changed
json.dump(s, open(sys.argv[2], "w"))
r = json.load(open(sys.argv[3]))
r["device"]["spec"] = "cpu:emulate=tf32"                     # rerun where TF32 rounds the GEMMs
json.dump(r, open(sys.argv[3], "w"))
PY
expect_rc 1 "$GPUVET" verify --baseline base.json --snapshot now.json --results base-results.json --json
cp "$GV_OUT" bad.json
python3 - bad.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuvet.verify" and not d["ok"] and not d["stack_matches"], d
assert any("NVIDIA_TF32_OVERRIDE" in c["subject"] for c in d["differences"]), d["differences"]
assert d["numerics"]["flagged"], "the TF32 rerun flagged no case"
PY
page bad.json
expect_rc 0 "$GPUVET" verify --baseline base.json --snapshot base.json --json
cp "$GV_OUT" good.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] and d["stack_matches"] and not d["differences"], d' good.json
page good.json
echo "verify pages: a failed and a passed verification shown as their documents say"
