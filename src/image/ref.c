/* REF, as docs/image.md ("References") gives it: a path that exists is the
 * path (a ':' in a real name works); podman:NAME[:TAG] and docker:NAME[:TAG]
 * name the engine's store; else PATH:TAG, split at the last ':' after the
 * last '/', or at the first ':' whose left part exists (FILE:NAME:TAG). */
#include <stdio.h>
#include <string.h>

#include "image/format.h"

static int name_ok(const char *s)
{
    if (!s[0] || s[0] == '-' || s[0] == ':')
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

static int engine_ref(const char *ref, const char *engine, struct gv_ref *out, struct gv_err *err)
{
    const char *name = ref + strlen(engine) + 1;
    if (!name_ok(name) || strlen(name) >= sizeof out->path)
        return gv_err_set(err, GV_E_USAGE, "image %.300s: want %s:NAME[:TAG]", ref, engine);
    out->kind = GV_REF_ENGINE;
    snprintf(out->engine, sizeof out->engine, "%s", engine);
    snprintf(out->path, sizeof out->path, "%s", name);
    if (strchr(name, '@'))
        return GV_OK; /* NAME@sha256:...: a digest, no tag */
    const char *slash = strrchr(name, '/');
    const char *colon = strrchr(slash ? slash : name, ':');
    if (colon)
        snprintf(out->tag, sizeof out->tag, "%s", colon + 1);
    return GV_OK;
}

/* ref split at colon: the left part a path that exists. */
static int split_at(const char *ref, const char *colon, int (*exists)(const char *),
                    struct gv_ref *out)
{
    size_t n = (size_t)(colon - ref);
    if (n == 0 || n >= sizeof out->path || strlen(colon + 1) >= sizeof out->tag || !colon[1])
        return 0;
    memcpy(out->path, ref, n);
    out->path[n] = '\0';
    if (!exists(out->path))
        return 0;
    snprintf(out->tag, sizeof out->tag, "%s", colon + 1);
    return 1;
}

int gv_ref_parse(const char *ref, int (*exists)(const char *), struct gv_ref *out,
                 struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    if (!ref || !ref[0])
        return gv_err_set(err, GV_E_USAGE, "image: empty reference");
    if (strlen(ref) >= sizeof out->path)
        return gv_err_set(err, GV_E_USAGE, "image: reference too long");
    if (exists(ref)) {
        snprintf(out->path, sizeof out->path, "%s", ref);
        return GV_OK;
    }
    if (!strncmp(ref, "podman:", 7))
        return engine_ref(ref, "podman", out, err);
    if (!strncmp(ref, "docker:", 7))
        return engine_ref(ref, "docker", out, err);
    const char *slash = strrchr(ref, '/');
    const char *last = strrchr(slash ? slash : ref, ':');
    if (last && split_at(ref, last, exists, out))
        return GV_OK;
    for (const char *c = strchr(ref, ':'); c; c = strchr(c + 1, ':'))
        if (split_at(ref, c, exists, out))
            return GV_OK;
    memset(out, 0, sizeof *out);
    return gv_err_set(err, GV_E_NOTFOUND, "image %.300s: no such file or directory", ref);
}
