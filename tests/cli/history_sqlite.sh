#!/bin/bash
# The history database on SQLite, end to end with real gpuvet runs: --record on
# snapshot and check, GPUVET_RECORD=1, the default location, import (and no
# second copy of a file recorded twice), list/show/diff/good, the matrix in all
# four formats and its filters, plan rollback --to last-good; the columns are
# checked against the result files as python3 reads them, not against gpuvet's
# own output. Then the failures: a database from a newer gpuvet, a corrupt
# file, kill -9 at every stop point of a recording (the database passes its
# integrity check and holds every run reported recorded).
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data"
unset GPUVET_DB GPUVET_RECORD
ONLY='gemm.f32.127x253x511.*,softmax.f16.*'
DB="$XDG_DATA_HOME/gpuvet/history.db"
py() { python3 -c "$@"; }

# --- recording: --record, GPUVET_RECORD=1, the default location
"$GPUVET" snapshot --no-hash --record -o "$T/snap.json" 2> "$T/err" || fail "snapshot --record: $(cat "$T/err")"
[ -f "$DB" ] || fail "no database at the default location $DB"
grep -q "recorded as run 1 in $DB" "$T/err" || fail "snapshot did not say where it recorded: $(cat "$T/err")"
"$GPUVET" check --device cpu --only "$ONLY" --record -o "$T/good1.json" > /dev/null 2> "$T/err" ||
    fail "check --record: $(cat "$T/err")"
GPUVET_RECORD=1 "$GPUVET" check --device cpu:emulate=tf32 --only "$ONLY" -o "$T/bad.json" > /dev/null 2> "$T/err"
[ $? -eq 1 ] || fail "an emulated TF32 run should fail a case (exit 1)"
grep -q "recorded as run 3" "$T/err" || fail "GPUVET_RECORD=1 did not record: $(cat "$T/err")"
"$GPUVET" check --device cpu --only "$ONLY" -o "$T/good2.json" > /dev/null 2>&1 || fail "check"
[ "$("$GPUVET" history list --json | py 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" = 3 ] ||
    fail "a check without --record was recorded"

# --- import, and a file recorded twice is there once
"$GPUVET" history import "$T/good2.json" 2> "$T/err" || fail "import: $(cat "$T/err")"
"$GPUVET" history import "$T/good2.json" "$T/good1.json" 2> "$T/err" || fail "second import: $(cat "$T/err")"
grep -q "already recorded as run 4" "$T/err" || fail "re-import not recognised: $(cat "$T/err")"
grep -q "already recorded as run 2" "$T/err" || fail "re-import of a --record run not recognised"
"$GPUVET" history import "$T/nope.json" 2> "$T/err"
[ $? -eq 3 ] || fail "import of a missing file: expected exit 3"
printf '{"schema":"other","schema_version":1}' > "$T/foreign.json"
"$GPUVET" history import "$T/foreign.json" 2> "$T/err"
[ $? -eq 3 ] && grep -q "not a gpuvet document" "$T/err" || fail "a foreign document was not refused: $(cat "$T/err")"

