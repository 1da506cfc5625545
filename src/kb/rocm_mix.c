/* Mixed ROCm releases (see rocm_mix.h). */
#include "kb/rocm_mix.h"

#include <stdlib.h>
#include <string.h>

#include "kb/rules_impl.h"

/* The release of the highest-major libamdhip64 the loader resolves. */
static const char *primary_hip(const json_t *snap, const json_t *ld)
{
    const char *best = NULL, *k;
    long best_major = -1;
    json_t *r;
    json_object_foreach((json_t *)jobj(ld, "resolved"), k, r) {
        if (strncmp(k, "libamdhip64.so.", 15) || jhas_false(r, "found"))
            continue;
        const char *rel = jstr(r, "path") ? release_of_path(snap, jstr(r, "path")) : NULL;
        long major = strtol(k + 15, NULL, 10);
        if (rel && major > best_major) {
            best_major = major;
            best = rel;
        }
    }
    return best;
}

const char *gv_rocm_reference(const json_t *snap)
{
    const json_t *def = default_rocm(snap, NULL);
    if (def && jstr(def, "version"))
        return jstr(def, "version");
    return primary_hip(snap, section(snap, "loader"));
}

/* Does release rel ship a library file with this SONAME (libraries.items)? */
static int release_ships(const json_t *snap, const char *rel, const char *soname)
{
    size_t i;
    json_t *it;
    json_array_foreach(jarr(section(snap, "libraries"), "items"), i, it) {
        const char *so = jstr(it, "soname"), *p = jstr(it, "path");
        const char *r = jstr(it, "rocm_release");
        if (!r && p)
            r = release_of_path(snap, p);
        if (so && r && !strcmp(so, soname) && kb_vercmp_n(r, rel, 2) == 0)
            return 1;
    }
    return 0;
}

size_t gv_rocm_mixed_each(const json_t *snap, void (*fn)(const struct gv_rocm_mix *m, void *arg),
                          void *arg)
{
    const json_t *ld = section(snap, "loader");
    const char *ref = ld ? gv_rocm_reference(snap) : NULL;
    size_t n = 0;
    const char *k;
    json_t *r;
    if (!ref)
        return 0;
    json_object_foreach((json_t *)jobj(ld, "resolved"), k, r) {
        const char *p = jstr(r, "path");
        const char *rel = p && !jhas_false(r, "found") ? release_of_path(snap, p) : NULL;
        if (!rel || kb_vercmp_n(rel, ref, 2) == 0 || !release_ships(snap, ref, k))
            continue;
        struct gv_rocm_mix m = {k, p, rel, ref, r};
        fn(&m, arg);
        n++;
    }
    return n;
}
