/* The history database in PostgreSQL, through libpq opened at run time
 * (dlopen "libpq.so.5", symbol list in syms_libpq.h), never linked: a build
 * and a machine without PostgreSQL's client still run with SQLite. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/history.h"
#include "store/history_db.h"
#include "store/syms_libpq.h"

#ifndef REQ
#define REQ 1
#define OPT 0
#endif

#define GV_SYM_FIELD(req, field, ret, params, name) ret(*field) params;
struct gv_api_libpq { GV_SYMS_LIBPQ(GV_SYM_FIELD) };
#undef GV_SYM_FIELD

struct pq_sym {
    int required;
    size_t offset;
    const char *name;
};
#define GV_SYM_ROW(req, field, ret, params, name) {req, offsetof(struct gv_api_libpq, field), name},
static const struct pq_sym pq_syms[] = {GV_SYMS_LIBPQ(GV_SYM_ROW)};
#undef GV_SYM_ROW

static struct gv_api_libpq pq;
static void *pq_handle;
static char pq_load_error[600];
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;

/* $GPUVET_LIBPQ names another file (tests: a missing library). */
static void pq_load(void)
{
    const char *file = getenv("GPUVET_LIBPQ");
    if (!file || !*file)
        file = "libpq.so.5";
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(pq_load_error, sizeof pq_load_error, "cannot load %s (PostgreSQL's client "
                 "library; on Debian/Ubuntu: apt-get install libpq5): %s", file, e ? e : "?");
        return;
    }
    for (size_t i = 0; i < sizeof pq_syms / sizeof pq_syms[0]; i++) {
        void *f = dlsym(h, pq_syms[i].name);
        if (!f && pq_syms[i].required) {
            snprintf(pq_load_error, sizeof pq_load_error, "%s lacks the symbol %s", file,
                     pq_syms[i].name);
            dlclose(h);
            memset(&pq, 0, sizeof pq);
            return;
        }
        memcpy((char *)&pq + pq_syms[i].offset, &f, sizeof f);
    }
    pq_handle = h;
}

struct pg {
    PGconn *conn;
    char name[1024];
    char password[256]; /* removed from any message that would repeat it */
    char sqlstate[8];
};

/* Removes every occurrence of the password from a message (libpq does not
 * repeat it, but a server or a future libpq might). */
static void scrub(const struct pg *c, char *msg)
{
    size_t n = strlen(c->password);
    if (n < 1)
        return;
    char *p;
    while ((p = strstr(msg, c->password)) != NULL)
        memmove(p, p + n, strlen(p + n) + 1);
}

static int pg_fail(struct pg *c, const PGresult *r, struct gv_err *err, const char *what)
{
    char msg[700];
    const char *m = r ? pq.PQresultErrorMessage(r) : pq.PQerrorMessage(c->conn);
    snprintf(msg, sizeof msg, "%s", m && *m ? m : "unknown error");
    size_t len = strlen(msg);
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
        msg[--len] = '\0';
    for (char *q = msg; *q; q++)
        if (*q == '\n' || *q == '\t')
            *q = ' ';
    scrub(c, msg);
    const char *st = r ? pq.PQresultErrorField(r, GV_PG_DIAG_SQLSTATE) : NULL;
    snprintf(c->sqlstate, sizeof c->sqlstate, "%s", st ? st : "");
    return gv_err_set(err, GV_E_IO, "history database %s: %s: %s", c->name, what, msg);
}

static int pg_exec(void *conn, const char *sql, struct gv_err *err)
{
    struct pg *c = conn;
    PGresult *r = pq.PQexec(c->conn, sql);
    int st = r ? pq.PQresultStatus(r) : -1;
    int rc = GV_OK;
    if (st != GV_PG_PGRES_COMMAND_OK && st != GV_PG_PGRES_TUPLES_OK)
        rc = pg_fail(c, r, err, "statement failed");
    else
        c->sqlstate[0] = '\0';
    if (r)
        pq.PQclear(r);
    return rc;
}

