/* The CUDA backend: libcuda (driver API), NVRTC for gpuvet's kernels, cuBLAS
 * (or cuBLASLt, as PyTorch chooses: lt.h) for GEMM, cuDNN for convolution when
 * present; all opened at run time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/gpu.h"
#include "dev/lt.h"
#include "dev/worker.h"
#include "kb/gpu_uuid.h"

#include "dev/cuda/cuda_dev.h"

/* "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" */
static int cu_fail(struct gv_device *d, CUresult r, struct gv_err *err, const char *call)
{
    const char *name = NULL, *str = NULL;
    if (d->cu.cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    if (d->cu.cuGetErrorString(r, &str) != CUDA_SUCCESS)
        str = NULL;
    int code = GV_E_DEVICE;
    return gv_err_set(err, code, "%s: %s (%d)%s%s", call, name ? name : "CUDA error", (int)r,
                      str ? ": " : "", str ? str : "");
}

/* Errors after which the CUDA context is unusable (CUDA driver API reference:
 * "the process must be terminated and relaunched" / the context is in an
 * inconsistent state): 700-799 are the launch/execution errors. */
static int sticky(CUresult r) { return r >= 700 && r < 800; }

static const struct gv_gpu_timing cuda_timing; /* below: gpuvet bench's primitives */

/* PyTorch's Lt workspace variable (KiB) and its CUDA default (docs/facts/rocm-facts.md) */
#define LT_WORKSPACE_ENV "CUBLASLT_WORKSPACE_SIZE"
#define LT_WORKSPACE_DEFAULT (1u << 20)

#define CU(d, call, err)                                                                     \
    do {                                                                                     \
        CUresult r_ = (d)->cu.call;                                                          \
        if (r_ != CUDA_SUCCESS) {                                                            \
            if (sticky(r_))                                                                  \
                (d)->broken = 1;                                                             \
            return cu_fail((d), r_, (err), #call);                                           \
        }                                                                                    \
    } while (0)

/* ---- device primitives for gv_gpu_run ---- */

static int p_alloc(void *ctx, size_t bytes, gv_dptr *p, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CUdeviceptr dp = 0;
    CUresult r = d->cu.cuMemAlloc(&dp, bytes);
    if (r != CUDA_SUCCESS) {
        cu_fail(d, r, err, "cuMemAlloc");
        return gv_err_prefix(err, "allocating %zu bytes on %s", bytes, d->name);
    }
    *p = dp;
    return GV_OK;
}

static void p_release(void *ctx, gv_dptr p)
{
    struct gv_device *d = ctx;
    if (!d->broken && p)
        d->cu.cuMemFree(p);
}

/* cuMemcpyHtoD from pageable memory returns once the bytes are staged, while
 * the DMA on the legacy stream may still run; a kernel on the own stream
 * (non-blocking: no implicit order with the legacy stream) could read the
 * buffer before it lands. The context sync closes that window. */
static int p_upload(void *ctx, gv_dptr dst, const void *src, size_t n, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CU(d, cuMemcpyHtoD(dst, src, n), err);
    CU(d, cuCtxSynchronize(), err);
    return GV_OK;
}

static int p_download(void *ctx, void *dst, gv_dptr src, size_t n, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CU(d, cuMemcpyDtoH(dst, src, n), err);
    return GV_OK;
}

static int get_func(struct gv_device *d, const char *name, CUfunction *f, struct gv_err *err)
{
    for (int i = 0; i < d->nfn; i++)
        if (strcmp(d->fn[i].name, name) == 0) {
            *f = d->fn[i].f;
            return GV_OK;
        }
    CU(d, cuModuleGetFunction(f, d->mod, name), err);
    if (d->nfn < NFUNC) {
        d->fn[d->nfn].name = name;
        d->fn[d->nfn++].f = *f;
    }
    return GV_OK;
}

static int p_launch(void *ctx, const char *kernel, unsigned grid, unsigned block, unsigned shmem,
                    void **args, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CUfunction f;
    int rc = get_func(d, kernel, &f, err);
    if (rc)
        return rc;
    if (shmem > 48 * 1024)
        CU(d, cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shmem),
           err);
    CUresult r = d->cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, d->stream, args, NULL);
    if (r != CUDA_SUCCESS) {
        if (sticky(r))
            d->broken = 1;
        cu_fail(d, r, err, "cuLaunchKernel");
        return gv_err_prefix(err, "%s", kernel);
    }
    return GV_OK;
}

