/* The HIP backend's device, shared by the files of that backend alone:
 * hip.c (numerics) and hip_bench.c (gpuvet bench). */
#ifndef GV_DEV_HIP_DEV_H
#define GV_DEV_HIP_DEV_H

#include "dev/gpu.h"
#include "dev/lt.h"

#define NFUNC 16

enum { L_HIP, L_HIPRTC, L_ROCBLAS, L_HIPBLASLT, L_MIOPEN, L_N };

struct gv_device {
    struct gv_vlib lib[L_N];
    char liberr[L_N][1024];
    struct gv_api_hip hip;
    struct gv_api_hiprtc rtc;
    struct gv_api_rocblas rb;
    struct gv_api_hipblaslt lt;
    struct gv_api_miopen mi;
    int have_blas, have_dnn, have_lt;
    struct gv_lt ltk;
    struct gv_blas_choice blas_route; /* rocBLAS or hipBLASLt (lt.h) */
    int ordinal, runtime;
    hipStream_t stream;
    hipModule_t mod;
    rocblas_handle bh;
    miopenHandle_t mh;
    struct { const char *name; hipFunction_t f; } fn[NFUNC];
    int nfn;
    char name[256];
    char uuid[48]; /* "GPU-..." (kb/gpu_uuid.h); "" when the runtime gives none */
    char arch[96]; /* gcnArchName, e.g. "gfx90a:sramecc+:xnack-" */
    size_t total_mem;
    struct gv_rtc_out code;
    double timeout;
    int broken;
    struct gv_gpu_ops ops;
};

/* hip.c's helpers for hip_bench.c */
/* err from a failed runtime call: "call: NAME (code): text"; a sticky error
 * (the 700 range) marks the device broken. */
int gv_hip_fail(struct gv_device *d, hipError_t r, struct gv_err *err, const char *call);
/* A kernel of gpuvet's module by name (cached). */
int gv_hip_func(struct gv_device *d, const char *name, hipFunction_t *f, struct gv_err *err);
extern const struct gv_backend gv_backend_hip_inproc;

#endif
