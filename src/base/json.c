#define GV_JSON_INTERNAL
#include "base/json.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/fs.h"

json_t *gv_section_new(const char *source)
{
    json_t *o = json_object();
    json_object_set_new(o, "collected", json_true());
    if (source)
        json_object_set_new(o, "source", json_string(source));
    return o;
}

json_t *gv_section_missing(const char *source, const char *reason)
{
    json_t *o = json_object();
    json_object_set_new(o, "collected", json_false());
    if (source)
        json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "reason", json_string(reason ? reason : "not collected"));
    return o;
}

void gv_json_set_str(json_t *obj, const char *key, const char *val)
{
    if (val) {
        json_t *s = json_string(val);
        if (!s) /* not valid UTF-8: keep it, escaped byte by byte */
            s = json_stringn_nocheck(val, strlen(val));
        json_object_set_new(obj, key, s);
    }
}

char *gv_json_dump(const json_t *doc)
{
    char *s = gv_json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return t;
}

int gv_json_write_file(const char *path, const json_t *doc, struct gv_err *err)
{
    char *s = gv_json_dump(doc);
    if (!s)
        return gv_err_set(err, GV_E_NOMEM, "%s: cannot serialise JSON", path);
    int rc = gv_write_atomic(path, s, strlen(s), 0644, err);
    free(s);
    return rc;
}

/* ---------- the memory budget ---------- */

/* What malloc holds for a block: its usable size and the chunk header. No
 * header of our own: a string jansson returns is handed over by
 * gv_json_dumps, which takes it out of the count, and is then freed with
 * free(). */
#define CHUNK_OVERHEAD 16

static atomic_llong held;           /* bytes of all jansson allocations alive */
static atomic_size_t budget = GV_JSON_BUDGET_DEFAULT;
static _Thread_local int armed;     /* a load is running on this thread */
static _Thread_local size_t armed_extra;
static _Thread_local int refused;   /* an allocation of that load was refused */
static _Thread_local long long held_before;

static void *counted_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        return NULL;
    long long sz = (long long)malloc_usable_size(p) + CHUNK_OVERHEAD;
    long long now = atomic_fetch_add(&held, sz) + sz;
    if (armed && (unsigned long long)now + armed_extra > atomic_load(&budget)) {
        atomic_fetch_sub(&held, sz);
        free(p);
        refused = 1;
        return NULL;
    }
    return p;
}

static void counted_free(void *p)
{
    if (!p)
        return;
    atomic_fetch_sub(&held, (long long)malloc_usable_size(p) + CHUNK_OVERHEAD);
    free(p);
}

char *gv_json_dumps(const json_t *v, size_t flags)
{
    char *s = json_dumps(v, flags);
    if (s) /* the caller's now, freed with free(): no longer a JSON value's memory */
        atomic_fetch_sub(&held, (long long)malloc_usable_size(s) + CHUNK_OVERHEAD);
    return s;
}

/* Before main and before any JSON value exists: every value is counted. */
__attribute__((constructor)) static void count_json_memory(void)
{
    json_set_alloc_funcs(counted_malloc, counted_free);
}

void gv_json_set_budget(size_t bytes)
{
    atomic_store(&budget, bytes ? bytes : GV_JSON_BUDGET_DEFAULT);
}

size_t gv_json_budget(void)
{
    return atomic_load(&budget);
}

size_t gv_json_held(void)
{
    long long h = atomic_load(&held);
    return h > 0 ? (size_t)h : 0;
}

/* Loads nest (a results file read whole by a loader that is itself armed):
 * only the outermost begin and end count. */
void gv_json_load_begin(size_t extra)
{
    if (armed++)
        return;
    armed_extra = extra;
    refused = 0;
    held_before = (long long)gv_json_held();
}

int gv_json_load_end(const char *what, int rc, struct gv_err *err)
{
    if (armed > 0 && --armed)
        return rc;
    if (!refused)
        return rc;
    refused = 0;
    size_t mb = 1 << 20, lim = gv_json_budget();
    size_t before = held_before > 0 ? (size_t)held_before : 0;
    size_t room = lim > before + armed_extra ? lim - before - armed_extra : 0;
    if (before >= mb)
        return gv_err_set(err, GV_E_NOMEM,
                          "%s: the document needs more than %zu MB of memory to load (limit %zu MB "
                          "for all the documents a command holds, %zu MB of it held by those "
                          "loaded before); is it a gpuvet document of the right kind?",
                          what, (room + armed_extra) / mb, lim / mb, before / mb);
    return gv_err_set(err, GV_E_NOMEM,
                      "%s: the document needs more than %zu MB of memory to load (limit %zu MB); "
                      "is it a gpuvet document of the right kind?",
                      what, (room + armed_extra) / mb, lim / mb);
}

