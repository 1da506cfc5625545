/* The HIP backend: libamdhip64 (module API), hipRTC for gpuvet's kernels,
 * hipBLASLt or rocBLAS for GEMM (as PyTorch chooses: lt.h), MIOpen for
 * convolution when present. All opened at run time. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dev/gpu.h"
#include "dev/hip/hip_dev.h"
#include "dev/lt.h"
#include "dev/worker.h"
#include "kb/gpu_uuid.h"
#include "dev/hip/hip_probe.h"
#include "base/json.h"

static int hip_fail(const struct gv_api_hip *h, hipError_t r, struct gv_err *err, const char *call)
{
    const char *name = h->hipGetErrorName ? h->hipGetErrorName(r) : NULL;
    const char *str = h->hipGetErrorString ? h->hipGetErrorString(r) : NULL;
    return gv_err_set(err, GV_E_DEVICE, "%s: %s (%d)%s%s", call, name ? name : "HIP error", r,
                      str ? ": " : "", str ? str : "");
}

/* hipErrorIllegalAddress, hipErrorLaunchFailure and the other 700-range
 * errors leave the device in an unusable state, as in CUDA. */
static int sticky(hipError_t r) { return r >= 700 && r < 800; }

static const struct gv_gpu_timing hip_timing; /* below: gpuvet bench's primitives */

#define HIPC(d, call, err)                                                                   \
    do {                                                                                     \
        hipError_t r_ = (d)->hip.call;                                                       \
        if (r_ != hipSuccess) {                                                              \
            if (sticky(r_))                                                                  \
                (d)->broken = 1;                                                             \
            return hip_fail(&(d)->hip, r_, (err), #call);                                    \
        }                                                                                    \
    } while (0)

/* HIP_VERSION = major * 10^7 + minor * 10^5 + patch (hip_version.h):
 * 50731921 -> "5.7.31921", 60443484 -> "6.4.43484". */
void gv_hip_version_string(int v, char *out, size_t outsz)
{
    snprintf(out, outsz, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

/* ---- device primitives ---- */

static int p_alloc(void *ctx, size_t bytes, gv_dptr *p, struct gv_err *err)
{
    struct gv_device *d = ctx;
    void *dp = NULL;
    hipError_t r = d->hip.hipMalloc(&dp, bytes);
    if (r != hipSuccess) {
        hip_fail(&d->hip, r, err, "hipMalloc");
        return gv_err_prefix(err, "allocating %zu bytes on %s", bytes, d->name);
    }
    *p = (gv_dptr)(uintptr_t)dp;
    return GV_OK;
}

static void p_release(void *ctx, gv_dptr p)
{
    struct gv_device *d = ctx;
    if (!d->broken && p)
        d->hip.hipFree((void *)(uintptr_t)p);
}

/* As in cuda.c: the copy runs on the null stream, the kernels on a
 * non-blocking one; wait for the copy before a kernel can read it. */
static int p_upload(void *ctx, gv_dptr dst, const void *src, size_t n, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipMemcpyHtoD((hipDeviceptr_t)(uintptr_t)dst, (void *)src, n), err);
    HIPC(d, hipStreamSynchronize(NULL), err);
    return GV_OK;
}

static int p_download(void *ctx, void *dst, gv_dptr src, size_t n, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipMemcpyDtoH(dst, (hipDeviceptr_t)(uintptr_t)src, n), err);
    return GV_OK;
}

/* A kernel of the module by name, cached (names are string constants). */
static int get_func(struct gv_device *d, const char *kernel, hipFunction_t *out,
                    struct gv_err *err)
{
    hipFunction_t f = NULL;
    for (int i = 0; i < d->nfn && !f; i++)
        if (strcmp(d->fn[i].name, kernel) == 0)
            f = d->fn[i].f;
    if (!f) {
        HIPC(d, hipModuleGetFunction(&f, d->mod, kernel), err);
        if (d->nfn < NFUNC) {
            d->fn[d->nfn].name = kernel;
            d->fn[d->nfn++].f = f;
        }
    }
    *out = f;
    return GV_OK;
}

static int p_launch(void *ctx, const char *kernel, unsigned grid, unsigned block, unsigned shmem,
                    void **args, struct gv_err *err)
{
    struct gv_device *d = ctx;
    hipFunction_t f = NULL;
    int rc = get_func(d, kernel, &f, err);
    if (rc)
        return rc;
    hipError_t r = d->hip.hipModuleLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, d->stream,
                                                args, NULL);
    if (r != hipSuccess) {
        if (sticky(r))
            d->broken = 1;
        hip_fail(&d->hip, r, err, "hipModuleLaunchKernel");
        return gv_err_prefix(err, "%s", kernel);
    }
    return GV_OK;
}

static int p_finish(void *ctx, struct gv_err *err)
{
    struct gv_device *d = ctx;
    double t0 = gv_now(), wait = 20e-6;
    for (;;) {
        hipError_t r = d->hip.hipStreamQuery(d->stream);
        if (r == hipSuccess)
            return GV_OK;
        if (r != hipErrorNotReady) {
            d->broken = 1;
            hip_fail(&d->hip, r, err, "hipStreamQuery");
            return gv_err_prefix(err, "the GPU faulted while running the case");
        }
        if (gv_now() - t0 > d->timeout) {
            d->broken = 1;
            return gv_err_set(err, GV_E_TIMEOUT,
                              "still running after %.0f s (GPUVET_CASE_TIMEOUT); the worker "
                              "process is replaced and the next case runs", d->timeout);
        }
        struct timespec ts = {0, (long)(wait * 1e9)};
        nanosleep(&ts, NULL);
        if (wait < 1e-3)
            wait *= 2;
    }
}

