#!/bin/bash
# The history database on a real PostgreSQL server that this test starts
# (tests/cli/pg_env.bash: Debian's postgresql, a Unix socket in a temporary
# directory): the same runs recorded into PostgreSQL and into SQLite give the
# same list and the same matrix; documents come back whole (bytea); a run
# recorded twice is there once; two machines count as two. Failures: a wrong
# password (password auth for a socket role) and a server that is down give a
# clear error and the result file is still written; the password appears in
# no output or message; a newer schema is refused; libpq missing is named;
# kill -9 inside a recording leaves no half run.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data"
unset GPUVET_DB GPUVET_RECORD GPUVET_FLEET_NODE OMPI_COMM_WORLD_RANK PMIX_RANK
# shellcheck source=tests/cli/pg_env.bash
. "$GV_SRC/tests/cli/pg_env.bash"
at_exit pg_stop
pg_start
ONLY='gemm.f32.127x253x511.*,softmax.f16.*'
py() { python3 -c "$@"; }
count() { "$GPUVET" history list --limit 100000 --json | py 'import json,sys; print(len(json.load(sys.stdin)["runs"]))'; }

"$GPUVET" snapshot --no-hash -o "$T/snap.json" || fail "snapshot"
GPUVET_DB="$PG_URL" "$GPUVET" check --device cpu --only "$ONLY" --record -o "$T/good.json" > /dev/null 2> "$T/err" ||
    fail "check --record into PostgreSQL: $(cat "$T/err")"
grep -q "recorded as run 1 in $PG_URL" "$T/err" || fail "where: $(cat "$T/err")"
"$GPUVET" check --device cpu:emulate=tf32 --only "$ONLY" -o "$T/bad.json" > /dev/null 2>&1
# the same failing run as if from a second machine
py 'import json,sys; d=json.load(open(sys.argv[1])); d["created"]="2026-11-01T00:00:00Z"; json.dump(d, open(sys.argv[2], "w"))' \
    "$T/bad.json" "$T/bad-b.json"
for db in "$PG_URL" "$T/same.db"; do
    export GPUVET_DB=$db
    "$GPUVET" history import "$T/good.json" "$T/snap.json" "$T/bad.json" 2> "$T/err" || fail "import into $db: $(cat "$T/err")"
    "$GPUVET" history import --machine host-b "$T/bad-b.json" 2> "$T/err" || fail "import --machine into $db"
    "$GPUVET" history list --json > "$T/list-$(basename "$db" | tr -c 'a-z\n' _).json" || fail "list $db"
    "$GPUVET" matrix --json > "$T/matrix-$(basename "$db" | tr -c 'a-z\n' _).json" || fail "matrix $db"
done
export GPUVET_DB="$PG_URL"
[ "$(count)" = 4 ] || fail "PostgreSQL: expected 4 runs (the check recorded once), got $(count)"
python3 - "$T" <<'PY' || fail "PostgreSQL and SQLite disagree"
import glob, json, sys
T = sys.argv[1]
def load(kind):
    (pg,) = [f for f in glob.glob(T + "/%s-*.json" % kind) if "same" not in f]
    return json.load(open(pg)), json.load(open(glob.glob(T + "/%s-same*.json" % kind)[0]))
a, b = load("list")
strip = lambda runs: [{k: v for k, v in r.items() if k not in ("recorded", "id")} for r in runs]
assert strip(a["runs"]) == strip(b["runs"]), (a["runs"][0], b["runs"][0])
a, b = load("matrix")
assert a["rows"] == b["rows"], (a["rows"], b["rows"])
assert a["db"].startswith("postgresql://gpuvet@/gpuvet"), a["db"]
(r,) = a["rows"]
assert (r["runs"], r["machines"], r["passes"], r["failures"]) == (3, 2, 1, 2), r
assert [e["machine"] for e in r["timeline"]][0] == "host-b", r["timeline"]
PY
"$GPUVET" history show 3 --document -o "$T/back.json" || fail "show --document"
py 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$T/bad.json" "$T/back.json" ||
    fail "the document did not come back whole from PostgreSQL"
