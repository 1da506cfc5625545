#!/usr/bin/env bash
# gpuvet fleet run under a real Open MPI (mpirun --oversubscribe -np 8 on this
# machine, each rank a "node" named by GPUVET_FLEET_NODE, the CPU as its device, a
# few GEMM and sum cases), the documents gathered to rank 0 through MPI (opened at
# run time), or through the directory. Scenarios (issue 34):
#   - all alike over 20 repeats: every node the same stack and the same digests;
#   - one rank with another library on its loader path (stack drift, the library
#     named), one whose CPU flips one bit of one GEMM output on every second run
#     (GPUVET_TEST_FLIP: same stack, a numerics outlier, found with --repeat 2),
#     one that cannot run (no such GPU: could_not_run, its gate exits 2), the rest
#     compared;
#   - a rank killed mid-run: in directory mode the others finish and the rank is
#     missing; under the MPI gather mpirun ends the job (no hang).
# The node documents are checked here with python; the fleet document's
# assertions on rank 0's comparison (fleet.json).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd mpirun "Open MPI is not installed (scripts/install-deps.sh --test: openmpi-bin)"
need_cmd python3
gv_tmpdir T
export XDG_CACHE_HOME=$T/cache
unset GPUVET_TEST_FLIP GPUVET_FLEET_GATHER GPUVET_FLEET_BUDGET GPUVET_FLEET_NODE \
      SLURM_PROCID PMIX_RANK LD_LIBRARY_PATH
# Open MPI's own allocations are never freed (its runtime, hwloc, components):
# LeakSanitizer would fail every rank for them; the rest of ASan stays on.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
# as root (CI containers) mpirun needs its consent; PRTE/ORTE read these too
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# 8 ranks on 2 cores: a rank waiting in the gather yields instead of spinning
export OMPI_MCA_mpi_yield_when_idle=1
CASES='gemm.f32.256*,sum.f32*'
FLIP_CASE='gemm.f32.256x256x256.normal.s1'

# A loaded 2-core machine runs 8 ranks: no tier budget may stop them here.
export GPUVET_FLEET_BUDGET=3600
# the library digests and fp64 references cached once, not by 8 ranks at a time
expect_rc 0 "$GPUVET" fleet run --tier prolog --device cpu --only "$CASES"


# Another "libamdhip64.so.6" (a copy of zlib will do: the loader's view is what
# changes) in a directory only the drifting rank has on LD_LIBRARY_PATH.
mkdir -p "$T/otherlib"
zlib=$(ldconfig -p | awk '$1 == "libz.so.1" && !f {print $NF; f = 1}')
[[ -n $zlib ]] || fail "no libz.so.1 in the loader's cache"
cp "$zlib" "$T/otherlib/libamdhip64.so.6"

cat >"$T/rank.sh" <<'EOF'
#!/usr/bin/env bash
# One node per rank: its name, and what the scenario changes on it.
r=$OMPI_COMM_WORLD_RANK
export GPUVET_FLEET_NODE=node$r
device=cpu
[[ $r == "${DRIFT_RANK:-x}" ]] && export LD_LIBRARY_PATH=$OTHERLIB
[[ $r == "${FLIP_RANK:-x}" ]] && export GPUVET_TEST_FLIP=$FLIP_CASE
[[ $r == "${NOGPU_RANK:-x}" ]] && device=cuda:7
if [[ $r == "${KILL_RANK:-x}" ]]; then
    # stopped as its second case starts, then killed: a rank that dies mid-run
    . "$GV_SRC/tests/cli/lib.sh"
    GPUVET_TEST_STOP_AT=case-1 "$GPUVET" fleet run --device "$device" "$@" & pid=$!
    wait_stopped "$pid" || exit 9
    kill -9 "$pid"
    wait "$pid" || true
    exit "${KILL_EXIT:-0}"
fi
exec "$GPUVET" fleet run --device "$device" "$@"
EOF
chmod +x "$T/rank.sh"
export OTHERLIB=$T/otherlib FLIP_CASE GV_SRC GPUVET