static void nap(double s)
{
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

/* Polls the stream so that a hung kernel becomes a timeout, not a hang. */
static int p_finish(void *ctx, struct gv_err *err)
{
    struct gv_device *d = ctx;
    double t0 = gv_now(), wait = 20e-6;
    for (;;) {
        CUresult r = d->cu.cuStreamQuery(d->stream);
        if (r == CUDA_SUCCESS)
            return GV_OK;
        if (r != CUDA_ERROR_NOT_READY) {
            d->broken = 1;
            cu_fail(d, r, err, "cuStreamQuery");
            return gv_err_prefix(err, "the GPU faulted while running the case");
        }
        if (gv_now() - t0 > d->timeout) {
            d->broken = 1;
            return gv_err_set(err, GV_E_TIMEOUT,
                              "still running after %.0f s (GPUVET_CASE_TIMEOUT); the worker "
                              "process is replaced and the next case runs", d->timeout);
        }
        nap(wait);
        if (wait < 1e-3)
            wait *= 2;
    }
}

static const char *blas_status(struct gv_device *d, int st)
{
    const char *s = d->blas.cublasGetStatusName ? d->blas.cublasGetStatusName(st) : NULL;
    return s ? s : "cuBLAS error";
}

static int blas_gemm(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
                     enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (!d->have_blas)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLAS not loaded: %s", d->liberr[L_CUBLAS]);
    /* Row-major C = A.B is column-major C^T = B^T.A^T: swap the operands. */
    int m = (int)c->n, n = (int)c->m, k = (int)c->k, bt = (int)c->batch;
    long long sa = c->k * c->n, sb = c->m * c->k, sc = c->m * c->n;
    int st, math;
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    unsigned short one16 = 0x3c00, zero16 = 0;
    const void *alpha = &one32, *beta = &zero32;
    int ab, ct, comp;
    const char *compname;
    enum gv_dtype in = c->in_dtype;
    if (in == GV_F32 && c->compute_dtype == GV_F32 && cdt == GV_F32) {
        /* PyTorch's default fp32 matmul: cublasSgemm with CUBLAS_DEFAULT_MATH
         * (allow_tf32 off). NVIDIA_TF32_OVERRIDE=1 can still turn TF32 on here,
         * which is what the suite is meant to catch. */
        d->blas.cublasSetMathMode(d->bh, CUBLAS_DEFAULT_MATH);
        st = d->blas.cublasSgemmStridedBatched(d->bh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one32,
                                               (const float *)(uintptr_t)b, m, sa,
                                               (const float *)(uintptr_t)a, k, sb, &zero32,
                                               (float *)(uintptr_t)out, m, sc, bt);
        if (st != 0)
            return gv_err_set(err, GV_E_DEVICE, "cublasSgemmStridedBatched: %s (%d)",
                              blas_status(d, st), st);
        snprintf(impl, implsz, "cublasSgemmStridedBatched CUBLAS_DEFAULT_MATH");
        return GV_OK;
    }
    if (in == GV_F32 && c->compute_dtype == GV_TF32 && cdt == GV_F32) {
        ab = ct = CUDA_R_32F, comp = CUBLAS_COMPUTE_32F_FAST_TF32, math = CUBLAS_TF32_TENSOR_OP_MATH;
        compname = "CUBLAS_COMPUTE_32F_FAST_TF32";
    } else if (in == GV_F64 && cdt == GV_F64) {
        ab = ct = CUDA_R_64F, comp = CUBLAS_COMPUTE_64F, math = CUBLAS_DEFAULT_MATH;
        alpha = &one64, beta = &zero64, compname = "CUBLAS_COMPUTE_64F";
    } else if ((in == GV_F16 || in == GV_BF16) && c->compute_dtype == GV_F32 && cdt == GV_F32) {
        ab = in == GV_F16 ? CUDA_R_16F : CUDA_R_16BF, ct = CUDA_R_32F, comp = CUBLAS_COMPUTE_32F;
        math = CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
        compname = "CUBLAS_COMPUTE_32F DISALLOW_REDUCED_PRECISION_REDUCTION";
    } else if (in == GV_F16 && c->compute_dtype == GV_F16 && cdt == GV_F16) {
        ab = ct = CUDA_R_16F, comp = CUBLAS_COMPUTE_16F, math = CUBLAS_DEFAULT_MATH;
        alpha = &one16, beta = &zero16, compname = "CUBLAS_COMPUTE_16F";
    } else {
        return gv_err_set(err, GV_E_UNSUPPORTED, "no cuBLAS GEMM for %s inputs with %s compute",
                          gv_dtype_name(in), gv_dtype_name(c->compute_dtype));
    }
    d->blas.cublasSetMathMode(d->bh, math);
    st = d->blas.cublasGemmStridedBatchedEx(d->bh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha,
                                            (const void *)(uintptr_t)b, ab, m, sa,
                                            (const void *)(uintptr_t)a, ab, k, sb, beta,
                                            (void *)(uintptr_t)out, ct, m, sc, bt, comp,
                                            CUBLAS_GEMM_DEFAULT);
    d->blas.cublasSetMathMode(d->bh, CUBLAS_DEFAULT_MATH);
    if (st != 0)
        return gv_err_set(err, GV_E_DEVICE, "cublasGemmStridedBatchedEx (%s): %s (%d)", compname,
                          blas_status(d, st), st);
    snprintf(impl, implsz, "cublasGemmStridedBatchedEx %s", compname);
    return GV_OK;
}

/* cuBLASLt when chosen and it takes the case, else cuBLAS (lt.h). */
static int p_gemm(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
                  enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_device *d = ctx;
    return gv_lt_or_classic(&d->ltk, d->blas_route.use_lt, d->blas_route.mode, blas_gemm, d, c, a,
                            b, out, cdt, impl, implsz, err);
}

int gv_cuda_fp8_capable(const struct gv_device *d, struct gv_err *err)
{
    if (d->cc_major > 8 || (d->cc_major == 8 && d->cc_minor >= 9))
        return GV_OK;
    return gv_err_set(err, GV_E_UNSUPPORTED, "fp8 GEMM needs compute capability 8.9 or newer "
                      "(this GPU: %d.%d)", d->cc_major, d->cc_minor);
}

/* fp8 goes through cuBLASLt whichever library runs the other GEMMs, as
 * PyTorch's torch._scaled_mm does: cuBLAS has no fp8 GEMM. The handle is
 * opened at the first fp8 GEMM when cuBLAS runs the rest. */
static int p_gemm_tn(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr bt, gv_dptr out,
                     enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_device *d = ctx;
    char why[512];
    if (d->blas_route.mode == GV_BLAS_KERNEL)
        return gv_err_set(err, GV_E_UNSUPPORTED, "GPUVET_BLAS=kernel");
    if (d->blas_route.mode == GV_BLAS_CLASSIC)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLAS has no fp8 GEMM (cuBLASLt has)");
    if (!d->have_lt)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLASLt not loaded: %s", d->liberr[L_CUBLASLT]);
    int rc = gv_cuda_fp8_capable(d, err);
    if (rc)
        return rc;
    if (gv_lt_open(&d->ltk, d->stream, p_alloc, d, LT_WORKSPACE_ENV, LT_WORKSPACE_DEFAULT, why,
                   sizeof why))
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLASLt unusable: %s", why);
    if (!d->f8_scales) {
        float one[65] = {1.0f};
        one[64] = 1.0f;
        if ((rc = p_alloc(d, sizeof one, &d->f8_scales, err)))
            return rc;
        if ((rc = p_upload(d, d->f8_scales, one, sizeof one, err)))
            return rc;
    }
    return gv_lt_gemm_tn(&d->ltk, c, a, bt, out, cdt, d->f8_scales, impl, implsz, err);
}

/* PyTorch's choice for an fp32 convolution with TF32 allowed (cudnn.allow_tf32,
 * the default): CUDNN_DEFAULT_MATH and the first algorithm of cuDNN's
 * heuristics (cudnnGetConvolutionForwardAlgorithm_v7) that reports success,
 * with the math type it names. 0 and the choice, or a cuDNN status. */
static int tf32_algo(struct gv_device *d, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
                     cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int *algo,
                     int *math)
{
    enum { N = 8 };
    uint64_t perf[N * GV_CUDNN_PERF_SIZE / 8];
    int got = 0;
    *algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, *math = CUDNN_DEFAULT_MATH;
    if (!d->dnn.cudnnGetConvolutionForwardAlgorithm_v7)
        return 0;
    int st = d->dnn.cudnnGetConvolutionForwardAlgorithm_v7(d->dh, xd, wd, cd, yd, N, &got, perf);
    if (st != 0)
        return st;
    for (int i = 0; i < got && i < N; i++) {
        const unsigned char *p = (const unsigned char *)perf + (size_t)i * GV_CUDNN_PERF_SIZE;
        int status, m;
        memcpy(&status, p + GV_CUDNN_PERF_STATUS, sizeof status);
        memcpy(&m, p + GV_CUDNN_PERF_MATH, sizeof m);
        if (status == 0) {
            memcpy(algo, p, sizeof *algo);
            *math = m;
            return 0;
        }
    }
    return 0;
}

/* cuDNN forward convolution of fp32 tensors: strict fp32 (CUDNN_FMA_MATH: no
 * tensor cores, no TF32, implicit GEMM) for fp32 compute; for TF32 compute
 * what PyTorch does by default (tf32_algo). */
static int p_conv(void *ctx, const struct gv_case *c, gv_dptr x, gv_dptr w, gv_dptr y,
                  char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (!d->have_dnn)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuDNN not loaded");
    int tf32 = c->compute_dtype == GV_TF32;
    if (c->compute_dtype != GV_F32 && c->compute_dtype != c->in_dtype && !tf32)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuDNN path is fp32 only");
    int algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, math = CUDNN_FMA_MATH;
    const struct gv_api_cudnn *a = &d->dnn;
    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnFilterDescriptor_t wd = NULL;
    cudnnConvolutionDescriptor_t cd = NULL;
    int P = (int)((c->h + 2 * c->pad - c->r) / c->stride + 1);
    int Q = (int)((c->w + 2 * c->pad - c->s) / c->stride + 1);
    int st = 0, rc = GV_OK;
    size_t ws = 0;
    gv_dptr wsp = 0;
    float one = 1, zero = 0;
    const char *call = "";
#define DNN(x)                                                                               \
    do {                                                                                     \
        call = #x;                                                                           \
        if ((st = a->x) != 0)                                                                \
            goto out;                                                                        \
    } while (0)
    DNN(cudnnCreateTensorDescriptor(&xd));
    DNN(cudnnCreateTensorDescriptor(&yd));
    DNN(cudnnCreateFilterDescriptor(&wd));
    DNN(cudnnCreateConvolutionDescriptor(&cd));
    DNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)c->n, (int)c->c,
                                   (int)c->h, (int)c->w));
    DNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)c->n, (int)c->k,
                                   P, Q));
    DNN(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int)c->k, (int)c->c,
                                   (int)c->r, (int)c->s));
    DNN(cudnnSetConvolution2dDescriptor(cd, (int)c->pad, (int)c->pad, (int)c->stride,
                                        (int)c->stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT));
    DNN(cudnnSetConvolutionMathType(cd, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    if (tf32) {
        call = "cudnnGetConvolutionForwardAlgorithm_v7";
        if ((st = tf32_algo(d, xd, wd, cd, yd, &algo, &math)) != 0)
            goto out;
        DNN(cudnnSetConvolutionMathType(cd, math));
    }
    DNN(cudnnGetConvolutionForwardWorkspaceSize(d->dh, xd, wd, cd, yd, algo, &ws));
    if (ws && (rc = p_alloc(d, ws, &wsp, err)))
        goto out;
    DNN(cudnnConvolutionForward(d->dh, &one, xd, (void *)(uintptr_t)x, wd, (void *)(uintptr_t)w,
                                cd, algo, (void *)(uintptr_t)wsp, ws, &zero, yd,
                                (void *)(uintptr_t)y));
    if (tf32)
        snprintf(impl, implsz, "cudnnConvolutionForward algo=%d mathType=%d (CUDNN_DEFAULT_MATH, "
                 "TF32 allowed; heuristic choice%s; workspace %zu bytes)", algo, math,
                 d->dnn.cudnnGetConvolutionForwardAlgorithm_v7 ? "" : " unavailable", ws);
    else
        snprintf(impl, implsz, "cudnnConvolutionForward IMPLICIT_GEMM CUDNN_FMA_MATH");
#undef DNN
out:
    if (st != 0)
        rc = gv_err_set(err, GV_E_UNSUPPORTED, "%s: %s (%d)", call, a->cudnnGetErrorString(st),
                        st);
    if (wsp) {
        struct gv_err ignore = {0};
        p_finish(d, &ignore); /* the workspace is in use until the stream is done */
        p_release(d, wsp);
    }
    if (cd)
        a->cudnnDestroyConvolutionDescriptor(cd);
    if (wd)
        a->cudnnDestroyFilterDescriptor(wd);
    if (yd)
        a->cudnnDestroyTensorDescriptor(yd);
    if (xd)
        a->cudnnDestroyTensorDescriptor(xd);
    return rc;
}

/* ---- context set-up and recovery ---- */

static void ctx_teardown(struct gv_device *d)
{
    gv_lt_stop(&d->ltk, p_release, d);
    p_release(d, d->f8_scales);
    d->f8_scales = 0;
    if (d->dh)
        d->dnn.cudnnDestroy(d->dh);
    if (d->bh)
        d->blas.cublasDestroy(d->bh);
    if (d->mod && !d->broken)
        d->cu.cuModuleUnload(d->mod);
    if (d->stream && !d->broken)
        d->cu.cuStreamDestroy(d->stream);
    d->dh = NULL, d->bh = NULL, d->mod = NULL, d->stream = NULL, d->nfn = 0;
}

static int ctx_setup(struct gv_device *d, struct gv_err *err)
{
    CU(d, cuDevicePrimaryCtxRetain(&d->ctx, d->dev), err);
    d->retains++;
    CU(d, cuCtxSetCurrent(d->ctx), err);
    CU(d, cuStreamCreate(&d->stream, CU_STREAM_NON_BLOCKING), err);
    CUresult r = d->cu.cuModuleLoadData(&d->mod, d->code.code);
    if (r != CUDA_SUCCESS) {
        cu_fail(d, r, err, "cuModuleLoadData");
        return gv_err_prefix(err, "loading the %s output for %s", d->code.compiler, d->arch);
    }
    if (d->have_blas) {
        int st = d->blas.cublasCreate(&d->bh);
        if (st == 0)
            st = d->blas.cublasSetStream(d->bh, d->stream);
        if (st != 0) {
            snprintf(d->liberr[L_CUBLAS], sizeof d->liberr[L_CUBLAS], "cublasCreate: %s (%d)",
                     blas_status(d, st), st);
            d->have_blas = 0;
        }
    }
    /* PyTorch's workspace variable and default */
    int lrc = gv_lt_start(&d->ltk, &d->blas_route, d->stream, p_alloc, d, LT_WORKSPACE_ENV,
                          LT_WORKSPACE_DEFAULT, d->liberr[L_CUBLASLT], sizeof d->liberr[0], err);
    if (lrc)
        return lrc;
    if (d->have_dnn) {
        int st = d->dnn.cudnnCreate(&d->dh);
        if (st == 0)
            st = d->dnn.cudnnSetStream(d->dh, d->stream);
        if (st != 0) {
            snprintf(d->liberr[L_CUDNN], sizeof d->liberr[L_CUDNN], "cudnnCreate: %s (%d)",
                     d->dnn.cudnnGetErrorString(st), st);
            d->have_dnn = 0;
        }
    }
    return GV_OK;
}

/* ---- open ---- */

static int parse_spec(const char *spec, int *ordinal, struct gv_err *err)
{
    char *end;
    long v = strtol(spec && *spec ? spec : "0", &end, 10);
    if ((*end && *end != ',') || v < 0 || v > 1024)
        return gv_err_set(err, GV_E_USAGE, "--device cuda:%s: expected a device number", spec);
    *ordinal = (int)v;
    return GV_OK;
}

static void load_optional(struct gv_device *d, int slot, enum gv_lib_id id, void *table, int *have)
{
    struct gv_err e = {0};
    *have = gv_vlib_open(id, &d->lib[slot], table, &e) == GV_OK;
    if (!*have)
        snprintf(d->liberr[slot], sizeof d->liberr[slot], "%s", e.msg);
}

static void versions(struct gv_device *d)
{
    int maj = 0, min = 0, pat = 0;
    snprintf(d->lib[L_CUDA].version, sizeof d->lib[0].version, "%d.%d", d->driver / 1000,
             d->driver % 1000 / 10);
    d->rtc.nvrtcVersion(&maj, &min);
    snprintf(d->lib[L_NVRTC].version, sizeof d->lib[0].version, "%d.%d", maj, min);
    if (d->lib[L_CUBLAS].handle && d->blas.cublasGetProperty(0, &maj) == 0 &&
        d->blas.cublasGetProperty(1, &min) == 0 && d->blas.cublasGetProperty(2, &pat) == 0)
        snprintf(d->lib[L_CUBLAS].version, sizeof d->lib[0].version, "%d.%d.%d", maj, min, pat);
    if (d->lib[L_CUBLASLT].handle) {
        size_t v = d->lt.cublasLtGetVersion(); /* major*10000 + minor*100 + patch */
        snprintf(d->lib[L_CUBLASLT].version, sizeof d->lib[0].version, "%zu.%zu.%zu", v / 10000,
                 v / 100 % 100, v % 100);
    }
    if (d->lib[L_CUDNN].handle) {
        size_t v = d->dnn.cudnnGetVersion(); /* 9.x: major*10000 + minor*100 + patch */
        if (v >= 90000)
            snprintf(d->lib[L_CUDNN].version, sizeof d->lib[0].version, "%zu.%zu.%zu",
                     v / 10000, v / 100 % 100, v % 100);
        else /* 8.x: major*1000 + minor*100 + patch */
            snprintf(d->lib[L_CUDNN].version, sizeof d->lib[0].version, "%zu.%zu.%zu", v / 1000,
                     v / 100 % 10, v % 100);
    }
}

static int init_driver(struct gv_device *d, struct gv_err *err)
{
    int rc = gv_vlib_open(GV_LIB_CUDA, &d->lib[L_CUDA], &d->cu, err);
    if (rc)
        return rc;
    const char *path = d->lib[L_CUDA].path;
    CUresult r = d->cu.cuInit(0);
    if (r == CUDA_ERROR_STUB_LIBRARY || (r != CUDA_SUCCESS && strstr(path, "/stubs/"))) {
        d->lib[L_CUDA].stub = 1;
        return gv_err_set(err, GV_E_LIB,
                          "%s is the CUDA toolkit's link-time stub, not the driver's libcuda "
                          "(cuInit: CUDA_ERROR_STUB_LIBRARY (%d)); the real libcuda.so.1 comes "
                          "with the NVIDIA driver: install the driver or remove the stubs "
                          "directory from LD_LIBRARY_PATH / --lib-path", path, (int)r);
    }
    if (r == CUDA_ERROR_NO_DEVICE)
        return gv_err_set(err, GV_E_NOTFOUND, "no NVIDIA GPU (cuInit: CUDA_ERROR_NO_DEVICE, %s)",
                          path);
    if (r != CUDA_SUCCESS) {
        cu_fail(d, r, err, "cuInit");
        return gv_err_prefix(err, "%s", path);
    }
    CU(d, cuDriverGetVersion(&d->driver), err);
    int count = 0;
    CU(d, cuDeviceGetCount(&count), err);
    if (d->ordinal >= count)
        return gv_err_set(err, GV_E_NOTFOUND, "cuda:%d: only %d CUDA device(s)", d->ordinal,
                          count);
    CU(d, cuDeviceGet(&d->dev, d->ordinal), err);
    CU(d, cuDeviceGetName(d->name, sizeof d->name - 1, d->dev), err);
    CU(d, cuDeviceTotalMem(&d->total_mem, d->dev), err);
    CUuuid uu;
    if (d->cu.cuDeviceGetUuid && d->cu.cuDeviceGetUuid(&uu, d->dev) == CUDA_SUCCESS)
        kb_gpu_uuid_cuda(uu.bytes, d->uuid); /* else (or all zero) none: uuid stays "" */
    CU(d, cuDeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev),
       err);
    CU(d, cuDeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev),
       err);
    CU(d, cuDeviceGetAttribute(&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev), err);
    int sh = 48 * 1024;
    if (d->cu.cuDeviceGetAttribute(&sh, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                   d->dev) != CUDA_SUCCESS || sh < 48 * 1024)
        sh = 48 * 1024;
    d->max_shmem = (unsigned)sh - 2048; /* room for the kernels' static shared arrays */
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", d->cc_major, d->cc_minor);
    return GV_OK;
}

