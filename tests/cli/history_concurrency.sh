#!/bin/bash
# Concurrent writers (issue 14): 8 processes recording 200 runs each into the
# same SQLite file, then into the same PostgreSQL database (a real server this
# test starts, tests/cli/pg_env.bash), all at once. Every recording is its own
# gpuvet process (gpuvet history import FILE) of a small real result document
# (a check run, made distinct by its time and note). Afterwards every run is
# there exactly once, every process exited 0, no "database is locked" (or
# busy) reached the user, and the database passes its integrity check. A
# second pass of one worker over the same files (a retried run) adds nothing.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
mkdir -p "$T/docs"
export XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data"
unset GPUVET_DB GPUVET_RECORD
WORKERS=8
PER=200
TOTAL=$((WORKERS * PER))

"$GPUVET" check --device cpu --only 'softmax.f16.*' -o "$T/base.json" > /dev/null || fail "check"
python3 - "$T" "$WORKERS" "$PER" <<'PY' || fail "making the documents"
import json, sys
T, W, P = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(open(T + "/base.json"))
for w in range(W):
    for i in range(P):
        d["created"] = "2026-%02d-%02dT%02d:%02d:00Z" % (1 + w, 1 + i // 24 % 28, i % 24, i % 60)
        d["device"]["note"] = "worker %d run %d" % (w, i)
        if i % 3 == 0:  # some failing runs too
            d["summary"]["fail"], d["summary"]["pass"] = 1, d["summary"]["cases"] - 1
        else:
            d["summary"]["fail"], d["summary"]["pass"] = 0, d["summary"]["cases"]
        json.dump(d, open("%s/docs/w%d-%03d.json" % (T, w, i), "w"))
PY

worker() { # W DB: records this worker's files one process each; exit codes to a file
    local w=$1 i f
    for ((i = 0; i < PER; i++)); do
        f=$(printf '%s/docs/w%d-%03d.json' "$T" "$w" "$i")
        GPUVET_DB=$2 "$GPUVET" history import "$f" 2>> "$T/err.$w"
        echo $? >> "$T/rc.$w"
    done
}

check_db() { # DB LABEL
    local db=$1 label=$2 w
    rm -f "$T"/err.* "$T"/rc.*
    local t0=$SECONDS
    for ((w = 0; w < WORKERS; w++)); do
        worker "$w" "$db" &
    done
    wait
    echo "$label: $TOTAL recordings by $WORKERS concurrent workers in $((SECONDS - t0)) s"
    cat "$T"/rc.* | sort | uniq -c | sed 's/^/  exit codes: /'
    [ "$(cat "$T"/rc.* | wc -l)" = "$TOTAL" ] || fail "$label: not every recording ran"
    [ "$(grep -cvx 0 "$T"/rc.* | awk -F: '{s += $2} END {print s}')" = 0 ] ||
        fail "$label: some recordings failed: $(grep -hv 'recorded as run' "$T"/err.* | sort | uniq -c | head -5)"
    ! grep -qi "locked\|busy" "$T"/err.* || fail "$label: 'locked' reached the user: $(grep -hi 'locked\|busy' "$T"/err.* | head -3)"
    [ "$(cat "$T"/err.* | grep -c 'recorded as run')" = "$TOTAL" ] || fail "$label: a recording did not say it was recorded"
    GPUVET_DB=$db "$GPUVET" history list --limit 100000 --json > "$T/list.json" || fail "$label: list"
    python3 - "$T" "$TOTAL" <<'PY' || fail "$label: runs missing or recorded twice"
import collections, json, sys
T, total = sys.argv[1], int(sys.argv[2])
runs = json.load(open(T + "/list.json"))["runs"]
src = collections.Counter(r["source"] for r in runs)
ids = collections.Counter(r["id"] for r in runs)
twice = [s for s, n in src.items() if n != 1]
assert not twice, twice[:3]
assert len(runs) == total, (len(runs), total)
assert len(ids) == total
fails = sum(r["verdict"] == "fail" for r in runs)
assert fails == sum(1 for r in runs if int(r["source"][-8:-5]) % 3 == 0), fails
PY
    GPUVET_DB=$db "$GPUVET" history check > /dev/null || fail "$label: integrity check"
    # a retried worker: all already recorded, nothing added
    rm -f "$T"/err.* "$T"/rc.*
    worker 0 "$db"
    [ "$(grep -c 'already recorded' "$T/err.0")" = "$PER" ] || fail "$label: a retried run was recorded again"
    [ "$(GPUVET_DB=$db "$GPUVET" history list --limit 100000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" = "$TOTAL" ] ||
        fail "$label: the retry changed the number of runs"
    # the matrix agrees: one stack, all runs, the failures counted
    GPUVET_DB=$db "$GPUVET" matrix --json | python3 -c '
import json, sys
m = json.load(sys.stdin); (r,) = m["rows"]; total = int(sys.argv[1])
assert r["runs"] == total and r["passes"] + r["failures"] == total and len(r["timeline"]) == 100, r["runs"]
assert r["failures"] == sum(1 for i in range(int(sys.argv[2])) if i % 3 == 0) * int(sys.argv[3])
' "$TOTAL" "$PER" "$WORKERS" || fail "$label: matrix"
}

check_db "$T/shared.db" SQLite

# shellcheck source=tests/cli/pg_env.bash
. "$GV_SRC/tests/cli/pg_env.bash"
at_exit pg_stop
pg_start
check_db "$PG_URL" PostgreSQL
echo "ok: $WORKERS x $PER concurrent recordings, each present once, on SQLite and PostgreSQL"