static int blas_gemm(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
                     enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (!d->have_blas)
        return gv_err_set(err, GV_E_UNSUPPORTED, "rocBLAS not loaded: %s", d->liberr[L_ROCBLAS]);
    int m = (int)c->n, n = (int)c->m, k = (int)c->k, bt = (int)c->batch;
    int64_t sa = c->k * c->n, sb = c->m * c->k, sc = c->m * c->n;
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    unsigned short one16 = 0x3c00, zero16 = 0;
    const void *alpha = &one32, *beta = &zero32;
    int ab, ct, comp;
    enum gv_dtype in = c->in_dtype;
    if (in == GV_F32 && c->compute_dtype == GV_F32 && cdt == GV_F32) {
        ab = ct = comp = rocblas_datatype_f32_r;
    } else if (in == GV_F64 && cdt == GV_F64) {
        ab = ct = comp = rocblas_datatype_f64_r, alpha = &one64, beta = &zero64;
    } else if ((in == GV_F16 || in == GV_BF16) && c->compute_dtype == GV_F32 && cdt == GV_F32) {
        ab = in == GV_F16 ? rocblas_datatype_f16_r : rocblas_datatype_bf16_r;
        ct = comp = rocblas_datatype_f32_r;
    } else if (in == GV_F16 && c->compute_dtype == GV_F16 && cdt == GV_F16) {
        ab = ct = comp = rocblas_datatype_f16_r, alpha = &one16, beta = &zero16;
    } else {
        return gv_err_set(err, GV_E_UNSUPPORTED, "no rocBLAS GEMM for %s inputs with %s compute",
                          gv_dtype_name(in), gv_dtype_name(c->compute_dtype));
    }
    void *o = (void *)(uintptr_t)out;
    rocblas_status st = d->rb.rocblas_gemm_strided_batched_ex(
        d->bh, rocblas_operation_none, rocblas_operation_none, m, n, k, alpha,
        (const void *)(uintptr_t)b, ab, m, sa, (const void *)(uintptr_t)a, ab, k, sb, beta, o, ct,
        m, sc, o, ct, m, sc, bt, comp, 0, 0, 0);
    if (st != 0) {
        const char *s = d->rb.rocblas_status_to_string ? d->rb.rocblas_status_to_string(st) : "";
        return gv_err_set(err, GV_E_DEVICE, "rocblas_gemm_strided_batched_ex: %s (%d)", s, st);
    }
    snprintf(impl, implsz, "rocblas_gemm_strided_batched_ex compute=%d", comp);
    return GV_OK;
}

/* hipBLASLt when chosen and it takes the case, else rocBLAS (lt.h). */
static int p_gemm(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
                  enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_device *d = ctx;
    return gv_lt_or_classic(&d->ltk, d->blas_route.use_lt, d->blas_route.mode, blas_gemm, d, c, a,
                            b, out, cdt, impl, implsz, err);
}

/* ---- MIOpen convolution ---- */

/* "miopenStatusBadParm" from the library, or from the header's list when the
 * library has no miopenGetErrorString. */
static const char *mi_status(const struct gv_api_miopen *a, miopenStatus_t st)
{
    static const char *const names[] = {
        "miopenStatusSuccess",       "miopenStatusNotInitialized",
        "miopenStatusInvalidValue",  "miopenStatusBadParm",
        "miopenStatusAllocFailed",   "miopenStatusInternalError",
        "miopenStatusNotImplemented", "miopenStatusUnknownError",
        "miopenStatusUnsupportedOp", "miopenStatusGpuOperationsSkipped",
        "miopenStatusVersionMismatch"};
    const char *s = a->miopenGetErrorString ? a->miopenGetErrorString(st) : NULL;
    if (s && *s)
        return s;
    return st >= 0 && st < (int)(sizeof names / sizeof names[0]) ? names[st] : "MIOpen error";
}

static const char *mi_algo_name(int algo)
{
    switch (algo) {
    case miopenConvolutionFwdAlgoGEMM: return "GEMM";
    case miopenConvolutionFwdAlgoDirect: return "Direct";
    case miopenConvolutionFwdAlgoFFT: return "FFT";
    case miopenConvolutionFwdAlgoWinograd: return "Winograd";
    case miopenConvolutionFwdAlgoImplicitGEMM: return "ImplicitGEMM";
    default: return "unknown";
    }
}

/* miopenDataType_t of a storage format; -1 when MIOpen's path does not take it. */
static int mi_dtype(enum gv_dtype t)
{
    switch (t) {
    case GV_F32: return miopenFloat;
    case GV_F16: return miopenHalf;
    case GV_BF16: return miopenBFloat16;
    default: return -1;
    }
}

/* The descriptors of one case: x NCHW, w KCRS, y NKPQ, cross-correlation with
 * the case's stride and padding, no dilation. */
struct mi_descs {
    miopenTensorDescriptor_t x, w, y;
    miopenConvolutionDescriptor_t conv;
};

static void mi_descs_free(const struct gv_api_miopen *a, struct mi_descs *m)
{
    if (m->conv)
        a->miopenDestroyConvolutionDescriptor(m->conv);
    if (m->y)
        a->miopenDestroyTensorDescriptor(m->y);
    if (m->w)
        a->miopenDestroyTensorDescriptor(m->w);
    if (m->x)
        a->miopenDestroyTensorDescriptor(m->x);
    memset(m, 0, sizeof *m);
}

#define MI(a, x, call)                                                                      \
    do {                                                                                     \
        *(call) = #x;                                                                        \
        miopenStatus_t st_ = (a)->x;                                                         \
        if (st_ != miopenStatusSuccess)                                                      \
            return st_;                                                                      \
    } while (0)

/* Creates and sets the descriptors; returns a MIOpen status and the call that
 * gave it. With miopenGetConvolutionForwardOutputDim (optional), MIOpen's own
 * output shape is put in dims[4] (else dims are left as they are). */
static miopenStatus_t mi_descs_make(const struct gv_api_miopen *a, const struct gv_case *c,
                                    int dt, struct mi_descs *m, int dims[4], const char **call)
{
    int P = (int)((c->h + 2 * c->pad - c->r) / c->stride + 1);
    int Q = (int)((c->w + 2 * c->pad - c->s) / c->stride + 1);
    MI(a, miopenCreateTensorDescriptor(&m->x), call);
    MI(a, miopenCreateTensorDescriptor(&m->w), call);
    MI(a, miopenCreateTensorDescriptor(&m->y), call);
    MI(a, miopenCreateConvolutionDescriptor(&m->conv), call);
    MI(a, miopenSet4dTensorDescriptor(m->x, dt, (int)c->n, (int)c->c, (int)c->h, (int)c->w),
       call);
    MI(a, miopenSet4dTensorDescriptor(m->w, dt, (int)c->k, (int)c->c, (int)c->r, (int)c->s),
       call);
    MI(a, miopenSet4dTensorDescriptor(m->y, dt, (int)c->n, (int)c->k, P, Q), call);
    MI(a, miopenInitConvolutionDescriptor(m->conv, miopenConvolution, (int)c->pad, (int)c->pad,
                                          (int)c->stride, (int)c->stride, 1, 1),
       call);
    if (a->miopenGetConvolutionForwardOutputDim)
        MI(a, miopenGetConvolutionForwardOutputDim(m->conv, m->x, m->w, &dims[0], &dims[1],
                                                   &dims[2], &dims[3]),
           call);
    return miopenStatusSuccess;
}

