#!/usr/bin/env bash
# A baseline's result file never chooses the interpreter verify reruns the suite with: one
# whose device names a hostile "python" (a script that leaves a mark) is verified; the script never runs, the rerun uses check's own choice, and the report says
# where the baseline ran.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T
mkdir -p "$T/root/etc"
expect_rc 0 "$GPUVET" snapshot --root "$T/root" --no-hash -o "$T/base.json"
expect_rc 0 "$GPUVET" check --device cpu --suite quick --only 'sum.*' -o "$T/r.json"
cat >"$T/evil.sh" <<EOS
#!/bin/sh
touch "$T/ran"
EOS
chmod +x "$T/evil.sh"
jq --arg py "$T/evil.sh" '.device.spec = "torch:cpu" |
    .device.description.python.executable = $py' "$T/r.json" >"$T/hostile.json"
expect_rc 0,1,3 "$GPUVET" verify --baseline "$T/base.json" --root "$T/root" \
    --results "$T/hostile.json" --json
[[ ! -e $T/ran ]] || fail "verify ran the interpreter the result document named"
if [[ -s $GV_OUT ]] && jq -e .numerics_note "$GV_OUT" >/dev/null 2>&1; then
    jq -r .numerics_note "$GV_OUT" | grep -qF "$T/evil.sh" ||
        fail "the note does not say where the baseline ran: $(jq -r .numerics_note "$GV_OUT")"
fi
echo ok