static void close_dev(struct gv_device *d)
{
    if (!d)
        return;
    if (d->lib[L_CUDA].handle && d->ctx) {
        d->cu.cuCtxSetCurrent(d->ctx);
        if (d->stream && !d->broken)
            d->cu.cuStreamSynchronize(d->stream);
        ctx_teardown(d);
        while (d->retains-- > 0)
            d->cu.cuDevicePrimaryCtxRelease(d->dev);
    }
    gv_rtc_out_free(&d->code);
    for (int i = 4; i >= 0; i--)
        gv_vlib_close(&d->lib[i]);
    free(d);
}

static int open_dev(const char *spec, struct gv_device **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_device *d = calloc(1, sizeof *d);
    if (!d)
        return gv_err_set(err, GV_E_NOMEM, "cuda backend");
    int rc = parse_spec(spec, &d->ordinal, err);
    if (!rc)
        rc = init_driver(d, err);
    if (!rc && (rc = gv_vlib_open(GV_LIB_NVRTC, &d->lib[L_NVRTC], &d->rtc, err)))
        gv_err_prefix(err, "NVRTC compiles gpuvet's kernels and is required");
    if (!rc) {
        load_optional(d, L_CUBLAS, GV_LIB_CUBLAS, &d->blas, &d->have_blas);
        load_optional(d, L_CUBLASLT, GV_LIB_CUBLASLT, &d->lt, &d->have_lt);
        if (d->have_lt)
            gv_lt_from_cublaslt(&d->ltk, &d->lt);
        load_optional(d, L_CUDNN, GV_LIB_CUDNN, &d->dnn, &d->have_dnn);
        versions(d);
        rc = gv_blas_choose(&d->blas_route, "cuda", d->arch, 0, d->have_lt,
                            d->liberr[L_CUBLASLT], err);
    }
    if (!rc)
        rc = gv_nvrtc_compile(&d->rtc, d->arch, &d->code, err);
    d->timeout = gv_gpu_case_timeout();
    if (!rc)
        rc = ctx_setup(d, err);
    if (rc) {
        if (d->lib[L_CUDA].handle)
            gv_err_prefix(err, "cuda:%d", d->ordinal);
        close_dev(d);
        return rc;
    }
    d->ops = (struct gv_gpu_ops){p_alloc, p_release, p_upload, p_download, p_launch, p_finish,
                                 p_gemm,  p_conv,    d->max_shmem, NULL, p_gemm_tn,
                                 &cuda_timing};
    *out = d;
    return GV_OK;
}