/* MIOpen's fastest forward algorithm for the case (miopenFindConvolution-
 * ForwardAlgorithm, which also runs it), then miopenConvolutionForward with
 * it, on the inputs as stored: fp32, fp16 or bf16 tensors, alpha = 1, beta = 0. */
static int p_conv_raw(void *ctx, const struct gv_case *c, gv_dptr x, gv_dptr w, gv_dptr y,
                      char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_device *d = ctx;
    const struct gv_api_miopen *a = &d->mi;
    if (!d->have_dnn)
        return gv_err_set(err, GV_E_UNSUPPORTED, "MIOpen unavailable: %s", d->liberr[L_MIOPEN]);
    int dt = mi_dtype(c->in_dtype);
    /* conv2d.tf32 (TF32 allowed): PyTorch on ROCm runs MIOpen in fp32 */
    int fp32ok = c->compute_dtype == GV_F32 ||
                 (c->compute_dtype == GV_TF32 && c->in_dtype == GV_F32);
    if (dt < 0 || !fp32ok)
        return gv_err_set(err, GV_E_UNSUPPORTED, "no MIOpen convolution for %s inputs with %s "
                          "compute", gv_dtype_name(c->in_dtype), gv_dtype_name(c->compute_dtype));
    int P = (int)((c->h + 2 * c->pad - c->r) / c->stride + 1);
    int Q = (int)((c->w + 2 * c->pad - c->s) / c->stride + 1);
    int dims[4] = {(int)c->n, (int)c->k, P, Q};
    struct mi_descs m = {0};
    const char *call = "";
    size_t ws = 0;
    gv_dptr wsp = 0;
    miopenConvAlgoPerf_t perf[4];
    int got = 0, rc = GV_OK;
    float one = 1, zero = 0;
    void *xp = (void *)(uintptr_t)x, *wp = (void *)(uintptr_t)w, *yp = (void *)(uintptr_t)y;
    miopenStatus_t st = mi_descs_make(a, c, dt, &m, dims, &call);
    if (st == miopenStatusSuccess &&
        (dims[0] != c->n || dims[1] != c->k || dims[2] != P || dims[3] != Q)) {
        rc = gv_err_set(err, GV_E_LIB, "miopenGetConvolutionForwardOutputDim: %dx%dx%dx%d, "
                        "gpuvet's NKPQ output is %lldx%lldx%dx%d", dims[0], dims[1], dims[2],
                        dims[3], (long long)c->n, (long long)c->k, P, Q);
        goto out;
    }
    if (st == miopenStatusSuccess) {
        call = "miopenConvolutionForwardGetWorkSpaceSize";
        st = a->miopenConvolutionForwardGetWorkSpaceSize(d->mh, m.w, m.x, m.conv, m.y, &ws);
    }
    if (st != miopenStatusSuccess)
        goto out;
    if (ws && (rc = p_alloc(d, ws, &wsp, err)))
        goto out;
    call = "miopenFindConvolutionForwardAlgorithm";
    memset(perf, 0, sizeof perf);
    st = a->miopenFindConvolutionForwardAlgorithm(d->mh, m.x, xp, m.w, wp, m.conv, m.y, yp, 4,
                                                  &got, perf, (void *)(uintptr_t)wsp, ws, false);
    if (st != miopenStatusSuccess)
        goto out;
    if (got < 1 || perf[0].memory > ws) {
        rc = gv_err_set(err, GV_E_LIB, "miopenFindConvolutionForwardAlgorithm: %d algorithm(s), "
                        "the first needs %zu bytes of workspace, %zu given", got,
                        got > 0 ? perf[0].memory : 0, ws);
        goto out;
    }
    call = "miopenConvolutionForward";
    st = a->miopenConvolutionForward(d->mh, &one, m.x, xp, m.w, wp, m.conv, perf[0].fwd_algo,
                                     &zero, m.y, yp, (void *)(uintptr_t)wsp, perf[0].memory);
    if (st == miopenStatusSuccess)
        snprintf(impl, implsz, "miopen fwd algo=%s (%s, best of %d found, workspace %zu bytes)",
                 mi_algo_name(perf[0].fwd_algo), d->lib[L_MIOPEN].version, got, perf[0].memory);
out:
    if (st != miopenStatusSuccess)
        rc = gv_err_set(err, GV_E_LIB, "%s: %s (%d)", call, mi_status(a, st), st);
    if (wsp) {
        struct gv_err ignore = {0};
        p_finish(d, &ignore); /* the workspace is in use until the stream is done */
        p_release(d, wsp);
    }
    mi_descs_free(a, &m);
    return rc;
}

/* What conv2d cases run on: "miopen 3.4.0" or the kernel and why. */
static void conv_route(const struct gv_device *d, char *out, size_t outsz)
{
    if (d->have_dnn)
        snprintf(out, outsz, "miopen %s", d->lib[L_MIOPEN].version[0] ? d->lib[L_MIOPEN].version
                                                                      : "(version unknown)");
    else
        snprintf(out, outsz, "gpuvet kernel (MIOpen unavailable: %s)", d->liberr[L_MIOPEN]);
}

/* ---- set-up ---- */

static void ctx_teardown(struct gv_device *d)
{
    gv_lt_stop(&d->ltk, p_release, d);
    if (d->mh)
        d->mi.miopenDestroy(d->mh);
    if (d->bh)
        d->rb.rocblas_destroy_handle(d->bh);
    if (d->mod && !d->broken)
        d->hip.hipModuleUnload(d->mod);
    if (d->stream && !d->broken)
        d->hip.hipStreamDestroy(d->stream);
    d->mh = NULL, d->bh = NULL, d->mod = NULL, d->stream = NULL, d->nfn = 0;
}

/* A MIOpen handle on the backend's stream; on failure conv2d falls back to the
 * kernel and liberr says why. */
static void mi_handle(struct gv_device *d)
{
    const struct gv_api_miopen *a = &d->mi;
    const char *call = "miopenCreateWithStream";
    miopenStatus_t st;
    if (a->miopenCreateWithStream) {
        st = a->miopenCreateWithStream(&d->mh, d->stream);
    } else if (a->miopenSetStream) {
        call = "miopenCreate";
        st = a->miopenCreate(&d->mh);
        if (st == miopenStatusSuccess) {
            call = "miopenSetStream";
            st = a->miopenSetStream(d->mh, d->stream);
        }
    } else {
        snprintf(d->liberr[L_MIOPEN], sizeof d->liberr[0], "%s has neither "
                 "miopenCreateWithStream nor miopenSetStream", d->lib[L_MIOPEN].path);
        d->have_dnn = 0;
        return;
    }
    if (st != miopenStatusSuccess) {
        snprintf(d->liberr[L_MIOPEN], sizeof d->liberr[0], "%s: %s (%d)", call, mi_status(a, st),
                 st);
        if (d->mh)
            a->miopenDestroy(d->mh);
        d->mh = NULL;
        d->have_dnn = 0;
    }
}

