/* HIP version -> ROCm release.
 * Source: docs/facts/rocm-facts.md §2b ("HIP runtime version
 * strings per ROCm"), which cites the ROCm compatibility matrix
 * (docs/compatibility/compatibility-matrix.rst and
 * compatibility-matrix-historical-6.0.csv) and, for 5.7.31921, a torch+rocm5.7
 * torch.version.hip report. The 7.2 row has a single source. */
#include "kb/hip_versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hip_row {
    unsigned major, minor, build;
    const char *rocm; /* the ROCm release, as the matrix names it */
};

static const struct hip_row hip_rows[] = {
    {5, 7, 31921, "5.7"},   {6, 0, 32830, "6.0.0"}, {6, 0, 32831, "6.0.2"},
    {6, 1, 40091, "6.1.0"}, {6, 1, 40092, "6.1.1"}, {6, 1, 40093, "6.1.2"},
    {6, 2, 41133, "6.2.0"}, {6, 2, 41134, "6.2.1"}, {6, 3, 42131, "6.3.0"},
    {6, 3, 42133, "6.3.1"}, {6, 3, 42134, "6.3.2"}, {6, 4, 43484, "6.4.3"},
    {7, 0, 51830, "7.0.0"}, {7, 2, 53211, "7.2"},
};

/* Parses "MAJ.MIN.BUILD" with an optional "-githash" or other suffix. */
static int parse_hip(const char *s, unsigned *maj, unsigned *min, unsigned *build)
{
    char *end;
    if (!s || s[0] < '0' || s[0] > '9')
        return 0;
    unsigned long a = strtoul(s, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9')
        return 0;
    unsigned long b = strtoul(end + 1, &end, 10);
    unsigned long c = 0;
    if (*end == '.' && end[1] >= '0' && end[1] <= '9')
        c = strtoul(end + 1, &end, 10);
    if (a > 1000 || b > 1000 || c > 10000000)
        return 0;
    *maj = (unsigned)a;
    *min = (unsigned)b;
    *build = (unsigned)c;
    return 1;
}

static const struct hip_row *find_row(unsigned maj, unsigned min, unsigned build)
{
    for (size_t i = 0; i < sizeof hip_rows / sizeof hip_rows[0]; i++) {
        const struct hip_row *r = &hip_rows[i];
        if (r->major == maj && r->minor == min && r->build == build)
            return r;
    }
    return NULL;
}

int gv_hip_to_rocm_release(const char *hip_version, char *out, size_t outsz)
{
    unsigned maj, min, build;
    if (!parse_hip(hip_version, &maj, &min, &build) || maj < 5 || build < 10000)
        return 0; /* HIP builds of ROCm 5+ carry a 5-digit build number */
    snprintf(out, outsz, "%u.%u", maj, min);
    return find_row(maj, min, build) ? 1 : 2;
}

const char *gv_hip_exact_rocm(const char *hip_version)
{
    unsigned maj, min, build;
    if (!parse_hip(hip_version, &maj, &min, &build))
        return NULL;
    const struct hip_row *r = find_row(maj, min, build);
    return r ? r->rocm : NULL;
}