int gv_json_parse(const char *data, size_t len, const char *what, json_t **doc,
                  json_error_t *je, struct gv_err *err)
{
    size_t lim = gv_json_budget(), mb = 1 << 20;
    *doc = NULL;
    if (!armed && len + gv_json_held() > lim)
        return gv_err_set(err, GV_E_NOMEM,
                          "%s: the document needs more than %zu MB of memory to load (limit %zu "
                          "MB); is it a gpuvet document of the right kind?",
                          what, len / mb, lim / mb);
    gv_json_load_begin(len); /* the text is held while the parse runs */
    json_t *d = json_loadb(data, len, JSON_REJECT_DUPLICATES, je);
    int rc = gv_json_load_end(what, GV_OK, err);
    if (rc) {
        json_decref(d);
        return rc;
    }
    *doc = d;
    return d ? GV_OK : GV_E_FORMAT;
}

int gv_json_load_file_begin(const char *path, struct gv_err *err)
{
    struct stat sb;
    size_t size = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0;
    size_t lim = gv_json_budget(), before = gv_json_held(), mb = 1 << 20;
    if (size && size + before > lim)
        return gv_err_set(err, GV_E_NOMEM,
                          "%s: the document needs more than %zu MB of memory to load (limit %zu MB "
                          "for all the documents a command holds, %zu MB of it in use); is it a "
                          "gpuvet document of the right kind?",
                          path, size / mb, lim / mb, before / mb);
    gv_json_load_begin(size); /* the text is held while the parse runs */
    return GV_OK;
}

int gv_json_read_file(const char *path, size_t max, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    int rc = gv_json_load_file_begin(path, err);
    if (rc)
        return rc;
    char *data;
    size_t len;
    rc = gv_read_file(path, max, &data, &len, err);
    if (rc)
        return gv_json_load_end(path, rc, err);
    if (len == 0) {
        free(data);
        gv_json_load_end(path, GV_OK, err);
        return gv_err_set(err, GV_E_FORMAT, "%s: empty file", path);
    }
    json_error_t je;
    json_t *d = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    free(data);
    rc = gv_json_load_end(path, d ? GV_OK : GV_E_FORMAT, err);
    if (rc == GV_E_NOMEM) {
        json_decref(d);
        return rc;
    }
    if (!d)
        return gv_err_set(err, GV_E_FORMAT, "%s: not valid JSON (line %d, column %d: %s)", path,
                          je.line, je.column, je.text);
    if (!json_is_object(d)) {
        json_decref(d);
        return gv_err_set(err, GV_E_FORMAT, "%s: not a JSON object", path);
    }
    *doc = d;
    return GV_OK;
}

int gv_json_check_schema(const json_t *doc, const char *name, int version, const char *what,
                         struct gv_err *err)
{
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    json_t *ver = json_object_get(doc, "schema_version");
    if (!schema)
        return gv_err_set(err, GV_E_SCHEMA, "%s: no \"schema\" field; not a %s file", what, name);
    if (strcmp(schema, name) != 0)
        return gv_err_set(err, GV_E_SCHEMA, "%s: is a \"%s\" file, expected \"%s\"", what, schema,
                          name);
    if (!json_is_integer(ver))
        return gv_err_set(err, GV_E_SCHEMA, "%s: \"schema_version\" missing or not an integer",
                          what);
    json_int_t v = json_integer_value(ver);
    if (v > version)
        return gv_err_set(err, GV_E_SCHEMA,
                          "%s: schema version %lld is newer than this gpuvet reads (%d); "
                          "upgrade gpuvet",
                          what, (long long)v, version);
    if (v < version)
        return gv_err_set(err, GV_E_SCHEMA,
                          "%s: schema version %lld is older than this gpuvet reads (%d); "
                          "re-create it with this version",
                          what, (long long)v, version);
    return GV_OK;
}

json_t *gv_json_path(const json_t *root, const char *dotted)
{
    const json_t *cur = root;
    const char *p = dotted;
    while (cur && *p) {
        size_t n = strcspn(p, ".");
        char key[256];
        if (n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        p += n;
        if (*p == '.')
            p++;
    }
    return (json_t *)cur;
}

const char *gv_json_path_str(const json_t *root, const char *dotted)
{
    return json_string_value(gv_json_path(root, dotted));
}

void gv_json_set_utc_now(json_t *obj, const char *key)
{
    char buf[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(obj, key, json_string(buf));
}
