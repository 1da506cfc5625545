#!/usr/bin/env bash
# gpuvet ab of one PyTorch environment against itself, 20 times: nothing may be flagged
# (a comparison that cries wolf on an unchanged stack is useless), and every case of
# every repeat is either identical or within noise.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
export XDG_CACHE_HOME=$T/cache
for i in $(seq 1 20); do
    rc=0
    "$GPUVET" ab --a "python=$HOST_PY" --b "python=$HOST_PY" --device torch:cpu --json \
        >"$T/ab$i.json" 2>"$T/ab$i.err" || rc=$?
    [[ $rc == 0 ]] || fail "repeat $i: ab exited $rc: $(cat "$T/ab$i.err")"
done
python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
total = {}
for i in range(1, 21):
    d = json.load(open("%s/ab%d.json" % (T, i)))
    assert not d["flagged"], i
    assert len(d["cases"]) >= 40, len(d["cases"])
    for c in d["cases"]:
        assert c["change"] in ("identical", "noise", "not_run", "still_failing"), (i, c["id"], c["change"])
        total[c["change"]] = total.get(c["change"], 0) + 1
print("20 repeats of ab on the same PyTorch: nothing flagged; changes over all cases:", total)
PY
