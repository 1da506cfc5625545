# Sourced by the PostgreSQL tests: starts a real PostgreSQL server of this
# machine's Debian 'postgresql' package, listening only on a Unix socket in a
# temporary directory, as a non-root user when run as root (initdb refuses
# root); stopped and removed by pg_stop (at_exit pg_stop, tests/cli/lib.sh).
#   pg_start        sets PGSOCK (the socket directory), PGBIN, PGPORT and PG_URL
#                   (postgresql://gpuvet@/gpuvet?host=PGSOCK, trust auth for gpuvet)
#   pg_sql SQL      runs SQL as the superuser gpuvet in database gpuvet
#   pg_stop
pg_start() {
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1)
    [ -x "$PGBIN/initdb" ] || { echo "FAIL: no PostgreSQL server (apt-get install postgresql; scripts/install-deps.sh --test)" >&2; exit 1; }
    PGSOCK=$(mktemp -d /tmp/gvpg.XXXXXX) || exit 1
    chmod 755 "$PGSOCK"
    PGUSER_OS=""
    if [ "$(id -u)" -eq 0 ]; then
        PGUSER_OS=nobody
        chown nobody "$PGSOCK"
    fi
    PGPORT=5432
    pg_as "$PGBIN/initdb" -D "$PGSOCK/data" -U gpuvet --auth=trust -E UTF8 --no-sync \
        > "$PGSOCK/initdb.log" 2>&1 || { cat "$PGSOCK/initdb.log" >&2; echo "FAIL: initdb" >&2; exit 1; }
    # password authentication for the role 'secretrole', trust for the rest
    {
        echo "local all secretrole scram-sha-256"
        echo "local all all trust"
    } > "$PGSOCK/data/pg_hba.conf"
    pg_as "$PGBIN/pg_ctl" -D "$PGSOCK/data" -l "$PGSOCK/server.log" -w -t 120 \
        -o "-c listen_addresses='' -k $PGSOCK -p $PGPORT -c fsync=off" start > /dev/null ||
        { cat "$PGSOCK/server.log" >&2; echo "FAIL: pg_ctl start" >&2; exit 1; }
    pg_sql_db postgres "CREATE DATABASE gpuvet" > /dev/null || { echo "FAIL: createdb" >&2; exit 1; }
    PG_URL="postgresql://gpuvet@/gpuvet?host=$PGSOCK"
}

pg_as() {
    if [ -n "$PGUSER_OS" ]; then
        (cd / && runuser -u "$PGUSER_OS" -- "$@")
    else
        "$@"
    fi
}

pg_sql_db() { # DB SQL
    "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PGSOCK" -p "$PGPORT" -U gpuvet -d "$1" -c "$2"
}

pg_sql() {
    pg_sql_db gpuvet "$1"
}

pg_stop() {
    [ -n "${PGSOCK:-}" ] || return 0
    if [ -f "$PGSOCK/data/postmaster.pid" ]; then
        pg_as "$PGBIN/pg_ctl" -D "$PGSOCK/data" -m immediate -w stop > /dev/null 2>&1
    fi
    rm -rf "$PGSOCK"
    PGSOCK=""
}
