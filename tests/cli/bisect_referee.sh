#!/usr/bin/env bash
# bisect's float64 referee runs outside the environment it judges (issue 35, docs/capture.md
# "The referee"), with real PyTorch on the CPU. The model (tests/cli/models/subnormal.py)
# scales activations into float32's subnormal range and back (y * 2^-130, then * 2^65
# twice). B = the same interpreter with a sitecustomize calling
# torch.set_flush_denormal(True):
#   - bisect names the first multiply first and judges no op more accurate in B (a referee
#     inside B reads the second multiply's subnormal inputs as zero: A's output then looks
#     infinitely wrong and B's exact); the referee's canary held; "B flushes subnormals to
#     zero (FTZ/DAZ); A does not" is named as a cause, from B's floating-point mode
#     recorded in its device description (and A's in its capture header);
#   - compare of A's capture and B's own (--keep-capture) names the same cause.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/bisect_referee_lib.bash
source "$GV_SRC/tests/cli/bisect_referee_lib.bash"
mkdir ftz
printf 'import torch\ntorch.set_flush_denormal(True)\n' >ftz/sitecustomize.py
rc=0
PYTHONPATH=$T/ftz "$GPUVET" torch bisect a.gvcap --python "$HOST_PY" --device cpu -o ftz.json \
    --keep-capture b.gvcap >ftz.txt 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "bisect under flush-denormal exited $rc: $(cat ftz.txt)"
check_ftz ftz.json sitecustomize
python3 - ftz.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "PYTHONPATH" in d["referee"]["dropped_variables"], d["referee"]
PY
rc=0
"$GPUVET" compare --json a.gvcap b.gvcap >cmp.json 2>cmp.err || rc=$?
[[ $rc == 1 ]] || fail "compare of A's capture and B's exited $rc: $(cat cmp.err)"
python3 - cmp.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
texts = [c["text"] for c in d["causes"]]
assert texts == ["B flushes subnormals to zero (FTZ/DAZ); A does not"], d["causes"]
PY
echo "the referee held under a flush-denormal sitecustomize; the cause named by bisect and compare"
