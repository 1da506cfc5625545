#include "base/json.h"

#include <stdlib.h>
#include <string.h>
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
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
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

int gv_json_read_file(const char *path, size_t max, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    char *data;
    size_t len;
    int rc = gv_read_file(path, max, &data, &len, err);
    if (rc)
        return rc;
    if (len == 0) {
        free(data);
        return gv_err_set(err, GV_E_FORMAT, "%s: empty file", path);
    }
    json_error_t je;
    json_t *d = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    free(data);
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
