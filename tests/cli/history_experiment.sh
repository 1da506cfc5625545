#!/usr/bin/env bash
# `--to last-good` must not pick side B of an `ab` experiment (issue 36, item 7): the
# history records which runs are sides of an experiment (column experiment, schema
# version 3, from the document's "experiment") and `history good` (what plan rollback
# --to last-good reads) skips them; `gpuvet ab --record` marks its two sides so. A version 2 database (before the column) is still
# read as it is, and migrated when a run is recorded into it, its runs kept.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 edits the documents and the database"
gv_workdir T
export XDG_CACHE_HOME=$T/cache GPUVET_DB=$T/h.db
unset GPUVET_RECORD

"$GPUVET" check --device cpu --only 'gemm.f32.64x*' --determinism none -o "$T/base.json" >/dev/null ||
    fail "the passing run failed"
# an ordinary run, then the two sides of an experiment, each later than the one before
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/base.json"))
for name, when, side in (("plain", "2026-01-01T00:00:00Z", None), ("side-a", "2026-01-02T00:00:00Z", "a"),
                         ("side-b", "2026-01-03T00:00:00Z", "b")):
    d["created"] = when
    d.pop("experiment", None)
    if side:
        d["experiment"] = {"kind": "ab", "side": side}
    json.dump(d, open("%s/%s.json" % (t, name), "w"))
d["created"] = "2026-01-04T00:00:00Z"
d["experiment"] = {"kind": "ab; drop table runs", "side": "b"}
json.dump(d, open(t + "/bad.json", "w"))
PY
for f in plain side-a side-b; do "$GPUVET" history import "$T/$f.json" 2>/dev/null || fail "import $f"; done
rc=0
"$GPUVET" history import "$T/bad.json" 2>"$T/err" || rc=$?
[[ $rc != 0 ]] || fail "a malformed experiment was recorded"
grep -q "experiment must be" "$T/err" || fail "the malformed experiment is not named: $(cat "$T/err")"

"$GPUVET" history good --json >"$T/good.json" || fail "history good: exit $?"
python3 - "$T/good.json" <<'PY' || fail "last good picked a side of the experiment: $(cat "$T/good.json")"
import json, sys
d = json.load(open(sys.argv[1]))
run = d.get("run", d)
assert run["created"] == "2026-01-01T00:00:00Z", run["created"]
assert run.get("experiment") is None, run
PY
"$GPUVET" history list --json >"$T/list.json"
python3 - "$T/list.json" <<'PY' || fail "history list does not say which runs are experiments"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
by = {r["created"]: r.get("experiment") for r in runs}
assert by == {"2026-01-01T00:00:00Z": None, "2026-01-02T00:00:00Z": "ab:a", "2026-01-03T00:00:00Z": "ab:b"}, by
PY

# a version 2 database: no experiment column
cp "$GPUVET_DB" "$T/v2.db"
python3 - "$T/v2.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("ALTER TABLE runs DROP COLUMN experiment")
c.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
c.commit()
PY
GPUVET_DB=$T/v2.db "$GPUVET" history list --json >"$T/v2list.json" || fail "a version 2 database is not read"
[[ $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["runs"]))' "$T/v2list.json") == 3 ]] ||
    fail "runs of the version 2 database"
GPUVET_DB=$T/v2.db "$GPUVET" history good --json >/dev/null || fail "history good on a version 2 database"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); assert c.execute("SELECT value FROM meta WHERE key=?", ("schema_version",)).fetchone()[0] == "2"' \
    "$T/v2.db" || fail "reading migrated the database"
python3 - "$T/base.json" "$T/later.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["created"] = "2026-01-05T00:00:00Z"
json.dump(d, open(sys.argv[2], "w"))
PY
GPUVET_DB=$T/v2.db "$GPUVET" history import "$T/later.json" 2>"$T/err" || fail "migration: $(cat "$T/err")"
python3 - "$T/v2.db" <<'PY' || fail "not migrated to version 4"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "4"
cols = [r[1] for r in c.execute("PRAGMA table_info(runs)")]
assert "experiment" in cols, cols
assert c.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
PY
# the real thing: ab --record into an empty database leaves no good run to roll back to
export GPUVET_DB=$T/ab.db
"$GPUVET" ab --a device=cpu --b device=cpu:emulate=tf32 --only 'gemm.f32.64x*' --record \
    >"$T/ab.out" 2>&1 || [[ $? == 1 ]] || fail "ab --record: $(cat "$T/ab.out")"
"$GPUVET" history list --json >"$T/ablist.json"
python3 - "$T/ablist.json" <<'PY' || fail "ab --record did not mark its sides: $(cat "$T/ablist.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
sides = sorted(r.get("experiment") or "none" for r in runs)
assert sides == ["ab:a", "ab:b"], sides
PY
if "$GPUVET" history good --json >"$T/abgood.json" 2>"$T/abgood.err"; then
    python3 - "$T/abgood.json" <<'PY' || fail "history good picked a side of ab: $(cat "$T/abgood.json")"
import json, sys
d = json.load(open(sys.argv[1]))
run = d.get("run", d)
assert not run or run.get("experiment") is None, run
PY
fi
echo ok
