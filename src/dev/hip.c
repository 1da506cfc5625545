/* The HIP backend: libamdhip64 (module API), hipRTC for gpuvet's kernels,
 * rocBLAS for GEMM; hipBLASLt and MIOpen located and reported. All opened
 * at run time. Convolution runs gpuvet's direct kernel (MIOpen is reported,
 * not called). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/gpu.h"
#include "dev/worker.h"
#include "dev/hip_probe.h"

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
    int have_blas;
    int ordinal, runtime;
    hipStream_t stream;
    hipModule_t mod;
    rocblas_handle bh;
    struct { const char *name; hipFunction_t f; } fn[NFUNC];
    int nfn;
    char name[256];
    char arch[96]; /* gcnArchName, e.g. "gfx90a:sramecc+:xnack-" */
    size_t total_mem;
    struct gv_rtc_out code;
    double timeout;
    int broken;
    struct gv_gpu_ops ops;
};

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

static int p_upload(void *ctx, gv_dptr dst, const void *src, size_t n, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipMemcpyHtoD((hipDeviceptr_t)(uintptr_t)dst, (void *)src, n), err);
    return GV_OK;
}

static int p_download(void *ctx, void *dst, gv_dptr src, size_t n, struct gv_err *err)
{
    struct gv_device *d = ctx;
    HIPC(d, hipMemcpyDtoH(dst, (hipDeviceptr_t)(uintptr_t)src, n), err);
    return GV_OK;
}

static int p_launch(void *ctx, const char *kernel, unsigned grid, unsigned block, unsigned shmem,
                    void **args, struct gv_err *err)
{
    struct gv_device *d = ctx;
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

static int p_gemm(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
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

/* ---- set-up ---- */

static void ctx_teardown(struct gv_device *d)
{
    if (d->bh)
        d->rb.rocblas_destroy_handle(d->bh);
    if (d->mod && !d->broken)
        d->hip.hipModuleUnload(d->mod);
    if (d->stream && !d->broken)
        d->hip.hipStreamDestroy(d->stream);
    d->bh = NULL, d->mod = NULL, d->stream = NULL, d->nfn = 0;
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
    if (gv_vlib_open(GV_LIB_HIPBLASLT, &d->lib[L_HIPBLASLT], &d->lt, &e) != GV_OK)
        snprintf(d->liberr[L_HIPBLASLT], sizeof d->liberr[0], "%s", e.msg);
    gv_err_clear(&e);
    if (gv_vlib_open(GV_LIB_MIOPEN, &d->lib[L_MIOPEN], &d->mi, &e) != GV_OK) {
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
        rc = gv_hiprtc_compile(&d->rtc, d->arch, &d->code, err);
    }
    d->timeout = gv_gpu_case_timeout();
    if (!rc)
        rc = ctx_setup(d, err);
    if (rc) {
        close_dev(d);
        return rc;
    }
    /* AMD LDS: 64 KiB per workgroup, less the kernels' static arrays */
    d->ops = (struct gv_gpu_ops){p_alloc, p_release, p_upload, p_download, p_launch, p_finish,
                                 p_gemm,  NULL,      64 * 1024 - 2048};
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
    json_object_set_new(o, "arch", json_string(d->arch));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)d->total_mem));
    json_object_set_new(o, "hip_runtime_version", json_integer(d->runtime));
    json_object_set_new(o, "hip_runtime", json_string(ver));
    json_t *libs = json_array();
    for (int i = 0; i < L_N; i++)
        json_array_append_new(libs, gv_vlib_describe(&d->lib[i], d->liberr[i]));
    json_object_set_new(o, "libraries", libs);
    json_t *k = json_object();
    json_object_set_new(k, "compiler", json_string(d->code.compiler));
    json_object_set_new(k, "options", json_string(d->code.options));
    json_object_set_new(k, "bytes", json_integer((json_int_t)d->code.size));
    json_object_set_new(k, "log", json_string(d->code.log ? d->code.log : ""));
    json_object_set_new(o, "kernels", k);
    json_object_set_new(o, "gemm", json_string(d->have_blas ? "rocBLAS" : "gpuvet kernel (fp32)"));
    json_object_set_new(o, "conv2d", json_string("gpuvet kernel (MIOpen not called)"));
    json_object_set_new(o, "case_timeout_s", json_real(d->timeout));
    return o;
}

static int supports(struct gv_device *d, const struct gv_case *c, struct gv_err *why)
{
    return gv_gpu_supports(&d->ops, d->have_blas, c, why);
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

/* In-process backend: used inside the worker process (worker.h). */
const struct gv_backend gv_backend_hip_inproc = {"hip", open_dev, close_dev, describe, supports, run};

/* ---- probe without a device (see hip_probe.h) ---- */

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
        free(d);
    }
    gv_vlib_close(&rlib);
    gv_vlib_close(&lib);
    return o;
}