# --- the columns, against the files as python reads them
"$GPUVET" history list --json > "$T/list.json" || fail "list --json"
python3 - "$T" <<'PY' || fail "columns differ from the files"
import json, math, sys, socket
T = sys.argv[1]
runs = {r["id"]: r for r in json.load(open(T + "/list.json"))["runs"]}
assert sorted(runs) == [1, 2, 3, 4], sorted(runs)
files = {1: "snap.json", 2: "good1.json", 3: "bad.json", 4: "good2.json"}
host = socket.gethostname()
for rid, f in files.items():
    d = json.load(open(T + "/" + f)); r = runs[rid]
    snap = d if d["schema"] == "gpuvet.snapshot" else d["snapshot"]
    assert r["created"] == d["created"], (rid, r["created"], d["created"])
    assert r["hostname"] == host, r["hostname"]
    assert r["kernel"] == snap["host"]["kernel"]["release"], r["kernel"]
    assert r["schema"] == d["schema"]
    envs = [e for e in snap["python"]["environments"] if "torch" in e and e["torch"].get("version")]
    assert r["torch"] == (envs[0]["torch"]["version"] if envs else None), (r["torch"], envs[:1])
    if d["schema"] == "gpuvet.results":
        s = d["summary"]
        assert (r["cases"], r["passed"], r["failed"]) == (s["cases"], s["pass"], s["fail"]), r
        assert r["verdict"] == ("pass" if s["pass"] == s["cases"] else "fail"), r
        assert r["gpu_model"] == d["device"]["description"]["name"], r["gpu_model"]
        # worst: the narrower of compute and output precision minus the effective bits
        bits = {"f64": 53, "f32": 24, "tf32": 11, "f16": 11, "bf16": 8, "f8e4m3": 4, "f8e5m2": 3}
        lost = [(max(0.0, min(bits[c["compute_dtype"]], bits[c["out_dtype"]]) - c["metrics"]["effective_bits"]), c["id"])
                for c in d["cases"] if c.get("metrics")]
        best = max(lost)
        assert abs(r["worst_bits_lost"] - best[0]) < 1e-9 and r["worst_case"] == best[1], (r["worst_case"], best)
    else:
        assert r["verdict"] is None and r["kind"] == "snapshot", r
PY
# show --document gives back the document as recorded (through zstd)
"$GPUVET" history show 3 --document -o "$T/back.json" || fail "show --document"
py 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a!=b)' \
    "$T/bad.json" "$T/back.json" || fail "the recorded document differs from the file"
"$GPUVET" history show 99 2> "$T/err"
[ $? -eq 3 ] && grep -q "no run 99" "$T/err" || fail "show of a missing run"
"$GPUVET" history show 2 | grep -q "verdict *pass" || fail "show text"

# --- good: the newest passing run of this machine (4), not the newer failing one
"$GPUVET" history good --json | py 'import json,sys; sys.exit(json.load(sys.stdin)["run"]["id"] != 4)' ||
    fail "good is not run 4"
"$GPUVET" history good --machine no-such-host 2> "$T/err"
[ $? -eq 1 ] && grep -q "no run that passed" "$T/err" || fail "good of an unknown machine"
# plan rollback --to last-good plans back to run 4's snapshot
"$GPUVET" plan rollback --to last-good --no-check --format json > "$T/plan.json" 2> "$T/err"
rc=$?
{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } || fail "plan --to last-good: exit $rc: $(cat "$T/err")"
grep -q "last good: run 4" "$T/err" || fail "plan did not say which run: $(cat "$T/err")"
base=$(sed -n 's/.*snapshot written to //p' "$T/err")
py 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))["snapshot"]; sys.exit(a!=b)' \
    "$base" "$T/good2.json" || fail "the last-good baseline is not run 4's snapshot"

# --- diff: two runs of different stacks (emulation) differ at least in their verdict
"$GPUVET" history diff 2 3 > "$T/diff.txt"
[ $? -eq 1 ] || fail "diff of a passing and a failing run should exit 1"
grep -q "verdict *pass -> fail" "$T/diff.txt" || fail "diff does not show the verdict: $(cat "$T/diff.txt")"
"$GPUVET" history diff 2 4 --json > "$T/diff.json" || true
py 'import json,sys; d=json.load(sys.stdin); sys.exit(d["snapshot_diff"] is None)' < "$T/diff.json" ||
    fail "diff --json lacks the snapshot diff"

# --- the matrix: one row (same stack), 3 judged runs, 2 passes, 1 failure, 1 machine
"$GPUVET" matrix --json > "$T/m.json" || fail "matrix --json"
python3 - "$T" <<'PY' || fail "matrix document"
import json, sys
T = sys.argv[1]
m = json.load(open(T + "/m.json"))
assert m["schema"] == "gpuvet.matrix" and m["schema_version"] == 1
assert set(m) == {"schema", "schema_version", "db", "generated", "filters", "rows"}, set(m)
assert m["filters"] == {"gpu": None, "since": None, "torch": None}
assert len(m["rows"]) == 1, m["rows"]
r = m["rows"][0]
keys = {"gpu_model", "gpu_arch", "kernel", "driver", "rocm", "cuda", "torch", "runs", "machines",
        "passes", "failures", "first_seen", "last_seen", "worst", "timeline"}
