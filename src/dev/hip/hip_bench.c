/* gpuvet bench on HIP (bench_dev.h): rocBLAS and hipBLASLt GEMMs, gpuvet's
 * STREAM kernels, the runtime's copies, an empty kernel, peer copies; the
 * CUDA backend's method (cuda_bench.c) with the HIP runtime's calls.
 *
 * Device-timed work is gated: a spin kernel holds the stream while the start
 * event, the `iters` repetitions and the end event are enqueued, so the events
 * time the GPU's work and not the host's launches. hipRTC's spin kernel counts
 * volatile reads (bench.cu: HIP has no %globaltimer, and clock64 does not build
 * for every arch), so at open the backend times a known count of them with
 * events and converts the gate's seconds into reads. Host-clock work (pageable
 * copies, launch-and-wait, the cost of issuing a launch) is timed with
 * CLOCK_MONOTONIC. Clocks, power and temperature come from the amdgpu driver's
 * hwmon files in sysfs (no vendor library needed). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/bench_dev.h"
#include "dev/bench_gpu.h"
#include "dev/hip/hip_dev.h"

#define LT_BENCH_WORKSPACE (76u << 20) /* PyTorch's hipBLASLt default, as hip.c */
#define SPIN_CALIBRATION_READS 20000
#define DEFAULT_GRID 1024 /* when the CU count cannot be read */

struct gv_bdev {
    struct gv_device *g;
    struct gv_bench_gpu gpu;
    hipEvent_t e0, e1;
    gv_dptr gate;               /* 16 bytes the spin kernel reads */
    double spin_read_s;         /* seconds per read of the spin kernel (calibrated) */
    int cus;                    /* compute units (0: unknown) */
    struct gv_lt lt;            /* gpuvet bench's own hipBLASLt handle and workspace */
    int have_lt;
    char lt_why[256];
    int ndev;
    char hwmon[512];            /* the device's hwmon directory, or "" */
    char hwmon_why[256];
};

struct gv_bw {
    struct gv_bw_spec s;
    double enq_per_iter;
    int gated;
    /* GEMM */
    struct gv_bench_gemm gm;
    int use_lt, ab, ct, comp;
    struct gv_lt_plan plan;
    double trial[GV_LT_PLAN_ALGOS];
    struct gv_bdev *bench;
    /* memory, copies */
    gv_dptr x, y, z, out;
    void *host;
    int host_pinned;
    unsigned grid, vgrid;
    /* peers */
    hipStream_t pstream;
    hipEvent_t pe0, pe1;
};

#define HB(b, call, err)                                                                     \
    do {                                                                                     \
        hipError_t r_ = (b)->g->hip.call;                                                    \
        if (r_ != hipSuccess)                                                                \
            return gv_hip_fail((b)->g, r_, (err), #call);                                    \
    } while (0)

#define DPTR(p) ((hipDeviceptr_t)(uintptr_t)(p))

/* ---- the entries bench needs ---- */

/* The runtime's entries that are optional in its symbol list but needed here. */
static int missing_bench_syms(const struct gv_api_hip *h, char *out, size_t outsz)
{
    const struct { const char *name; int have; } need[] = {
        {"hipEventCreate", h->hipEventCreate != NULL},
        {"hipEventDestroy", h->hipEventDestroy != NULL},
        {"hipEventRecord", h->hipEventRecord != NULL},
        {"hipEventElapsedTime", h->hipEventElapsedTime != NULL},
        {"hipHostMalloc", h->hipHostMalloc != NULL},
        {"hipHostFree", h->hipHostFree != NULL},
        {"hipMemcpyHtoDAsync", h->hipMemcpyHtoDAsync != NULL},
        {"hipMemcpyDtoHAsync", h->hipMemcpyDtoHAsync != NULL},
        {"hipMemcpyDtoDAsync", h->hipMemcpyDtoDAsync != NULL},
        {"hipMemGetInfo", h->hipMemGetInfo != NULL},
    };
    int n = 0;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!need[i].have && used + 1 < outsz) {
            int k = snprintf(out + used, outsz - used, "%s%s", n ? ", " : "", need[i].name);
            used += k > 0 ? (size_t)k : 0;
            n++;
        }
    return n;
}

static int need_bench_syms(struct gv_device *g, struct gv_err *err)
{
    char miss[512];
    if (missing_bench_syms(&g->hip, miss, sizeof miss))
        return gv_err_set(err, GV_E_LIB, "%s lacks entries gpuvet bench needs: %s",
                          g->lib[L_HIP].path, miss);
    return GV_OK;
}

/* Without a device: which libraries bench would use, and whether they have
 * every entry it needs (the stack is fine, only the GPU is absent). */
