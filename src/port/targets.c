/* The GPU targets a port scan or check judges against (port.h). */
#include <stdlib.h>
#include <string.h>

#include "env/probe.h"
#include "kb/port_facts.h"
#include "port/port.h"

#define MAX_TARGETS 64

extern char **environ;

static int add_target(struct gv_port_targets *t, const char *name, size_t n, struct gv_err *err)
{
    if (n == 0)
        return GV_OK;
    if (n >= sizeof t->names[0])
        return gv_err_set(err, GV_E_USAGE, "--target: '%.*s' is too long", (int)n, name);
    char buf[32];
    memcpy(buf, name, n);
    buf[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_:+-", buf[i]))
            return gv_err_set(err, GV_E_USAGE, "--target: '%s' is not a GPU target name", buf);
    int wave = gv_port_wave_size(buf);
    if (!wave)
        return gv_err_set(err, GV_E_USAGE,
                          "--target: unknown target '%s' (want an AMD gfx target such as "
                          "gfx90a, gfx942, gfx1100, or an NVIDIA sm_XY)",
                          buf);
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], buf))
            return GV_OK;
    if (t->n >= MAX_TARGETS)
        return gv_err_set(err, GV_E_USAGE, "--target: more than %d targets", MAX_TARGETS);
    strcpy(t->names[t->n++], buf);
    if (wave == 64)
        t->any_wave64 = 1;
    else
        t->any_wave32 = 1;
    return GV_OK;
}

static int from_spec(const char *spec, struct gv_port_targets *t, struct gv_err *err)
{
    const char *p = spec;
    while (*p) {
        size_t n = strcspn(p, ",");
        int rc = add_target(t, p, n, err);
        if (rc)
            return rc;
        p += n;
        if (*p == ',')
            p++;
    }
    if (!t->n)
        return gv_err_set(err, GV_E_USAGE, "--target: no target named in '%s'", spec);
    return GV_OK;
}

/* The AMD GPUs of root by their KFD gfx target; errors are no targets. */
static void from_gpus(const char *root, struct gv_port_targets *t)
{
    struct gv_probe_ctx ctx = {.root = root, .live = !strcmp(root, "/"), .envp = environ};
    json_t *gpus = gv_probe_gpus(&ctx);
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(gpus, "devices"), i, d) {
        const char *gfx = json_string_value(json_object_get(json_object_get(d, "kfd"),
                                                            "gfx_target"));
        struct gv_err ignored = {0};
        if (gfx)
            add_target(t, gfx, strlen(gfx), &ignored);
    }
    json_decref(gpus);
}

int gv_port_targets_resolve(const char *spec, const char *root, struct gv_port_targets *t,
                            const char **how, struct gv_err *err)
{
    memset(t, 0, sizeof *t);
    t->names = calloc(MAX_TARGETS, sizeof *t->names);
    if (!t->names)
        return gv_err_set(err, GV_E_NOMEM, "no memory for the target list");
    int rc = GV_OK;
    if (spec) {
        *how = "--target";
        rc = from_spec(spec, t, err);
    } else {
        from_gpus(root ? root : "/", t);
        *how = "the AMD GPUs present";
        if (!t->n) {
            *how = "no AMD GPU found: one target of each wavefront size";
            rc = from_spec("gfx942,gfx1100", t, err);
        }
    }
    if (rc)
        gv_port_targets_free(t);
    return rc;
}

void gv_port_targets_free(struct gv_port_targets *t)
{
    free(t->names);
    memset(t, 0, sizeof *t);
}

json_t *gv_port_targets_json(const struct gv_port_targets *t, int wave64)
{
    json_t *a = json_array();
    for (size_t i = 0; i < t->n; i++) {
        int w = gv_port_wave_size(t->names[i]);
        int amd = !strncmp(t->names[i], "gfx", 3);
        if (amd && (!wave64 || w == 64))
            json_array_append_new(a, json_string(t->names[i]));
    }
    return a;
}
