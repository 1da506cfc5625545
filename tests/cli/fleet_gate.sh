#!/usr/bin/env bash
# gpuvet fleet gate (docs/fleet.md): exit 0 keep, 1 drain, 2 cannot assess, and one
# "gpuvet: DECISION: reason" line on stderr (at most 200 bytes, no quote, no newline):
# keep; drain by a failing case, by an output that changes between repeats (the
# GPUVET_TEST_FLIP testing aid), by the last good run in the history database and
# by a reference; cannot assess for a device that
# is not there, an unknown device and a budget that runs out.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T
export XDG_CACHE_HOME=$T/cache GPUVET_DB=$T/history.db
unset GPUVET_TEST_FLIP GPUVET_FLEET_BUDGET GPUVET_FLEET_NODE OMPI_COMM_WORLD_RANK \
      SLURM_PROCID PMIX_RANK GPUVET_RECORD

CASE='gemm.tf32.256*'
gate() { "$GPUVET" fleet gate --only "$CASE" "$@"; }

# The one reason line: DECISION, at most 200 bytes, no quotes; printed alone.
reason_is() { # DECISION PATTERN
    local line
    line=$(grep '^gpuvet: ' "$GV_ERR") || fail "no 'gpuvet:' line on stderr: $(cat "$GV_ERR")"
    [[ $(wc -l <<<"$line") == 1 ]] || fail "more than one reason line: $line"
    [[ $line == "gpuvet: $1: "* ]] || fail "reason is not '$1': $line"
    (( ${#line} <= 200 + ${#1} + 10 )) || fail "reason too long (${#line} bytes): $line"
    [[ $line != *[\"\']* ]] || fail "quote in the reason: $line"
    [[ $line == *$2* ]] || fail "reason lacks '$2': $line"
}

# keep: the tier ran, every case passed; the JSON says so
expect_rc 0 gate --tier prolog --device cpu --json
reason_is keep "as expected"
expect_json "$GV_OUT" "d['gate']['decision']" keep
expect_json "$GV_OUT" "d['status']" ran
expect_json "$GV_OUT" "d['runs'][0]['cases'][0]['id']" gemm.tf32.256x256x256.normal.s1
expect_json "$GV_OUT" "d['runs'][0]['cases'][0]['deterministic']" True
cp "$GV_OUT" "$T/keep.json"

# drain: a case fails against fp64 (fp32 GEMM with TF32 inputs, the CPU's emulation)
expect_rc 1 "$GPUVET" fleet gate --tier prolog --device cpu:emulate=tf32 \
    --only 'gemm.f32.256*' -o "$T/drain.json"
reason_is drain "case gemm.f32.256x256x256.normal.s1 failed against fp64"
expect_json "$T/drain.json" "d['gate']['decision']" drain
expect_json "$T/drain.json" "d['gate']['findings'][0]['source']" suite

# drain: one bit of one output flipped on every second run (testing aid), found by
# repeats (the drain tier's 3, here on the prolog tier: the probe is slow under
# the sanitizers); each repeat is run-to-run identical, so only the repeats show
# it. The node document says a testing aid was on.
GPUVET_TEST_FLIP="$CASE" expect_rc 1 gate --tier prolog --repeat 3 --device cpu --json
reason_is drain "output differs between repeat 1 and repeat 2"
expect_json "$GV_OUT" "d['hardware']['testing_aid']" True
expect_json "$GV_OUT" "d['hardware']['description']['test_flip']" "$CASE"
expect_json "$GV_OUT" "len(d['runs'])" 3
expect_json "$GV_OUT" "d['runs'][0]['cases'][0]['output_digest'] == d['runs'][2]['cases'][0]['output_digest']" True
expect_json "$GV_OUT" "d['runs'][0]['cases'][0]['output_digest'] != d['runs'][1]['cases'][0]['output_digest']" True
expect_json "$GV_OUT" "d['runs'][1]['cases'][0]['verdict']" pass

# --hot: the tier's GEMMs back to back for (at least) the time asked, then the check
expect_rc 0 gate --tier prolog --device cpu --hot 1s --json
expect_json "$GV_OUT" "d['runs'][0]['hot_seconds'] >= 1.0" True

# history: the last good run of this machine is a check result recorded here
expect_rc 0 "$GPUVET" check --device cpu --only "$CASE" --db "$GPUVET_DB"
expect_rc 0 gate --tier prolog --device cpu --history
reason_is keep "compared with the last good run"
# round-toward-zero accumulation: still within the TF32 bound, other bits
expect_rc 1 gate --tier prolog --device cpu:emulate=trunc --history
reason_is drain "output differs from the last good run"
# another stack (an allowlisted variable): outputs not compared, kept
OPENBLAS_VERBOSE=0 expect_rc 0 gate --tier prolog --device cpu:emulate=trunc --history
reason_is keep "the stack changed since the last good run"

# cannot assess: no such GPU here, an unknown kind, the budget
expect_rc 2 gate --tier prolog --device cuda:7 --json
reason_is "cannot assess" "no GPU"
expect_json "$GV_OUT" "d['status']" could_not_run
expect_rc 2 gate --tier prolog --device nosuchkind:0
reason_is "cannot assess" "tool error"
# a budget that is over before the first case: stopped between cases (budget),
# or by the guard's alarm (timeout); either way cannot assess, never a hang
GPUVET_FLEET_BUDGET=0.001 expect_rc 2 gate --tier prolog --device cpu
grep -qE '^gpuvet: cannot assess: (budget|timeout)' "$GV_ERR" || fail "budget: $(cat "$GV_ERR")"
# fleet run under the same budget stops between cases and says why in its document
GPUVET_FLEET_BUDGET=0.001 expect_rc 1 "$GPUVET" fleet run --tier prolog --device cpu --json
expect_json "$GV_OUT" "d['status']" could_not_run
expect_json "$GV_OUT" "d['reason'].startswith('budget: ')" True
# usage: a gate needs a tier with a budget
expect_rc 2 "$GPUVET" fleet gate --device cpu
grep -q -- "--tier prolog, drain or burnin is needed" "$GV_ERR" || fail "usage: $(cat "$GV_ERR")"

# a reference that is not one: cannot assess, naming it
echo '{"schema": "gpuvet.snapshot", "schema_version": 1}' >"$T/notref.json"
expect_rc 2 gate --tier prolog --device cpu --reference "$T/notref.json"
reason_is "cannot assess" "notref.json"

# drain by a reference: written by fleet compare from three alike nodes
for i in 0 1 2; do # three Slurm ranks of one step, in the directory mode
    SLURM_PROCID=$i SLURM_NTASKS=3 SLURMD_NODENAME=n$i SLURM_JOB_ID=7 expect_rc 0 \
        "$GPUVET" fleet run --tier prolog --device cpu --only "$CASE" --dir "$T/fleet"
done
expect_rc 0 "$GPUVET" fleet compare "$T/fleet" --write-reference "$T/ref.json"
expect_rc 0 gate --tier prolog --device cpu --reference "$T/ref.json"
reason_is keep ""
expect_rc 1 gate --tier prolog --device cpu:emulate=trunc --reference "$T/ref.json"
reason_is drain "$CASE"
echo "fleet gate: keep, drain (case, repeats, history, reference), cannot assess"
