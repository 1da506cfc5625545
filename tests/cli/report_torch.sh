#!/usr/bin/env bash
# gpuvet report of PyTorch captures, in headless Chromium (tests/report/check_page.py):
#   - a capture (.gvcap) of the transformer encoder with Debian's PyTorch: its ops;
#   - two captures, B with a sitecustomize that swaps the exact GELU for the tanh
#     approximation: the capture comparison (the first op that differs marked on the
#     curve) and the bisect of A in B (the call change marked);
#   - the keyword model (tests/cli/models/kwargs.py): its named outputs (dtype, shape,
#     digest) and its call on the capture page, and with only its logits scaled, each
#     output's verdict on the comparison page;
#   - that model bisected where its logits are scaled: each output's verdict;
#   - where the CPU has bf16 matmul: the MLP bisected under float32 matmul precision
#     "medium" in sid's PyTorch 2.14 (tests/fixtures/debian-rocm.sh torch): the three
#     addmm culprits in the table and marked on the error curve.
# Values are read from the documents here; screenshots under $GV_TEST_TMP/report_torch/shots.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
mkdir -p "$T/shots" "$T/gelu"
cd "$T"
export XDG_CACHE_HOME=$T/cache
# bisect runs a capture's model only from the current directory or the capture's own
# (docs/security.md): the models are copied beside the captures
cp -r "$GV_SRC/tests/cli/models" "$T/models"
M=$T/models
CHECK=(python3 "$GV_SRC/tests/report/check_page.py")
cat >gelu/sitecustomize.py <<'PY'
import torch.nn.functional as F
_gelu = F.gelu
def gelu(x, approximate="none"):
    return _gelu(x, approximate="tanh")
F.gelu = gelu
PY
"$GPUVET" torch capture --model "$M/encoder.py:make" --python "$HOST_PY" --device cpu -o a.gvcap >/dev/null 2>&1 ||
    fail "capture A"
PYTHONPATH=$T/gelu "$GPUVET" torch capture --model "$M/encoder.py:make" --python "$HOST_PY" --device cpu \
    -o b.gvcap >/dev/null 2>&1 || fail "capture B"
rc=0
"$GPUVET" compare --json a.gvcap b.gvcap >cc.json || rc=$?
[[ $rc == 1 ]] || fail "the GELU swap was not flagged by compare (exit $rc)"
rc=0
PYTHONPATH=$T/gelu "$GPUVET" torch bisect a.gvcap --python "$HOST_PY" --json >bi.json 2>bi.err || rc=$?
[[ $rc == 1 ]] || fail "bisect with the GELU swap exited $rc: $(cat bi.err)"
python3 - cc.json bi.json <<'PY'
import json, sys
cc, bi = (json.load(open(p)) for p in sys.argv[1:3])
assert cc["summary"]["first_difference"]["name"] == "aten.gelu.default", cc["summary"]
assert bi["call_changes"] and bi["call_changes"][0]["name"] == "aten.gelu.default", bi["call_changes"]
PY
# a model called with keyword arguments, whose output is a dict of named tensors: the
# outputs and the call on the capture page, each output's verdict on the comparison page
"$GPUVET" torch capture --model "$M/kwargs.py:make" --python "$HOST_PY" --device cpu -o kw-a.gvcap >/dev/null 2>&1 ||
    fail "capture of the keyword model"
GV_TEST_KW_GAIN=1.001 "$GPUVET" torch capture --model "$M/kwargs.py:make" --python "$HOST_PY" --device cpu \
    -o kw-b.gvcap >/dev/null 2>&1 || fail "capture of the keyword model with its logits scaled"
rc=0
"$GPUVET" compare --json kw-a.gvcap kw-b.gvcap >kw-cc.json || rc=$?
[[ $rc == 1 ]] || fail "scaled logits were not flagged by compare (exit $rc)"
python3 - kw-cc.json <<'PY' || fail "the keyword model's comparison"
import json, sys
outs = json.load(open(sys.argv[1]))["outputs"]
assert [(o["name"], o["status"] == "identical") for o in outs] == \
    [("hidden.0", True), ("hidden.1", True), ("logits", False)], outs