assert set(r) == keys, set(r) ^ keys
assert (r["runs"], r["machines"], r["passes"], r["failures"]) == (3, 1, 2, 1), r
files = [json.load(open(T + "/" + f)) for f in ("good1.json", "bad.json", "good2.json")]
assert r["first_seen"] == min(f["created"] for f in files) and r["last_seen"] == max(f["created"] for f in files)
assert [e["run"] for e in r["timeline"]] == [2, 3, 4], r["timeline"]
assert [e["verdict"] for e in r["timeline"]] == ["pass", "fail", "pass"]
assert r["worst"]["run"] == 3 and r["worst"]["case"].startswith("gemm.f32"), r["worst"]
PY
n=$("$GPUVET" matrix --format csv | python3 -c 'import csv,sys; r=list(csv.reader(sys.stdin)); print(len(r), r[1][7], r[1][10], r[1][1] == "")')
[ "$n" = "2 3 1 True" ] || fail "csv: $n"
"$GPUVET" matrix --format markdown | grep -c '^|' | grep -qx 3 || fail "markdown: expected a header, a rule and one row"
"$GPUVET" matrix | grep -q "1.13\|CPU" || fail "text matrix"
"$GPUVET" matrix --gpu no-such-gpu --json | py 'import json,sys; sys.exit(len(json.load(sys.stdin)["rows"]) != 0)' || fail "--gpu filter"
# a piece of this machine's own device name, in the other case (the CPU differs between machines)
part=$("$GPUVET" matrix --json | py 'import json,sys; g=json.load(sys.stdin)["rows"][0]["gpu_model"]; print(g[len(g)//3:len(g)//3+4].swapcase())')
[ -n "$part" ] || fail "no device name in the matrix"
"$GPUVET" matrix --gpu "$part" --json | py 'import json,sys; sys.exit(len(json.load(sys.stdin)["rows"]) != 1)' || fail "--gpu substring, any case ($part)"
"$GPUVET" matrix --since 2999-01-01 --json | py 'import json,sys; d=json.load(sys.stdin); sys.exit(len(d["rows"]) != 0 or d["filters"]["since"] != "2999-01-01T00:00:00Z")' || fail "--since filter"
"$GPUVET" matrix --torch 0.0.1 --json | py 'import json,sys; sys.exit(len(json.load(sys.stdin)["rows"]) != 0)' || fail "--torch filter"
"$GPUVET" matrix --since yesterday > /dev/null 2>&1; [ $? -eq 2 ] || fail "a bad --since is a usage error"
"$GPUVET" matrix --format xml > /dev/null 2>&1; [ $? -eq 2 ] || fail "a bad --format is a usage error"
"$GPUVET" history check > /dev/null || fail "integrity check of a good database"

# --- a database from a newer gpuvet: refused by name, the result file still written
cp "$DB" "$T/newer.db"
py 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE meta SET value=? WHERE key=?", ("7","schema_version")); c.commit()' "$T/newer.db"
rm -f "$T/r.json"
GPUVET_DB="$T/newer.db" "$GPUVET" check --device cpu --only "$ONLY" --record -o "$T/r.json" > /dev/null 2> "$T/err"
[ $? -eq 3 ] || fail "recording into a newer database: expected exit 3"
grep -q "$T/newer.db has schema version 7, newer than" "$T/err" || fail "newer schema message: $(cat "$T/err")"
"$GPUVET" compare "$T/good1.json" "$T/r.json" > /dev/null || fail "the result file was not written whole"
GPUVET_DB="$T/newer.db" "$GPUVET" history list 2> "$T/err"; [ $? -eq 3 ] || fail "list of a newer database"
# a migrated-forward database keeps its runs: version 1 is current, so the
# migration path is the creation path; an older (version 0) meta is migrated
cp "$DB" "$T/old.db"
py 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM meta"); c.commit()' "$T/old.db"
GPUVET_DB="$T/old.db" "$GPUVET" history list > /dev/null 2> "$T/err"; [ $? -eq 3 ] || fail "an unversioned database was read"
GPUVET_DB="$T/old.db" "$GPUVET" history import "$T/good1.json" 2> "$T/err" || fail "migration: $(cat "$T/err")"
[ "$(GPUVET_DB="$T/old.db" "$GPUVET" history list --json | py 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" = 4 ] ||
    fail "runs lost by the migration"

