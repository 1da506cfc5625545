#!/bin/bash
# One --device parser for every command: with no --device, check and bench
# choose the same device and say so with the same note (here, without a GPU
# library, the CPU); an unknown kind is the same usage error (exit 2, the
# kinds listed) from check, bench and probe.
set -u
T="${GV_TEST_TMP:-/tmp}/device_choice"; rm -rf "$T"; mkdir -p "$T"
GPUVET=${GPUVET:-gpuvet}
. "$(dirname "$0")/lib.sh"
export GPUVET_LIB_NO_SYSTEM=1 GPUVET_LIB_PATH=/nonexistent # no GPU library, whatever is here

"$GPUVET" check --only 'sum.f32.*' --json >"$T/check.json" 2>"$T/check.err" ||
    { cat "$T/check.err"; fail "check with no --device"; }
"$GPUVET" bench --quick --only 'gemm.*.f32.*' --no-snapshot --json >"$T/bench.json" \
    2>"$T/bench.err" || { cat "$T/bench.err"; fail "bench with no --device"; }
python3 - "$T" <<'PY' || fail "check and bench chose differently"
import json, sys
t = sys.argv[1]
c = json.load(open(t + "/check.json"))
b = json.load(open(t + "/bench.json"))
cn, bn = c["device"]["note"], b["device_note"]
assert cn == bn, (cn, bn)
assert cn.startswith("no GPU found, using the CPU (cuda: "), cn
assert "; hip: " in cn, cn
assert c["device"]["description"]["backend"] == "cpu", c["device"]["description"]
assert b["device_spec"] == "cpu", b["device_spec"]
PY

# the same message from each (the kinds listed from the one table)
for cmd in check bench probe; do
    "$GPUVET" $cmd --device gpu:0 >/dev/null 2>"$T/$cmd.err"
    rc=$?
    [ $rc -eq 2 ] || fail "$cmd --device gpu:0: exit $rc, expected 2"
    grep -q "unknown device kind 'gpu' (cpu, cuda:N, hip:N, " "$T/$cmd.err" ||
        fail "$cmd --device gpu:0: $(cat "$T/$cmd.err")"
    grep "unknown device kind" "$T/$cmd.err" | sed "s/^gpuvet $cmd: //" >"$T/$cmd.msg"
done
cmp -s "$T/check.msg" "$T/bench.msg" && cmp -s "$T/check.msg" "$T/probe.msg" ||
    fail "different messages: $(cat "$T/check.msg" "$T/bench.msg" "$T/probe.msg")"
echo ok