static json_t *describe(struct gv_device *d)
{
    json_t *o = json_object();
    if (!d)
        return o;
    json_object_set_new(o, "backend", json_string("cuda"));
    json_object_set_new(o, "ordinal", json_integer(d->ordinal));
    json_object_set_new(o, "name", json_string(d->name));
    if (d->uuid[0])
        json_object_set_new(o, "uuid", json_string(d->uuid));
    json_object_set_new(o, "arch", json_string(d->arch));
    json_object_set_new(o, "compute_capability",
                        json_sprintf("%d.%d", d->cc_major, d->cc_minor));
    json_object_set_new(o, "multiprocessors", json_integer(d->sms));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)d->total_mem));
    json_object_set_new(o, "driver_api_version", json_integer(d->driver));
    json_t *libs = json_array();
    for (int i = 0; i < 5; i++)
        json_array_append_new(libs, gv_vlib_describe(&d->lib[i], d->liberr[i]));
    json_object_set_new(o, "libraries", libs);
    json_object_set_new(o, "kernels", gv_rtc_out_describe(&d->code, d->code.is_ptx ? "ptx" : "cubin"));
    json_object_set_new(o, "gemm", json_string(d->have_blas || d->blas_route.use_lt
                                                   ? d->blas_route.why
                                                   : "gpuvet kernel (fp32; cuBLAS not loaded)"));
    json_object_set_new(o, "conv2d",
                        json_string(d->have_dnn ? "cuDNN (f32: CUDNN_FMA_MATH; tf32: CUDNN_DEFAULT_MATH "
                                                  "and its heuristic algorithm), kernel fallback"
                                                : "gpuvet kernel (cuDNN unavailable)"));
    json_object_set_new(o, "case_timeout_s", json_real(d->timeout));
    const char *tf32 = getenv("NVIDIA_TF32_OVERRIDE");
    json_object_set_new(o, "NVIDIA_TF32_OVERRIDE", tf32 ? json_string(tf32) : json_null());
    return o;
}