static void stack_note(char *out, size_t outsz)
{
    struct gv_vlib lib, rlib, rb, lt;
    struct gv_api_hip hip;
    struct gv_api_hiprtc rtc;
    struct gv_api_rocblas rba;
    struct gv_api_hipblaslt lta;
    struct gv_err e = {0};
    char miss[512];
    memset(&rlib, 0, sizeof rlib);
    if (gv_vlib_open(GV_LIB_HIP, &lib, &hip, &e) != GV_OK) {
        snprintf(out, outsz, "%s", e.msg);
        return;
    }
    int v = 0, nmiss = missing_bench_syms(&hip, miss, sizeof miss);
    hip.hipRuntimeGetVersion(&v);
    if (v / 10000000 == 5)
        gv_vlib_open_file(GV_LIB_HIPRTC, lib.path, &rlib, &rtc, &e);
    else
        gv_vlib_open(GV_LIB_HIPRTC, &rlib, &rtc, &e);
    int have_rb = gv_vlib_open(GV_LIB_ROCBLAS, &rb, &rba, &e) == GV_OK;
    int have_lt = gv_vlib_open(GV_LIB_HIPBLASLT, &lt, &lta, &e) == GV_OK;
    snprintf(out, outsz, "gpuvet bench's libraries: %s (HIP_VERSION %d): %s%s; hipRTC %s; "
             "rocBLAS %s%s; hipBLASLt %s", lib.path, v,
             nmiss ? "lacks " : "every entry gpuvet bench needs resolved", nmiss ? miss : "",
             rlib.handle ? rlib.path : "not found", have_rb ? rb.path : "not found",
             have_rb && !rba.rocblas_gemm_ex ? " (lacks rocblas_gemm_ex)" : "",
             have_lt ? lt.path : "not found");
    if (have_lt)
        gv_vlib_close(&lt);
    if (have_rb)
        gv_vlib_close(&rb);
    gv_vlib_close(&rlib);
    gv_vlib_close(&lib);
}

/* ---- open ---- */

static int start_lt(struct gv_bdev *b, struct gv_err *err)
{
    struct gv_device *g = b->g;
    if (!g->have_lt) {
        snprintf(b->lt_why, sizeof b->lt_why, "hipBLASLt not loaded: %s", g->liberr[L_HIPBLASLT]);
        return GV_OK;
    }
    gv_lt_from_hipblaslt(&b->lt, &g->lt);
    int st = b->lt.create(&b->lt.handle);
    if (st != 0) {
        snprintf(b->lt_why, sizeof b->lt_why, "hipblasLtCreate: %d", st);
        b->lt.handle = NULL;
        return GV_OK;
    }
    b->lt.stream = g->stream;
    b->lt.workspace_bytes = gv_lt_workspace_bytes("HIPBLASLT_WORKSPACE_SIZE", LT_BENCH_WORKSPACE);
    int rc = g->ops.alloc(g, b->lt.workspace_bytes, &b->lt.workspace, err);
    if (rc)
        return rc;
    b->have_lt = 1;
    return GV_OK;
}

static void b_close(struct gv_bdev *b)
{
    if (!b)
        return;
    struct gv_device *g = b->g;
    if (g) {
        g->hip.hipSetDevice(g->ordinal);
        if (b->have_lt) {
            b->lt.destroy(b->lt.handle);
            g->ops.release(g, b->lt.workspace);
        } else if (b->lt.handle) {
            b->lt.destroy(b->lt.handle);
        }
        if (b->gate)
            g->ops.release(g, b->gate);
        if (b->e0)
            g->hip.hipEventDestroy(b->e0);
        if (b->e1)
            g->hip.hipEventDestroy(b->e1);
        gv_backend_hip_inproc.close(g);
    }
    free(b);
}

static int device_int(struct gv_device *g, int attr, int *v)
{
    *v = 0;
    return g->hip.hipDeviceGetAttribute &&
           g->hip.hipDeviceGetAttribute(v, attr, g->ordinal) == hipSuccess && *v > 0;
}

static int spin(struct gv_bdev *b, double seconds, struct gv_err *err)
{
    long long reads = (long long)(seconds / b->spin_read_s);
    void *args[] = {&b->gate, &reads};
    return b->g->ops.launch(b->g, "gv_bench_spin", 1, 1, 0, args, err);
}

/* Seconds per read of the spin kernel: a known count timed with the events. */
static int calibrate_spin(struct gv_bdev *b, struct gv_err *err)
{
    struct gv_device *g = b->g;
    long long reads = SPIN_CALIBRATION_READS;
    void *args[] = {&b->gate, &reads};
    float ms = 0;
    HB(b, hipEventRecord(b->e0, g->stream), err);
    int rc = g->ops.launch(g, "gv_bench_spin", 1, 1, 0, args, err);
    if (rc)
        return rc;
    HB(b, hipEventRecord(b->e1, g->stream), err);
    if ((rc = g->ops.finish(g, err)))
        return rc;
    HB(b, hipEventElapsedTime(&ms, b->e0, b->e1), err);
    b->spin_read_s = ms > 0 ? ms * 1e-3 / SPIN_CALIBRATION_READS : 1e-6;
    return GV_OK;
}

static int start_events(struct gv_bdev *b, struct gv_err *err)
{
    struct gv_device *g = b->g;
    HB(b, hipSetDevice(g->ordinal), err);
    HB(b, hipEventCreate(&b->e0), err);
    HB(b, hipEventCreate(&b->e1), err);
    int rc = g->ops.alloc(g, 16, &b->gate, err);
    if (!rc)
        rc = g->ops.upload(g, b->gate, (float[4]){0, 0, 0, 0}, 16, err);
    return rc;
}

