#!/usr/bin/env bash
# The 64-lane proof (docs/port.md, "What the emulation proves"): the warp
# kernels of tests/port/emu/kernels.h, run on the CPU emulation of a
# wavefront (tests/port/emu/wave.hpp) built with the host's g++, with 32 and
# with 64 lanes. Each 32-lane-assuming version must give the right answer at
# 32 and a wrong one at 64; each warpSize version the right one at both.
# The right answers are computed by the host loop of emu_run.cpp, not by the
# emulation; the verdicts below are this test's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd g++ "g++ is not installed (scripts/install-deps.sh --test)"

tmp="" && gv_tmpdir tmp
emu=$GV_SRC/tests/port/emu
g++ -std=c++17 -O1 -Wall -Wextra -Werror -I"$emu" -o "$tmp/emu_run" "$emu/emu_run.cpp" \
    2>"$tmp/cc.err" || { cat "$tmp/cc.err" >&2; fail "emu_run.cpp does not build"; }
"$tmp/emu_run" >"$tmp/runs" || fail "emu_run exited $?"

# KERNEL WAVE VERDICT: right = GOT == WANT and no mask left out its caller.
expected="reduce_w32 32 right
reduce_ws 32 right
reduce_off16 32 right
ballot_u32 32 right
ballot_u64 32 right
reduce_w32 64 wrong
reduce_ws 64 right
reduce_off16 64 wrong
ballot_u32 64 wrong
ballot_u64 64 right"
got=$(awk '{ print $1, $2, ($3 == $4 && $5 == 0) ? "right" : "wrong" }' "$tmp/runs")
if [[ $got != "$expected" ]]; then
    echo "emulation runs (KERNEL WAVE GOT WANT MASK-VIOLATIONS):" >&2
    cat "$tmp/runs" >&2
    diff <(echo "$expected") <(echo "$got") >&2 || true
    fail "the emulation's verdicts differ from the expected ones"
fi

# reduce_w32 is wrong at 64 because its full mask 0xffffffff leaves out lanes
# 32..63 (calls that break the mask rule); the other two are silently wrong.
awk '$1 == "reduce_w32" && $2 == 64 && $5 > 0 { ok = 1 } END { exit !ok }' "$tmp/runs" ||
    fail "reduce_w32 at 64 lanes should call with masks that leave out the caller"
awk '($1 == "reduce_off16" || $1 == "ballot_u32") && $5 != 0 { bad = 1 } END { exit bad }' \
    "$tmp/runs" || fail "reduce_off16 and ballot_u32 should be wrong with valid masks"
echo "ok: 32-lane versions right at 32 and wrong at 64; warpSize versions right at both"
