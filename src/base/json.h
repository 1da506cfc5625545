/* JSON helpers on top of jansson: collected/not-collected sections, reading
 * and writing versioned documents with clear errors, and path lookups. */
#ifndef GV_BASE_JSON_H
#define GV_BASE_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

/* A snapshot section that was collected: {"collected": true, "source": S}. */
json_t *gv_section_new(const char *source);
/* A section that could not be collected:
 * {"collected": false, "source": S, "reason": R}. Never confused with empty. */
json_t *gv_section_missing(const char *source, const char *reason);

/* Set obj[key] = string, skipping when val is NULL (means "absent"). */
void gv_json_set_str(json_t *obj, const char *key, const char *val);

/* obj[key] = the current UTC time, "2026-11-29T21:30:00Z". */
void gv_json_set_utc_now(json_t *obj, const char *key);

/* Serialise (indented, keys in insertion order) and write atomically. */
int gv_json_write_file(const char *path, const json_t *doc, struct gv_err *err);
/* Serialise to a malloc'ed string (indent 2, trailing newline). */
char *gv_json_dump(const json_t *doc);

/* Read a JSON document of at most max bytes; errors name file, line, column.
 * The load is bounded by the memory budget below. */
int gv_json_read_file(const char *path, size_t max, json_t **doc, struct gv_err *err);

/* Memory for documents (issue 31, docs/security.md). Every jansson allocation
 * of the process is counted (bytes held by JSON values). While a load is armed
 * on this thread, an allocation that would take that count, plus `extra` bytes
 * the loader holds besides (the file's text), above the budget fails: the
 * parse stops cleanly and frees what it built. The budget is for everything
 * the process holds at once, so the second document of diff, compare or verify
 * gets what the first left. gv_json_read_file arms itself; other loaders are
 * wrapped in gv_json_load_begin/end. */
#define GV_JSON_BUDGET_DEFAULT ((size_t)640 << 20)
/* json_dumps, its string the caller's to free() and out of the budget's count
 * (a plain json_dumps string freed with free() would stay counted for good:
 * many of them, and a later load is refused). The only way to serialise:
 * json_dumps itself is poisoned below for every file but json.c. */
char *gv_json_dumps(const json_t *v, size_t flags);
void gv_json_set_budget(size_t bytes); /* 0: the default */
size_t gv_json_budget(void);
size_t gv_json_held(void); /* bytes now held by JSON values */
void gv_json_load_begin(size_t extra);
/* gv_json_load_begin for a loader that reads path whole: GV_E_NOMEM (the same
 * message) at once when its text alone does not fit in what is left. */
int gv_json_load_file_begin(const char *path, struct gv_err *err);
/* Ends the load. When the budget stopped it: err says "WHAT: the document needs
 * more than N MB of memory to load (limit ...)" and GV_E_NOMEM is returned;
 * else rc. */
int gv_json_load_end(const char *what, int rc, struct gv_err *err);
/* json_loadb (duplicate keys rejected) of a document within the budget: GV_OK
 * with *doc; GV_E_FORMAT with *doc NULL and *je saying where the syntax breaks
 * (err untouched: the caller names its input); GV_E_NOMEM with err set. Every
 * loader of a document gpuvet did not just make parses through it. */
int gv_json_parse(const char *data, size_t len, const char *what, json_t **doc,
                  json_error_t *je, struct gv_err *err);

/* Check doc["schema"] == name and doc["schema_version"] is readable by this
 * build (== version). Messages say which file and what was found. */
int gv_json_check_schema(const json_t *doc, const char *name, int version, const char *what,
                         struct gv_err *err);

/* Look up "a.b.c" (object keys only). NULL when absent. */
json_t *gv_json_path(const json_t *root, const char *dotted);
/* String at path, or NULL when absent or not a string. */
const char *gv_json_path_str(const json_t *root, const char *dotted);

#ifndef GV_JSON_INTERNAL
#pragma GCC poison json_dumps
#endif

#endif
