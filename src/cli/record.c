/* --record and GPUVET_RECORD=1: one call after a command has written its
 * result, shared by snapshot, check, ab and torch capture (and history import). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cli_record_file_into(struct gv_history *h, const char *path,
                         const struct gv_history_ident *id)
{
    struct gv_err err = {0};
    json_t *doc = NULL;
    if (gv_cap_load_document(path, (size_t)1 << 31, &doc, &err)) {
        fprintf(stderr, "gpuvet: error: %s\n", err.msg);
        return GV_EXIT_ERROR;
    }
    char src[PATH_MAX];
    abs_path(path, src, sizeof src);
    int rc = record_into(h, doc, src, id, 0);
    json_decref(doc);
    return rc;
}

int cli_record_file(const char *path)
{
    struct gv_history *h = NULL;
    if (cli_history_open(record_db, 1, &h)) {
        fprintf(stderr, "gpuvet: error: %s was not recorded in the history\n", path);
        return GV_EXIT_ERROR;
    }
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    int rc = cli_record_file_into(h, path, &id);
    gv_history_close(h);
    return rc;
}