static int supports(struct gv_device *d, const struct gv_case *c, struct gv_err *why)
{
    return gv_gpu_supports(&d->ops, d->have_blas || d->blas_route.use_lt, c, why);
}

static int run(struct gv_device *d, const struct gv_case *c, const struct gv_buffer *in, int nin,
               struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err)
{
    /* After a sticky error the process is unusable; the worker is replaced
     * by its parent (worker.c). */
    if (d->broken)
        return gv_err_set(err, GV_E_DEVICE, "%s: the CUDA context is unusable after an earlier "
                          "fault", c->id);
    d->cu.cuCtxSetCurrent(d->ctx);
    return gv_gpu_run(&d->ops, d, c, in, nin, out, info, err);
}

/* In-process backend: used inside the worker process (worker.h). */
const struct gv_backend gv_backend_cuda_inproc = {"cuda", open_dev, close_dev, describe, supports, run};

/* ---- for cuda_bench.c (cuda_dev.h) ---- */

int gv_cuda_fail(struct gv_device *d, CUresult r, struct gv_err *err, const char *call)
{
    if (sticky(r))
        d->broken = 1;
    return cu_fail(d, r, err, call);
}

int gv_cuda_func(struct gv_device *d, const char *name, CUfunction *f, struct gv_err *err)
{
    return get_func(d, name, f, err);
}