static int ctx_setup(struct gv_device *d, struct gv_err *err)
{
    HIPC(d, hipSetDevice(d->ordinal), err);
    HIPC(d, hipStreamCreateWithFlags(&d->stream, hipStreamNonBlocking), err);
    hipError_t r = d->hip.hipModuleLoadData(&d->mod, d->code.code);
    if (r != hipSuccess) {
        hip_fail(&d->hip, r, err, "hipModuleLoadData");
        return gv_err_prefix(err, "loading the %s code object for %s", d->code.compiler, d->arch);
    }
    if (d->have_blas) {
        rocblas_status st = d->rb.rocblas_create_handle(&d->bh);
        if (st == 0)
            st = d->rb.rocblas_set_stream(d->bh, d->stream);
        if (st != 0) {
            snprintf(d->liberr[L_ROCBLAS], sizeof d->liberr[0], "rocblas_create_handle: %d", st);
            d->have_blas = 0;
        }
    }
    /* PyTorch's workspace; the handle only now: without a device hipblasLtCreate exits */
    int lrc = gv_lt_start(&d->ltk, &d->blas_route, d->stream, p_alloc, d, "HIPBLASLT_WORKSPACE_SIZE",
                          76u << 20, d->liberr[L_HIPBLASLT], sizeof d->liberr[0], err);
    if (lrc)
        return lrc;
    /* major*100000 + minor*100 + patch (hipblaslt.cpp); needs the handle */
    int v = 0;
    if (d->ltk.handle && d->lt.hipblasLtGetVersion &&
        d->lt.hipblasLtGetVersion(d->ltk.handle, &v) == 0)
        snprintf(d->lib[L_HIPBLASLT].version, sizeof d->lib[0].version, "%d.%d.%d", v / 100000,
                 v / 100 % 1000, v % 100);
    if (d->have_dnn)
        mi_handle(d);
    return GV_OK;
}

/* gcnArchName without relying on the layout of hipDeviceProp_t (which changed
 * in ROCm 6): the first NUL-terminated "gfx<digits/hex>..." string after the
 * 256-byte name field. */
static void arch_from_props(const unsigned char *buf, size_t n, char *out, size_t outsz)
{
    out[0] = '\0';
    for (size_t i = 256; i + 4 < n; i++) {
        if (memcmp(buf + i, "gfx", 3) != 0 || (i > 0 && buf[i - 1] != 0))
            continue;
        size_t len = strnlen((const char *)buf + i, n - i);
        if (len >= 4 && len < outsz && len < 96) {
            memcpy(out, buf + i, len);
            out[len] = '\0';
            return;
        }
    }
}

/* The HIP runtime and hipRTC, as a pair: in HIP 5.x hipRTC lives inside
 * libamdhip64.so.5, from 6.0 in libhiprtc.so.N beside it. */
static int load_runtime(struct gv_vlib *lib, struct gv_api_hip *hip, struct gv_vlib *rlib,
                        struct gv_api_hiprtc *rtc, int *runtime, char *rtcerr, size_t rtcerrsz,
                        struct gv_err *err)
{
    int rc = gv_vlib_open(GV_LIB_HIP, lib, hip, err);
    if (rc)
        return rc;
    *runtime = 0;
    hipError_t r = hip->hipRuntimeGetVersion(runtime);
    if (r != hipSuccess)
        return hip_fail(hip, r, err, "hipRuntimeGetVersion");
    gv_hip_version_string(*runtime, lib->version, sizeof lib->version);
    struct gv_err e = {0};
    if (*runtime / 10000000 == 5)
        rc = gv_vlib_open_file(GV_LIB_HIPRTC, lib->path, rlib, rtc, &e);
    else
        rc = gv_vlib_open(GV_LIB_HIPRTC, rlib, rtc, &e);
    if (rc) {
        snprintf(rtcerr, rtcerrsz, "%s", e.msg);
    } else {
        int maj = 0, min = 0;
        rtc->hiprtcVersion(&maj, &min);
        snprintf(rlib->version, sizeof rlib->version, "%d.%d", maj, min);
    }
    return GV_OK;
}

static void load_optional(struct gv_device *d)
{
    struct gv_err e = {0};
    d->have_blas = gv_vlib_open(GV_LIB_ROCBLAS, &d->lib[L_ROCBLAS], &d->rb, &e) == GV_OK;
    if (!d->have_blas) {
        snprintf(d->liberr[L_ROCBLAS], sizeof d->liberr[0], "%s", e.msg);
    } else {
        size_t n = 0;
        if (d->rb.rocblas_get_version_string_size(&n) == 0 && n > 0 && n < 128)
            d->rb.rocblas_get_version_string(d->lib[L_ROCBLAS].version, n);
    }
    gv_err_clear(&e);
    d->have_lt = gv_vlib_open(GV_LIB_HIPBLASLT, &d->lib[L_HIPBLASLT], &d->lt, &e) == GV_OK;
    if (d->have_lt) {
        gv_lt_from_hipblaslt(&d->ltk, &d->lt);
        /* until a handle can ask it (ctx_setup): the file's version, libhipblaslt.so.1.1
         * for hipBLASLt 1.1.x (ROCm 7.1) */
        const char *so = strstr(d->lib[L_HIPBLASLT].path, ".so.");
        if (so && so[4])
            snprintf(d->lib[L_HIPBLASLT].version, sizeof d->lib[0].version, "%s (file)", so + 4);
    } else
        snprintf(d->liberr[L_HIPBLASLT], sizeof d->liberr[0], "%s", e.msg);
    gv_err_clear(&e);
    d->have_dnn = gv_vlib_open(GV_LIB_MIOPEN, &d->lib[L_MIOPEN], &d->mi, &e) == GV_OK;
    if (!d->have_dnn) {
        snprintf(d->liberr[L_MIOPEN], sizeof d->liberr[0], "%s", e.msg);
    } else {
        size_t a = 0, b = 0, c = 0;
        if (d->mi.miopenGetVersion(&a, &b, &c) == 0)
            snprintf(d->lib[L_MIOPEN].version, sizeof d->lib[0].version, "%zu.%zu.%zu", a, b, c);
    }
}

/* No device: hipGetDeviceCount fails with hipErrorNoDevice (100) on a machine
 * without an AMD GPU (or without /dev/kfd access). */