"$GPUVET" history good --json | py 'import json,sys; sys.exit(json.load(sys.stdin)["run"]["id"] != 1)' || fail "good"
"$GPUVET" history check > /dev/null || fail "history check on PostgreSQL"

# --- the fleet (docs/history.md, "The fleet"): a node document recorded under its node name,
# the comparison with its job; the fleet history as SQLite gives it
SLURM_PROCID=0 SLURM_NTASKS=1 SLURMD_NODENAME=pg-node7 SLURM_JOB_ID=77 \
    "$GPUVET" fleet run --tier prolog --device cpu --only 'gemm.f32.256*' --dir "$T/fleet" \
    --record --db "$PG_URL" > /dev/null 2> "$T/err" || fail "fleet run --record: $(cat "$T/err")"
"$GPUVET" fleet compare "$T/fleet" -o "$T/fleet/fleet.json" --record --db "$PG_URL" > /dev/null 2> "$T/err" ||
    fail "fleet compare --record: $(cat "$T/err")"
"$GPUVET" history list --json --kind fleet-node | py 'import json,sys; r=json.load(sys.stdin)["runs"]; sys.exit([(x["hostname"], x["fleet_job"], x["machine_id"]) for x in r] != [("pg-node7", "77", None)])' ||
    fail "the node run on PostgreSQL: $("$GPUVET" history list --json --kind fleet-node)"
GPUVET_DB=$T/same.db "$GPUVET" history import "$T/fleet" 2> "$T/err" || fail "fleet import into SQLite: $(cat "$T/err")"
for db in "$PG_URL" "$T/same.db"; do
    GPUVET_DB=$db "$GPUVET" history fleet --json |
        py 'import json,sys; d=json.load(sys.stdin); print([(r["job"], r["nodes"], r["verdict"]) for r in d["rounds"]], [(n["node"], [(r["job"], r["verdict"]) for r in n["runs"]]) for n in d["nodes"]])'
done > "$T/fleet.out"
[ "$(sort -u "$T/fleet.out")" = "[('77', 1, 'pass')] [('pg-node7', [('77', 'pass')])]" ] ||
    fail "history fleet on PostgreSQL and SQLite: $(cat "$T/fleet.out")"

# --- passwords: a socket role with scram-sha-256 password authentication
SECRET='S3cr3t-Pw_9x'
pg_sql "CREATE ROLE secretrole LOGIN PASSWORD '$SECRET'; GRANT ALL ON SCHEMA public TO secretrole;
        GRANT ALL ON ALL TABLES IN SCHEMA public TO secretrole; GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO secretrole" > /dev/null ||
    fail "create role"
GOOD_URL="postgresql://secretrole:$SECRET@/gpuvet?host=$PGSOCK"
SHOWN="postgresql://secretrole@/gpuvet?host=$PGSOCK"
out="$T/pw.out"
: > "$out"
GPUVET_DB="$GOOD_URL" "$GPUVET" history import "$T/snap.json" >> "$out" 2>&1 || fail "import with the right password: $(cat "$out")"
grep -q "already recorded as run 2 in $SHOWN\$" "$out" || fail "the URL is not shown with the password removed: $(cat "$out")"
GPUVET_DB="$GOOD_URL" "$GPUVET" matrix --json >> "$out" 2>&1 || fail "matrix with a password"
GPUVET_DB="$GOOD_URL" "$GPUVET" matrix >> "$out" 2>&1 || fail "matrix text with a password"
"$GPUVET" history list --db "$GOOD_URL" --json >> "$out" 2>&1 || fail "list --db with a password"
"$GPUVET" history show 1 --db "$GOOD_URL" --json >> "$out" 2>&1 || fail "show with a password"
GPUVET_DB="postgresql://secretrole@/gpuvet?host=$PGSOCK&password=$SECRET" "$GPUVET" history list >> "$out" 2>&1 ||
    fail "a password given as a URL parameter"
# wrong password, and a password in a parameter: the error says why, never the password
rm -f "$T/r.json"
GPUVET_DB="postgresql://secretrole:wrong-$SECRET@/gpuvet?host=$PGSOCK" \
    "$GPUVET" check --device cpu --only "$ONLY" --record -o "$T/r.json" > /dev/null 2> "$T/err"