const char *gv_cuda_blas_status(struct gv_device *d, int st) { return blas_status(d, st); }

/* ---- timing primitives for gpuvet bench (gpu.h, struct gv_gpu_timing) ---- */

static int t_broken(void *ctx) { return ((struct gv_device *)ctx)->broken; }

static int t_kernel(void *ctx, const char *name, struct gv_err *err)
{
    CUfunction f;
    return get_func(ctx, name, &f, err);
}

static CUstream stream_of(struct gv_device *d, void *stream)
{
    return stream ? (CUstream)stream : d->stream;
}

static int t_event_create(void *ctx, void **ev, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CUevent e = NULL;
    CU(d, cuEventCreate(&e, CU_EVENT_DEFAULT), err);
    *ev = e;
    return GV_OK;
}

static void t_event_destroy(void *ctx, void *ev)
{
    if (ev)
        ((struct gv_device *)ctx)->cu.cuEventDestroy((CUevent)ev);
}

static int t_event_record(void *ctx, void *ev, void *stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CU(d, cuEventRecord((CUevent)ev, stream_of(d, stream)), err);
    return GV_OK;
}

static int t_event_elapsed(void *ctx, void *e0, void *e1, double *sec, struct gv_err *err)
{
    struct gv_device *d = ctx;
    float ms = 0;
    CU(d, cuEventElapsedTime(&ms, (CUevent)e0, (CUevent)e1), err);
    *sec = ms * 1e-3;
    return GV_OK;
}

