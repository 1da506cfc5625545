/* Mixed ROCm releases: the one predicate behind `gpuvet doctor`'s
 * rocm-mixed-path (resolved SONAMEs) and `gpuvet diff`'s "mixed" changes.
 * A SONAME the loader resolves is mixed when its file belongs to a ROCm
 * release other than the reference release (major.minor), and the reference
 * release ships a library of the same SONAME: the loader hands a program the
 * other release's file where the reference one would do. A SONAME only
 * another release has (libamdhip64.so.5 next to 6.0) is no mix. */
#ifndef GV_KB_ROCM_MIX_H
#define GV_KB_ROCM_MIX_H

#include <jansson.h>
#include <stddef.h>

struct gv_rocm_mix {
    const char *soname;     /* the loader.resolved key */
    const char *path;       /* the file it resolves to */
    const char *release;    /* that file's ROCm release */
    const char *reference;  /* the release it is mixed with */
    const json_t *resolved; /* the loader.resolved entry */
};

/* The release the loader's choices are judged against: the default ROCm
 * install's version (what /opt/rocm resolves to, else the only install),
 * else the release of the HIP runtime with the highest SONAME major the loader
 * resolves; NULL when neither is known. */
const char *gv_rocm_reference(const json_t *snap);

/* Calls fn for every mixed SONAME of a snapshot with a collected loader
 * section, in loader.resolved order; returns how many there were. */
size_t gv_rocm_mixed_each(const json_t *snap, void (*fn)(const struct gv_rocm_mix *m, void *arg),
                          void *arg);

#endif
