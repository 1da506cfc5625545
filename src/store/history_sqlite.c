/* The history database in SQLite (linked): WAL, a busy timeout, write
 * transactions taken with BEGIN IMMEDIATE, PRAGMA integrity_check. */
#include <ctype.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/fs.h"
#include "store/history.h"
#include "store/history_db.h"

struct sq {
    sqlite3 *db;
    char name[GV_PATH_MAX];
    char path[GV_PATH_MAX];
    int last;    /* last result code */
    int wait_ms; /* busy timeout: gv_hdb_wait_ms() of the opener */
};

/* " (pid N, COMM)" of a process other than this one that holds a lock on path
 * (/proc/locks: "1: POSIX  ADVISORY  WRITE PID MAJ:MIN:INODE START END");
 * "" when none is found there. */
static void lock_holder(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    struct stat sb;
    FILE *f = stat(path, &sb) == 0 ? fopen("/proc/locks", "r") : NULL;
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        long pid;
        unsigned maj, min;
        unsigned long long ino;
        char type[32], mode[32], access_[32];
        if (strstr(line, "->") || /* a waiter, not a holder */
            sscanf(line, "%*d: %31s %31s %31s %ld %x:%x:%llu", type, mode, access_, &pid, &maj,
                   &min, &ino) != 7)
            continue;
        if (ino != (unsigned long long)sb.st_ino || maj != major(sb.st_dev) ||
            min != minor(sb.st_dev) || pid == (long)getpid())
            continue;
        char comm_path[64], comm[64] = "";
        snprintf(comm_path, sizeof comm_path, "/proc/%ld/comm", pid);
        FILE *c = fopen(comm_path, "r");
        if (c) {
            if (fgets(comm, sizeof comm, c))
                comm[strcspn(comm, "\n")] = '\0';
            fclose(c);
        }
        snprintf(out, n, " (pid %ld%s%s)", pid, comm[0] ? ", " : "", comm);
        break;
    }
    fclose(f);
}

static int sq_fail(struct sq *c, int rc, struct gv_err *err, const char *what)
{
    c->last = rc;
    const char *msg = c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc);
    if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
        return gv_err_set(err, GV_E_FORMAT, "history database %s: %s: %s (the file is not a "
                          "SQLite database or is corrupt; keep it for inspection and record "
                          "into another file with --db or GPUVET_DB)", c->name, what, msg);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        char who[128];
        lock_holder(c->path, who, sizeof who);
        if (!who[0]) {
            char shm[GV_PATH_MAX + 8];
            snprintf(shm, sizeof shm, "%s-shm", c->path);
            lock_holder(shm, who, sizeof who);
        }
        return gv_err_set(err, GV_E_TIMEOUT, "history database %s is locked by another "
                          "process%s and stayed locked for %.3g s (GPUVET_DB_TIMEOUT): %s: %s",
                          c->name, who, c->wait_ms / 1000.0, what, msg);
    }
    if (rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || rc == SQLITE_PERM)
        return gv_err_set(err, GV_E_IO, "history database %s: %s: %s (%s)", c->name, what, msg,
                          rc == SQLITE_READONLY ? "it can be read but not written"
                                                : "check the file's and its directory's "
                                                  "permissions");
    return gv_err_set(err, GV_E_IO, "history database %s: %s: %s", c->name, what, msg);
}

static int sq_exec(void *conn, const char *sql, struct gv_err *err)
{
    struct sq *c = conn;
    char *msg = NULL;
    int rc = sqlite3_exec(c->db, sql, NULL, NULL, &msg);
    sqlite3_free(msg);
    return rc == SQLITE_OK ? GV_OK : sq_fail(c, rc, err, "statement failed");
}

