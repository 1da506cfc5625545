/* The HIP runtime and hipRTC without a device: what can be proven on a
 * machine with no AMD GPU. */
#ifndef GV_DEV_HIP_PROBE_H
#define GV_DEV_HIP_PROBE_H

#include <jansson.h>
#include <stddef.h>

/* HIP_VERSION (major*10^7 + minor*10^5 + patch) as "5.7.31921". */
void gv_hip_version_string(int v, char *out, size_t outsz);

/* Loads libamdhip64 and hipRTC the way the backend does, reports the runtime
 * (path, version), hipGetDeviceCount's answer, and compiles every embedded
 * kernel for each arch in archs (NULL-terminated), checking that the code
 * object names every entry point. Counts compiled/failed arches. */
json_t *gv_hip_probe(const char *const *archs, int *compiled, int *failed);

#endif
