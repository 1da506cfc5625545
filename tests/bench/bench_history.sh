#!/usr/bin/env bash
# Benchmark: the history database (issue 14's targets), on SQLite and on a
# PostgreSQL server started here (tests/cli/pg_env.bash):
#   - recording a standard-suite check result: < 50 ms on SQLite (the library
#     call, as --record makes it, and a whole 'gpuvet history import' process)
#   - 'gpuvet matrix' over 100,000 runs from 1,000 machines: < 1 s on SQLite and
#     on PostgreSQL (the database filled in one transaction by the recording
#     code itself, bench_history fill)
# Usage: tests/bench/bench_history.sh [BUILD_DIR]   (a Release build with
# -DBUILD_TESTING=ON; default build). RUNS and MACHINES override the sizes.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-build}" && pwd)
G=$B/gpuvet
bench=$B/tests/bench_history
[[ -x $G && -x $bench ]] || { echo "needs $G and $bench (cmake -DBUILD_TESTING=ON, Release)"; exit 77; }
RUNS=${RUNS:-100000}
MACHINES=${MACHINES:-1000}
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir work
export XDG_CACHE_HOME=$work/cache XDG_DATA_HOME=$work/data
unset GPUVET_DB GPUVET_RECORD
# shellcheck source=tests/cli/pg_env.bash
. "$src/tests/cli/pg_env.bash"
at_exit pg_stop

median_ms() { # CMD...: the median wall time of 7 runs, in ms
    local i t0 t1 ts=()
    for ((i = 0; i < 7; i++)); do
        t0=$(date +%s%N); "$@" > /dev/null 2>&1; t1=$(date +%s%N)
        ts+=($(((t1 - t0) / 1000000)))
    done
    printf '%s\n' "${ts[@]}" | sort -n | sed -n 4p
}

"$G" check --suite standard --device cpu -o "$work/standard.json" > /dev/null || [[ $? == 1 ]]
"$bench" record "$work/rec.db" "$work/standard.json" 30
t=$(median_ms "$G" history import --db "$work/rec.db" "$work/standard.json")
echo "record: 'gpuvet history import' of the standard result (a whole process, already recorded): median $t ms"
"$G" check --suite standard --device cpu -o "$work/s2.json" > /dev/null 2>&1 || true
t0=$(date +%s%N); GPUVET_DB=$work/rec.db "$G" history import "$work/s2.json" 2> /dev/null; t1=$(date +%s%N)
echo "record: 'gpuvet history import' of a new standard result (a whole process): $(((t1 - t0) / 1000000)) ms"

"$bench" fill "$work/matrix.db" "$RUNS" "$MACHINES"
"$bench" matrix "$work/matrix.db" 5
t=$(median_ms "$G" matrix --db "$work/matrix.db" --json)
echo "matrix: 'gpuvet matrix --json' over $RUNS runs on SQLite (a whole process): median $t ms (target < 1000)"
t=$(median_ms "$G" matrix --db "$work/matrix.db" --gpu mi300x --since 2024-01-01)
echo "matrix: 'gpuvet matrix --gpu mi300x --since 2024-01-01' on SQLite: median $t ms"

pg_start
"$bench" record "$PG_URL" "$work/standard.json" 30
"$bench" fill "$PG_URL" "$RUNS" "$MACHINES"
pg_sql "ANALYZE" > /dev/null
"$bench" matrix "$PG_URL" 5
t=$(median_ms "$G" matrix --db "$PG_URL" --json)
echo "matrix: 'gpuvet matrix --json' over $RUNS runs on PostgreSQL (a whole process): median $t ms (target < 1000)"
t=$(median_ms "$G" matrix --db "$PG_URL" --gpu mi300x --since 2024-01-01)
echo "matrix: 'gpuvet matrix --gpu mi300x --since 2024-01-01' on PostgreSQL: median $t ms"