static int bind_all(sqlite3_stmt *st, const struct gv_hv *p, int np)
{
    for (int i = 0; i < np; i++) {
        int rc;
        switch (p[i].type) {
        case GV_HV_TEXT: rc = sqlite3_bind_text(st, i + 1, p[i].s, -1, SQLITE_STATIC); break;
        case GV_HV_INT: rc = sqlite3_bind_int64(st, i + 1, p[i].i); break;
        case GV_HV_REAL: rc = sqlite3_bind_double(st, i + 1, p[i].d); break;
        case GV_HV_BLOB:
            rc = sqlite3_bind_blob64(st, i + 1, p[i].b, p[i].n, SQLITE_STATIC);
            break;
        default: rc = sqlite3_bind_null(st, i + 1); break;
        }
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

static void column_value(sqlite3_stmt *st, int i, struct gv_hv *v)
{
    memset(v, 0, sizeof *v);
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        v->type = GV_HV_INT;
        v->i = sqlite3_column_int64(st, i);
        break;
    case SQLITE_FLOAT:
        v->type = GV_HV_REAL;
        v->d = sqlite3_column_double(st, i);
        break;
    case SQLITE_TEXT:
        v->type = GV_HV_TEXT;
        v->s = (const char *)sqlite3_column_text(st, i);
        break;
    case SQLITE_BLOB:
        v->type = GV_HV_BLOB;
        v->b = sqlite3_column_blob(st, i);
        v->n = (size_t)sqlite3_column_bytes(st, i);
        break;
    default: v->type = GV_HV_NULL; break;
    }
}

static int sq_query(void *conn, const char *sql, const struct gv_hv *p, int np, gv_hrow_fn fn,
                    void *ud, struct gv_err *err)
{
    struct sq *c = conn;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sq_fail(c, rc, err, "preparing a query");
    if ((rc = bind_all(st, p, np)) != SQLITE_OK) {
        sqlite3_finalize(st);
        return sq_fail(c, rc, err, "binding a parameter");
    }
    struct gv_hv cols[48];
    int stop = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int n = sqlite3_column_count(st);
        if (n > 48)
            n = 48;
        for (int i = 0; i < n; i++)
            column_value(st, i, &cols[i]);
        if (fn && (stop = fn(ud, n, cols)) != 0)
            break;
    }
    if (stop) {
        sqlite3_finalize(st);
        return stop;
    }
    if (rc != SQLITE_DONE) {
        int r = sq_fail(c, rc, err, "running a query");
        sqlite3_finalize(st);
        return r;
    }
    sqlite3_finalize(st);
    return GV_OK;
}

static int sq_begin(void *conn, struct gv_err *err)
{
    return sq_exec(conn, "BEGIN IMMEDIATE", err);
}

static int sq_commit(void *conn, struct gv_err *err)
{
    return sq_exec(conn, "COMMIT", err);
}

