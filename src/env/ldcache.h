/* /etc/ld.so.cache, the file the dynamic loader actually consults after
 * LD_LIBRARY_PATH: ldconfig builds it from the ld.so.conf directories, so when
 * ldconfig has not been run since a library or a conf file changed, the
 * loader's answer and the directories' answer differ. Read without ldconfig. */
#ifndef GV_ENV_LDCACHE_H
#define GV_ENV_LDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct gv_ldcache_entry {
    const char *soname; /* into the cache data (NUL-terminated, checked) */
    const char *path;
    int32_t flags;      /* FLAG_ELF_LIBC6 | arch bits, e.g. 0x0303 for x86-64 */
    uint64_t hwcap;
};

struct gv_ldcache {
    struct gv_ldcache_entry *items;
    size_t n;
};

/* This machine's flags value for 64-bit libc6 libraries (0x0303 x86-64,
 * 0x0a03 aarch64), or -1 when unknown. */
int32_t gv_ldcache_native_flags(void);

/* Parse glibc's cache in the "glibc-ld.so.cache1.1" format (the only format
 * ldconfig writes since glibc 2.32): a 48-byte header (magic, version, nlibs,
 * len_strings, flags, extension offset), nlibs 24-byte entries (flags, key,
 * value, osversion, hwcap), strings addressed by offsets from the start of the
 * file. The entries point into data, which must outlive out. GV_E_FORMAT for
 * anything else (old "ld.so-1.7.0" caches, truncation, offsets outside the
 * file, strings without a terminator), naming what is wrong. */
int gv_ldcache_parse(const uint8_t *data, size_t size, struct gv_ldcache *out, struct gv_err *err);
void gv_ldcache_free(struct gv_ldcache *c);

/* The path the loader takes for soname: the first entry with flags, hwcap 0
 * preferred (what the loader uses without glibc-hwcaps subdirectories); NULL
 * when absent. */
const char *gv_ldcache_lookup(const struct gv_ldcache *c, const char *soname, int32_t flags);

#endif