static void find_hwmon(struct gv_bdev *b);

static int b_open(const char *spec, struct gv_bdev **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_bdev *b = calloc(1, sizeof *b);
    if (!b)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    int rc = gv_backend_hip_inproc.open(spec, &b->g, err);
    if (rc) {
        free(b);
        if (rc == GV_E_NOTFOUND) {
            char note[768], was[sizeof err->msg];
            snprintf(was, sizeof was, "%s", err->msg);
            stack_note(note, sizeof note);
            gv_err_set(err, rc, "%s. %s", was, note);
        }
        return rc;
    }
    struct gv_device *g = b->g;
    b->spin_read_s = 1e-6;
    rc = need_bench_syms(g, err);
    if (!rc)
        rc = start_events(b, err);
    b->gpu = (struct gv_bench_gpu){&g->ops, g, DEFAULT_GRID};
    if (!rc && device_int(g, hipDeviceAttributeMultiprocessorCount, &b->cus))
        b->gpu.grid = (unsigned)(b->cus * 8);
    if (!rc)
        rc = calibrate_spin(b, err);
    if (!rc)
        rc = start_lt(b, err);
    if (!rc && g->hip.hipGetDeviceCount(&b->ndev) != hipSuccess)
        b->ndev = 1;
    if (rc) {
        b_close(b);
        return rc;
    }
    find_hwmon(b);
    *out = b;
    return GV_OK;
}

static json_t *b_describe(struct gv_bdev *b)
{
    json_t *o = gv_backend_hip_inproc.describe(b->g);
    json_object_set_new(o, "bench_timer",
                        json_sprintf("HIP events on the device, behind a spin kernel that holds "
                                     "the stream while the work is enqueued (%.3g ns per spin "
                                     "read, timed at open)", b->spin_read_s * 1e9));
    json_object_set_new(o, "bench_hipblaslt",
                        b->have_lt ? json_sprintf("own handle, workspace %zu bytes "
                                                  "(HIPBLASLT_WORKSPACE_SIZE, KiB, else 76 MiB)",
                                                  b->lt.workspace_bytes)
                                   : json_string(b->lt_why));
    json_object_set_new(o, "compute_units", b->cus ? json_integer(b->cus) : json_null());
    json_object_set_new(o, "bench_conditions",
                        b->hwmon[0] ? json_string(b->hwmon) : json_string(b->hwmon_why));
    return o;
}

static int b_count(struct gv_bdev *b) { return b->ndev; }

static int b_peer_access(struct gv_bdev *b, int src, int dst, char *why, size_t whysz)
{
    int can = 0;
    if (!b->g->hip.hipDeviceCanAccessPeer ||
        b->g->hip.hipDeviceCanAccessPeer(&can, src, dst) != hipSuccess) {
        snprintf(why, whysz, "hipDeviceCanAccessPeer not available or failed");
        return -1;
    }
    snprintf(why, whysz, "hipDeviceCanAccessPeer(%d, %d) = %d", src, dst, can);
    return can ? 1 : 0;
}

static int b_pci_address(struct gv_bdev *b, int i, char *buf, size_t bufsz)
{
    char id[64];
    if (!b->g->hip.hipDeviceGetPCIBusId ||
        b->g->hip.hipDeviceGetPCIBusId(id, sizeof id, i) != hipSuccess)
        return -1;
    gv_bench_pci_address(id, buf, bufsz);
    return 0;
}

/* ---- GEMM ---- */

static int gemm_types(struct gv_bw *w, struct gv_err *err)
{
    struct gv_bench_gemm *g = &w->gm;
    int lt = w->use_lt;
    switch (w->s.dtype) {
    case GV_F64:
        w->ab = w->ct = lt ? HIP_R_64F : rocblas_datatype_f64_r;
        w->comp = lt ? HIPBLAS_COMPUTE_64F : rocblas_datatype_f64_r;
        g->in_store = g->out_store = GV_F64;
        return GV_OK;
    case GV_F32:
        w->ab = w->ct = lt ? HIP_R_32F : rocblas_datatype_f32_r;
        w->comp = lt ? HIPBLAS_COMPUTE_32F : rocblas_datatype_f32_r;
        g->in_store = g->out_store = GV_F32;
        return GV_OK;
    case GV_TF32:
        if (!lt)
            return gv_err_set(err, GV_E_UNSUPPORTED, "rocblas_gemm_ex has no TF32 compute type "
                              "(hipBLASLt has HIPBLAS_COMPUTE_32F_FAST_TF32)");
        w->ab = w->ct = HIP_R_32F, w->comp = HIPBLAS_COMPUTE_32F_FAST_TF32;
        g->in_store = g->out_store = GV_F32;
        return GV_OK;
    case GV_F16:
    case GV_BF16:
        if (lt)
            w->ab = w->ct = w->s.dtype == GV_F16 ? HIP_R_16F : HIP_R_16BF, w->comp = HIPBLAS_COMPUTE_32F;
        else
            w->ab = w->ct = w->s.dtype == GV_F16 ? rocblas_datatype_f16_r : rocblas_datatype_bf16_r,
            w->comp = rocblas_datatype_f32_r;
        g->in_store = g->out_store = w->s.dtype;
        return GV_OK;
    case GV_F8E4M3:
        return gv_err_set(err, GV_E_UNSUPPORTED, "no fp8 GEMM on HIP yet: gpuvet's fp8 operands "
                          "are OCP e4m3 (e4m3fn), and gfx942's fp8 (rocBLAS rocblas_gemm_ex3, "
                          "hipBLASLt) is the FNUZ variant; gpuvet declares neither library's fp8 "
                          "types");
    default:
        return gv_err_set(err, GV_E_UNSUPPORTED, "no GEMM benchmark for %s",
                          gv_dtype_name(w->s.dtype));
    }
}

