/* The history database as the commands share it: --record and
 * GPUVET_RECORD=1 (one call after a command has written its result: snapshot,
 * check, ab, torch capture, history import), opening it, and the last good
 * run's snapshot (plan rollback --to last-good). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "capture/gvcap.h"
#include "cli/cli.h"
#include "store/history.h"

static const char *record_db; /* --db of a recording command; NULL: $GPUVET_DB or the default */

void cli_record_set_db(const char *db)
{
    record_db = db;
}

int cli_record_wanted(int flag)
{
    const char *env = getenv("GPUVET_RECORD");
    return flag || (env && !strcmp(env, "1"));
}

int cli_history_open(const char *db, int create, struct gv_history **h)
{
    struct gv_err err = {0};
    if (gv_history_open(db, create, h, &err))
        return cli_fail(&err);
    return GV_EXIT_OK;
}

/* Records doc into an open database; says so on stderr. */
static int record_into(struct gv_history *h, const json_t *doc, const char *source,
                       const struct gv_history_ident *id, int quiet_new)
{
    struct gv_err err = {0};
    int64_t run = 0;
    int is_new = 0;
    if (gv_history_record(h, doc, source, id, &run, &is_new, &err)) {
        fprintf(stderr, "gpuvet: error: %s%snot recorded: %s\n", source ? source : "",
                source ? ": " : "", err.msg);
        return GV_EXIT_ERROR;
    }
    if (!is_new)
        fprintf(stderr, "gpuvet: %s%salready recorded as run %lld in %s\n", source ? source : "",
                source ? ": " : "", (long long)run, gv_history_name(h));
    else if (!quiet_new)
        fprintf(stderr, "gpuvet: %s%srecorded as run %lld in %s\n", source ? source : "",
                source ? ": " : "", (long long)run, gv_history_name(h));
    return GV_EXIT_OK;
}

static void abs_path(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX];
    snprintf(out, n, "%s", path && realpath(path, buf) ? buf : path ? path : "");
}

int cli_record(const json_t *doc, const char *source)
{
    struct gv_history *h = NULL;
    if (cli_history_open(record_db, 1, &h)) {
        fprintf(stderr, "gpuvet: error: the run was not recorded in the history%s%s\n",
                source ? "; its result is in " : "", source ? source : "");
        return GV_EXIT_ERROR;
    }
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    char src[PATH_MAX] = "";
    if (source)
        abs_path(source, src, sizeof src);
    int rc = record_into(h, doc, source ? src : NULL, &id, 0);
    gv_history_close(h);
    return rc;
}

/* side: NULL, or the side ("a", "b") of an ab experiment the file is */
static int record_file_as(struct gv_history *h, const char *path,
                          const struct gv_history_ident *id, const char *side)
{
    struct gv_err err = {0};
    json_t *doc = NULL;
    /* a side of ab: the mark goes into ab's own result file too, so that the file is
     * the document recorded (importing it again finds the run) */
    if (gv_cap_load_document(path, (size_t)1 << 31, &doc, &err) ||
        (side && (gv_history_mark_experiment(doc, "ab", side, &err) ||
                  gv_json_write_file(path, doc, &err)))) {
        fprintf(stderr, "gpuvet: error: %s\n", err.msg);
        json_decref(doc);
        return GV_EXIT_ERROR;
    }
    char src[PATH_MAX];
    abs_path(path, src, sizeof src);
    int rc = record_into(h, doc, src, id, 0);
    json_decref(doc);
    return rc;
}

int cli_record_file_into(struct gv_history *h, const char *path,
                         const struct gv_history_ident *id)
{
    return record_file_as(h, path, id, NULL);
}

int cli_record_file_side(const char *path, const char *side)
{
    struct gv_history *h = NULL;
    if (cli_history_open(record_db, 1, &h)) {
        fprintf(stderr, "gpuvet: error: %s was not recorded in the history\n", path);
        return GV_EXIT_ERROR;
    }
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    int rc = record_file_as(h, path, &id, side);
    gv_history_close(h);
    return rc;
}

int cli_record_file(const char *path) { return cli_record_file_side(path, NULL); }

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v && *v ? v : dflt;
}

/* "DIR/baselines" for the SQLite database at where ("sqlite:" / "file:" prefix
 * allowed), made and writable; 0 when it is, else -1. */
static int baselines_beside(const char *where, char *dir, size_t n)
{
    if (!strncmp(where, "sqlite:", 7))
        where += 7;
    else if (!strncmp(where, "file:", 5))
        where += 5;
    const char *slash = strrchr(where, '/');
    snprintf(dir, n, "%.*s%sbaselines", slash ? (int)(slash - where) : 0, where,
             slash ? "/" : "");
    return gv_mkdirs(dir, 0700) == 0 && gv_is_dir(dir) && access(dir, W_OK) == 0 ? 0 : -1;
}

/* Where the last good run's snapshot is written, the directory made: a "baselines"
 * directory beside a SQLite database (for the default one, $XDG_DATA_HOME/gpuvet/baselines);
 * beside the default database for a PostgreSQL one, which has no place on this machine,
 * or when the database's directory cannot be written (a shared database read read-only). */
static int baselines_dir(const struct gv_history *h, char *dir, size_t n, struct gv_err *err)
{
    char where[GV_PATH_MAX];
    if (!strcmp(gv_history_backend(h), "sqlite") &&
        !gv_history_locate(NULL, where, sizeof where, err) && !baselines_beside(where, dir, n))
        return GV_OK;
    gv_err_clear(err);
    int rc = gv_history_default(where, sizeof where, err);
    if (!rc && baselines_beside(where, dir, n))
        rc = gv_err_set(err, GV_E_IO, "cannot make a writable directory %s for the baseline", dir);
    return rc;
}

/* For 'gpuvet plan rollback --to last-good' (cmd_plan.c). */
int cli_history_last_good(const char *machine, char *path, size_t pathsz)
{
    struct gv_history *h = NULL;
    if (cli_history_open(NULL, 0, &h))
        return GV_EXIT_ERROR;
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    json_t *s = NULL, *doc = NULL;
    struct gv_err err = {0};
    int rc = gv_history_good(h, machine, &id, &s, &doc, &err);
    if (rc) {
        gv_history_close(h);
        return rc == GV_E_NOTFOUND ? (fprintf(stderr, "gpuvet plan: %s: no last good state to "
                                      "plan back to\n", err.msg), GV_EXIT_FINDINGS)
                                   : cli_fail(&err);
    }
    const json_t *snap = gv_history_doc_snapshot(doc);
    long long run = (long long)json_integer_value(json_object_get(s, "id"));
    if (!snap) {
        rc = cli_failf("history database %s: run %lld (the last that passed) holds no snapshot "
                       "to plan back to", gv_history_name(h), run);
    } else {
        char dir[GV_PATH_MAX];
        if (baselines_dir(h, dir, sizeof dir, &err) == GV_OK)
            snprintf(path, pathsz, "%s/run-%lld.snapshot.json", dir, run);
        if (err.code || gv_json_write_file(path, snap, &err))
            rc = cli_fail(&err);
        else
            fprintf(stderr, "gpuvet plan: last good: run %lld of %s (%s, %s), its snapshot "
                    "written to %s\n", run, str_or(s, "hostname", "?"), str_or(s, "created", "?"),
                    str_or(s, "kind", "?"), path);
    }
    json_decref(s);
    json_decref(doc);
    gv_history_close(h);
    return rc;
}