static void sq_rollback(void *conn)
{
    struct sq *c = conn;
    if (!sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
}

struct integ {
    char msg[700];
    int bad;
};

static int integ_row(void *ud, int n, const struct gv_hv *v)
{
    struct integ *g = ud;
    const char *s = n > 0 && v[0].type == GV_HV_TEXT ? v[0].s : "?";
    if (!strcmp(s, "ok"))
        return 0;
    if (g->bad++ < 3) {
        size_t len = strlen(g->msg);
        snprintf(g->msg + len, sizeof g->msg - len, "%s%s", len ? "; " : "", s);
    }
    return 0;
}

static int sq_integrity(void *conn, struct gv_err *err)
{
    struct sq *c = conn;
    struct integ g = {.bad = 0};
    int rc = sq_query(conn, "PRAGMA integrity_check", NULL, 0, integ_row, &g, err);
    if (rc)
        return rc;
    if (g.bad)
        return gv_err_set(err, GV_E_FORMAT, "history database %s: integrity check found %d "
                          "problem(s): %s", c->name, g.bad, g.msg);
    return GV_OK;
}

static int sq_retriable(void *conn)
{
    struct sq *c = conn;
    int rc = c->last & 0xff;
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

static void sq_close(void *conn)
{
    struct sq *c = conn;
    if (!c)
        return;
    sqlite3_close_v2(c->db);
    free(c);
}

/* Version 1 (docs/history.md, "Schema"). Documents live in their own table so
 * that the runs table stays small and scans of it are fast. */
static const char schema_v1[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " run_key TEXT NOT NULL UNIQUE,"
    " kind TEXT NOT NULL, schema TEXT NOT NULL, schema_version INTEGER,"
    " gpuvet_version TEXT, created TEXT NOT NULL, recorded TEXT NOT NULL, source TEXT,"
    " hostname TEXT, machine_id TEXT, machine_key TEXT NOT NULL, gpu_ids TEXT,"
    " gpu_model TEXT, gpu_arch TEXT, gpu_count INTEGER, kernel TEXT, driver TEXT,"
    " rocm TEXT, cuda TEXT, torch TEXT, torch_build TEXT, device TEXT, suite TEXT,"
    " verdict TEXT, cases INTEGER, passed INTEGER, failed INTEGER, errors INTEGER,"
    " skipped INTEGER, worst_case TEXT, worst_bits_lost REAL, stack_key TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS documents ("
    " run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
    " encoding TEXT NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, data BLOB NOT NULL);"
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
    "ALTER TABLE runs ADD COLUMN image_manifest_digest TEXT;"
    "ALTER TABLE runs ADD COLUMN image_config_digest TEXT;"
    "ALTER TABLE runs ADD COLUMN image_tag TEXT;"
    "ALTER TABLE runs ADD COLUMN image_tags TEXT;"
    "CREATE INDEX IF NOT EXISTS runs_image ON runs(image_manifest_digest, created)"
    " WHERE image_manifest_digest IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS runs_image_config ON runs(image_config_digest, created)"
    " WHERE image_config_digest IS NOT NULL;";

/* Version 3: which runs are sides of an experiment ("ab:b"), NULL for an
 * ordinary run; a last good run is never one. */
static const char schema_v3[] = "ALTER TABLE runs ADD COLUMN experiment TEXT;";

/* Version 4: the fleet (docs/fleet.md): node runs by their job and stack digest,
 * fleet comparisons with their node and odd counts. */
static const char schema_v4[] =
    "ALTER TABLE runs ADD COLUMN fleet_job TEXT;"
    "ALTER TABLE runs ADD COLUMN stack_digest TEXT;"
    "ALTER TABLE runs ADD COLUMN fleet_nodes INTEGER;"
    "ALTER TABLE runs ADD COLUMN fleet_odd INTEGER;"
    "ALTER TABLE runs ADD COLUMN node_class TEXT;"
    "CREATE INDEX IF NOT EXISTS runs_fleet ON runs(kind, fleet_job, created)"
    " WHERE fleet_job IS NOT NULL;";

static const char *sq_schema_step(int v)
{
    return v == 1   ? schema_v1
         : v == 2 ? schema_v2
         : v == 3 ? schema_v3
         : v == 4 ? schema_v4
                  : NULL;
}

static int sq_lock_schema(void *conn, struct gv_err *err)
{
    (void)conn;
    (void)err;
    return GV_OK;
}

static int sq_count_row(void *ud, int n, const struct gv_hv *v)
{
    if (n >= 1)
        *(long long *)ud = v[0].type == GV_HV_INT ? v[0].i
                         : v[0].type == GV_HV_TEXT ? strtoll(v[0].s, NULL, 10) : 0;
    return 0;
}

static int sq_has_column(void *conn, const char *table, const char *column, struct gv_err *err)
{
    struct gv_hv p[] = {{.type = GV_HV_TEXT, .s = table}, {.type = GV_HV_TEXT, .s = column}};
    long long n = 0;
    int rc = sq_query(conn, "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?", p, 2, sq_count_row, &n, err);
    return rc ? rc : n > 0;
}

static const struct gv_hdb_ops sq_ops = {
    "sqlite", sq_exec, sq_query, sq_begin, sq_commit, sq_rollback, sq_integrity,
    sq_retriable, sq_close, sq_schema_step, sq_lock_schema, sq_has_column,
};

/* A first read: SQLite opens any file lazily, so a corrupt or foreign file is
 * only noticed here. */
static int sq_probe(struct sq *c, struct gv_err *err)
{
    return sq_query(c, "SELECT count(*) FROM sqlite_master", NULL, 0, NULL, NULL, err);
}

static int dir_writable(const char *path)
{
    char dir[GV_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return access(dir, W_OK) == 0;
}

/* Opens c->path: read-write (create: and creates it) or, for the commands
 * that only read, read-only; immutable opens it without the shared-memory
 * file. Returns the SQLite result code with err filled. */
static int sq_connect(struct sq *c, int create, int immutable, struct gv_err *err)
{
    int flags = (create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) |
                SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
    char uri[GV_PATH_MAX * 3 + 32];
    size_t n = (size_t)snprintf(uri, sizeof uri, "file:");
    for (const unsigned char *p = (const unsigned char *)c->path; *p && n + 4 < sizeof uri; p++)
        n += (size_t)(isalnum(*p) || strchr("/._-~", *p)
                          ? snprintf(uri + n, sizeof uri - n, "%c", *p)
                          : snprintf(uri + n, sizeof uri - n, "%%%02X", *p));
    if (immutable)
        snprintf(uri + n, sizeof uri - n, "?immutable=1");
    int rc = sqlite3_open_v2(uri, &c->db, flags, NULL);
    if (rc != SQLITE_OK)
        return sq_fail(c, rc, err, "cannot open"), rc;
    sqlite3_extended_result_codes(c->db, 0);
    sqlite3_busy_timeout(c->db, c->wait_ms);
    if (sq_probe(c, err) != GV_OK)
        return c->last ? c->last : SQLITE_ERROR;
    return SQLITE_OK;
}

int gv_hdb_sqlite_open(const char *path, int create, const char *name, int wait_ms,
                       const struct gv_hdb_ops **ops, void **conn, struct gv_err *err)
{
    struct stat sb;
    if (!create && stat(path, &sb) != 0)
        return gv_err_set(err, GV_E_NOTFOUND, "history database %s: %s (record runs with "
                          "--record or 'gpuvet history import' first)", name, strerror(errno));
    if (create) { /* the directory of the default location may not exist yet */
        char dir[GV_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            if (!gv_is_dir(dir) && gv_mkdirs(dir, 0700) != 0)
                return gv_err_set(err, GV_E_IO, "history database %s: cannot create %s: %s",
                                  name, dir, strerror(errno));
        }
    }
    struct sq *c = calloc(1, sizeof *c);
    if (!c)
        return gv_err_set(err, GV_E_NOMEM, "history database %s: out of memory", name);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->wait_ms = wait_ms;
    int rc = sq_connect(c, create, 0, err);
    if ((rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY) && !create && !dir_writable(path)) {
        /* a WAL database in a directory this user cannot write: SQLite cannot
         * make the -shm file readers share; no writer can change it either */
        sqlite3_close_v2(c->db);
        c->db = NULL;
        rc = sq_connect(c, create, 1, err);
        if (rc == SQLITE_OK)
            gv_err_clear(err);
    }
    if (rc != SQLITE_OK) {
        sq_close(c);
        return GV_E_IO;
    }
    /* WAL: readers never block the writer; synchronous=FULL: a committed run
     * survives a power cut, not only a killed process. A reader (no create)
     * opens read-only and leaves the journal mode as it is. */
    if ((rc = sq_exec(c, create ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                                  " PRAGMA foreign_keys=ON;"
                                : "PRAGMA foreign_keys=ON;", err)) != GV_OK) {
        sq_close(c);
        return rc;
    }
    *ops = &sq_ops;
    *conn = c;
    return GV_OK;
}