static const char *compute_name(const struct gv_bw *w)
{
    switch (w->s.dtype) {
    case GV_F64: return "COMPUTE_64F";
    case GV_TF32: return "COMPUTE_32F_FAST_TF32";
    default: return "COMPUTE_32F";
    }
}

static int memset_ff(void *ctx, gv_dptr p, size_t bytes, struct gv_err *err)
{
    struct gv_device *g = ctx;
    hipError_t r = g->hip.hipMemsetD8Async(DPTR(p), 0xFF, bytes, g->stream);
    return r == hipSuccess ? GV_OK : gv_hip_fail(g, r, err, "hipMemsetD8Async");
}

static int gemm_alloc(struct gv_bdev *b, struct gv_bw *w, struct gv_err *err)
{
    struct gv_device *g = b->g;
    size_t fr = 0, tot = 0;
    HB(b, hipMemGetInfo(&fr, &tot), err);
    w->gm.m = w->s.m, w->gm.n = w->s.n, w->gm.k = w->s.k;
    return gv_bench_gemm_alloc(&b->gpu, &w->gm, w->s.dtype, fr, w->s.rotate_bytes,
                               g->hip.hipMemsetD8Async ? memset_ff : NULL, err);
}

static int time_device(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec,
                       struct gv_err *err);

static int trial_time(void *ctx, int iters, double *sec, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    return time_device(w->bench, w, iters, sec, err);
}

static int trial_broken(void *ctx) { return ((struct gv_bw *)ctx)->bench->g->broken; }

static int lt_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                      struct gv_err *err)
{
    struct gv_lt_plan_spec ps = {w->ab, w->ct, w->comp,
                                 w->comp == HIPBLAS_COMPUTE_64F ? HIP_R_64F : HIP_R_32F,
                                 compute_name(w), w->s.n, w->s.m, w->s.k, 0, 0, GV_LT_PLAN_ALGOS};
    int rc = gv_lt_plan_make(&b->lt, &ps, &w->plan, err);
    w->bench = b;
    if (!rc)
        rc = gv_bench_pick_algo(&w->plan, w->trial, "hipBLASLt", trial_time, trial_broken, w, err);
    if (rc)
        return rc;
    const struct gv_lt_plan *p = &w->plan;
    snprintf(impl, implsz, "hipblasLtMatmul %s (the fastest in a trial of the heuristic's first "
             "%d algorithm(s): its #%d, workspace %zu of %zu bytes), %s operands, %d operand "
             "set(s)", compute_name(w), p->nalgo, p->pick + 1, p->ws_need[p->pick],
             b->lt.workspace_bytes, gv_dtype_name(w->gm.in_store), w->gm.nsets);
    return GV_OK;
}

static int gemm_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                        struct gv_err *err)
{
    struct gv_device *g = b->g;
    w->use_lt = strcmp(w->s.route, "hipblaslt") == 0;
    if (!w->use_lt && strcmp(w->s.route, "rocblas") != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "route %s is not a HIP GEMM route", w->s.route);
    int rc = gemm_types(w, err);
    if (rc)
        return rc;
    if (w->use_lt && !b->have_lt)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s", b->lt_why);
    if (!w->use_lt && !g->have_blas)
        return gv_err_set(err, GV_E_UNSUPPORTED, "rocBLAS not loaded: %s", g->liberr[L_ROCBLAS]);
    if (!w->use_lt && !g->rb.rocblas_gemm_ex)
        return gv_err_set(err, GV_E_LIB, "%s lacks rocblas_gemm_ex", g->lib[L_ROCBLAS].path);
    if ((rc = gemm_alloc(b, w, err)))
        return rc;
    if (w->use_lt)
        return lt_prepare(b, w, impl, implsz, err);
    snprintf(impl, implsz, "rocblas_gemm_ex %s (rocblas_gemm_algo_standard), %s operands, %d "
             "operand set(s)", compute_name(w), gv_dtype_name(w->gm.in_store), w->gm.nsets);
    return GV_OK;
}