rc=$?
cat "$T/err" >> "$out"
[ $rc -eq 3 ] || fail "a wrong password: expected exit 3, got $rc"
grep -q "password authentication failed" "$T/err" || fail "wrong password message: $(cat "$T/err")"
grep -q "$SHOWN" "$T/err" || fail "the database is not named: $(cat "$T/err")"
"$GPUVET" compare "$T/good.json" "$T/r.json" > /dev/null || fail "the result file was not written (wrong password)"
GPUVET_DB="postgresql://secretrole@/gpuvet?password=wrong-$SECRET&host=$PGSOCK" "$GPUVET" history list >> "$out" 2>&1
[ $? -eq 3 ] || fail "a wrong password as a parameter: expected exit 3"
! grep -q "$SECRET" "$out" || fail "the password was printed: $(grep "$SECRET" "$out" | head -3)"
[ "$(wc -l < "$out")" -gt 20 ] || fail "too little output to judge the password test"
# nothing stored holds it either
! pg_sql "SELECT source, hostname FROM runs" | grep -q "$SECRET" || fail "the password was stored"

# --- a database from a newer gpuvet
pg_sql "UPDATE meta SET value = '9' WHERE key = 'schema_version'" > /dev/null
"$GPUVET" history import "$T/bad-b.json" 2> "$T/err"
[ $? -eq 3 ] && grep -q "has schema version 9, newer than" "$T/err" || fail "newer PostgreSQL schema: $(cat "$T/err")"
pg_sql "UPDATE meta SET value = '1' WHERE key = 'schema_version'" > /dev/null

# --- libpq cannot be loaded: named, and SQLite still works
GPUVET_LIBPQ=/nonexistent/libpq.so.5 "$GPUVET" history list 2> "$T/err"
[ $? -eq 3 ] && grep -q "cannot load /nonexistent/libpq.so.5" "$T/err" || fail "missing libpq: $(cat "$T/err")"

# --- kill -9 inside a recording (stop points, no timing)
before=$(count)
i=0
for point in record-run record-doc record-commit; do
    i=$((i + 1))
    py 'import json,sys; d=json.load(open(sys.argv[1])); d["created"]="2025-01-0%sT00:00:00Z" % sys.argv[3]; json.dump(d, open(sys.argv[2], "w"))' \
        "$T/good.json" "$T/k$i.json" "$i"
    GPUVET_TEST_STOP_AT=$point GPUVET_TEST_STOP_FILE=gpuvet "$GPUVET" history import "$T/k$i.json" 2> /dev/null &
    pid=$!
    wait_stopped "$pid" || fail "gpuvet never reached $point"
    kill -9 "$pid"
    wait "$pid" 2> /dev/null
    n=$(count)
    case $point in
        record-commit) [ "$n" = $((before + 1)) ] || fail "committed run missing after a kill at $point" ;;
        *) [ "$n" = "$before" ] || fail "a half-recorded run after a kill at $point ($n runs)" ;;
    esac
    "$GPUVET" history import "$T/k$i.json" 2> /dev/null || fail "recording again after a kill at $point"
    before=$((before + 1))
    [ "$(count)" = "$before" ] || fail "after re-recording at $point"
done
"$GPUVET" history check > /dev/null || fail "integrity after the kills"

# --- the server is down: a clear error, the result file still written
pg_as "$PGBIN/pg_ctl" -D "$PGSOCK/data" -m fast -w stop > /dev/null || fail "pg_ctl stop"
rm -f "$T/r.json"
"$GPUVET" check --device cpu --only "$ONLY" --record -o "$T/r.json" > /dev/null 2> "$T/err"
[ $? -eq 3 ] || fail "server down: expected exit 3"
grep -q "history database $PG_URL: cannot connect" "$T/err" || fail "server down message: $(cat "$T/err")"
grep -q "the run was not recorded in the history; its result is in" "$T/err" || fail "server down: not said: $(cat "$T/err")"
"$GPUVET" compare "$T/good.json" "$T/r.json" > /dev/null || fail "the result file was not written (server down)"
echo "ok: history on PostgreSQL (same as SQLite, passwords never shown, wrong password, server down, newer schema, no libpq, kill -9)"
