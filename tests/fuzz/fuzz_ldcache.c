/* Fuzz target: the ld.so.cache reader. Every parsed entry's strings must be
 * readable to their terminator, and lookups must not crash. */
#include <stdint.h>
#include <string.h>

#include "env/ldcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_ldcache c;
    struct gv_err err;
    memset(&err, 0, sizeof err);
    if (gv_ldcache_parse(data, size, &c, &err) != GV_OK)
        return 0;
    size_t total = 0;
    for (size_t i = 0; i < c.n; i++)
        total += strlen(c.items[i].soname) + strlen(c.items[i].path);
    const char *p = c.n ? gv_ldcache_lookup(&c, c.items[0].soname, c.items[0].flags) : NULL;
    if (c.n && !p)
        __builtin_trap(); /* an entry that cannot be found again */
    (void)total;
    gv_ldcache_free(&c);
    return 0;
}
