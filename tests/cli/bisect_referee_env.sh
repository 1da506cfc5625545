#!/usr/bin/env bash
# bisect's float64 referee does not depend on the environment judged (issue 35): B with
# ATEN_CPU_CAPABILITY=default (other vector code), with OMP_NUM_THREADS=1 and =2 (another
# split of the sum over threads): the referee's outputs, op by op (their sha256 in the
# report), and A's error against them are bitwise those of the plain case. A referee that
# computes in B's process gives another float64 sum under each.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/bisect_referee_lib.bash
source "$GV_SRC/tests/cli/bisect_referee_lib.bash"
bisect_as() { # NAME VAR=VALUE...: bisect in B = this environment with the variables set
    local name=$1 rc=0
    shift
    env "$@" "$GPUVET" torch bisect a.gvcap --python "$HOST_PY" --device cpu -o "$name.json" \
        >"$name.txt" 2>&1 || rc=$?
    [[ $rc == 0 || $rc == 1 ]] || fail "bisect ($*) exited $rc: $(cat "$name.txt")"
}
bisect_as plain
bisect_as isa ATEN_CPU_CAPABILITY=default
bisect_as one OMP_NUM_THREADS=1
bisect_as two OMP_NUM_THREADS=2
python3 - isa.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cap = d["device_b"]["torch"]["build_settings"]["CPU_CAPABILITY"]
assert cap in ("DEFAULT", "NO", "NO AVX"), cap  # torch 1.13 says "NO AVX", later "DEFAULT"
PY
referee_digests plain.json isa.json one.json two.json