static int count_devices(const struct gv_api_hip *hip, const char *path, int *count,
                         struct gv_err *err)
{
    *count = 0;
    hipError_t r = hip->hipGetDeviceCount(count);
    if (r == hipErrorNoDevice || (r == hipSuccess && *count == 0)) {
        gv_err_set(err, GV_E_NOTFOUND, "no AMD GPU: hipGetDeviceCount: %s (%d)%s%s (%s)",
                   hip->hipGetErrorName(r), r, r ? ": " : "", r ? hip->hipGetErrorString(r) : "",
                   path);
        return GV_E_NOTFOUND;
    }
    if (r != hipSuccess) {
        hip_fail(hip, r, err, "hipGetDeviceCount");
        return gv_err_prefix(err, "%s", path);
    }
    return GV_OK;
}

static void close_dev(struct gv_device *d)
{
    if (!d)
        return;
    if (d->lib[L_HIP].handle && d->stream) {
        if (!d->broken)
            d->hip.hipStreamSynchronize(d->stream);
        ctx_teardown(d);
    }
    gv_rtc_out_free(&d->code);
    for (int i = L_N - 1; i >= 0; i--)
        gv_vlib_close(&d->lib[i]);
    free(d);
}

static int init_device(struct gv_device *d, struct gv_err *err)
{
    int count = 0, rc = count_devices(&d->hip, d->lib[L_HIP].path, &count, err);
    if (rc)
        return rc;
    if (d->ordinal >= count)
        return gv_err_set(err, GV_E_NOTFOUND, "hip:%d: only %d HIP device(s)", d->ordinal, count);
    HIPC(d, hipInit(0), err);
    HIPC(d, hipDeviceGetName(d->name, sizeof d->name - 1, d->ordinal), err);
    HIPC(d, hipDeviceTotalMem(&d->total_mem, d->ordinal), err);
    hipUUID uu;
    if (d->hip.hipDeviceGetUuid && d->hip.hipDeviceGetUuid(&uu, d->ordinal) == hipSuccess)
        kb_gpu_uuid_hip(uu.bytes, d->uuid); /* not 16 hex digits: none, uuid stays "" */
    size_t psz = 16384;
    unsigned char *props = calloc(1, psz);
    if (!props)
        return gv_err_set(err, GV_E_NOMEM, "device properties");
    hipError_t r = d->hip.hipGetDeviceProperties(props, d->ordinal);
    if (r == hipSuccess)
        arch_from_props(props, psz, d->arch, sizeof d->arch);
    free(props);
    if (r != hipSuccess)
        return hip_fail(&d->hip, r, err, "hipGetDeviceProperties");
    if (!d->arch[0])
        return gv_err_set(err, GV_E_DEVICE, "hip:%d: no gcnArchName in the device properties",
                          d->ordinal);
    return GV_OK;
}

static int open_dev(const char *spec, struct gv_device **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_device *d = calloc(1, sizeof *d);
    if (!d)
        return gv_err_set(err, GV_E_NOMEM, "hip backend");
    char *end;
    long v = strtol(spec && *spec ? spec : "0", &end, 10);
    int rc = GV_OK;
    if ((*end && *end != ',') || v < 0 || v > 1024)
        rc = gv_err_set(err, GV_E_USAGE, "--device hip:%s: expected a device number", spec);
    d->ordinal = (int)v;
    if (!rc)
        rc = load_runtime(&d->lib[L_HIP], &d->hip, &d->lib[L_HIPRTC], &d->rtc, &d->runtime,
                          d->liberr[L_HIPRTC], sizeof d->liberr[0], err);
    if (!rc)
        rc = init_device(d, err);
    if (!rc && !d->lib[L_HIPRTC].handle)
        rc = gv_err_set(err, GV_E_LIB, "hipRTC compiles gpuvet's kernels and is required: %s",
                        d->liberr[L_HIPRTC]);
    if (!rc) {
        load_optional(d);
        rc = gv_blas_choose(&d->blas_route, "hip", d->arch, d->runtime, d->have_lt,
                            d->liberr[L_HIPBLASLT], err);
    }
    if (!rc)
        rc = gv_hiprtc_compile(&d->rtc, d->arch, &d->code, err);
    d->timeout = gv_gpu_case_timeout();
    if (!rc)
        rc = ctx_setup(d, err);
    if (rc) {
        close_dev(d);
        return rc;
    }
    /* AMD LDS: 64 KiB per workgroup, less the kernels' static arrays. No fp8
     * through hipBLASLt yet (gfx942's fp8 is the FNUZ variant, not OCP e4m3):
     * fp8 GEMMs take the kernel, saying why. */
    d->ops = (struct gv_gpu_ops){p_alloc, p_release, p_upload, p_download, p_launch, p_finish,
                                 p_gemm,  NULL,      64 * 1024 - 2048, p_conv_raw, NULL,
                                 &hip_timing};
    *out = d;
    return GV_OK;
}

static json_t *describe(struct gv_device *d)
{
    json_t *o = json_object();
    if (!d)
        return o;
    char ver[64];
    gv_hip_version_string(d->runtime, ver, sizeof ver);
    json_object_set_new(o, "backend", json_string("hip"));
    json_object_set_new(o, "ordinal", json_integer(d->ordinal));
    json_object_set_new(o, "name", json_string(d->name));
    if (d->uuid[0])
        json_object_set_new(o, "uuid", json_string(d->uuid));
    json_object_set_new(o, "arch", json_string(d->arch));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)d->total_mem));
    json_object_set_new(o, "hip_runtime_version", json_integer(d->runtime));
    json_object_set_new(o, "hip_runtime", json_string(ver));
    json_t *libs = json_array();
    for (int i = 0; i < L_N; i++)
        json_array_append_new(libs, gv_vlib_describe(&d->lib[i], d->liberr[i]));
    json_object_set_new(o, "libraries", libs);
    json_object_set_new(o, "kernels", gv_rtc_out_describe(&d->code, NULL));
    json_object_set_new(o, "gemm", json_string(d->have_blas || d->blas_route.use_lt
                                                   ? d->blas_route.why
                                                   : "gpuvet kernel (fp32; rocBLAS not loaded)"));
    char route[1200];
    conv_route(d, route, sizeof route);
    json_object_set_new(o, "conv2d", json_string(route));
    json_object_set_new(o, "case_timeout_s", json_real(d->timeout));
    return o;
}

static int supports(struct gv_device *d, const struct gv_case *c, struct gv_err *why)
{
    return gv_gpu_supports(&d->ops, d->have_blas || d->blas_route.use_lt, c, why);
}

