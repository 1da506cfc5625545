#!/usr/bin/env bash
# bisect's clean referee finds PyTorch in a virtual environment (found on the H100: with
# /opt/torch/.venv, a uv venv of Ubuntu's python3.12, the referee started with -I -S saw
# only Debian's dist-packages names from site.getsitepackages and had no torch, so bisect
# could judge nothing). The venv here has no system site-packages; torch and what it imports
# are linked into its own site-packages. B = that venv: the referee must be trusted and
# bisect (same torch as A) must find every op identical.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/bisect_referee_lib.bash
source "$GV_SRC/tests/cli/bisect_referee_lib.bash"
"$HOST_PY" -m venv --without-pip v >/dev/null 2>&1 || skip "$HOST_PY cannot make a venv"
sp=$(v/bin/python -c 'import sys; print(next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)))')
src=$("$HOST_PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
for m in torch numpy typing_extensions.py; do
    [[ -e $src/$m ]] || skip "torch's dependency $m is not beside it in $src"
    ln -s "$src/$m" "$sp/$m"
done
v/bin/python -c 'import torch' 2>/dev/null || skip "torch does not import from the linked venv"
rc=0
"$GPUVET" torch bisect a.gvcap --python "$T/v/bin/python" --device cpu -o venv.json >venv.txt 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "bisect with B in a venv exited $rc: $(tail -3 venv.txt)"
python3 - venv.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["referee"]["trusted"] and "cannot_judge" not in d, d["referee"]
assert d["summary"]["identical"] == len(d["ops"]), d["summary"]
PY
echo "the referee found torch in the venv's own site-packages"