/* Column-major C^T(n x m) = W(n x k, op T of k x n) . X^T(k x m): row-major C = X.W^T. */
static int gemm_once(struct gv_bdev *b, struct gv_bw *w, int set, struct gv_err *err)
{
    struct gv_device *g = b->g;
    const struct gv_bench_gemm *gm = &w->gm;
    if (w->use_lt)
        return gv_lt_plan_run(&b->lt, &w->plan, gm->w[set], gm->a[set], gm->c[set], err);
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    const void *alpha = &one32, *beta = &zero32;
    if (w->comp == rocblas_datatype_f64_r)
        alpha = &one64, beta = &zero64;
    int m = (int)w->s.n, n = (int)w->s.m, k = (int)w->s.k;
    void *c = (void *)(uintptr_t)gm->c[set];
    rocblas_status st = g->rb.rocblas_gemm_ex(
        g->bh, rocblas_operation_transpose, rocblas_operation_none, m, n, k, alpha,
        (const void *)(uintptr_t)gm->w[set], w->ab, k, (const void *)(uintptr_t)gm->a[set], w->ab,
        k, beta, c, w->ct, m, c, w->ct, m, w->comp, 0, 0, 0);
    if (st != 0) {
        const char *s = g->rb.rocblas_status_to_string ? g->rb.rocblas_status_to_string(st) : "";
        return gv_err_set(err, GV_E_DEVICE, "rocblas_gemm_ex (%s): %s (%d)", compute_name(w), s, st);
    }
    return GV_OK;
}

/* Allowed |C - ref| / sum|a||w|: the output's rounding plus the accumulation's. */
static double gemm_tol(const struct gv_bw *w)
{
    switch (w->s.dtype) {
    case GV_F64: return 1e-12;
    case GV_F32: return 1e-5;
    default: return 2e-2;
    }
}

/* ---- memory, copies, launches ---- */

static const char *const stream_kernel[] = {"gv_bench_copy", "gv_bench_scale", "gv_bench_add",
                                            "gv_bench_triad", "gv_bench_read"};

static int stream_prepare(struct gv_bdev *b, struct gv_bw *w, long long n, char *impl,
                          size_t implsz, struct gv_err *err)
{
    struct gv_device *g = b->g;
    int rc;
    if ((rc = g->ops.alloc(g, w->s.bytes, &w->y, err)) ||
        (rc = g->ops.alloc(g, w->s.bytes, &w->z, err)) ||
        (rc = g->ops.alloc(g, (size_t)w->grid * 256 * 4, &w->out, err)) ||
        (rc = gv_bench_iota(&b->gpu, w->y, n, 2.0f, err)) ||
        (rc = gv_bench_iota(&b->gpu, w->z, n, 3.0f, err)))
        return rc;
    long long vb = (n / 4 + 255) / 256;
    w->vgrid = vb > 0x7fffffff ? 0x7fffffffu : (unsigned)vb;
    if (w->s.stream == GV_ST_READ)
        snprintf(impl, implsz, "gpuvet kernel %s, 16-byte accesses, one wave of %u blocks of 256",
                 stream_kernel[w->s.stream], w->grid);
    else
        snprintf(impl, implsz, "gpuvet kernel %s, 16-byte accesses, a thread per access (%u "
                 "blocks of 256)", stream_kernel[w->s.stream], w->vgrid);
    return GV_OK;
}

static int host_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                        struct gv_err *err)
{
    if (w->s.pinned) {
        HB(b, hipHostMalloc(&w->host, w->s.bytes, hipHostMallocPortable), err);
        w->host_pinned = 1;
    } else if (!(w->host = malloc(w->s.bytes))) {
        return gv_err_set(err, GV_E_NOMEM, "%zu bytes of host memory", w->s.bytes);
    }
    gv_bench_host_pattern(w->host, w->s.bytes);
    snprintf(impl, implsz, "%s, %s host memory",
             w->s.kind == GV_BW_H2D ? (w->s.pinned ? "hipMemcpyHtoDAsync" : "hipMemcpyHtoD")
                                    : (w->s.pinned ? "hipMemcpyDtoHAsync" : "hipMemcpyDtoH"),
             w->s.pinned ? "pinned (hipHostMalloc)" : "pageable (malloc)");
    return GV_OK;
}

static int mem_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                       struct gv_err *err)
{
    struct gv_device *g = b->g;
    size_t bytes = w->s.bytes & ~(size_t)63;
    if (bytes < 64)
        return gv_err_set(err, GV_E_USAGE, "a memory benchmark needs at least 64 bytes");
    w->s.bytes = bytes;
    long long n = (long long)(bytes / 4);
    w->grid = b->gpu.grid;
    int rc = g->ops.alloc(g, bytes, &w->x, err);
    if (!rc)
        rc = gv_bench_iota(&b->gpu, w->x, n, 1.0f, err);
    if (!rc && w->s.kind == GV_BW_STREAM)
        rc = stream_prepare(b, w, n, impl, implsz, err);
    if (!rc && w->s.kind == GV_BW_D2D) {
        rc = g->ops.alloc(g, bytes, &w->y, err);
        snprintf(impl, implsz, "hipMemcpyDtoDAsync");
    }
    if (!rc && (w->s.kind == GV_BW_H2D || w->s.kind == GV_BW_D2H))
        rc = host_prepare(b, w, impl, implsz, err);
    return rc ? rc : g->ops.finish(g, err);
}

static int launch_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                          struct gv_err *err)
{
    hipFunction_t f;
    int rc = gv_hip_func(b->g, "gv_bench_empty", &f, err);
    if (rc)
        return rc;
    static const char *const how[] = {"back to back, device events", "launch and wait, host clock",
                                      "issue only, host clock"};
    snprintf(impl, implsz, "hipModuleLaunchKernel of an empty hipRTC kernel <<<1,1>>>, %s",
             how[w->s.launch]);
    return GV_OK;
}

