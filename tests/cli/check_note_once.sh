#!/usr/bin/env bash
# `gpuvet check` without --device on a machine without a GPU says "no GPU found" once: in the
# table's device line ("device: NAME — no GPU found, using the CPU (...)"), not also on stderr.
# With --json there is no table: stderr says it once, and the document's device.note holds it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export GPUVET_LIB_NO_SYSTEM=1 GPUVET_LIB_PATH=/nonexistent # no GPU library, whatever is here
gv_tmpdir T check_note_once

expect_rc 0 "$GPUVET" check --only 'sum.f32.*'
n=$(cat "$GV_OUT" "$GV_ERR" | grep -c 'no GPU found' || true)
[[ $n == 1 ]] || fail "table: 'no GPU found' said $n times: $(cat "$GV_ERR" "$GV_OUT")"
grep -q '^device: .* — no GPU found, using the CPU (cuda: ' "$GV_OUT" ||
    fail "the device line does not say it: $(cat "$GV_OUT")"

expect_rc 0 "$GPUVET" check --only 'sum.f32.*' --json
n=$(grep -c 'no GPU found' "$GV_ERR" || true)
[[ $n == 1 ]] || fail "--json: 'no GPU found' said $n times on stderr: $(cat "$GV_ERR")"
expect_json "$GV_OUT" 'd["device"]["note"].startswith("no GPU found, using the CPU")' True
echo "ok: no GPU found, said once"