static int t_stream_create(void *ctx, void **stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CUstream s = NULL;
    CU(d, cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), err);
    *stream = s;
    return GV_OK;
}

static void t_stream_destroy(void *ctx, void *stream)
{
    if (stream)
        ((struct gv_device *)ctx)->cu.cuStreamDestroy((CUstream)stream);
}

static int t_stream_sync(void *ctx, void *stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CU(d, cuStreamSynchronize(stream_of(d, stream)), err);
    return GV_OK;
}

static int t_copy(void *ctx, enum gv_copy kind, int async, gv_dptr dst, gv_dptr src, void *host,
                  size_t bytes, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (kind == GV_COPY_D2D && async)
        CU(d, cuMemcpyDtoDAsync(dst, src, bytes, d->stream), err);
    else if (kind == GV_COPY_H2D && async)
        CU(d, cuMemcpyHtoDAsync(dst, host, bytes, d->stream), err);
    else if (kind == GV_COPY_D2H && async)
        CU(d, cuMemcpyDtoHAsync(host, src, bytes, d->stream), err);
    else if (kind == GV_COPY_H2D) {
        CU(d, cuMemcpyHtoD(dst, host, bytes), err);
        CU(d, cuCtxSynchronize(), err);
    } else if (kind == GV_COPY_D2H)
        CU(d, cuMemcpyDtoH(host, src, bytes), err);
    else
        return gv_err_set(err, GV_E_UNSUPPORTED, "no blocking device-to-device copy");
    return GV_OK;
}

static int t_host_alloc(void *ctx, size_t bytes, void **p, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CU(d, cuMemHostAlloc(p, bytes, CU_MEMHOSTALLOC_PORTABLE), err);
    return GV_OK;
}

static void t_host_free(void *ctx, void *p)
{
    if (p)
        ((struct gv_device *)ctx)->cu.cuMemFreeHost(p);
}

static int t_mem_free(void *ctx, size_t *free_bytes, struct gv_err *err)
{
    struct gv_device *d = ctx;
    size_t total = 0;
    CU(d, cuMemGetInfo(free_bytes, &total), err);
    return GV_OK;
}

static int t_memset_ff(void *ctx, gv_dptr p, size_t bytes, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (d->cu.cuMemsetD8Async)
        CU(d, cuMemsetD8Async(p, 0xFF, bytes, d->stream), err);
    return GV_OK;
}