static int run(struct gv_device *d, const struct gv_case *c, const struct gv_buffer *in, int nin,
               struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err)
{
    /* after a sticky error the worker process is replaced (worker.c) */
    if (d->broken)
        return gv_err_set(err, GV_E_DEVICE, "%s: the HIP device is unusable after an earlier "
                          "fault", c->id);
    return gv_gpu_run(&d->ops, d, c, in, nin, out, info, err);
}

int gv_hip_fail(struct gv_device *d, hipError_t r, struct gv_err *err, const char *call)
{
    if (sticky(r))
        d->broken = 1;
    return hip_fail(&d->hip, r, err, call);
}

int gv_hip_func(struct gv_device *d, const char *name, hipFunction_t *f, struct gv_err *err)
{
    return get_func(d, name, f, err);
}

/* In-process backend: used inside the worker process (worker.h). */
const struct gv_backend gv_backend_hip_inproc = {"hip", open_dev, close_dev, describe, supports, run};

/* ---- probe without a device (see hip_probe.h) ---- */

/* Shapes whose MIOpen output dims the probe reports (n c h w k r s stride pad). */
static const long long probe_convs[][9] = {
    {2, 3, 33, 33, 8, 3, 3, 2, 1}, {2, 3, 64, 64, 17, 7, 7, 2, 1}, {1, 31, 17, 19, 13, 1, 1, 1, 0}};

/* First line: symbols, data-type sizes and output shapes (host-only calls). */
static json_t *mi_probe_host(const struct gv_vlib *lib, const struct gv_api_miopen *a)
{
    json_t *o = json_object(), *syms = json_object(), *bytes = json_object();
    json_object_set_new(o, "path", json_string(lib->path));
#define GV_MI_SYM(req, field, ...) json_object_set_new(syms, #field, json_boolean(a->field != NULL));
    GV_SYMS_MIOPEN(GV_MI_SYM)
#undef GV_MI_SYM
    json_object_set_new(o, "symbols", syms);
    static const struct { const char *name; int v; } types[] = {
        {"miopenHalf", miopenHalf}, {"miopenFloat", miopenFloat}, {"miopenInt32", miopenInt32},
        {"miopenInt8", miopenInt8}, {"miopenBFloat16", miopenBFloat16},
        {"miopenDouble", miopenDouble}};
    for (size_t i = 0; i < sizeof types / sizeof types[0] && a->miopenGetTensorNumBytes; i++) {
        miopenTensorDescriptor_t t = NULL;
        size_t n = 0;
        miopenStatus_t st = a->miopenCreateTensorDescriptor(&t);
        if (st == miopenStatusSuccess)
            st = a->miopenSet4dTensorDescriptor(t, types[i].v, 1, 1, 1, 1);
        if (st == miopenStatusSuccess)
            st = a->miopenGetTensorNumBytes(t, &n);
        json_object_set_new(bytes, types[i].name, st ? json_sprintf("%s (%d)", mi_status(a, st), st)
                                                     : json_integer((json_int_t)n));
        if (t)
            a->miopenDestroyTensorDescriptor(t);
    }
    json_object_set_new(o, "tensor_bytes", bytes);
    json_t *shapes = json_array();
    for (size_t i = 0; i < sizeof probe_convs / sizeof probe_convs[0]; i++) {
        const long long *v = probe_convs[i];
        struct gv_case c = {.op = GV_OP_CONV2D, .in_dtype = GV_F32, .out_dtype = GV_F32,
                            .compute_dtype = GV_F32, .n = v[0], .c = v[1], .h = v[2], .w = v[3],
                            .k = v[4], .r = v[5], .s = v[6], .stride = v[7], .pad = v[8]};
        struct mi_descs m = {0};
        int dims[4] = {-1, -1, -1, -1};
        const char *call = "";
        miopenStatus_t st = mi_descs_make(a, &c, miopenFloat, &m, dims, &call);
        json_t *r = json_object();
        json_object_set_new(r, "case", json_pack("[IIIIIIIII]", v[0], v[1], v[2], v[3], v[4],
                                                 v[5], v[6], v[7], v[8]));
        if (st)
            json_object_set_new(r, "error", json_sprintf("%s: %s (%d)", call, mi_status(a, st), st));
        else
            json_object_set_new(r, "output", json_pack("[iiii]", dims[0], dims[1], dims[2], dims[3]));
        mi_descs_free(a, &m);
        json_array_append_new(shapes, r);
    }
    json_object_set_new(o, "output_dims", shapes);
    return o;
}

