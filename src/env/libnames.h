/* The GPU libraries gpuvet knows, one table: logical name, file stem, vendor.
 * Probes, the loader resolution, diff and doctor all use this table. */
#ifndef GV_ENV_LIBNAMES_H
#define GV_ENV_LIBNAMES_H

#include <stddef.h>

enum gv_lib_class {
    GV_LIB_RUNTIME = 0, /* HIP/HSA/comgr/hiprtc, libcuda/cudart/nvrtc */
    GV_LIB_MATH,        /* BLAS, DNN, FFT, RAND, SOLVER */
    GV_LIB_COMM,        /* RCCL/NCCL */
    GV_LIB_TOOLS,       /* SMI, rocm-core */
};

struct gv_libname {
    const char *name;   /* logical name used in snapshots: "hip-runtime" */
    const char *stem;   /* file stem: "libamdhip64" (matches libamdhip64.so*) */
    const char *vendor; /* "amd" or "nvidia" */
    enum gv_lib_class cls;
};

extern const struct gv_libname gv_libnames[];
extern const size_t gv_libnames_count;

/* The entry whose stem matches a file name such as "libamdhip64.so.6.0.32830"
 * or "libamdhip64.so"; NULL when the file is not a known GPU library. */
const struct gv_libname *gv_libname_for_file(const char *filename);
const struct gv_libname *gv_libname_by_name(const char *name);

#endif