fleet() { # DIR REPEAT [RANKS]: 8 ranks; stdout+stderr in $T/mpirun.log, its exit in $rc
    rc=0
    timeout 300 mpirun --oversubscribe --allow-run-as-root -np "${3:-8}" "$T/rank.sh" \
        --tier prolog --only "$CASES" --repeat "$2" --dir "$1" >"$T/mpirun.log" 2>&1 || rc=$?
    [[ $rc != 124 ]] || fail "mpirun did not end within 300 s (a guard, not a timing test)"
}

# Python over the node documents of DIR: nodes = {rank: doc}.
nodes_py() { # DIR EXPR
    python3 - "$1" "$2" <<'EOF'
import glob, json, os, sys
nodes = {}
for p in glob.glob(os.path.join(sys.argv[1], "nodes", "*.json")):
    d = json.load(open(p))
    assert os.path.basename(p) == "%s.r%d.json" % (d["node"], d["rank"]), p
    nodes[d["rank"]] = d
def digests(d, run):
    return {c["id"]: c["output_digest"] for c in d["runs"][run]["cases"]}
def stack_diff(a, b):
    out = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            out.append(k)
    return out
print(eval(sys.argv[2]))
EOF
}
expect_py() { # DIR EXPR VALUE
    local got
    got=$(nodes_py "$1" "$2") || fail "cannot evaluate $2"
    [[ $got == "$3" ]] || fail "$2: expected '$3', got '$got' ($(tail -5 "$T/mpirun.log"))"
}

# ---- all alike, 20 repeats (no false alarm), gathered through MPI ----
fleet "$T/alike" 20
grep -q "gathered 8 of 8 node documents through MPI" "$T/mpirun.log" ||
    fail "rank 0 did not gather through MPI: $(tail -20 "$T/mpirun.log")"
expect_py "$T/alike" "sorted(nodes)" "[0, 1, 2, 3, 4, 5, 6, 7]"
expect_py "$T/alike" "{d['launcher'] for d in nodes.values()}" "{'openmpi'}"
expect_py "$T/alike" "{d['size'] for d in nodes.values()}" "{8}"
expect_py "$T/alike" "sorted(d['node'] for d in nodes.values())" \
    "['node0', 'node1', 'node2', 'node3', 'node4', 'node5', 'node6', 'node7']"
expect_py "$T/alike" "{d['status'] for d in nodes.values()}" "{'ran'}"
expect_py "$T/alike" "len({d['stack_digest'] for d in nodes.values()})" 1
expect_py "$T/alike" "{len(d['runs']) for d in nodes.values()}" "{20}"
expect_py "$T/alike" "len({json.dumps(digests(d, k), sort_keys=True) for d in nodes.values() for k in range(20)})" 1
expect_py "$T/alike" "len(digests(nodes[0], 0))" 2
expect_py "$T/alike" "{c['verdict'] for d in nodes.values() for r in d['runs'] for c in r['cases']}" "{'pass'}"
expect_py "$T/alike" "{d['outputs'] for d in nodes.values()}" "{'present'}"
[[ -s $T/alike/outputs/node3.r3.safetensors ]] || fail "no outputs for node3"
[[ $rc == 0 ]] || fail "all alike: mpirun exited $rc: $(tail -20 "$T/mpirun.log")"
expect_json "$T/alike/fleet.json" "d['summary']['odd']" 0

# ---- drift (rank 2), one-bit flips (rank 5), cannot run (rank 6) ----
DRIFT_RANK=2 FLIP_RANK=5 NOGPU_RANK=6 fleet "$T/mixed" 2
grep -q "gathered 8 of 8 node documents through MPI" "$T/mpirun.log" ||
    fail "mixed: rank 0 did not gather: $(tail -20 "$T/mpirun.log")"