static void put_line(int fd, json_t *o)
{
    char *s = gv_json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!s)
        return;
    size_t n = strlen(s), off = 0;
    s[n] = '\n'; /* json_dumps's NUL becomes the line end */
    while (off <= n) {
        ssize_t w = write(fd, s + off, n + 1 - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(s);
}

/* MIOpen's host-only checks, then miopenCreate's answer (child side). */
static void mi_probe_body(int fd)
{
    struct gv_vlib lib;
    struct gv_api_miopen a;
    struct gv_err e = {0};
    if (gv_vlib_open(GV_LIB_MIOPEN, &lib, &a, &e) != GV_OK) {
        put_line(fd, json_pack("{ss}", "error", e.msg));
        return;
    }
    put_line(fd, mi_probe_host(&lib, &a));
    miopenHandle_t h = NULL;
    miopenStatus_t st = a.miopenCreate(&h);
    put_line(fd, json_pack("{s{sisssb}}", "create", "status", st, "name", mi_status(&a, st),
                           "handle", h != NULL));
    if (st == miopenStatusSuccess && h)
        a.miopenDestroy(h);
}

/* hipBLASLt's host-only checks (gv_lt_probe), then hipblasLtCreate's answer
 * (child side: without a GPU hipBLASLt 7.1 ends the process there). */
static void lt_probe_body(int fd)
{
    struct gv_vlib lib;
    struct gv_api_hipblaslt a;
    struct gv_lt lt;
    struct gv_err e = {0};
    if (gv_vlib_open(GV_LIB_HIPBLASLT, &lib, &a, &e) != GV_OK) {
        put_line(fd, json_pack("{ss}", "error", e.msg));
        return;
    }
    gv_lt_from_hipblaslt(&lt, &a);
    json_t *o = gv_lt_probe(&lt);
    json_object_set_new(o, "path", json_string(lib.path));
    put_line(fd, o);
    void *h = NULL;
    int st = a.hipblasLtCreate(&h);
    put_line(fd, json_pack("{s{sisb}}", "create", "status", st, "handle", h != NULL));
    if (st == 0 && h)
        a.hipblasLtDestroy(h);
}

/* Runs body in a child process: a library that aborts or exits without a GPU
 * must not take the probe down. The child writes JSON lines, merged here into
 * one object, with how the child ended under "child". */
static json_t *child_probe(void (*body)(int fd))
{
    int fds[2];
    if (pipe(fds) != 0)
        return json_string("pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return json_string("fork failed");
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(120);
        body(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    char buf[65536];
    size_t used = 0;
    ssize_t r;
    while (used + 1 < sizeof buf && (r = read(fds[0], buf + used, sizeof buf - 1 - used)) > 0)
        used += (size_t)r;
    buf[used] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    json_t *o = json_object();
    char *line = buf, *nl;
    for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = '\0';
        json_t *part = json_loads(line, 0, NULL);
        if (part)
            json_object_update(o, part);
        json_decref(part);
    }
    if (WIFSIGNALED(status))
        json_object_set_new(o, "child", json_sprintf("killed by signal %d (%s)", WTERMSIG(status),
                                                     strsignal(WTERMSIG(status))));
    else
        json_object_set_new(o, "child", json_sprintf("exited %d", WEXITSTATUS(status)));
    return o;
}

json_t *gv_hip_probe(const char *const *archs, int *compiled, int *failed)
{
    struct gv_vlib lib, rlib;
    struct gv_api_hip hip;
    struct gv_api_hiprtc rtc;
    char rtcerr[1024] = "";
    int runtime = 0;
    struct gv_err err = {0};
    json_t *o = json_object();
    *compiled = *failed = 0;
    memset(&rlib, 0, sizeof rlib);
    if (load_runtime(&lib, &hip, &rlib, &rtc, &runtime, rtcerr, sizeof rtcerr, &err) != GV_OK) {
        json_object_set_new(o, "runtime", gv_vlib_describe(&lib, err.msg));
        return o;
    }
    json_object_set_new(o, "runtime", gv_vlib_describe(&lib, NULL));
    json_object_set_new(o, "hip_runtime_version", json_integer(runtime));
    /* optional: resolved where the runtime has it (HIP 5.2 and later) */
    json_object_set_new(o, "uuid_symbol", json_boolean(hip.hipDeviceGetUuid != NULL));
    int count = 0;
    gv_err_clear(&err);
    int rc = count_devices(&hip, lib.path, &count, &err);
    json_object_set_new(o, "devices", rc ? json_string(err.msg) : json_integer(count));
    json_object_set_new(o, "hiprtc", gv_vlib_describe(&rlib, rtcerr));
    json_t *arr = json_array();
    for (int i = 0; archs && archs[i] && rlib.handle; i++) {
        struct gv_rtc_out out;
        gv_err_clear(&err);
        json_t *r = json_object();
        json_object_set_new(r, "arch", json_string(archs[i]));
        if (gv_hiprtc_compile(&rtc, archs[i], &out, &err) == GV_OK) {
            (*compiled)++;
            json_object_set_new(r, "bytes", json_integer((json_int_t)out.size));
            json_t *missing = json_array();
            for (int k = 0; k < gv_kernel_entry_count; k++)
                if (!memmem(out.code, out.size, gv_kernel_entries[k],
                            strlen(gv_kernel_entries[k]) + 1))
                    json_array_append_new(missing, json_string(gv_kernel_entries[k]));
            json_object_set_new(r, "elf", json_boolean(out.size > 4 &&
                                                       memcmp(out.code, "\177ELF", 4) == 0));
            json_object_set_new(r, "missing_entries", missing);
            json_object_set_new(r, "compiler", json_string(out.compiler));
        } else {
            (*failed)++;
            json_object_set_new(r, "error", json_string(err.msg));
        }
        json_object_set_new(r, "log", json_string(out.log ? out.log : ""));
        gv_rtc_out_free(&out);
        json_array_append_new(arr, r);
    }
    json_object_set_new(o, "compile", arr);
    /* the math libraries the backend would use, resolved against their real files */
    struct gv_device *d = calloc(1, sizeof *d);
    if (d) {
        load_optional(d);
        json_t *libs = json_array();
        for (int i = L_ROCBLAS; i < L_N; i++) {
            d->lib[i].id = i == L_ROCBLAS ? GV_LIB_ROCBLAS
                           : i == L_HIPBLASLT ? GV_LIB_HIPBLASLT
                                              : GV_LIB_MIOPEN;
            json_array_append_new(libs, gv_vlib_describe(&d->lib[i], d->liberr[i]));
            gv_vlib_close(&d->lib[i]);
        }
        json_object_set_new(o, "libraries", libs);
        char route[1200];
        conv_route(d, route, sizeof route);
        json_object_set_new(o, "conv2d", json_string(route));
        /* the GEMM route the backend would take on these arches, by default */
        json_t *routes = json_object();
        for (int i = 0; archs && archs[i]; i++) {
            char why[256];
            gv_blas_decide(GV_BLAS_AUTO, "hip", archs[i], runtime, d->have_lt, why, sizeof why);
            json_object_set_new(routes, archs[i], json_string(why));
        }
        json_object_set_new(o, "gemm", routes);
        /* the backend's convolution entry with this library state: without
         * MIOpen it must decline (GV_E_UNSUPPORTED) so the kernel runs */
        struct gv_case c = {.op = GV_OP_CONV2D, .in_dtype = GV_F16, .out_dtype = GV_F16,
                            .compute_dtype = GV_F32, .n = 1, .c = 1, .h = 4, .w = 4, .k = 1,
                            .r = 3, .s = 3, .stride = 1, .pad = 1};
        if (!d->have_dnn) {
            char impl[256] = "";
            gv_err_clear(&err);
            int crc = p_conv_raw(d, &c, 0, 0, 0, impl, sizeof impl, &err);
            json_object_set_new(o, "conv_raw", json_pack("{siss}", "status", crc, "error",
                                                         err.msg));
        }
        free(d);
    }
    json_object_set_new(o, "miopen", child_probe(mi_probe_body));
    json_object_set_new(o, "hipblaslt", child_probe(lt_probe_body));
    gv_vlib_close(&rlib);
    gv_vlib_close(&lib);
    return o;
}

/* ---- timing primitives for gpuvet bench (gpu.h, struct gv_gpu_timing) ---- */

#define DPTR(p) ((hipDeviceptr_t)(uintptr_t)(p))

static int t_broken(void *ctx) { return ((struct gv_device *)ctx)->broken; }

static int t_kernel(void *ctx, const char *name, struct gv_err *err)
{
    hipFunction_t f;
    return get_func(ctx, name, &f, err);
}

static hipStream_t stream_of(struct gv_device *d, void *stream)
{
    return stream ? (hipStream_t)stream : d->stream;
}

static int t_event_create(void *ctx, void **ev, struct gv_err *err)
{
    struct gv_device *d = ctx;
    hipEvent_t e = NULL;
    HIPC(d, hipEventCreate(&e), err);
    *ev = e;
    return GV_OK;
}

static void t_event_destroy(void *ctx, void *ev)
{
    if (ev)
        ((struct gv_device *)ctx)->hip.hipEventDestroy((hipEvent_t)ev);
}

static int t_event_record(void *ctx, void *ev, void *stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipEventRecord((hipEvent_t)ev, stream_of(d, stream)), err);
    return GV_OK;
}

static int t_event_elapsed(void *ctx, void *e0, void *e1, double *sec, struct gv_err *err)
{
    struct gv_device *d = ctx;
    float ms = 0;
    HIPC(d, hipEventElapsedTime(&ms, (hipEvent_t)e0, (hipEvent_t)e1), err);
    *sec = ms * 1e-3;
    return GV_OK;
}

static int t_stream_create(void *ctx, void **stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    hipStream_t s = NULL;
    HIPC(d, hipStreamCreateWithFlags(&s, hipStreamNonBlocking), err);
    *stream = s;
    return GV_OK;
}

static void t_stream_destroy(void *ctx, void *stream)
{
    if (stream)
        ((struct gv_device *)ctx)->hip.hipStreamDestroy((hipStream_t)stream);
}

static int t_stream_sync(void *ctx, void *stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipStreamSynchronize(stream_of(d, stream)), err);
    return GV_OK;
}

