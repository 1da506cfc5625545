/* KFD gfx_target_version -> gfx name (rocm-facts.md 2c): the version is
 * major*10000 + minor*100 + stepping in decimal; the name is "gfx" followed by
 * major in decimal and minor and stepping in hex (90010 -> gfx90a). */
#include <stdio.h>

#include "env/offload.h"

void gv_gfx_name_from_target_version(unsigned v, char *out, size_t outsz)
{
    if (!outsz)
        return;
    if (v == 0 || (v / 100) % 100 > 15 || v % 100 > 15) {
        out[0] = '\0';
        return;
    }
    snprintf(out, outsz, "gfx%u%x%x", v / 10000, (v / 100) % 100, v % 100);
}