/* '?' placeholders to $1, $2, ... (the SQL of history.c has no '?' in literals). */
static char *number_params(const char *sql)
{
    size_t n = strlen(sql), q = 0;
    for (size_t i = 0; i < n; i++)
        q += sql[i] == '?';
    char *out = malloc(n + q * 6 + 1);
    if (!out)
        return NULL;
    char *o = out;
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (sql[i] == '?')
            o += sprintf(o, "$%d", ++k);
        else
            *o++ = sql[i];
    }
    *o = '\0';
    return out;
}

static void result_value(const PGresult *r, int row, int col, struct gv_hv *v,
                         unsigned char **freeme)
{
    memset(v, 0, sizeof *v);
    *freeme = NULL;
    if (pq.PQgetisnull(r, row, col)) {
        v->type = GV_HV_NULL;
        return;
    }
    const char *s = pq.PQgetvalue(r, row, col);
    switch (pq.PQftype(r, col)) {
    case GV_PG_OID_INT8:
    case GV_PG_OID_INT4:
    case GV_PG_OID_INT2:
        v->type = GV_HV_INT;
        v->i = strtoll(s, NULL, 10);
        break;
    case GV_PG_OID_FLOAT4:
    case GV_PG_OID_FLOAT8:
    case GV_PG_OID_NUMERIC:
        v->type = GV_HV_REAL;
        v->d = strtod(s, NULL);
        break;
    case GV_PG_OID_BOOL:
        v->type = GV_HV_INT;
        v->i = s[0] == 't';
        break;
    case GV_PG_OID_BYTEA: {
        size_t len = 0;
        unsigned char *b = pq.PQunescapeBytea((const unsigned char *)s, &len);
        v->type = GV_HV_BLOB;
        v->b = b;
        v->n = b ? len : 0;
        *freeme = b;
        break;
    }
    default:
        v->type = GV_HV_TEXT;
        v->s = s;
        break;
    }
}

#define PG_MAX_PARAMS 48

static int pg_query(void *conn, const char *sql, const struct gv_hv *p, int np, gv_hrow_fn fn,
                    void *ud, struct gv_err *err)
{
    struct pg *c = conn;
    if (np > PG_MAX_PARAMS)
        return gv_err_set(err, GV_E_USAGE, "history database %s: too many parameters", c->name);
    char *numbered = number_params(sql);
    if (!numbered)
        return gv_err_set(err, GV_E_NOMEM, "history database %s: out of memory", c->name);
    const char *vals[PG_MAX_PARAMS];
    int lens[PG_MAX_PARAMS], fmts[PG_MAX_PARAMS];
    char bufs[PG_MAX_PARAMS][32];
    for (int i = 0; i < np; i++) {
        lens[i] = 0;
        fmts[i] = 0;
        switch (p[i].type) {
        case GV_HV_TEXT: vals[i] = p[i].s; break;
        case GV_HV_INT:
            snprintf(bufs[i], sizeof bufs[i], "%lld", p[i].i);
            vals[i] = bufs[i];
            break;
        case GV_HV_REAL:
            snprintf(bufs[i], sizeof bufs[i], "%.17g", p[i].d);
            vals[i] = bufs[i];
            break;
        case GV_HV_BLOB:
            vals[i] = p[i].b;
            lens[i] = (int)p[i].n;
            fmts[i] = 1; /* binary: the bytes as they are */
            break;
        default: vals[i] = NULL; break;
        }
    }
    PGresult *r = pq.PQexecParams(c->conn, numbered, np, NULL, vals, lens, fmts, 0);
    free(numbered);
    int st = r ? pq.PQresultStatus(r) : -1;
    if (st != GV_PG_PGRES_COMMAND_OK && st != GV_PG_PGRES_TUPLES_OK) {
        int rc = pg_fail(c, r, err, "query failed");
        if (r)
            pq.PQclear(r);
        return rc;
    }
    c->sqlstate[0] = '\0';
    int rows = pq.PQntuples(r), ncol = pq.PQnfields(r), stop = 0;
    if (ncol > 48)
        ncol = 48;
    struct gv_hv cols[48];
    unsigned char *freeme[48];
    for (int row = 0; row < rows && !stop && fn; row++) {
        for (int k = 0; k < ncol; k++)
            result_value(r, row, k, &cols[k], &freeme[k]);
        stop = fn(ud, ncol, cols);
        for (int k = 0; k < ncol; k++)
            if (freeme[k])
                pq.PQfreemem(freeme[k]);
    }
    pq.PQclear(r);
    return stop;
}

