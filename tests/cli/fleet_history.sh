#!/usr/bin/env bash
# The fleet in the history database (docs/history.md, "The fleet"): two rounds of a real
# `fleet run --device cpu` on four "nodes" n1..n4 (Slurm's variables set by hand, as
# tests/cli/fleet_gate.sh does), each rank recording its node document (--record --db),
# the second round with n3 flipping one bit of one output in its second repeat
# (GPUVET_TEST_FLIP: a numerics outlier). Round 1 is compared without --record and imported
# as a directory (its job taken from its nodes), round 2 recorded by `fleet compare
# --record`. Checked: the columns (node names as hostnames, jobs, stack digests, counts,
# n3's class), a second recording recording nothing, `history good` and `fleet gate
# --history` passing over the odd run, `history fleet` (which node, which class, which
# round), the report page, hostile node documents refused, and a version 3 database
# migrated to version 4 by the next recording.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3
gv_tmpdir T
export XDG_CACHE_HOME=$T/cache GPUVET_DB=$T/history.db
unset GPUVET_TEST_FLIP GPUVET_FLEET_BUDGET GPUVET_FLEET_NODE OMPI_COMM_WORLD_RANK \
      PMIX_RANK GPUVET_RECORD SLURM_STEP_ID
CASE=gemm.f32.256x256x256.normal.s1
ONLY='gemm.f32.256*'
sql() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall())' "$1" "$2"; }

round() { # JOB DIR FLIPPED-RANK
    for i in 0 1 2 3; do
        local flip=
        [[ $i == "$3" ]] && flip=$CASE
        GPUVET_TEST_FLIP=$flip SLURM_PROCID=$i SLURM_NTASKS=4 SLURMD_NODENAME=n$((i + 1)) \
            SLURM_JOB_ID=$1 expect_rc 0 "$GPUVET" fleet run --tier prolog --device cpu \
            --only "$ONLY" --repeat 2 --dir "$2" --record --db "$GPUVET_DB"
        grep -q "recorded as run" "$GV_ERR" || fail "rank $i of job $1 not recorded: $(cat "$GV_ERR")"
    done
}

# round 1: all alike; the comparison imported later with its directory
round 101 "$T/r1" none
expect_rc 0 "$GPUVET" fleet compare "$T/r1" -o "$T/r1/fleet.json"
expect_json "$T/r1/fleet.json" "'job' in d" False
expect_rc 0 "$GPUVET" history import "$T/r1"
[[ $(grep -c "already recorded as run" "$GV_ERR") == 4 ]] || fail "nodes recorded twice: $(cat "$GV_ERR")"
grep -q "r1/fleet.json: recorded as run 5" "$GV_ERR" || fail "fleet.json: $(cat "$GV_ERR")"
# round 2: n3 odd, recorded by compare itself
round 102 "$T/r2" 2
expect_rc 1 "$GPUVET" fleet compare "$T/r2" -o "$T/r2/fleet.json" --record
grep -q "recorded as run 10" "$GV_ERR" || fail "fleet compare --record: $(cat "$GV_ERR")"
expect_json "$T/r2/fleet.json" "d['job']" 102

# the columns, read with SQLite itself
[[ $(sql "$GPUVET_DB" "SELECT hostname, fleet_job, node_class, verdict, cases, machine_id FROM runs WHERE kind = 'fleet-node' ORDER BY id") == \
   "[('n1', '101', None, 'pass', 2, None), ('n2', '101', None, 'pass', 2, None), ('n3', '101', None, 'pass', 2, None), ('n4', '101', None, 'pass', 2, None), ('n1', '102', None, 'pass', 2, None), ('n2', '102', None, 'pass', 2, None), ('n3', '102', 'numerics_outlier', 'pass', 2, None), ('n4', '102', None, 'pass', 2, None)]" ]] ||
    fail "node columns: $(sql "$GPUVET_DB" "SELECT hostname, fleet_job, node_class, verdict, cases, machine_id FROM runs WHERE kind = 'fleet-node'")"
[[ $(sql "$GPUVET_DB" "SELECT id, fleet_job, fleet_nodes, fleet_odd, verdict FROM runs WHERE kind = 'fleet' ORDER BY id") == \
   "[(5, '101', 4, 0, 'pass'), (10, '102', 4, 1, 'fail')]" ]] ||
    fail "fleet columns: $(sql "$GPUVET_DB" "SELECT id, fleet_job, fleet_nodes, fleet_odd, verdict FROM runs WHERE kind = 'fleet'")"
