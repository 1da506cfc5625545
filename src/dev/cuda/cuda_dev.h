/* The CUDA backend's device, shared by the files of that backend alone:
 * cuda.c (numerics) and cuda_bench.c (gpuvet bench). */
#ifndef GV_DEV_CUDA_DEV_H
#define GV_DEV_CUDA_DEV_H

#include "dev/gpu.h"
#include "dev/lt.h"

#define NFUNC 16
#define GV_CUDA_MAX_PEERS 64 /* devices gpuvet bench's peer copies may hold */

struct gv_device {
    struct gv_vlib lib[5]; /* cuda, nvrtc, cublas, cublasLt, cudnn */
    char liberr[5][1024];
    struct gv_api_cuda cu;
    struct gv_api_nvrtc rtc;
    struct gv_api_cublas blas;
    struct gv_api_cublaslt lt;
    struct gv_api_cudnn dnn;
    int have_blas, have_dnn, have_lt;
    struct gv_lt ltk;
    struct gv_blas_choice blas_route; /* cuBLAS or cuBLASLt (lt.h) */
    int ordinal, retains;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUmodule mod;
    cublasHandle_t bh;
    cudnnHandle_t dh;
    struct { const char *name; CUfunction f; } fn[NFUNC];
    int nfn;
    char name[256];
    char uuid[48]; /* "GPU-..." (kb/gpu_uuid.h); "" when the driver gives none */
    int cc_major, cc_minor, sms, driver;
    size_t total_mem;
    unsigned max_shmem;
    char arch[16];
    struct gv_rtc_out code;
    double timeout;
    int broken;      /* a sticky error or timeout: the context must be recreated */
    gv_dptr f8_scales; /* 1.0f at bytes 0 and 256: fp8 matmuls' scale pointers */
    struct gv_gpu_ops ops;
    CUcontext held_ctx[GV_CUDA_MAX_PEERS]; /* primary contexts held for peer copies */
    int held[GV_CUDA_MAX_PEERS];
};

enum { L_CUDA, L_NVRTC, L_CUBLAS, L_CUBLASLT, L_CUDNN };

/* cuda.c's helpers for cuda_bench.c */
/* err from a failed driver call: "call: NAME (code): text"; marks a sticky fault. */
int gv_cuda_fail(struct gv_device *d, CUresult r, struct gv_err *err, const char *call);
/* A kernel of gpuvet's module by name (cached). */
int gv_cuda_func(struct gv_device *d, const char *name, CUfunction *f, struct gv_err *err);
const char *gv_cuda_blas_status(struct gv_device *d, int st);
/* 0 when the GPU has fp8 tensor cores (compute capability 8.9 or newer), else
 * GV_E_UNSUPPORTED saying so. */
int gv_cuda_fp8_capable(const struct gv_device *d, struct gv_err *err);
extern const struct gv_backend gv_backend_cuda_inproc;

#endif
