/* The history database (docs/history.md): every recorded gpuvet document with
 * the columns a team asks about (machine, GPU, kernel, driver, ROCm/CUDA,
 * PyTorch, verdict, key figures), the full document kept zstd-compressed next
 * to them. SQLite by default (a file), PostgreSQL for a team (a
 * postgresql:// URL; libpq opened at run time). The same schema on both,
 * versioned in table meta and migrated forward; a database from a newer gpuvet
 * is refused. */
#ifndef GV_STORE_HISTORY_H
#define GV_STORE_HISTORY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define GV_HISTORY_SCHEMA_VERSION 4 /* 2: the image columns; 3: experiment; 4: the fleet */
#define GV_MATRIX_SCHEMA "gpuvet.matrix"
#define GV_MATRIX_SCHEMA_VERSION 1
#define GV_HISTORY_RUN_SCHEMA "gpuvet.history-run"
#define GV_FLEET_HISTORY_SCHEMA "gpuvet.fleet-history"
#define GV_FLEET_HISTORY_SCHEMA_VERSION 1

struct gv_history;

/* The database to use: url when given, else $GPUVET_DB, else
 * $XDG_DATA_HOME/gpuvet/history.db (~/.local/share/gpuvet/history.db). */
int gv_history_locate(const char *url, char *out, size_t outsz, struct gv_err *err);
/* The default database's path: $XDG_DATA_HOME/gpuvet/history.db, else
 * ~/.local/share/gpuvet/history.db; GV_E_NOTFOUND when neither is set. */
int gv_history_default(char *out, size_t outsz, struct gv_err *err);

/* Opens (and with create, creates or migrates) the database at url: a path
 * (or sqlite:PATH / file:PATH) or postgresql://... / postgres://... Error
 * messages name the database with any password removed. */
int gv_history_open(const char *url, int create, struct gv_history **h, struct gv_err *err);
void gv_history_close(struct gv_history *h);
/* The database's name for messages and documents (password removed). */
const char *gv_history_name(const struct gv_history *h);
/* "sqlite" or "postgresql". */
const char *gv_history_backend(const struct gv_history *h);

/* url with the password of a user:password@ part replaced by nothing
 * ("postgresql://u:secret@h/db" -> "postgresql://u@h/db"), also in a
 * password=... parameter of the query string or of a key=value string. */
void gv_url_redact(const char *url, char *out, size_t outsz);

/* Who a recording is about, when the document does not say. */
struct gv_history_ident {
    char hostname[256];
    char machine_id[80]; /* "" or an app-specific digest of /etc/machine-id, never the id */
};
/* This machine: the hostname, and sha256("gpuvet-machine:" + /etc/machine-id)
 * (the machine-id itself is never stored: systemd asks that it not be exposed). */
void gv_history_this_machine(struct gv_history_ident *id);

/* The indexed columns of one document (docs/history.md, "Columns"). Strings
 * are "" when unknown (stored as NULL). */
struct gv_run_cols {
    char kind[16];              /* snapshot, check, capture, probe, bench, other */
    char schema[64];
    int schema_version;
    char gpuvet_version[32];
    char created[32];           /* the document's own time, ISO-8601 UTC */
    char hostname[256], machine_id[80], machine_key[300];
    char gpu_ids[512];          /* UUIDs/serials where the document holds them, else PCI addresses */
    char gpu_model[160], gpu_arch[64];
    int gpu_count;
    char kernel[128], driver[64], rocm[64], cuda[64], torch[96], torch_build[96];
    char device[96], suite[32];
    char verdict[8];            /* "pass", "fail" or "" (not a judged run) */
    long long cases, passed, failed, errors, skipped;
    char worst_case[160];
    double worst_bits_lost;     /* < 0: none */
    /* the image the snapshot was made of (its "image" section, docs/image.md) */
    char image_manifest_digest[80], image_config_digest[80];
    char image_tag[256];        /* the tag asked for */
    char image_tags[2048];      /* every name of the manifest, a JSON array of strings */
    char stack_key[900];        /* the matrix row: gpu_model|arch|kernel|driver|rocm|cuda|torch,
                                 * and |image digest for an image's run */
    char experiment[40];        /* "" an ordinary run; "ab:a", "ab:b": a side of an experiment
                                 * (the document's "experiment"), never a last good run */
    /* the fleet (docs/fleet.md; kinds fleet-node and fleet): "" / -1 for other runs */
    char fleet_job[136];        /* the launcher's job of a node document and of its comparison */
    char stack_digest[80];      /* a node document's stack_digest */
    long long fleet_nodes;      /* fleet: node documents compared (-1: not a fleet run) */
    long long fleet_odd;        /* fleet: odd nodes (-1: not a fleet run) */
};