static int pg_begin(void *conn, struct gv_err *err)
{
    return pg_exec(conn, "BEGIN", err);
}

static int pg_commit(void *conn, struct gv_err *err)
{
    return pg_exec(conn, "COMMIT", err);
}

static void pg_rollback(void *conn)
{
    struct pg *c = conn;
    PGresult *r = pq.PQexec(c->conn, "ROLLBACK");
    if (r)
        pq.PQclear(r);
}

static int pg_integrity(void *conn, struct gv_err *err)
{
    /* PostgreSQL checks its own pages (checksums, WAL); what is ours to check
     * is done by history.c on both backends. */
    (void)conn;
    (void)err;
    return GV_OK;
}

/* serialization_failure, deadlock_detected, lock_not_available. */
static int pg_retriable(void *conn)
{
    struct pg *c = conn;
    return !strcmp(c->sqlstate, "40001") || !strcmp(c->sqlstate, "40P01") ||
           !strcmp(c->sqlstate, "55P03");
}

static void pg_close(void *conn)
{
    struct pg *c = conn;
    if (!c)
        return;
    if (c->conn)
        pq.PQfinish(c->conn);
    memset(c->password, 0, sizeof c->password);
    free(c);
}

static const char schema_v1[] =
    "SET client_min_messages = warning;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS runs ("
    " id BIGSERIAL PRIMARY KEY,"
    " run_key TEXT NOT NULL UNIQUE,"
    " kind TEXT NOT NULL, schema TEXT NOT NULL, schema_version BIGINT,"
    " gpuvet_version TEXT, created TEXT NOT NULL, recorded TEXT NOT NULL, source TEXT,"
    " hostname TEXT, machine_id TEXT, machine_key TEXT NOT NULL, gpu_ids TEXT,"
    " gpu_model TEXT, gpu_arch TEXT, gpu_count BIGINT, kernel TEXT, driver TEXT,"
    " rocm TEXT, cuda TEXT, torch TEXT, torch_build TEXT, device TEXT, suite TEXT,"
    " verdict TEXT, cases BIGINT, passed BIGINT, failed BIGINT, errors BIGINT,"
    " skipped BIGINT, worst_case TEXT, worst_bits_lost DOUBLE PRECISION,"
    " stack_key TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS documents ("
    " run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
    " encoding TEXT NOT NULL, bytes BIGINT NOT NULL, sha256 TEXT NOT NULL, data BYTEA NOT NULL);"
    "CREATE INDEX IF NOT EXISTS runs_machine ON runs(machine_key, created);"
    "CREATE INDEX IF NOT EXISTS runs_host ON runs(hostname, created);"
    "CREATE INDEX IF NOT EXISTS runs_created ON runs(created);"
    "CREATE INDEX IF NOT EXISTS runs_stack ON runs(stack_key, created, verdict, machine_key)"
    " WHERE verdict IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS runs_worst ON runs(stack_key, worst_bits_lost)"
    " WHERE verdict IS NOT NULL;";

/* Version 2: the image a snapshot was made of (docs/image.md), NULL for a host
 * or a root. */
static const char schema_v2[] =
    "SET client_min_messages = warning;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS image_manifest_digest TEXT;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS image_config_digest TEXT;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS image_tag TEXT;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS image_tags TEXT;"
    "CREATE INDEX IF NOT EXISTS runs_image ON runs(image_manifest_digest, created)"
    " WHERE image_manifest_digest IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS runs_image_config ON runs(image_config_digest, created)"
    " WHERE image_config_digest IS NOT NULL;";

/* Version 3: which runs are sides of an experiment ("ab:b"), NULL for an
 * ordinary run; a last good run is never one. */