# --- a corrupt file: a clear error, the result file still written
head -c 65536 /dev/urandom > "$T/corrupt.db"
rm -f "$T/r.json"
GPUVET_DB="$T/corrupt.db" "$GPUVET" check --device cpu --only "$ONLY" --record -o "$T/r.json" > /dev/null 2> "$T/err"
[ $? -eq 3 ] || fail "recording into a corrupt file: expected exit 3"
grep -q "$T/corrupt.db.*not a SQLite database or is corrupt" "$T/err" || fail "corrupt message: $(cat "$T/err")"
"$GPUVET" compare "$T/good1.json" "$T/r.json" > /dev/null || fail "the result file was not written (corrupt db)"
# a failing run keeps its own exit status (1) when the recording fails too
GPUVET_DB="$T/corrupt.db" "$GPUVET" check --device cpu:emulate=tf32 --only "$ONLY" --record -o "$T/r2.json" > /dev/null 2>&1
[ $? -eq 1 ] || fail "a failing run whose recording fails should exit 1"
GPUVET_DB="$T/corrupt.db" "$GPUVET" snapshot --no-hash --record -o "$T/s2.json" 2> /dev/null
[ $? -eq 3 ] && [ -s "$T/s2.json" ] || fail "snapshot --record into a corrupt file"

# --- kill -9 inside a recording, at each stop point (no timing: gpuvet stops
# itself with SIGSTOP there, see src/base/fs.h)
KDB="$T/killed.db"
export GPUVET_DB="$KDB"
"$GPUVET" history import "$T/good1.json" 2> /dev/null || fail "first import into $KDB"
i=0
for point in record-begin record-run record-doc record-commit; do
    i=$((i + 1))
    py 'import json,sys; d=json.load(open(sys.argv[1])); d["created"]="2026-01-0%sT00:00:00Z" % sys.argv[3]; json.dump(d, open(sys.argv[2], "w"))' \
        "$T/good1.json" "$T/k$i.json" "$i"
    GPUVET_TEST_STOP_AT=$point GPUVET_TEST_STOP_FILE=killed.db "$GPUVET" history import "$T/k$i.json" 2> /dev/null &
    pid=$!
    wait_stopped "$pid" || fail "gpuvet never reached $point"
    kill -9 "$pid"
    wait "$pid" 2> /dev/null
    [ $? -eq 137 ] || fail "at $point: expected death by SIGKILL"
    "$GPUVET" history check > /dev/null 2> "$T/err" || fail "after a kill at $point: $(cat "$T/err")"
    n=$("$GPUVET" history list --json | py 'import json,sys; print(" ".join(r["created"] for r in json.load(sys.stdin)["runs"]))')
    case $point in
        record-commit) echo "$n" | grep -q "2026-01-0${i}T" || fail "a committed run is missing after a kill at $point" ;;
        *) ! echo "$n" | grep -q "2026-01-0${i}T" || fail "a half-recorded run is there after a kill at $point" ;;
    esac
    echo "$n" | grep -q "$(py 'import json,sys; print(json.load(open(sys.argv[1]))["created"])' "$T/good1.json")" ||
        fail "the run recorded before was lost by a kill at $point"
    # the next recording of the same document succeeds (no lock left behind)
    "$GPUVET" history import "$T/k$i.json" 2> "$T/err" || fail "recording after a kill at $point: $(cat "$T/err")"
done
[ "$("$GPUVET" history list --json | py 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" = 5 ] ||
    fail "expected 5 runs after the kills and re-recordings"
echo "ok: history on SQLite (record, import, list/show/diff/good, matrix, last-good, newer/corrupt databases, 4 kill points)"