static int t_copy(void *ctx, enum gv_copy kind, int async, gv_dptr dst, gv_dptr src, void *host,
                  size_t bytes, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (kind == GV_COPY_D2D && async)
        HIPC(d, hipMemcpyDtoDAsync(DPTR(dst), DPTR(src), bytes, d->stream), err);
    else if (kind == GV_COPY_H2D && async)
        HIPC(d, hipMemcpyHtoDAsync(DPTR(dst), host, bytes, d->stream), err);
    else if (kind == GV_COPY_D2H && async)
        HIPC(d, hipMemcpyDtoHAsync(host, DPTR(src), bytes, d->stream), err);
    else if (kind == GV_COPY_H2D)
        HIPC(d, hipMemcpyHtoD(DPTR(dst), host, bytes), err);
    else if (kind == GV_COPY_D2H)
        HIPC(d, hipMemcpyDtoH(host, DPTR(src), bytes), err);
    else
        return gv_err_set(err, GV_E_UNSUPPORTED, "no blocking device-to-device copy");
    return GV_OK;
}

static int t_host_alloc(void *ctx, size_t bytes, void **p, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipHostMalloc(p, bytes, hipHostMallocPortable), err);
    return GV_OK;
}

static void t_host_free(void *ctx, void *p)
{
    if (p)
        ((struct gv_device *)ctx)->hip.hipHostFree(p);
}

static int t_mem_free(void *ctx, size_t *free_bytes, struct gv_err *err)
{
    struct gv_device *d = ctx;
    size_t total = 0;
    HIPC(d, hipMemGetInfo(free_bytes, &total), err);
    return GV_OK;
}

static int t_memset_ff(void *ctx, gv_dptr p, size_t bytes, struct gv_err *err)
{
    struct gv_device *d = ctx;
    if (d->hip.hipMemsetD8Async)
        HIPC(d, hipMemsetD8Async(DPTR(p), 0xFF, bytes, d->stream), err);
    return GV_OK;
}

static int t_device_count(void *ctx)
{
    int n = 0;
    return ((struct gv_device *)ctx)->hip.hipGetDeviceCount(&n) == hipSuccess ? n : 1;
}

static int t_peer_access(void *ctx, int src, int dst, char *why, size_t whysz)
{
    struct gv_device *d = ctx;
    int can = 0;
    if (!d->hip.hipDeviceCanAccessPeer || d->hip.hipDeviceCanAccessPeer(&can, src, dst) != hipSuccess) {
        snprintf(why, whysz, "hipDeviceCanAccessPeer not available or failed");
        return -1;
    }
    snprintf(why, whysz, "hipDeviceCanAccessPeer(%d, %d) = %d", src, dst, can);
    return can ? 1 : 0;
}

static int t_pci_address(void *ctx, int i, char *buf, size_t bufsz)
{
    struct gv_device *d = ctx;
    char id[64];
    if (!d->hip.hipDeviceGetPCIBusId || d->hip.hipDeviceGetPCIBusId(id, sizeof id, i) != hipSuccess)
        return -1;
    gv_gpu_pci_address(id, buf, bufsz);
    return 0;
}

/* HIP addresses devices by ordinal: nothing to hold, only the entries to check. */
static int t_peer_hold(void *ctx, int dev, struct gv_err *err)
{
    struct gv_device *d = ctx;
    (void)dev;
    if (!d->hip.hipMemcpyPeerAsync || !d->hip.hipDeviceEnablePeerAccess)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s lacks hipMemcpyPeerAsync", d->lib[L_HIP].path);
    return GV_OK;
}

static void t_peer_release(void *ctx, int dev)
{
    (void)ctx, (void)dev;
}

static int t_use_device(void *ctx, int dev, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipSetDevice(dev < 0 ? d->ordinal : dev), err);
    return GV_OK;
}

static int t_peer_enable(void *ctx, int dst, struct gv_err *err)
{
    struct gv_device *d = ctx;
    hipError_t r = d->hip.hipDeviceEnablePeerAccess(dst, 0);
    if (r != hipSuccess && r != hipErrorPeerAccessAlreadyEnabled)
        return gv_hip_fail(d, r, err, "hipDeviceEnablePeerAccess");
    return GV_OK;
}

static int t_peer_copy(void *ctx, gv_dptr dst, int dst_dev, gv_dptr src, int src_dev,
                       size_t bytes, void *stream, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipMemcpyPeerAsync((void *)(uintptr_t)dst, dst_dev < 0 ? d->ordinal : dst_dev,
                               (const void *)(uintptr_t)src, src_dev < 0 ? d->ordinal : src_dev,
                               bytes, stream_of(d, stream)), err);
    return GV_OK;
}

static const struct gv_gpu_timing hip_timing = {
    "hip", "hipHostMalloc", "hipModuleLaunchKernel of an empty hipRTC kernel",
    "the HIP device is unusable after an earlier fault",
    t_broken, t_kernel, t_event_create, t_event_destroy, t_event_record, t_event_elapsed,
    t_stream_create, t_stream_destroy, t_stream_sync, t_copy, t_host_alloc, t_host_free,
    t_mem_free, t_memset_ff, t_device_count, t_peer_access, t_pci_address, t_peer_hold,
    t_peer_release, t_use_device, t_peer_enable, t_peer_copy,
};
