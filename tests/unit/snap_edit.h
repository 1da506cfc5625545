/* Test helpers: load a hand-written snapshot and edit it by path
 * ("gpus.devices.0.kfd.gfx_target"); numeric segments index arrays. A path
 * containing '/' is split on '/' instead, for keys with dots
 * ("loader/resolved/libamdhip64.so.6"). */
#ifndef GV_TEST_SNAP_EDIT_H
#define GV_TEST_SNAP_EDIT_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *snap_load(const char *name)
{
    const char *src = getenv("GV_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/doctor/%s", src ? src : "..", name);
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    if (!doc) {
        fprintf(stderr, "cannot load %s: %s (line %d)\n", path, e.text, e.line);
        exit(1);
    }
    return doc;
}

/* Walk to the parent of the last segment, creating objects on the way. */
static json_t *snap_parent(json_t *doc, const char *path, char *last, size_t size)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    const char *sep = strchr(path, '/') ? "/" : ".";
    json_t *cur = doc;
    char *save, *seg = strtok_r(buf, sep, &save);
    while (seg) {
        char *next = strtok_r(NULL, sep, &save);
        if (!next) {
            snprintf(last, size, "%s", seg);
            return cur;
        }
        json_t *child;
        if (json_is_array(cur))
            child = json_array_get(cur, strtoul(seg, NULL, 10));
        else {
            child = json_object_get(cur, seg);
            if (!child) {
                child = json_object();
                json_object_set_new(cur, seg, child);
            }
        }
        if (!child) {
            fprintf(stderr, "snap_edit: no %s in %s\n", seg, path);
            exit(1);
        }
        cur = child;
        seg = next;
    }
    exit(1);
}

/* Set path to the JSON text value; value NULL deletes. */
static void snap_set(json_t *doc, const char *path, const char *value)
{
    char last[128];
    json_t *parent = snap_parent(doc, path, last, sizeof last);
    if (!value) {
        if (json_is_array(parent))
            json_array_remove(parent, strtoul(last, NULL, 10));
        else
            json_object_del(parent, last);
        return;
    }
    json_error_t e;
    json_t *v = json_loads(value, JSON_DECODE_ANY, &e);
    if (!v) {
        fprintf(stderr, "snap_edit: bad JSON for %s: %s\n", path, value);
        exit(1);
    }
    if (json_is_array(parent)) {
        if (!strcmp(last, "+"))
            json_array_append_new(parent, v);
        else
            json_array_set_new(parent, strtoul(last, NULL, 10), v);
    } else {
        json_object_set_new(parent, last, v);
    }
}

#endif