# drift: another stack digest; the loader resolves the library from the rank's path
expect_py "$T/mixed" "len({nodes[r]['stack_digest'] for r in (0, 1, 3, 4, 5, 7)})" 1
expect_py "$T/mixed" "nodes[2]['stack_digest'] != nodes[0]['stack_digest']" True
expect_py "$T/mixed" "stack_diff(nodes[0]['stack'], nodes[2]['stack'])" "['environment', 'loader']"
expect_py "$T/mixed" "nodes[2]['stack']['loader']['resolved']['libamdhip64.so.6']" \
    "$T/otherlib/libamdhip64.so.6"
expect_py "$T/mixed" "digests(nodes[2], 1) == digests(nodes[0], 1)" True
# the flip: same stack, repeat 1 alike, repeat 2 one GEMM differs, each run-to-run identical
expect_py "$T/mixed" "nodes[5]['stack_digest'] == nodes[0]['stack_digest']" True
expect_py "$T/mixed" "digests(nodes[5], 0) == digests(nodes[0], 0)" True
expect_py "$T/mixed" "[i for i in digests(nodes[0], 1) if digests(nodes[5], 1)[i] != digests(nodes[0], 1)[i]]" \
    "['$FLIP_CASE']"
expect_py "$T/mixed" "{c['deterministic'] for c in nodes[5]['runs'][1]['cases'] if c['id'].startswith('gemm')}" "{True}"
expect_py "$T/mixed" "nodes[5]['hardware']['testing_aid']" True
# cannot run: its document says why; the others ran
expect_py "$T/mixed" "nodes[6]['status'], nodes[6]['reason'].startswith('no GPU')" "('could_not_run', True)"
expect_py "$T/mixed" "sorted(r for r, d in nodes.items() if d['status'] == 'ran')" "[0, 1, 2, 3, 4, 5, 7]"
# the same rank's gate: cannot assess, exit 2
GPUVET_FLEET_NODE=node6 expect_rc 2 "$GPUVET" fleet gate --tier prolog --device cuda:7 \
    --only "$CASES"
grep -q '^gpuvet: cannot assess: no GPU' "$GV_ERR" || fail "gate of node6: $(cat "$GV_ERR")"
[[ $rc == 1 ]] || fail "mixed: mpirun exited $rc, not 1"
F=$T/mixed/fleet.json
odd="[(o['node'], o['class']) for g in d['groups'] for o in g['odd']]"
expect_json "$F" "sorted($odd)" \
    "[('node2', 'stack_drift'), ('node5', 'numerics_outlier'), ('node6', 'could_not_run')]"
expect_json "$F" "'libamdhip64' in json.dumps([o for g in d['groups'] for o in g['odd'] if o['node'] == 'node2'])" True
expect_json "$F" "[c['id'] for g in d['groups'] for o in g['odd'] if o['node'] == 'node5' for c in o['evidence']['cases']]" \
    "['$FLIP_CASE']"

# ---- a rank killed mid-run, directory mode: the others finish, it is missing ----
# (4 ranks from here: the scenarios need no more, and the machine is small)
GPUVET_FLEET_GATHER=dir KILL_RANK=3 fleet "$T/killed" 1 4
[[ $rc == 0 ]] || fail "killed (dir): mpirun exited $rc: $(tail -20 "$T/mpirun.log")"
expect_py "$T/killed" "sorted(nodes)" "[0, 1, 2]"
grep -q "gathered" "$T/mpirun.log" && fail "directory mode gathered through MPI"
expect_rc 1 "$GPUVET" fleet compare "$T/killed" --json
expect_json "$GV_OUT" "d['missing']" "[3]"

# ---- a rank killed mid-run under the MPI gather: mpirun ends the job ----
KILL_RANK=3 KILL_EXIT=137 fleet "$T/killed-mpi" 1 4
[[ $rc != 0 ]] || fail "killed (MPI): mpirun exited 0"
! pgrep -f "$T/rank.sh" >/dev/null || fail "ranks left running after mpirun ended"

echo "fleet under Open MPI: alike, drift, flip, cannot run, killed"