digest=$(json_get "$T/r2/nodes/n1.r0.json" "d['stack_digest']")
[[ $(sql "$GPUVET_DB" "SELECT COUNT(*) FROM runs WHERE kind = 'fleet-node' AND stack_digest = '$digest' AND stack_key LIKE '%$digest'") == "[(8,)]" ]] ||
    fail "stack digest and key: $(sql "$GPUVET_DB" "SELECT stack_digest, stack_key FROM runs")"
# recorded once: the second import of a directory records nothing
expect_rc 0 "$GPUVET" history import "$T/r2"
[[ $(grep -c "already recorded as run" "$GV_ERR") == 5 ]] || fail "second import: $(cat "$GV_ERR")"
[[ $(sql "$GPUVET_DB" "SELECT COUNT(*) FROM runs") == "[(10,)]" ]] || fail "runs recorded twice"

# the last good run of n3 is its run of round 1, not the odd one; the gate finds it
expect_rc 0 "$GPUVET" history good --machine n3 --json
expect_json "$GV_OUT" "[d['run']['id'], d['run']['fleet_job']]" "[3, '101']"
GPUVET_FLEET_NODE=n3 expect_rc 0 "$GPUVET" fleet gate --tier prolog --device cpu --only "$ONLY" --history
grep -q "^gpuvet: keep: 1 case(s) compared with the last good run (run 3 of" "$GV_ERR" ||
    fail "gate --history of n3: $(cat "$GV_ERR")"
# the matrix has the nodes' stack, never a comparison
expect_rc 0 "$GPUVET" matrix --json
expect_json "$GV_OUT" "[(r['runs'], r['machines']) for r in d['rows']]" "[(8, 4)]"

# the fleet over time
expect_rc 0 "$GPUVET" history fleet --json
F=$GV_OUT
cp "$F" "$T/fh.json"
expect_json "$F" "[d['schema'], [(r['run'], r['job'], r['verdict'], r['nodes']) for r in d['rounds']]]" \
    "['gpuvet.fleet-history', [(10, '102', 'fail', 4), (5, '101', 'pass', 4)]]"
expect_json "$F" "[[(o['node'], o['class'], o['rank']) for o in r['odd']] for r in d['rounds']]" \
    "[[('n3', 'numerics_outlier', 2)], []]"
expect_json "$F" "[(g['gpu_model'] is not None, g['stack_digest'], g['nodes']) for g in d['rounds'][0]['groups']]" \
    "[(True, '$digest', 4)]"
expect_json "$F" "[(n['node'], n['odd_runs'], n['classes'], [(r['job'], r['round'], r['class']) for r in n['runs']]) for n in d['nodes']]" \
    "[('n1', 0, [], [('101', 5, None), ('102', 10, None)]), ('n2', 0, [], [('101', 5, None), ('102', 10, None)]), ('n3', 1, ['numerics_outlier'], [('101', 5, None), ('102', 10, 'numerics_outlier')]), ('n4', 0, [], [('101', 5, None), ('102', 10, None)])]"
expect_rc 0 "$GPUVET" history fleet --json --limit 1 --machine n3
expect_json "$GV_OUT" "[[r['job'] for r in d['rounds']], [n['node'] for n in d['nodes']], [r['job'] for r in d['nodes'][0]['runs']]]" \
    "[['102'], ['n3'], ['102']]"
expect_rc 0 "$GPUVET" history fleet
grep -q "odd: n3 numerics_outlier" "$GV_OUT" || fail "history fleet (text): $(cat "$GV_OUT")"
grep -qE "^      [0-9T:Z-]+  job 102 +pass  sha256:[0-9a-f]{12}  numerics_outlier$" "$GV_OUT" ||
    fail "n3's run in the text: $(cat "$GV_OUT")"

# the report page: the banner first, the groups, the odd node, the grid
expect_rc 0 "$GPUVET" report "$T/fh.json" -o "$T/fh.html"
python3 - "$T/fh.html" <<'PY' || fail "the page"
import re, sys
s = open(sys.argv[1]).read()
body = s[s.index("<body"):]
assert body.index('class="verdict') < body.index("<section"), "the verdict is not first"
assert "2 fleet comparisons, the latest (job 102) with 1 odd node" in body, "banner"
assert re.search(r"<td[^>]*>n1, n2, n3, n4</td>", body), "nodes by group"
grid = body[body.index("Each node in each comparison"):]
rows = re.findall(r"<tr><th>(n\d)</th>(.*?)</tr>", grid)
cells = {n: re.findall(r'data-class="(\w+)"', r) for n, r in rows}
assert cells == {"n1": ["ok", "ok"], "n2": ["ok", "ok"], "n3": ["ok", "odd"], "n4": ["ok", "ok"]}, cells
assert "numerics outlier" in grid
PY
# and in a real browser (tests/report/check_page.py's checks of every page: no console
# error, the verdict on the first screen, sorting, printing on A4)
need_browser
mkdir -p "$T/shots"
python3 "$GV_SRC/tests/report/check_page.py" fleet-history "$T/fh.html" "$T/shots" "$T/fh.json" \
    > "$T/page.out" 2>&1 || fail "the page in a browser: $(tail -5 "$T/page.out")"

