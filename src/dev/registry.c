/* The list of device kinds compiled in (kind.h) and the one --device parser:
 * every command opens its device here, so that all choose the same way. */
#include <stdio.h>
#include <string.h>

#include "dev/kind.h"

/* cpu first (the fallback); then the GPUs in the order tried when no --device
 * is given; then torch, which is only used when asked for. */
static const struct gv_dev_kind *const kinds[] = {&gv_kind_cpu, &gv_kind_cuda, &gv_kind_hip,
                                                  &gv_kind_torch};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

const struct gv_dev_kind *const *gv_dev_kinds(size_t *n)
{
    *n = N_KINDS;
    return kinds;
}

static const struct gv_dev_kind *find_n(const char *name, size_t n)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strlen(kinds[i]->name) == n && strncmp(kinds[i]->name, name, n) == 0)
            return kinds[i];
    return NULL;
}

const struct gv_dev_kind *gv_dev_kind_find(const char *name)
{
    return name ? find_n(name, strlen(name)) : NULL;
}

const struct gv_dev_kind *gv_dev_kind_of(const char *spec)
{
    return spec ? find_n(spec, strcspn(spec, ":")) : NULL;
}

static const char *rest_of(const char *spec)
{
    size_t n = strcspn(spec, ":");
    return spec[n] == ':' ? spec + n + 1 : "";
}

int gv_dev_spec_on_host(const char *spec)
{
    const struct gv_dev_kind *k = gv_dev_kind_of(spec);
    return k && k->on_host && k->on_host(rest_of(spec));
}

int gv_dev_spec_starts_python(const char *spec)
{
    const struct gv_dev_kind *k = gv_dev_kind_of(spec);
    return k && k->starts_python;
}

/* Opens the device of one kind with what follows "name:" (numerics or bench). */
typedef int (*open_fn)(const struct gv_dev_kind *k, const char *rest, void *out,
                       struct gv_err *err);

static int unknown_kind(const char *spec, struct gv_err *err)
{
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < N_KINDS && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 kinds[i]->usage);
    return gv_err_set(err, GV_E_USAGE, "--device %s: unknown device kind '%.*s' (%s)", spec,
                      (int)strcspn(spec, ":"), spec, list);
}

/* The short form of why a kind did not open: the details (every path tried)
 * stay available from --device NAME:0, which reports the full message. */
static void add_reason(char *why, size_t whysz, const char *name, const char *msg)
{
    size_t used = strlen(why);
    int keep = (int)strcspn(msg, "(;");
    while (keep > 0 && msg[keep - 1] == ' ')
        keep--;
    snprintf(why + used, whysz - used, "%s%s: %.*s", used ? "; " : "", name, keep, msg);
}

/* No --device: the first GPU kind that opens, else the fallback, and say why. */
static int open_auto(open_fn open, void *out, const struct gv_dev_kind **kind, char *note,
                     size_t notesz, struct gv_err *err)
{
    char why[1024] = "";
    const struct gv_dev_kind *fallback = NULL;
    for (size_t i = 0; i < N_KINDS; i++) {
        const struct gv_dev_kind *k = kinds[i];
        if (k->auto_choice == GV_AUTO_FALLBACK && !fallback)
            fallback = k;
        if (k->auto_choice != GV_AUTO_GPU)
            continue;
        struct gv_err e = {0};
        if (open(k, "0", out, &e) == GV_OK) {
            *kind = k;
            snprintf(note, notesz, "using %s:0 (first GPU found)", k->name);
            return GV_OK;
        }
        add_reason(why, sizeof why, k->name, e.msg);
    }
    if (!fallback)
        return gv_err_set(err, GV_E_NOTFOUND, "no GPU found (%s) and no CPU backend", why);
    int rc = open(fallback, "", out, err);
    if (rc)
        return rc;
    *kind = fallback;
    snprintf(note, notesz, "no GPU found, using the CPU (%s)", why);
    return GV_OK;
}

static int open_spec(const char *spec, open_fn open, void *out, const struct gv_dev_kind **kind,
                     char *note, size_t notesz, struct gv_err *err)
{
    char scratch[8];
    if (!note || !notesz)
        note = scratch, notesz = sizeof scratch;
    note[0] = '\0';
    if (!spec)
        return open_auto(open, out, kind, note, notesz, err);
    const struct gv_dev_kind *k = gv_dev_kind_of(spec);
    if (!k)
        return unknown_kind(spec, err);
    int rc = open(k, rest_of(spec), out, err);
    if (!rc)
        *kind = k;
    return rc;
}

static int open_numerics(const struct gv_dev_kind *k, const char *rest, void *out,
                         struct gv_err *err)
{
    return k->backend->open(rest, (struct gv_device **)out, err);
}

static int open_bench(const struct gv_dev_kind *k, const char *rest, void *out, struct gv_err *err)
{
    return k->bench->open(rest, (struct gv_bdev **)out, err);
}

int gv_device_open(const char *spec, const struct gv_backend **be, struct gv_device **dev,
                   char *note, size_t notesz, struct gv_err *err)
{
    const struct gv_dev_kind *k = NULL;
    int rc = open_spec(spec, open_numerics, dev, &k, note, notesz, err);
    if (!rc)
        *be = k->backend;
    return rc;
}

int gv_bench_device_open(const char *spec, const struct gv_dev_kind **kind, struct gv_bdev **d,
                         char *note, size_t notesz, struct gv_err *err)
{
    return open_spec(spec, open_bench, d, kind, note, notesz, err);
}
