/* gv_deb_vercmp against the real dpkg: for every pair below, the sign must be
 * the one `dpkg --compare-versions` gives. Skipped (77) where dpkg is absent. */
#include <stdlib.h>
#include <unistd.h>

#include "env/diff.h"
#include "t.h"

static const char *const versions[] = {
    "5.7.1-6+deb13u1", "5.7.1-7", "6.4.3-5", "6.4.3+dfsg-5", "6.1.2-3", "1:17.0.6-22+b2",
    "1:21.1.8-14", "5.5.1+dfsg-7", "6.4.4-4", "6.0+git20231212.4510c28+dfsg-3+b2",
    "7.0.2+dfsg-3", "2.35-0ubuntu3.6", "2.35-0ubuntu3.8", "2.35-0ubuntu3.10", "1.0~rc1",
    "1.0", "1.0-0", "1.0-1", "1.0+1", "1.0.0", "1.0a", "1.0~", "1.0~~", "0:1.0", "1:0.9",
    "5.7.31921.50700-63~22.04", "6.0.32830.60000-91~22.04", "1:6.1.5.50700-1652687.22.04",
    "1.2.3-4-5", "010", "10", "a", "~", "",
};

static int dpkg_sign(const char *a, const char *b)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "dpkg --compare-versions '%s' lt '%s' 2>/dev/null", a, b);
    if (system(cmd) == 0)
        return -1;
    snprintf(cmd, sizeof cmd, "dpkg --compare-versions '%s' eq '%s' 2>/dev/null", a, b);
    return system(cmd) == 0 ? 0 : 1;
}

int main(void)
{
    if (access("/usr/bin/dpkg", X_OK) != 0) {
        printf("skip: dpkg is not installed\n");
        return 77;
    }
    size_t n = sizeof versions / sizeof versions[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j += 3) { /* every third partner keeps it under a second */
            if (!versions[i][0] || !versions[j][0])
                continue; /* dpkg refuses empty versions */
            int got = gv_deb_vercmp(versions[i], versions[j]);
            got = got < 0 ? -1 : got > 0;
            int want = dpkg_sign(versions[i], versions[j]);
            if (got != want)
                fprintf(stderr, "%s vs %s: got %d, dpkg says %d\n", versions[i], versions[j], got, want);
            T_EQ_INT(got, want);
        }
    /* NULL reads as the empty version, which sorts before any other; an
     * over-long version is cut, never overflowed */
    T_CHECK(gv_deb_vercmp(NULL, "1") < 0);
    char longv[600];
    memset(longv, '9', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    T_CHECK(gv_deb_vercmp(longv, "1") > 0);
    return t_done();
}