/* Marks doc as one side of an experiment before it is recorded ("experiment":
 * {"kind": "ab", "side": "b"}): the history keeps it (column experiment) and
 * gv_history_good never picks it. kind and side: [a-z0-9_-], 1 to 16 each. */
int gv_history_mark_experiment(json_t *doc, const char *kind, const char *side,
                               struct gv_err *err);

/* Marks a fleet document (gpuvet.fleet) with the job its nodes ran in ("job"),
 * so that the history links the comparison to its node runs. job: a line of
 * text of 1 to 128 bytes without control characters; NULL or "" does nothing. */
int gv_history_mark_fleet_job(json_t *fleet, const char *job, struct gv_err *err);

/* Fills cols from a gpuvet document of any known schema (gpuvet.snapshot,
 * gpuvet.results, gpuvet.capture, and generically anything with schema,
 * created and an embedded snapshot). ident (may be NULL) gives the machine when
 * the document does not. GV_E_FORMAT / GV_E_SCHEMA naming what when it is not a
 * gpuvet document. The fuzzed part of the recorder. */
int gv_history_extract(const json_t *doc, const struct gv_history_ident *ident,
                       struct gv_run_cols *cols, const char *what, struct gv_err *err);

/* Records one document (any schema gpuvet writes) in one transaction: either
 * the run and its document are there afterwards, or nothing is. A document
 * already recorded (same content) is not recorded twice: *run is its id and
 * *is_new 0. source (may be NULL) says where it came from (a file name). */
int gv_history_record(struct gv_history *h, const json_t *doc, const char *source,
                      const struct gv_history_ident *ident, int64_t *run, int *is_new,
                      struct gv_err *err);

/* Filters for list and matrix; NULL / 0: none. */
struct gv_history_filter {
    const char *machine; /* hostname or machine_id */
    const char *gpu;     /* substring of the GPU model, or the arch */
    const char *since;   /* ISO-8601 date or time (created >= since) */
    const char *torch;   /* PyTorch version prefix */
    const char *kind;    /* snapshot, check, ... */
    const char *image;   /* an image's manifest or config digest (or a unique prefix of
                          * its hex), or the tag asked for */
    int limit;           /* list: newest first, at most this many (0: 50) */
};

/* The runs, newest first: an array of run summaries (the columns as JSON). */
int gv_history_list(struct gv_history *h, const struct gv_history_filter *f, json_t **runs,
                    struct gv_err *err);
/* One run: its summary and (when doc != NULL) the full document. GV_E_NOTFOUND. */
int gv_history_show(struct gv_history *h, int64_t run, json_t **summary, json_t **doc,
                    struct gv_err *err);
/* The newest run of machine (hostname or machine id; NULL: ident's) that passed
 * and is no side of an experiment. GV_E_NOTFOUND when there is none. */
int gv_history_good(struct gv_history *h, const char *machine,
                    const struct gv_history_ident *ident, json_t **summary, json_t **doc,
                    struct gv_err *err);
/* The newest run of image (as the filter's image: a digest, a prefix of its hex,
 * or the tag asked for) that passed, no side of an experiment: the last good of
 * an image, as of a machine.
 * GV_E_NOTFOUND when there is none. */
int gv_history_good_image(struct gv_history *h, const char *image, json_t **summary,
                          json_t **doc, struct gv_err *err);
/* The version matrix document (schema gpuvet.matrix, docs/history.md). */
int gv_history_matrix(struct gv_history *h, const struct gv_history_filter *f, json_t **doc,
                      struct gv_err *err);
/* The fleet over time (schema gpuvet.fleet-history, docs/history.md): the recorded
 * fleet comparisons newest first (f->since, f->limit: default 50) with their
 * groups and odd nodes, and per node its recorded fleet-node runs with their
 * class in the comparison of the same job. */
int gv_history_fleet(struct gv_history *h, const struct gv_history_filter *f, json_t **doc,
                     struct gv_err *err);

/* PRAGMA integrity_check (SQLite) or the table check (PostgreSQL); problems
 * are GV_E_FORMAT with the first ones in the message. */
int gv_history_integrity(struct gv_history *h, struct gv_err *err);

/* The snapshot a document holds: itself (gpuvet.snapshot) or the one embedded
 * (results, capture header, ...); borrowed; NULL when there is none. */
const json_t *gv_history_doc_snapshot(const json_t *doc);

/* Bulk loading (benchmarks, import of many files): several gv_history_record
 * calls in one transaction. */
int gv_history_begin(struct gv_history *h, struct gv_err *err);
int gv_history_commit(struct gv_history *h, struct gv_err *err);

#endif
