/* HIP runtime version -> ROCm release, for library files and torch builds that
 * carry a HIP version ("6.0.32830", "5.7.31921-d1770ee1b") but no ROCm one. */
#ifndef GV_KB_HIP_VERSIONS_H
#define GV_KB_HIP_VERSIONS_H

#include <stddef.h>

/* Writes the ROCm release ("6.0", "6.4") for a HIP version string into out.
 * Returns 1 when the exact HIP build is in the table, 2 when only the
 * HIP major.minor was used (HIP major.minor equals the ROCm major.minor
 * from ROCm 5 on), 0 when the string is not a HIP version. */
int gv_hip_to_rocm_release(const char *hip_version, char *out, size_t outsz);
/* The exact ROCm release of a HIP build in the table ("6.0.2"), or NULL. */
const char *gv_hip_exact_rocm(const char *hip_version);

#endif
