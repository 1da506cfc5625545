/* The fleet room's string map (fleet_impl.h): open addressing, FNV-1a,
 * keys borrowed from the documents. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_impl.h"

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static size_t slot(const struct gv_fmap *m, const char *key)
{
    size_t i = (size_t)hash(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int *gv_fmap_get(const struct gv_fmap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    size_t i = slot(m, key);
    return m->keys[i] ? &m->vals[i] : NULL;
}

static int grow(struct gv_fmap *m)
{
    struct gv_fmap g = {NULL, NULL, m->cap ? m->cap * 2 : 16, 0};
    g.keys = calloc(g.cap, sizeof *g.keys);
    g.vals = calloc(g.cap, sizeof *g.vals);
    if (!g.keys || !g.vals) {
        gv_fmap_free(&g);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t j = slot(&g, m->keys[i]);
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
            g.n++;
        }
    gv_fmap_free(m);
    *m = g;
    return 0;
}

int *gv_fmap_put(struct gv_fmap *m, const char *key, int val)
{
    if ((m->n + 1) * 2 > m->cap && grow(m))
        return NULL;
    size_t i = slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->vals[i] = val;
        m->n++;
    }
    return &m->vals[i];
}

void gv_fmap_free(struct gv_fmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