/* A buffer of bytes on device dev (hipMalloc allocates on the current device). */
static int alloc_on(struct gv_bdev *b, int dev, size_t bytes, gv_dptr *p, struct gv_err *err)
{
    void *dp = NULL;
    HB(b, hipSetDevice(dev), err);
    HB(b, hipMalloc(&dp, bytes), err);
    *p = (gv_dptr)(uintptr_t)dp;
    return GV_OK;
}

static int peer_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                        struct gv_err *err)
{
    struct gv_device *g = b->g;
    int src = w->s.peer_src, dst = w->s.peer_dst, rc;
    if (!g->hip.hipMemcpyPeerAsync || !g->hip.hipDeviceEnablePeerAccess)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s lacks hipMemcpyPeerAsync", g->lib[L_HIP].path);
    char why[128];
    int can = b_peer_access(b, src, dst, why, sizeof why);
    if ((rc = alloc_on(b, dst, w->s.bytes, &w->y, err)) ||
        (rc = alloc_on(b, src, w->s.bytes, &w->x, err)))
        return rc;
    float *pat = malloc(w->s.bytes);
    if (!pat)
        return gv_err_set(err, GV_E_NOMEM, "%zu bytes of host memory", w->s.bytes);
    for (long long i = 0; i < (long long)(w->s.bytes / 4); i++)
        pat[i] = (float)(i & 0xFFFFF) + 1.0f;
    hipError_t up = g->hip.hipMemcpyHtoD(DPTR(w->x), pat, w->s.bytes);
    free(pat);
    if (up != hipSuccess)
        return gv_hip_fail(g, up, err, "hipMemcpyHtoD");
    if (can == 1) {
        hipError_t r = g->hip.hipDeviceEnablePeerAccess(dst, 0);
        if (r != hipSuccess && r != hipErrorPeerAccessAlreadyEnabled)
            return gv_hip_fail(g, r, err, "hipDeviceEnablePeerAccess");
    }
    HB(b, hipStreamCreateWithFlags(&w->pstream, hipStreamNonBlocking), err);
    HB(b, hipEventCreate(&w->pe0), err);
    HB(b, hipEventCreate(&w->pe1), err);
    snprintf(impl, implsz, "hipMemcpyPeerAsync %d -> %d (%s)", src, dst,
             can == 1 ? "peer access enabled" : "no peer access: staged through the host");
    return GV_OK;
}

static void release_peer(struct gv_bdev *b, struct gv_bw *w)
{
    struct gv_device *g = b->g;
    g->hip.hipSetDevice(w->s.peer_src);
    if (w->pstream)
        g->hip.hipStreamDestroy(w->pstream);
    if (w->pe0)
        g->hip.hipEventDestroy(w->pe0);
    if (w->pe1)
        g->hip.hipEventDestroy(w->pe1);
    if (w->x)
        g->hip.hipFree((void *)(uintptr_t)w->x);
    g->hip.hipSetDevice(w->s.peer_dst);
    if (w->y)
        g->hip.hipFree((void *)(uintptr_t)w->y);
    w->x = w->y = 0;
    g->hip.hipSetDevice(g->ordinal);
}

static void b_release(struct gv_bdev *b, struct gv_bw *w)
{
    if (!w)
        return;
    struct gv_device *g = b->g;
    if (!g->broken) {
        g->hip.hipSetDevice(g->ordinal);
        if (w->use_lt)
            gv_lt_plan_free(&b->lt, &w->plan);
        gv_bench_gemm_free(&b->gpu, &w->gm);
        if (w->s.kind == GV_BW_PEER)
            release_peer(b, w);
        g->ops.release(g, w->x);
        g->ops.release(g, w->y);
        g->ops.release(g, w->z);
        g->ops.release(g, w->out);
    }
    if (w->host_pinned)
        g->hip.hipHostFree(w->host);
    else
        free(w->host);
    free(w);
}

static int b_prepare(struct gv_bdev *b, const struct gv_bw_spec *s, struct gv_bw **out, char *impl,
                     size_t implsz, struct gv_err *err)
{
    *out = NULL;
    if (b->g->broken)
        return gv_err_set(err, GV_E_DEVICE, "the HIP device is unusable after an earlier fault");
    struct gv_bw *w = calloc(1, sizeof *w);
    if (!w)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    w->s = *s;
    w->enq_per_iter = 20e-6;
    b->g->hip.hipSetDevice(b->g->ordinal);
    int rc;
    switch (s->kind) {
    case GV_BW_GEMM: rc = gemm_prepare(b, w, impl, implsz, err); break;
    case GV_BW_LAUNCH: rc = launch_prepare(b, w, impl, implsz, err); break;
    case GV_BW_PEER: rc = peer_prepare(b, w, impl, implsz, err); break;
    default: rc = mem_prepare(b, w, impl, implsz, err); break;
    }
    b->g->hip.hipSetDevice(b->g->ordinal);
    if (rc) {
        b_release(b, w);
        return rc;
    }
    *out = w;
    return GV_OK;
}

/* ---- timing ---- */

