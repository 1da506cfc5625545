/* process (--pid N): the GPU libraries a running process really mapped,
 * read from /proc/N/maps, and the logical libraries mapped from more than
 * one file (two HIP runtimes, two copies of rocBLAS, ...). */
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/libnames.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define MAPS_MAX ((size_t)64 << 20)

/* The path column of a maps line (after 5 fields), or NULL. */
static char *maps_path(char *line)
{
    char *p = line;
    for (int f = 0; f < 5; f++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return NULL;
        p += strcspn(p, " ");
    }
    while (*p == ' ')
        p++;
    return *p == '/' ? p : NULL;
}

static int in_list(json_t *arr, const char *path)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        if (!strcmp(json_string_value(json_object_get(v, "raw")), path))
            return 1;
    return 0;
}

/* Adds {name, path[, deleted]} for a GPU library mapping not yet seen. */
static void add_mapping(json_t *mapped, const char *raw)
{
    char path[GV_PATH_MAX];
    snprintf(path, sizeof path, "%s", raw);
    size_t n = strlen(path);
    int deleted = n > 10 && !strcmp(path + n - 10, " (deleted)");
    if (deleted)
        path[n - 10] = '\0';
    const struct gv_libname *ln = gv_libname_for_file(gv_sys_base(path));
    if (!ln || in_list(mapped, raw))
        return;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(ln->name));
    json_object_set_new(o, "path", gv_json_str(path));
    if (deleted)
        json_object_set_new(o, "deleted", json_true());
    json_object_set_new(o, "raw", gv_json_str(raw));
    json_array_append_new(mapped, o);
}

/* Logical names mapped from two or more different files. */
static json_t *conflicts(json_t *mapped)
{
    json_t *by = json_object(), *out = json_array(), *v;
    size_t i;
    json_array_foreach(mapped, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        json_t *paths = json_object_get(by, name);
        if (!paths) {
            paths = json_array();
            json_object_set_new(by, name, paths);
        }
        json_array_append(paths, json_object_get(v, "path"));
    }
    const char *name;
    json_object_foreach(by, name, v) {
        if (json_array_size(v) < 2)
            continue;
        json_t *c = json_object();
        json_object_set_new(c, "name", json_string(name));
        json_object_set(c, "paths", v);
        json_array_append_new(out, c);
    }
    json_decref(by);
    return out;
}

json_t *gv_probe_process(const struct gv_probe_ctx *ctx)
{
    char maps[64], exe_link[64], exe[GV_PATH_MAX];
    snprintf(maps, sizeof maps, "/proc/%d/maps", ctx->pid);
    snprintf(exe_link, sizeof exe_link, "/proc/%d/exe", ctx->pid);
    if (!ctx->live)
        return gv_section_missing(maps, "a process belongs to the running system; not read "
                                        "for --root");
    char *data;
    struct gv_err err = {0};
    if (gv_sys_read(ctx, maps, MAPS_MAX, &data, NULL, &err))
        return gv_section_missing(maps, err.code == GV_E_NOTFOUND ? "no such process" : err.msg);
    json_t *s = gv_section_new(maps), *mapped = json_array();
    json_object_set_new(s, "pid", json_integer(ctx->pid));
    if (gv_sys_readlink(ctx, exe_link, exe, sizeof exe) == 0)
        json_object_set_new(s, "exe", gv_json_str(exe));
    for (char *save, *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *p = maps_path(l);
        if (p)
            add_mapping(mapped, p);
    }
    free(data);
    size_t i;
    json_t *v;
    json_array_foreach(mapped, i, v) json_object_del(v, "raw");
    json_t *c = conflicts(mapped);
    json_object_set_new(s, "mapped", mapped);
    json_object_set_new(s, "conflicts", c);
    return s;
}