static const char schema_v3[] =
    "SET client_min_messages = warning;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS experiment TEXT;";

/* Version 4: the fleet (docs/fleet.md): node runs by their job and stack digest,
 * fleet comparisons with their node and odd counts. */
static const char schema_v4[] =
    "SET client_min_messages = warning;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS fleet_job TEXT;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS stack_digest TEXT;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS fleet_nodes BIGINT;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS fleet_odd BIGINT;"
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS node_class TEXT;"
    "CREATE INDEX IF NOT EXISTS runs_fleet ON runs(kind, fleet_job, created)"
    " WHERE fleet_job IS NOT NULL;";

static const char *pg_schema_step(int v)
{
    return v == 1   ? schema_v1
         : v == 2 ? schema_v2
         : v == 3 ? schema_v3
         : v == 4 ? schema_v4
                  : NULL;
}

/* Two gpuvet processes creating the schema at once: the second waits. */
static int pg_lock_schema(void *conn, struct gv_err *err)
{
    return pg_exec(conn, "SELECT pg_advisory_xact_lock(7364128001)", err);
}

static int pg_count_row(void *ud, int n, const struct gv_hv *v)
{
    if (n >= 1)
        *(long long *)ud = v[0].type == GV_HV_INT ? v[0].i
                         : v[0].type == GV_HV_TEXT ? strtoll(v[0].s, NULL, 10) : 0;
    return 0;
}

static int pg_has_column(void *conn, const char *table, const char *column, struct gv_err *err)
{
    struct gv_hv p[] = {{.type = GV_HV_TEXT, .s = table}, {.type = GV_HV_TEXT, .s = column}};
    long long n = 0;
    int rc = pg_query(conn, "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?", p, 2, pg_count_row, &n, err);
    return rc ? rc : n > 0;
}

static const struct gv_hdb_ops pg_ops = {
    "postgresql", pg_exec, pg_query, pg_begin, pg_commit, pg_rollback, pg_integrity,
    pg_retriable, pg_close, pg_schema_step, pg_lock_schema, pg_has_column,
};

static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* the store never prints */
}

/* The password of postgresql://user:password@host..., for scrub(). */
static void url_password(const char *url, char *out, size_t n)
{
    out[0] = '\0';
    const char *s = strstr(url, "://");
    if (!s)
        return;
    s += 3;
    const char *at = strchr(s, '@'), *slash = strchr(s, '/');
    if (!at || (slash && slash < at))
        return;
    const char *colon = memchr(s, ':', (size_t)(at - s));
    if (!colon)
        return;
    snprintf(out, n, "%.*s", (int)(at - colon - 1), colon + 1);
}

int gv_hdb_pg_open(const char *url, const char *name, const struct gv_hdb_ops **ops,
                   void **conn, struct gv_err *err)
{
    pthread_once(&pq_once, pq_load);
    if (!pq_handle)
        return gv_err_set(err, GV_E_LIB, "history database %s: %s", name, pq_load_error);
    struct pg *c = calloc(1, sizeof *c);
    if (!c)
        return gv_err_set(err, GV_E_NOMEM, "history database %s: out of memory", name);
    snprintf(c->name, sizeof c->name, "%s", name);
    url_password(url, c->password, sizeof c->password);
    /* the URL's own settings come after (and so override) the defaults */
    const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *vals[] = {"10", "gpuvet", url, NULL};
    c->conn = pq.PQconnectdbParams(keys, vals, 1);
    if (!c->conn) {
        pg_close(c);
        return gv_err_set(err, GV_E_NOMEM, "history database %s: out of memory", name);
    }
    pq.PQsetNoticeProcessor(c->conn, quiet_notice, NULL);
    if (pq.PQstatus(c->conn) != GV_PG_CONNECTION_OK) {
        int rc = pg_fail(c, NULL, err, "cannot connect");
        pg_close(c);
        return rc;
    }
    if (pg_exec(c, "SET client_min_messages = warning", err)) {
        pg_close(c);
        return err ? err->code : GV_E_IO;
    }
    *ops = &pg_ops;
    *conn = c;
    return GV_OK;
}