PY
# the keyword model bisected in an environment that scales its logits: a call change, and
# on the page each output's verdict in the model's run here
rc=0
GV_TEST_KW_GAIN=1.001 "$GPUVET" torch bisect kw-a.gvcap --python "$HOST_PY" --json >kw-bi.json 2>kw-bi.err || rc=$?
[[ $rc == 1 ]] || fail "bisect with scaled logits exited $rc: $(cat kw-bi.err)"
python3 - kw-bi.json <<'PY' || fail "the keyword model's bisect"
import json, sys
d = json.load(open(sys.argv[1]))
assert [(o["name"], o["status"] == "identical") for o in d["outputs"]] == \
    [("hidden.0", True), ("hidden.1", True), ("logits", False)], d["outputs"]
assert d["outputs_status"] == "beyond_rounding" and d["call_changes"], d
PY
# bisect's verdict line, as printed, is the words its page opens with (src/report/verdict.c)
rc=0
PYTHONPATH=$T/gelu NO_COLOR=1 "$GPUVET" torch bisect a.gvcap --python "$HOST_PY" >bi.txt 2>bi.err || rc=$?
[[ $rc == 1 ]] || fail "bisect (text) with the GELU swap exited $rc: $(cat bi.err)"
"$GPUVET" report bi.json -o bi-verdict.html 2>/dev/null || fail "report of bi.json"
shown=$(python3 "$GV_SRC/tests/report/verdict_line.py" bi-verdict.html) || fail "no verdict on the bisect page"
[[ $shown == "$(tail -1 bi.txt)" ]] || fail "the bisect page opens with '$shown', bisect says '$(tail -1 bi.txt)'"
for k in capture:a.gvcap capture-compare:cc.json bisect:bi.json capture:kw-a.gvcap capture-compare:kw-cc.json \
    bisect:kw-bi.json; do
    kind=${k%%:*} doc=${k#*:} page=${doc%.*}-page
    "$GPUVET" report "$doc" -o "$page.html" 2>"$page.err" || fail "report of $doc: $(cat "$page.err")"
    "${CHECK[@]}" "$kind" "$page.html" "$T/shots" "$doc" || fail "the $kind page of $doc"
done

# the PyTorch fixture roots need root; without it part 3 cannot run (said below)
if [[ $(id -u) -eq 0 ]] && torch_roots && sid_medium_is_bf16; then
    "$GPUVET" torch capture --model "$M/mlp.py:make" --python-root "$SID_TORCH" --device cpu -o m.gvcap \
        >/dev/null 2>&1 || fail "capture of the MLP"
    site=$(mktemp -d "$SID_TORCH/tmp/gv-site.XXXXXX")
    at_exit 'rm -rf "$site"'
    echo 'import torch; torch.set_float32_matmul_precision("medium")' >"$site/sitecustomize.py"
    rc=0
    PYTHONPATH=/tmp/$(basename "$site") "$GPUVET" torch bisect m.gvcap --python-root "$SID_TORCH" --json \
        >culprits.json 2>culprits.err || rc=$?
    [[ $rc == 1 ]] || fail "bisect with bf16 matmuls exited $rc: $(cat culprits.err)"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["culprits"]) == 3, d["culprits"]' \
        culprits.json || fail "the bf16 bisect has not its three culprits"
    "$GPUVET" report culprits.json -o culprits.html 2>/dev/null || fail "report of the culprits"
    "${CHECK[@]}" bisect culprits.html "$T/shots" culprits.json || fail "the culprit page"
else
    echo "part 3 skipped: sid's PyTorch does not compute fp32 matmuls in bf16 under precision 'medium' on this CPU (relative change ${MEDIUM_EFFECT:-not measured})"
fi
echo "report of captures: all checks passed"
