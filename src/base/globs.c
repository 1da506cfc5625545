#include "base/globs.h"

#include <fnmatch.h>
#include <string.h>

int gv_globs_match(const char *patterns, const char *s)
{
    if (!patterns || !*patterns)
        return 1;
    const char *p = patterns;
    while (*p) {
        size_t len = strcspn(p, ",");
        char one[256];
        if (len > 0 && len < sizeof one) {
            memcpy(one, p, len);
            one[len] = '\0';
            if (fnmatch(one, s, 0) == 0)
                return 1;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}
