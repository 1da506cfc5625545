/* Inside the history store: the small SQL interface the two backends
 * (history_sqlite.c, history_pg.c) give history.c. SQL is written once with
 * '?' placeholders; the PostgreSQL backend numbers them ($1, $2, ...). */
#ifndef GV_STORE_HISTORY_DB_H
#define GV_STORE_HISTORY_DB_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "store/history.h"

enum gv_hv_type { GV_HV_NULL, GV_HV_TEXT, GV_HV_INT, GV_HV_REAL, GV_HV_BLOB };

/* A parameter or a result value. Result strings and blobs are valid during the
 * row callback only. */
struct gv_hv {
    enum gv_hv_type type;
    const char *s;
    long long i;
    double d;
    const void *b;
    size_t n;
};

/* Called for every result row; non-zero stops (and is returned). */
typedef int (*gv_hrow_fn)(void *ud, int ncol, const struct gv_hv *cols);

struct gv_hdb_ops {
    const char *name; /* "sqlite", "postgresql" */
    /* Statements without parameters (DDL; several separated by ';'). */
    int (*exec)(void *conn, const char *sql, struct gv_err *err);
    int (*query)(void *conn, const char *sql, const struct gv_hv *params, int np,
                 gv_hrow_fn fn, void *ud, struct gv_err *err);
    /* A write transaction (SQLite: BEGIN IMMEDIATE), commit, rollback. */
    int (*begin)(void *conn, struct gv_err *err);
    int (*commit)(void *conn, struct gv_err *err);
    void (*rollback)(void *conn);
    int (*integrity)(void *conn, struct gv_err *err);
    /* The last error was transient (busy, locked, serialization failure,
     * deadlock): the whole transaction may be retried. */
    int (*retriable)(void *conn);
    void (*close)(void *conn);
    /* The schema's DDL for version v (1..GV_HISTORY_SCHEMA_VERSION): what
     * migrates version v-1 to v, in this backend's types. */
    const char *(*schema_step)(int v);
    /* Serialises concurrent schema creation inside a transaction (PostgreSQL:
     * an advisory lock; SQLite: BEGIN IMMEDIATE already did). */
    int (*lock_schema)(void *conn, struct gv_err *err);
    /* Whether table has column (1, 0; a negative gv_status on error): a step
     * that adds columns is skipped where they are there already (a database
     * whose meta was lost is migrated again from version 1). */
    int (*has_column)(void *conn, const char *table, const char *column, struct gv_err *err);
};

/* How long to wait for a database another process holds (busy timeout, and
 * the retries on top of it): $GPUVET_DB_TIMEOUT seconds, default 30. */
int gv_hdb_wait_ms(void);

/* Opens a backend. name is the database's redacted name, for messages;
 * wait_ms: how long SQLite waits for a lock another process holds. */
int gv_hdb_sqlite_open(const char *path, int create, const char *name, int wait_ms,
                       const struct gv_hdb_ops **ops, void **conn, struct gv_err *err);
int gv_hdb_pg_open(const char *url, const char *name, const struct gv_hdb_ops **ops,
                   void **conn, struct gv_err *err);

/* ---- shared by history.c and history_fleet.c ---- */

/* A query on h's connection (the backend's query). */
int gv_hist_query(struct gv_history *h, const char *sql, const struct gv_hv *p, int np,
                  gv_hrow_fn fn, void *ud, struct gv_err *err);
/* The table runs as h's schema version holds it (older versions: a subquery
 * with the newer columns NULL). */
const char *gv_hist_runs(const struct gv_history *h);
/* Run run's document, its sha256 checked, within the memory budget. */
int gv_hist_load_doc(struct gv_history *h, long long run, json_t **doc, struct gv_err *err);
/* Bits lost by a case: the precision the narrower of its compute and output
 * formats promises (enum gv_dtype; compute < 0: none) minus its effective bits,
 * at least 0; -1 when unknown. */
double gv_hist_bits_lost(double effective_bits, int compute, int out);
/* The columns of a gpuvet.fleet.node (kind fleet-node) or gpuvet.fleet (kind
 * fleet) document into c (kind, schema, created, versions already set): every
 * field used is checked as src/fleet/node.c checks it (the node name 1..64
 * bytes of [A-Za-z0-9._-], not "." or ".."; text one line without control
 * characters; digests "sha256:" and 64 hex); GV_E_FORMAT naming what and the
 * field otherwise. */
int gv_hist_fleet_cols(const json_t *doc, struct gv_run_cols *c, const char *what,
                       struct gv_err *err);

/* Inside the recording of a new fleet comparison (doc, kind fleet, with its job):
 * every node run of that job that it names odd gets its class (node_class), so
 * that it is never a last good run. */
int gv_hist_fleet_mark_odd(struct gv_history *h, const json_t *doc, const char *job,
                           struct gv_err *err);

/* Stop points for tests (gv_test_stop_point in base/fs.h, GPUVET_TEST_STOP_AT),
 * reached in this order inside a recording: record-begin (transaction open),
 * record-run (run row inserted), record-doc (document inserted), record-commit
 * (committed, not yet reported). */

#endif
