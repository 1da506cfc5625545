/* glibc's ld.so.cache reader (see ldcache.h). Layout from glibc's
 * sysdeps/generic/dl-cache.h (struct cache_file_new, struct file_entry_new),
 * checked against `ldconfig -p` (tests/unit/test_ldcache.c). */
#include "env/ldcache.h"

#include <stdlib.h>
#include <string.h>

#define MAGIC "glibc-ld.so.cache"
#define VERSION "1.1"
#define OLD_MAGIC "ld.so-1.7.0"
#define HEADER_SIZE 48
#define ENTRY_SIZE 24
#define ENTRIES_MAX (1u << 22)

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int32_t gv_ldcache_native_flags(void)
{
#if defined(__x86_64__)
    return 0x0303; /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
#elif defined(__aarch64__)
    return 0x0a03; /* FLAG_ELF_LIBC6 | FLAG_AARCH64_LIB64 */
#else
    return -1;
#endif
}

/* A NUL-terminated string at offset off of the file, or NULL. */
static const char *string_at(const uint8_t *data, size_t size, uint32_t off)
{
    if (off < HEADER_SIZE || off >= size)
        return NULL;
    const void *nul = memchr(data + off, '\0', size - off);
    return nul ? (const char *)data + off : NULL;
}

int gv_ldcache_parse(const uint8_t *data, size_t size, struct gv_ldcache *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    if (size >= sizeof OLD_MAGIC - 1 && !memcmp(data, OLD_MAGIC, sizeof OLD_MAGIC - 1))
        return gv_err_set(err, GV_E_FORMAT, "an old-format (ld.so-1.7.0, glibc < 2.32 compat) "
                          "cache: not read");
    if (size < HEADER_SIZE || memcmp(data, MAGIC, sizeof MAGIC - 1) != 0)
        return gv_err_set(err, GV_E_FORMAT, "no \"" MAGIC "\" header (%zu bytes)", size);
    if (memcmp(data + sizeof MAGIC - 1, VERSION, sizeof VERSION - 1) != 0)
        return gv_err_set(err, GV_E_FORMAT, "cache version \"%.3s\", expected " VERSION,
                          (const char *)data + sizeof MAGIC - 1);
    if (data[28] != 0 && data[28] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3))
        return gv_err_set(err, GV_E_FORMAT, "cache written for the other byte order (flags %u)",
                          data[28]);
    uint32_t nlibs = le32(data + 20);
    if (nlibs > ENTRIES_MAX || (size - HEADER_SIZE) / ENTRY_SIZE < nlibs)
        return gv_err_set(err, GV_E_FORMAT, "%u entries do not fit in %zu bytes", nlibs, size);
    out->items = calloc(nlibs ? nlibs : 1, sizeof *out->items);
    if (!out->items)
        return gv_err_set(err, GV_E_NOMEM, "%u cache entries", nlibs);
    for (uint32_t i = 0; i < nlibs; i++) {
        const uint8_t *e = data + HEADER_SIZE + (size_t)i * ENTRY_SIZE;
        struct gv_ldcache_entry *it = &out->items[i];
        it->flags = (int32_t)le32(e);
        it->soname = string_at(data, size, le32(e + 4));
        it->path = string_at(data, size, le32(e + 8));
        it->hwcap = le64(e + 16);
        if (!it->soname || !it->path) {
            uint32_t k = le32(e + 4), v = le32(e + 8);
            gv_ldcache_free(out);
            return gv_err_set(err, GV_E_FORMAT, "entry %u: string offsets %u/%u outside the "
                              "file or unterminated (%zu bytes)", i, k, v, size);
        }
    }
    out->n = nlibs;
    return GV_OK;
}

void gv_ldcache_free(struct gv_ldcache *c)
{
    free(c->items);
    memset(c, 0, sizeof *c);
}

const char *gv_ldcache_lookup(const struct gv_ldcache *c, const char *soname, int32_t flags)
{
    const char *any = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_ldcache_entry *e = &c->items[i];
        if (e->flags != flags || strcmp(e->soname, soname) != 0)
            continue;
        if (e->hwcap == 0)
            return e->path;
        if (!any)
            any = e->path;
    }
    return any;
}
