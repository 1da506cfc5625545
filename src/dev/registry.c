/* The table of compiled-in backends and --device parsing. */
#include <stdio.h>
#include <string.h>

#include "dev/backend.h"
#include "dev/torch/torch.h"

extern const struct gv_backend gv_backend_cuda;
extern const struct gv_backend gv_backend_hip;

/* cpu first; then the GPUs tried when no --device is given; then torch, which
 * is only used when asked for (it starts the user's Python). */
static const struct gv_backend *const backends[] = {&gv_backend_cpu, &gv_backend_cuda,
                                                     &gv_backend_hip, &gv_backend_torch};
#define N_BACKENDS (sizeof backends / sizeof backends[0])
#define N_AUTO 3

const struct gv_backend *gv_backend_find(const char *name)
{
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

int gv_device_open(const char *spec, const struct gv_backend **be, struct gv_device **dev,
                   char *note, size_t notesz, struct gv_err *err)
{
    if (note && notesz)
        note[0] = '\0';
    if (spec) {
        char name[32];
        size_t n = strcspn(spec, ":");
        if (n >= sizeof name)
            return gv_err_set(err, GV_E_USAGE, "--device %s: unknown device kind", spec);
        memcpy(name, spec, n);
        name[n] = '\0';
        const struct gv_backend *b = gv_backend_find(name);
        if (!b)
            return gv_err_set(err, GV_E_USAGE,
                              "--device %s: unknown device kind '%s' (cpu, cuda:N, hip:N, torch:cpu, "
                              "torch:cuda:N)", spec,
                              name);
        int rc = b->open(spec[n] == ':' ? spec + n + 1 : "", dev, err);
        if (rc)
            return rc;
        *be = b;
        return GV_OK;
    }
    /* No --device: the first GPU found, else the CPU, and say why. */
    char why[1024] = "";
    for (size_t i = 1; i < N_AUTO; i++) {
        struct gv_err e = {0};
        if (backends[i]->open("0", dev, &e) == GV_OK) {
            *be = backends[i];
            if (note)
                snprintf(note, notesz, "using %s:0 (first GPU found)", backends[i]->name);
            return GV_OK;
        }
        /* The short form of the reason: the details (every path tried) stay
         * available from --device NAME:0, which reports the full message. */
        size_t used = strlen(why);
        int keep = (int)strcspn(e.msg, "(;");
        while (keep > 0 && e.msg[keep - 1] == ' ')
            keep--;
        snprintf(why + used, sizeof why - used, "%s%s: %.*s", used ? "; " : "", backends[i]->name,
                 keep, e.msg);
    }
    int rc = gv_backend_cpu.open("", dev, err);
    if (rc)
        return rc;
    *be = &gv_backend_cpu;
    if (note)
        snprintf(note, notesz, "no GPU found, using the CPU (%s)", why);
    return GV_OK;
}