static int t_device_count(void *ctx)
{
    int n = 0;
    return ((struct gv_device *)ctx)->cu.cuDeviceGetCount(&n) == CUDA_SUCCESS ? n : 1;
}

static int t_peer_access(void *ctx, int src, int dst, char *why, size_t whysz)
{
    struct gv_device *d = ctx;
    CUdevice ds, dd;
    int can = 0;
    if (!d->cu.cuDeviceCanAccessPeer || d->cu.cuDeviceGet(&ds, src) != CUDA_SUCCESS ||
        d->cu.cuDeviceGet(&dd, dst) != CUDA_SUCCESS ||
        d->cu.cuDeviceCanAccessPeer(&can, ds, dd) != CUDA_SUCCESS) {
        snprintf(why, whysz, "cuDeviceCanAccessPeer not available or failed");
        return -1;
    }
    snprintf(why, whysz, "cuDeviceCanAccessPeer(%d, %d) = %d", src, dst, can);
    return can ? 1 : 0;
}

static int t_pci_address(void *ctx, int i, char *buf, size_t bufsz)
{
    struct gv_device *d = ctx;
    CUdevice dev;
    char id[64];
    if (!d->cu.cuDeviceGetPCIBusId || d->cu.cuDeviceGet(&dev, i) != CUDA_SUCCESS ||
        d->cu.cuDeviceGetPCIBusId(id, sizeof id, dev) != CUDA_SUCCESS)
        return -1;
    /* the driver writes "00000000:17:00.0": sysfs has a 4-digit domain */
    gv_gpu_pci_address(id, buf, bufsz);
    return 0;
}

/* Retains dev's primary context (once per device, counted). */
static int t_peer_hold(void *ctx, int dev, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CUdevice cd;
    if (!d->cu.cuMemcpyPeerAsync || !d->cu.cuCtxEnablePeerAccess)
        return gv_err_set(err, GV_E_UNSUPPORTED, "libcuda lacks cuMemcpyPeerAsync");
    if (dev < 0 || dev >= GV_CUDA_MAX_PEERS)
        return gv_err_set(err, GV_E_UNSUPPORTED, "device %d: gpuvet holds at most %d devices",
                          dev, GV_CUDA_MAX_PEERS);
    if (d->held[dev] == 0) {
        CU(d, cuDeviceGet(&cd, dev), err);
        CU(d, cuDevicePrimaryCtxRetain(&d->held_ctx[dev], cd), err);
    }
    d->held[dev]++;
    return GV_OK;
}

static void t_peer_release(void *ctx, int dev)
{
    struct gv_device *d = ctx;
    CUdevice cd;
    if (dev < 0 || dev >= GV_CUDA_MAX_PEERS || d->held[dev] == 0 || --d->held[dev] > 0)
        return;
    if (d->cu.cuDeviceGet(&cd, dev) == CUDA_SUCCESS)
        d->cu.cuDevicePrimaryCtxRelease(cd);
    d->held_ctx[dev] = NULL;
}

static int t_use_device(void *ctx, int dev, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (dev >= 0 && (dev >= GV_CUDA_MAX_PEERS || !d->held[dev]))
        return gv_err_set(err, GV_E_USAGE, "device %d is not held", dev);
    CU(d, cuCtxSetCurrent(dev < 0 ? d->ctx : d->held_ctx[dev]), err);
    return GV_OK;
}

static int t_peer_enable(void *ctx, int dst, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (dst < 0 || dst >= GV_CUDA_MAX_PEERS || !d->held[dst])
        return gv_err_set(err, GV_E_USAGE, "device %d is not held", dst);
    CUresult r = d->cu.cuCtxEnablePeerAccess(d->held_ctx[dst], 0);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        return gv_cuda_fail(d, r, err, "cuCtxEnablePeerAccess");
    return GV_OK;
}

static int t_peer_copy(void *ctx, gv_dptr dst, int dst_dev, gv_dptr src, int src_dev,
                       size_t bytes, void *stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    CUcontext dc = dst_dev < 0 ? d->ctx : d->held_ctx[dst_dev];
    CUcontext sc = src_dev < 0 ? d->ctx : d->held_ctx[src_dev];
    CU(d, cuMemcpyPeerAsync(dst, dc, src, sc, bytes, stream_of(d, stream)), err);
    return GV_OK;
}

static const struct gv_gpu_timing cuda_timing = {
    "cu", "cuMemHostAlloc", "cuLaunchKernel of an empty NVRTC kernel",
    "the CUDA context is unusable after an earlier fault",
    t_broken, t_kernel, t_event_create, t_event_destroy, t_event_record, t_event_elapsed,
    t_stream_create, t_stream_destroy, t_stream_sync, t_copy, t_host_alloc, t_host_free,
    t_mem_free, t_memset_ff, t_device_count, t_peer_access, t_pci_address, t_peer_hold,
    t_peer_release, t_use_device, t_peer_enable, t_peer_copy,
};