/* One repetition, enqueued on the stream (asynchronous). */
static int enqueue(struct gv_bdev *b, struct gv_bw *w, int i, struct gv_err *err)
{
    struct gv_device *g = b->g;
    long long nn = (long long)(w->s.bytes / 16);
    float sc = 3.0f;
    switch (w->s.kind) {
    case GV_BW_GEMM:
        return gemm_once(b, w, i % w->gm.nsets, err);
    case GV_BW_STREAM: {
        void *copy[] = {&w->x, &w->z, &nn}, *scale[] = {&w->y, &w->z, &sc, &nn};
        void *add[] = {&w->x, &w->y, &w->z, &nn}, *triad[] = {&w->x, &w->y, &w->z, &sc, &nn};
        void *rd[] = {&w->x, &w->out, &nn};
        void **args[] = {copy, scale, add, triad, rd};
        return g->ops.launch(g, stream_kernel[w->s.stream],
                             w->s.stream == GV_ST_READ ? w->grid : w->vgrid, 256, 0,
                             args[w->s.stream], err);
    }
    case GV_BW_D2D:
        HB(b, hipMemcpyDtoDAsync(DPTR(w->y), DPTR(w->x), w->s.bytes, g->stream), err);
        return GV_OK;
    case GV_BW_H2D:
        HB(b, hipMemcpyHtoDAsync(DPTR(w->x), w->host, w->s.bytes, g->stream), err);
        return GV_OK;
    case GV_BW_D2H:
        HB(b, hipMemcpyDtoHAsync(w->host, DPTR(w->x), w->s.bytes, g->stream), err);
        return GV_OK;
    case GV_BW_LAUNCH:
        return g->ops.launch(g, "gv_bench_empty", 1, 1, 0, NULL, err);
    case GV_BW_PEER:
        HB(b, hipMemcpyPeerAsync((void *)(uintptr_t)w->y, w->s.peer_dst,
                                 (const void *)(uintptr_t)w->x, w->s.peer_src, w->s.bytes,
                                 w->pstream), err);
        return GV_OK;
    }
    return GV_OK;
}

/* The work on the host clock, each repetition waited for (pageable copies,
 * launch and wait) or not (issuing only; the wait after is not timed). */
static int time_host(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec,
                     struct gv_err *err)
{
    struct gv_device *g = b->g;
    int issue_only = w->s.kind == GV_BW_LAUNCH && w->s.launch == GV_LAUNCH_ENQUEUE;
    double t = 0;
    for (int i = 0; i < iters; i++) {
        double t0 = gv_bench_now();
        int rc;
        if (w->s.kind == GV_BW_H2D) {
            HB(b, hipMemcpyHtoD(DPTR(w->x), w->host, w->s.bytes), err);
        } else if (w->s.kind == GV_BW_D2H) {
            HB(b, hipMemcpyDtoH(w->host, DPTR(w->x), w->s.bytes), err);
        } else {
            if ((rc = enqueue(b, w, i, err)))
                return rc;
            if (!issue_only)
                HB(b, hipStreamSynchronize(g->stream), err);
        }
        t += gv_bench_now() - t0;
    }
    *sec = t;
    return issue_only ? g->ops.finish(g, err) : GV_OK;
}

/* The gate's calls (gv_bench_gated_time) on a piece of work. */
static int g_spin(void *ctx, double seconds, struct gv_err *err)
{
    return spin(((struct gv_bw *)ctx)->bench, seconds, err);
}

static int g_mark(void *ctx, int end, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    struct gv_bdev *b = w->bench;
    int peer = w->s.kind == GV_BW_PEER;
    hipEvent_t e = end ? (peer ? w->pe1 : b->e1) : (peer ? w->pe0 : b->e0);
    HB(b, hipEventRecord(e, peer ? w->pstream : b->g->stream), err);
    return GV_OK;
}

static int g_enqueue(void *ctx, int i, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    return enqueue(w->bench, w, i, err);
}

/* The backend's own stream under the case timeout, or the peer one. */
static int g_wait(void *ctx, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    struct gv_bdev *b = w->bench;
    if (w->s.kind != GV_BW_PEER)
        return b->g->ops.finish(b->g, err);
    HB(b, hipStreamSynchronize(w->pstream), err);
    return GV_OK;
}

static int g_elapsed(void *ctx, double *sec, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    struct gv_bdev *b = w->bench;
    float ms = 0;
    int peer = w->s.kind == GV_BW_PEER;
    HB(b, hipEventElapsedTime(&ms, peer ? w->pe0 : b->e0, peer ? w->pe1 : b->e1), err);
    *sec = ms * 1e-3;
    return GV_OK;
}

/* Device events behind the gate (bench_gpu.h). */
static int time_device(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec,
                       struct gv_err *err)
{
    w->bench = b;
    struct gv_bench_gate g = {w, w->s.kind == GV_BW_PEER ? NULL : g_spin, g_mark, g_enqueue,
                              g_wait, g_elapsed};
    return gv_bench_gated_time(&g, iters, &w->enq_per_iter, &w->gated, sec, err);
}