# hostile node documents: refused, naming the field, nothing recorded
before=$(sql "$GPUVET_DB" "SELECT COUNT(*) FROM runs")
python3 - "$T/r2/nodes/n1.r0.json" "$T" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for name, node in (("dots", "../../x"), ("long", "n" * 300), ("ctl", "n1\nn2")):
    e = dict(d, node=node)
    json.dump(e, open("%s/hostile-%s.json" % (sys.argv[2], name), "w"))
e = dict(d, job="7\u0007"); json.dump(e, open(sys.argv[2] + "/hostile-job.json", "w"))
f = json.load(open(sys.argv[2] + "/r2/fleet.json"))
f["groups"][0]["odd"][0]["node"] = "../n3"
json.dump(f, open(sys.argv[2] + "/hostile-fleet.json", "w"))
PY
for h in dots long ctl job fleet; do
    expect_rc 3 "$GPUVET" history import "$T/hostile-$h.json"
done
grep -q 'hostile-fleet.json: field "groups\[\].odd\[\].node" missing or not 1-64' "$GV_ERR" ||
    fail "hostile fleet: $(cat "$GV_ERR")"
expect_rc 3 "$GPUVET" history import "$T/hostile-dots.json"
grep -q 'hostile-dots.json: field "node" missing or not 1-64 characters' "$GV_ERR" ||
    fail "hostile node: $(cat "$GV_ERR")"
[[ $(sql "$GPUVET_DB" "SELECT COUNT(*) FROM runs") == "$before" ]] || fail "a hostile document was recorded"

# a version 3 database (before the fleet columns) is read as it is, and migrated by the
# next recording
cp "$GPUVET_DB" "$T/v3.db"
python3 - "$T/v3.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("DELETE FROM documents WHERE run_id IN (SELECT id FROM runs WHERE kind LIKE 'fleet%')")
c.execute("DELETE FROM runs WHERE kind LIKE 'fleet%'")
c.execute("DROP INDEX runs_fleet")
for col in ("fleet_job", "stack_digest", "fleet_nodes", "fleet_odd", "node_class"):
    c.execute("ALTER TABLE runs DROP COLUMN " + col)
c.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
c.commit()
PY
GPUVET_DB=$T/v3.db expect_rc 0 "$GPUVET" history fleet --json
expect_json "$GV_OUT" "[d['rounds'], d['nodes']]" "[[], []]"
[[ $(sql "$T/v3.db" "SELECT value FROM meta WHERE key = 'schema_version'") == "[('3',)]" ]] ||
    fail "a reading command migrated the database"
GPUVET_DB=$T/v3.db expect_rc 0 "$GPUVET" history import "$T/r2"
[[ $(sql "$T/v3.db" "SELECT value FROM meta WHERE key = 'schema_version'") == "[('4',)]" ]] ||
    fail "not migrated to version 4"
[[ $(sql "$T/v3.db" "SELECT hostname, node_class FROM runs WHERE kind = 'fleet-node' ORDER BY hostname") == \
   "[('n1', None), ('n2', None), ('n3', 'numerics_outlier'), ('n4', None)]" ]] ||
    fail "the migrated database: $(sql "$T/v3.db" "SELECT hostname, node_class FROM runs")"
GPUVET_DB=$T/v3.db expect_rc 0 "$GPUVET" history check
# a node run by hand (no launcher: its job is "") is recorded too, and so is its comparison
GPUVET_FLEET_NODE=solo expect_rc 0 "$GPUVET" fleet run --tier prolog --device cpu \
    --only "$ONLY" --dir "$T/solo" --record --db "$T/solo.db"
grep -q "recorded as run" "$GV_ERR" || fail "a run with no launcher not recorded: $(cat "$GV_ERR")"
expect_rc 0 "$GPUVET" fleet compare "$T/solo" --record --db "$T/solo.db"
[[ $(sql "$T/solo.db" "SELECT kind, fleet_job, kind = 'fleet' OR hostname = 'solo' FROM runs ORDER BY id") == \
   "[('fleet-node', None, 1), ('fleet', None, 1)]" ]] ||
    fail "no launcher: $(sql "$T/solo.db" "SELECT kind, hostname, fleet_job FROM runs")"
echo "fleet history: recorded, over time, on the page; hostile documents refused; migrated"
