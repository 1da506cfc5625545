/* Will a framework's CUDA code run on this GPU? The SASS and PTX targets
 * compiled into libtorch_cuda.so (snapshot python.environments[].torch.
 * gpu_targets) against the compute capability `gpuvet check` read from the
 * device. Rules from NVIDIA's CUDA C++ Programming Guide (binary and PTX
 * compatibility) and the CUDA 12.9/13 arch-specific and family-specific
 * feature sets:
 *   sm_XY   (cubin)  runs on X.Z for every Z >= Y (same major);
 *   sm_XYf  (cubin)  the same within the family (same major, minor >= Y);
 *   sm_XYa  (cubin)  runs on X.Y only;
 *   compute_XY (PTX) is JIT-compiled by the driver for any X'.Y' >= X.Y;
 *   compute_XYa / compute_XYf (PTX) only for X.Y / that family.
 * Without a match PyTorch fails with "no kernel image is available for
 * execution on the device". Nothing here prints. */
#ifndef GV_KB_CUDA_COMPAT_H
#define GV_KB_CUDA_COMPAT_H

#include <jansson.h>
#include <stddef.h>

enum gv_cuda_cover {
    GV_CUDA_NONE = 0,  /* no kernel image for this GPU */
    GV_CUDA_SASS = 1,  /* a cubin runs as is */
    GV_CUDA_PTX = 2,   /* only PTX, JIT-compiled at first use */
};

/* targets: "sm_90", "sm_90a", "compute_90", ... major/minor: the device's
 * compute capability. how: the target that covers it, or why none does. */
enum gv_cuda_cover gv_cuda_targets_cover(const char *const *targets, size_t n, int major,
                                         int minor, char *how, size_t howsz);

/* For each Python environment of the snapshot whose torch has collected CUDA
 * targets: {"prefix", "torch", "cover": "sass"|"ptx"|"none", "how",
 * "message"}. cc: "9.0". An empty array when there is nothing to judge. */
json_t *gv_cuda_framework_compat(const json_t *snapshot, const char *cc);

#endif