static int b_time(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec, struct gv_err *err)
{
    struct gv_device *g = b->g;
    if (g->broken)
        return gv_err_set(err, GV_E_DEVICE, "the HIP device is unusable after an earlier fault");
    g->hip.hipSetDevice(w->s.kind == GV_BW_PEER ? w->s.peer_src : g->ordinal);
    int host = ((w->s.kind == GV_BW_H2D || w->s.kind == GV_BW_D2H) && !w->s.pinned) ||
               (w->s.kind == GV_BW_LAUNCH && w->s.launch != GV_LAUNCH_BACK_TO_BACK);
    int rc = host ? time_host(b, w, iters, sec, err) : time_device(b, w, iters, sec, err);
    g->hip.hipSetDevice(g->ordinal);
    return rc;
}

/* ---- checks ---- */

static int b_check(struct gv_bdev *b, struct gv_bw *w, int *ok, char *what, size_t whatsz,
                   struct gv_err *err)
{
    struct gv_device *g = b->g;
    if (g->broken)
        return gv_err_set(err, GV_E_DEVICE, "the HIP device is unusable after an earlier fault");
    g->hip.hipSetDevice(g->ordinal);
    struct gv_bench_mem m = {w->s.kind, w->s.stream, w->s.bytes, w->x, w->y, w->z, w->out,
                             w->host, w->grid};
    int rc = gv_bench_test_corrupt(&b->gpu, w->s.kind == GV_BW_GEMM ? &w->gm : NULL, &m, err);
    if (rc)
        return rc;
    if (w->s.kind == GV_BW_GEMM)
        return gv_bench_gemm_check(&b->gpu, &w->gm, gemm_tol(w), ok, what, whatsz, err);
    if (w->s.kind == GV_BW_LAUNCH) {
        *ok = 1;
        snprintf(what, whatsz, "an empty kernel: the stream completed without an error");
        return GV_OK;
    }
    if (w->s.kind == GV_BW_PEER)
        g->hip.hipSetDevice(w->s.peer_dst);
    rc = gv_bench_mem_check(&b->gpu, &m, ok, what, whatsz, err);
    g->hip.hipSetDevice(g->ordinal);
    return rc;
}

/* ---- conditions: the amdgpu driver's hwmon files ---- */

/* /sys/bus/pci/devices/ADDR/hwmon/hwmonN of the device, or why not. */
static void find_hwmon(struct gv_bdev *b)
{
    char pci[64], dir[256];
    if (b_pci_address(b, b->g->ordinal, pci, sizeof pci) != 0) {
        snprintf(b->hwmon_why, sizeof b->hwmon_why, "not collected: hipDeviceGetPCIBusId failed");
        return;
    }
    snprintf(dir, sizeof dir, "/sys/bus/pci/devices/%s/hwmon", pci);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "hwmon", 5) == 0) {
            snprintf(b->hwmon, sizeof b->hwmon, "%s/%s", dir, e->d_name);
            break;
        }
    if (d)
        closedir(d);
    if (!b->hwmon[0])
        snprintf(b->hwmon_why, sizeof b->hwmon_why, "not collected: no hwmon directory under %s",
                 dir);
}

/* The number in file NAME of the hwmon directory, or -1. */
static double hwmon_value(const struct gv_bdev *b, const char *name)
{
    char path[640];
    snprintf(path, sizeof path, "%s/%s", b->hwmon, name);
    FILE *f = fopen(path, "r");
    double v = -1;
    if (f) {
        if (fscanf(f, "%lf", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static void put_scaled(json_t *o, const char *key, double v, double scale)
{
    if (v >= 0)
        json_object_set_new(o, key, json_real(v * scale));
}

static json_t *b_conditions(struct gv_bdev *b)
{
    json_t *o = json_object();
    if (!b->hwmon[0]) {
        json_object_set_new(o, "not_collected", json_string(b->hwmon_why));
        return o;
    }
    /* hwmon units (Documentation/hwmon/sysfs-interface): Hz, microwatts, millidegrees;
     * amdgpu: freq1 = sclk, freq2 = mclk, temp1 = edge (temp2 junction, temp3 memory) */
    put_scaled(o, "sm_clock_mhz", hwmon_value(b, "freq1_input"), 1e-6);
    put_scaled(o, "memory_clock_mhz", hwmon_value(b, "freq2_input"), 1e-6);
    double p = hwmon_value(b, "power1_average");
    put_scaled(o, "power_w", p >= 0 ? p : hwmon_value(b, "power1_input"), 1e-6);
    put_scaled(o, "power_limit_w", hwmon_value(b, "power1_cap"), 1e-6);
    put_scaled(o, "temperature_c", hwmon_value(b, "temp1_input"), 1e-3);
    put_scaled(o, "temperature_junction_c", hwmon_value(b, "temp2_input"), 1e-3);
    json_object_set_new(o, "source", json_string(b->hwmon));
    return o;
}

static json_t *b_facts(struct gv_bdev *b, struct gv_bw *w)
{
    (void)b;
    return w->use_lt ? gv_bench_algo_facts(&w->s, &w->plan, w->trial) : NULL;
}

const struct gv_bench_backend gv_bench_hip = {
    "hip", b_open, b_close, b_describe, b_conditions, b_prepare, b_time, b_check, b_release,
    b_count, b_peer_access, b_pci_address, b_facts,
};
