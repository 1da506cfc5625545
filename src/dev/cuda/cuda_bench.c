/* gpuvet bench on CUDA (bench_dev.h): cuBLAS and cuBLASLt GEMMs, gpuvet's
 * STREAM kernels, the runtime's copies, an empty kernel, peer copies.
 *
 * Device-timed work is gated: a spin kernel holds the stream while the start
 * event, the `iters` repetitions and the end event are enqueued, so the events
 * time the GPU's work and not the host's launches (a lone small GEMM on an idle
 * GPU otherwise reads several times too slow). When enqueueing outlasts the
 * gate, the gate is lengthened and the sample taken again. Host-clock work
 * (pageable copies, launch-and-wait, the cost of issuing a launch) is timed
 * with CLOCK_MONOTONIC, which is what that figure means. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/bench_dev.h"
#include "dev/bench_gpu.h"
#include "dev/cuda/cuda_dev.h"

#define LT_BENCH_WORKSPACE (32u << 20)

struct gv_bdev {
    struct gv_device *g;
    struct gv_bench_gpu gpu;  /* the shared code's view of the device (bench_gpu.h) */
    CUevent e0, e1;
    gv_dptr gate;             /* 16 bytes the spin kernel may read */
    struct gv_lt lt;          /* gpuvet bench's own cuBLASLt handle and workspace */
    int have_lt;
    char lt_why[256];
    int ndev;
    struct gv_vlib nvml_lib;  /* NVML, for conditions(); optional */
    struct gv_api_nvml nvml;
    nvmlDevice_t nvdev;
    char nvml_why[512];
};

struct gv_bw {
    struct gv_bw_spec s;
    double enq_per_iter;      /* host seconds to enqueue one repetition (measured) */
    int gated;                /* 1: the last sample's enqueueing fitted in its gate */
    /* GEMM */
    struct gv_bench_gemm gm;  /* operand sets */
    int use_lt, ab, ct, comp, math;
    gv_dptr scales;
    struct gv_lt_plan plan;
    double trial[GV_LT_PLAN_ALGOS]; /* seconds per product of each algorithm tried (0: failed) */
    struct gv_bdev *bench;    /* for the algorithm trial's callbacks */
    /* memory, copies */
    gv_dptr x, y, z, out;
    void *host;
    int host_pinned;
    unsigned grid;            /* one wave: 8 blocks of 256 per SM (read, fills) */
    unsigned vgrid;           /* a thread per 16-byte vector (copy, scale, add, triad) */
    /* peers */
    CUcontext sctx, dctx;
    CUstream pstream;
    CUevent pe0, pe1;
};

#define CUB(b, call, err)                                                                    \
    do {                                                                                     \
        CUresult r_ = (b)->g->cu.call;                                                       \
        if (r_ != CUDA_SUCCESS)                                                              \
            return gv_cuda_fail((b)->g, r_, (err), #call);                                   \
    } while (0)

/* ---- open ---- */

static int start_lt(struct gv_bdev *b, struct gv_err *err)
{
    struct gv_device *g = b->g;
    if (!g->have_lt) {
        snprintf(b->lt_why, sizeof b->lt_why, "cuBLASLt not loaded: %s", g->liberr[L_CUBLASLT]);
        return GV_OK;
    }
    gv_lt_from_cublaslt(&b->lt, &g->lt);
    int st = b->lt.create(&b->lt.handle);
    if (st != 0) {
        snprintf(b->lt_why, sizeof b->lt_why, "cublasLtCreate: %d", st);
        return GV_OK;
    }
    b->lt.stream = g->stream;
    b->lt.workspace_bytes = gv_lt_workspace_bytes("CUBLASLT_WORKSPACE_SIZE", LT_BENCH_WORKSPACE);
    CUB(b, cuMemAlloc(&b->lt.workspace, b->lt.workspace_bytes), err);
    b->have_lt = 1;
    return GV_OK;
}

static int need_bench_syms(struct gv_device *g, struct gv_err *err)
{
    const struct gv_api_cuda *c = &g->cu;
    if (!c->cuEventCreate || !c->cuEventRecord || !c->cuEventElapsedTime || !c->cuEventDestroy ||
        !c->cuMemcpyDtoDAsync || !c->cuMemcpyHtoDAsync || !c->cuMemcpyDtoHAsync ||
        !c->cuMemHostAlloc || !c->cuMemFreeHost)
        return gv_err_set(err, GV_E_LIB, "%s lacks the event or asynchronous copy entries gpuvet "
                          "bench needs (cuEventElapsedTime, cuMemcpyHtoDAsync_v2, ...)",
                          g->lib[L_CUDA].path);
    return GV_OK;
}

/* NVML for the device (clocks, power, temperature); its absence is recorded, not an error. */
static void start_nvml(struct gv_bdev *b)
{
    struct gv_err e = {0};
    char bus[64];
    CUdevice dev;
    if (gv_vlib_open(GV_LIB_NVML, &b->nvml_lib, &b->nvml, &e) != GV_OK) {
        snprintf(b->nvml_why, sizeof b->nvml_why, "%s", e.msg);
        return;
    }
    int st = b->nvml.nvmlInit();
    if (st != 0) {
        snprintf(b->nvml_why, sizeof b->nvml_why, "nvmlInit_v2: %d", st);
        gv_vlib_close(&b->nvml_lib);
        return;
    }
    if (!b->g->cu.cuDeviceGetPCIBusId || b->g->cu.cuDeviceGet(&dev, b->g->ordinal) ||
        b->g->cu.cuDeviceGetPCIBusId(bus, sizeof bus, dev) ||
        (st = b->nvml.nvmlDeviceGetHandleByPciBusId(bus, &b->nvdev)) != 0) {
        snprintf(b->nvml_why, sizeof b->nvml_why, "nvmlDeviceGetHandleByPciBusId failed (%d)", st);
        b->nvdev = NULL;
    }
}

static void b_close(struct gv_bdev *b)
{
    if (!b)
        return;
    if (b->nvml_lib.handle) {
        b->nvml.nvmlShutdown();
        gv_vlib_close(&b->nvml_lib);
    }
    struct gv_device *g = b->g;
    if (g) {
        g->cu.cuCtxSetCurrent(g->ctx);
        if (b->have_lt) {
            b->lt.destroy(b->lt.handle);
            g->cu.cuMemFree(b->lt.workspace);
        }
        if (b->gate)
            g->cu.cuMemFree(b->gate);
        if (b->e0)
            g->cu.cuEventDestroy(b->e0);
        if (b->e1)
            g->cu.cuEventDestroy(b->e1);
        gv_backend_cuda_inproc.close(g);
    }
    free(b);
}

static int b_open(const char *spec, struct gv_bdev **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_bdev *b = calloc(1, sizeof *b);
    if (!b)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    int rc = gv_backend_cuda_inproc.open(spec, &b->g, err);
    if (rc) {
        free(b);
        return rc;
    }
    struct gv_device *g = b->g;
    rc = need_bench_syms(g, err);
    if (!rc) {
        g->cu.cuCtxSetCurrent(g->ctx);
        CUresult r = g->cu.cuEventCreate(&b->e0, CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS)
            r = g->cu.cuEventCreate(&b->e1, CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS)
            r = g->cu.cuMemAlloc(&b->gate, 16);
        if (r == CUDA_SUCCESS)
            r = g->cu.cuMemcpyHtoD(b->gate, (float[4]){0, 0, 0, 0}, 16);
        if (r != CUDA_SUCCESS)
            rc = gv_cuda_fail(g, r, err, "cuEventCreate/cuMemAlloc");
    }
    b->gpu = (struct gv_bench_gpu){&g->ops, g, (unsigned)(g->sms * 8)};
    if (!rc)
        rc = start_lt(b, err);
    if (!rc && g->cu.cuDeviceGetCount(&b->ndev) != CUDA_SUCCESS)
        b->ndev = 1;
    if (!rc)
        start_nvml(b);
    if (rc) {
        b_close(b);
        return rc;
    }
    *out = b;
    return GV_OK;
}

static json_t *b_describe(struct gv_bdev *b)
{
    json_t *o = gv_backend_cuda_inproc.describe(b->g);
    json_object_set_new(o, "bench_timer",
                        json_string("CUDA events on the device, behind a spin kernel that holds "
                                    "the stream while the work is enqueued"));
    json_object_set_new(o, "bench_cublaslt",
                        b->have_lt ? json_sprintf("own handle, workspace %zu bytes "
                                                  "(CUBLASLT_WORKSPACE_SIZE, KiB, else 32 MiB)",
                                                  b->lt.workspace_bytes)
                                   : json_string(b->lt_why));
    return o;
}

static int b_count(struct gv_bdev *b) { return b->ndev; }

static int b_peer_access(struct gv_bdev *b, int src, int dst, char *why, size_t whysz)
{
    struct gv_device *g = b->g;
    CUdevice ds, dd;
    int can = 0;
    if (!g->cu.cuDeviceCanAccessPeer || g->cu.cuDeviceGet(&ds, src) != CUDA_SUCCESS ||
        g->cu.cuDeviceGet(&dd, dst) != CUDA_SUCCESS ||
        g->cu.cuDeviceCanAccessPeer(&can, ds, dd) != CUDA_SUCCESS) {
        snprintf(why, whysz, "cuDeviceCanAccessPeer not available or failed");
        return -1;
    }
    snprintf(why, whysz, "cuDeviceCanAccessPeer(%d, %d) = %d", src, dst, can);
    return can ? 1 : 0;
}

static int b_pci_address(struct gv_bdev *b, int i, char *buf, size_t bufsz)
{
    CUdevice dev;
    char id[64];
    if (!b->g->cu.cuDeviceGetPCIBusId || b->g->cu.cuDeviceGet(&dev, i) != CUDA_SUCCESS ||
        b->g->cu.cuDeviceGetPCIBusId(id, sizeof id, dev) != CUDA_SUCCESS)
        return -1;
    /* the driver writes "00000000:17:00.0": sysfs has a 4-digit domain */
    gv_bench_pci_address(id, buf, bufsz);
    return 0;
}

/* ---- GEMM ---- */

static int gemm_types(struct gv_bw *w, struct gv_err *err)
{
    switch (w->s.dtype) {
    case GV_F64:
        w->ab = w->ct = CUDA_R_64F, w->comp = CUBLAS_COMPUTE_64F, w->gm.in_store = w->gm.out_store = GV_F64;
        break;
    case GV_F32:
        w->ab = w->ct = CUDA_R_32F, w->comp = CUBLAS_COMPUTE_32F, w->gm.in_store = w->gm.out_store = GV_F32;
        break;
    case GV_TF32:
        w->ab = w->ct = CUDA_R_32F, w->comp = CUBLAS_COMPUTE_32F_FAST_TF32;
        w->gm.in_store = w->gm.out_store = GV_F32, w->math = CUBLAS_TF32_TENSOR_OP_MATH;
        break;
    case GV_F16:
        w->ab = w->ct = CUDA_R_16F, w->comp = CUBLAS_COMPUTE_32F, w->gm.in_store = w->gm.out_store = GV_F16;
        break;
    case GV_BF16:
        w->ab = w->ct = CUDA_R_16BF, w->comp = CUBLAS_COMPUTE_32F;
        w->gm.in_store = w->gm.out_store = GV_BF16;
        break;
    case GV_F8E4M3:
        w->ab = CUDA_R_8F_E4M3, w->ct = CUDA_R_16BF, w->comp = CUBLAS_COMPUTE_32F;
        w->gm.in_store = GV_F8E4M3, w->gm.out_store = GV_BF16;
        break;
    default:
        return gv_err_set(err, GV_E_UNSUPPORTED, "no GEMM benchmark for %s",
                          gv_dtype_name(w->s.dtype));
    }
    return GV_OK;
}

static const char *compute_name(int comp)
{
    switch (comp) {
    case CUBLAS_COMPUTE_64F: return "COMPUTE_64F";
    case CUBLAS_COMPUTE_32F_FAST_TF32: return "COMPUTE_32F_FAST_TF32";
    default: return "COMPUTE_32F";
    }
}

static int memset_ff(void *ctx, gv_dptr p, size_t bytes, struct gv_err *err)
{
    struct gv_device *g = ctx;
    CUresult r = g->cu.cuMemsetD8Async(p, 0xFF, bytes, g->stream);
    return r == CUDA_SUCCESS ? GV_OK : gv_cuda_fail(g, r, err, "cuMemsetD8Async");
}

static int gemm_alloc(struct gv_bdev *b, struct gv_bw *w, struct gv_err *err)
{
    struct gv_device *g = b->g;
    size_t fr = 0, tot = 0;
    CUB(b, cuMemGetInfo(&fr, &tot), err);
    w->gm.m = w->s.m, w->gm.n = w->s.n, w->gm.k = w->s.k;
    int rc = gv_bench_gemm_alloc(&b->gpu, &w->gm, w->s.dtype, fr, w->s.rotate_bytes,
                                 g->cu.cuMemsetD8Async ? memset_ff : NULL, err);
    if (rc || w->s.dtype != GV_F8E4M3)
        return rc;
    /* one float each, 256 bytes apart (as two separate tensors would be) */
    float one[65] = {1.0f};
    one[64] = 1.0f;
    CUB(b, cuMemAlloc(&w->scales, sizeof one), err);
    CUB(b, cuMemcpyHtoD(w->scales, one, sizeof one), err);
    return GV_OK;
}

static int time_device(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec,
                       struct gv_err *err);

static int trial_time(void *ctx, int iters, double *sec, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    return time_device(w->bench, w, iters, sec, err);
}

static int trial_broken(void *ctx) { return ((struct gv_bw *)ctx)->bench->g->broken; }

/* The fastest of the cuBLASLt heuristic's first algorithms for the plan: the
 * best achievable figure (the heuristic's first is what PyTorch runs; where it
 * is not the fastest, the trial says by how much, in facts()). Each algorithm
 * is timed three times, round-robin, and keeps its best, so that a clock still
 * rising in the first round does not decide; one that fails is left out, and
 * only when all fail is it an error (gv_bench_pick_algo). */
static int pick_algo(struct gv_bdev *b, struct gv_bw *w, struct gv_err *err)
{
    w->bench = b;
    return gv_bench_pick_algo(&w->plan, w->trial, "cuBLASLt", trial_time, trial_broken, w, err);
}

static int gemm_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                        struct gv_err *err)
{
    struct gv_device *g = b->g;
    int rc = gemm_types(w, err);
    if (rc)
        return rc;
    w->use_lt = strcmp(w->s.route, "cublaslt") == 0;
    if (!w->use_lt && strcmp(w->s.route, "cublas") != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "route %s is not a CUDA GEMM route", w->s.route);
    if (w->use_lt && !b->have_lt)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s", b->lt_why);
    if (!w->use_lt && !g->have_blas)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLAS not loaded: %s", g->liberr[L_CUBLAS]);
    if (!w->use_lt && w->s.dtype == GV_F8E4M3)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLAS's GemmEx has no fp8 inputs (cuBLASLt has)");
    if (w->s.dtype == GV_F8E4M3 && (rc = gv_cuda_fp8_capable(g, err)))
        return rc;
    if ((rc = gemm_alloc(b, w, err)))
        return rc;
    if (w->use_lt) {
        struct gv_lt_plan_spec ps = {w->ab, w->ct, w->comp,
                                     w->comp == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F,
                                     compute_name(w->comp), w->s.n, w->s.m, w->s.k,
                                     w->scales, w->scales ? w->scales + 256 : 0,
                                     GV_LT_PLAN_ALGOS};
        if ((rc = gv_lt_plan_make(&b->lt, &ps, &w->plan, err)) || (rc = pick_algo(b, w, err)))
            return rc;
        const struct gv_lt_plan *p = &w->plan;
        snprintf(impl, implsz, "cublasLtMatmul %s (the fastest in a trial of the heuristic's first "
                 "%d algorithm(s): its #%d, workspace %zu of %zu bytes), %s operands, %d operand "
                 "set(s)", compute_name(w->comp), p->nalgo, p->pick + 1, p->ws_need[p->pick],
                 b->lt.workspace_bytes, gv_dtype_name(w->gm.in_store), w->gm.nsets);
    } else {
        snprintf(impl, implsz, "cublasGemmStridedBatchedEx %s%s, %s operands, %d operand set(s)",
                 compute_name(w->comp), w->math ? " TF32_TENSOR_OP_MATH" : " DEFAULT_MATH",
                 gv_dtype_name(w->gm.in_store), w->gm.nsets);
    }
    return GV_OK;
}

/* Column-major C^T(n x m) = W(n x k, op T of k x n) . X^T(k x m): row-major C = X.W^T. */
static int gemm_once(struct gv_bdev *b, struct gv_bw *w, int set, struct gv_err *err)
{
    struct gv_device *g = b->g;
    if (w->use_lt)
        return gv_lt_plan_run(&b->lt, &w->plan, w->gm.w[set], w->gm.a[set], w->gm.c[set], err);
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    const void *alpha = &one32, *beta = &zero32;
    if (w->comp == CUBLAS_COMPUTE_64F)
        alpha = &one64, beta = &zero64;
    int m = (int)w->s.n, n = (int)w->s.m, k = (int)w->s.k;
    int st = g->blas.cublasGemmStridedBatchedEx(
        g->bh, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, alpha, (const void *)(uintptr_t)w->gm.w[set], w->ab,
        k, (long long)m * k, (const void *)(uintptr_t)w->gm.a[set], w->ab, k, (long long)k * n, beta,
        (void *)(uintptr_t)w->gm.c[set], w->ct, m, (long long)m * n, 1, w->comp, CUBLAS_GEMM_DEFAULT);
    if (st != 0)
        return gv_err_set(err, GV_E_DEVICE, "cublasGemmStridedBatchedEx (%s): %s (%d)",
                          compute_name(w->comp), gv_cuda_blas_status(g, st), st);
    return GV_OK;
}

/* Allowed |C - ref| / sum|a||w|: the output's rounding plus the accumulation's, generously;
 * a wrong result is off by the order of 1. */
static double gemm_tol(const struct gv_bw *w)
{
    const char *tf32 = getenv("NVIDIA_TF32_OVERRIDE");
    switch (w->s.dtype) {
    case GV_F64: return 1e-12;
    /* the override makes cuBLAS run fp32 GEMMs as TF32: still right, less exact */
    case GV_F32: return tf32 && strcmp(tf32, "1") == 0 ? 2e-2 : 1e-5;
    default: return 2e-2;
    }
}

/* ---- memory, copies, launches ---- */

static const char *const stream_kernel[] = {"gv_bench_copy", "gv_bench_scale", "gv_bench_add",
                                            "gv_bench_triad", "gv_bench_read"};

static int mem_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                       struct gv_err *err)
{
    struct gv_device *g = b->g;
    size_t bytes = w->s.bytes & ~(size_t)63;
    if (bytes < 64)
        return gv_err_set(err, GV_E_USAGE, "a memory benchmark needs at least 64 bytes");
    w->s.bytes = bytes;
    long long n = (long long)(bytes / 4);
    w->grid = (unsigned)(g->sms * 8);
    CUB(b, cuMemAlloc(&w->x, bytes), err);
    int rc = gv_bench_iota(&b->gpu, w->x, n, 1.0f, err);
    if (rc)
        return rc;
    switch (w->s.kind) {
    case GV_BW_STREAM:
        CUB(b, cuMemAlloc(&w->y, bytes), err);
        CUB(b, cuMemAlloc(&w->z, bytes), err);
        CUB(b, cuMemAlloc(&w->out, (size_t)w->grid * 256 * 4), err);
        if ((rc = gv_bench_iota(&b->gpu, w->y, n, 2.0f, err)) || (rc = gv_bench_iota(&b->gpu, w->z, n, 3.0f, err)))
            return rc;
        long long vb = (n / 4 + 255) / 256;
        w->vgrid = vb > 0x7fffffff ? 0x7fffffffu : (unsigned)vb;
        if (w->s.stream == GV_ST_READ)
            snprintf(impl, implsz, "gpuvet kernel %s, 16-byte accesses, one wave of %u blocks of "
                     "256", stream_kernel[w->s.stream], w->grid);
        else
            snprintf(impl, implsz, "gpuvet kernel %s, 16-byte accesses, a thread per access "
                     "(%u blocks of 256)", stream_kernel[w->s.stream], w->vgrid);
        break;
    case GV_BW_D2D:
        CUB(b, cuMemAlloc(&w->y, bytes), err);
        snprintf(impl, implsz, "cuMemcpyDtoDAsync");
        break;
    case GV_BW_H2D:
    case GV_BW_D2H:
        if (w->s.pinned) {
            CUB(b, cuMemHostAlloc(&w->host, bytes, CU_MEMHOSTALLOC_PORTABLE), err);
            w->host_pinned = 1;
        } else if (!(w->host = malloc(bytes))) {
            return gv_err_set(err, GV_E_NOMEM, "%zu bytes of host memory", bytes);
        }
        gv_bench_host_pattern(w->host, bytes);
        snprintf(impl, implsz, "%s, %s host memory",
                 w->s.kind == GV_BW_H2D ? (w->s.pinned ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD")
                                        : (w->s.pinned ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH"),
                 w->s.pinned ? "pinned (cuMemHostAlloc)" : "pageable (malloc)");
        break;
    default:
        break;
    }
    return g->ops.finish(g, err);
}

static int launch_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                          struct gv_err *err)
{
    CUfunction f;
    int rc = gv_cuda_func(b->g, "gv_bench_empty", &f, err);
    if (rc)
        return rc;
    static const char *const how[] = {"back to back, device events", "launch and wait, host clock",
                                      "issue only, host clock"};
    snprintf(impl, implsz, "cuLaunchKernel of an empty NVRTC kernel <<<1,1>>>, %s",
             how[w->s.launch]);
    return GV_OK;
}

static int peer_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                        struct gv_err *err)
{
    struct gv_device *g = b->g;
    CUdevice ds, dd;
    if (!g->cu.cuMemcpyPeerAsync || !g->cu.cuCtxEnablePeerAccess)
        return gv_err_set(err, GV_E_UNSUPPORTED, "libcuda lacks cuMemcpyPeerAsync");
    CUB(b, cuDeviceGet(&ds, w->s.peer_src), err);
    CUB(b, cuDeviceGet(&dd, w->s.peer_dst), err);
    CUB(b, cuDevicePrimaryCtxRetain(&w->sctx, ds), err);
    CUB(b, cuDevicePrimaryCtxRetain(&w->dctx, dd), err);
    char why[128];
    int can = b_peer_access(b, w->s.peer_src, w->s.peer_dst, why, sizeof why);
    CUB(b, cuCtxSetCurrent(w->dctx), err);
    CUB(b, cuMemAlloc(&w->y, w->s.bytes), err);
    CUB(b, cuCtxSetCurrent(w->sctx), err);
    CUB(b, cuMemAlloc(&w->x, w->s.bytes), err);
    long long n = (long long)(w->s.bytes / 4);
    float *pat = malloc(w->s.bytes);
    if (!pat)
        return gv_err_set(err, GV_E_NOMEM, "%zu bytes of host memory", w->s.bytes);
    for (long long i = 0; i < n; i++)
        pat[i] = (float)(i & 0xFFFFF) + 1.0f;
    CUresult up = g->cu.cuMemcpyHtoD(w->x, pat, w->s.bytes);
    free(pat);
    if (up != CUDA_SUCCESS)
        return gv_cuda_fail(g, up, err, "cuMemcpyHtoD");
    if (can == 1) {
        CUresult r = g->cu.cuCtxEnablePeerAccess(w->dctx, 0);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            return gv_cuda_fail(g, r, err, "cuCtxEnablePeerAccess");
    }
    CUB(b, cuStreamCreate(&w->pstream, CU_STREAM_NON_BLOCKING), err);
    CUB(b, cuEventCreate(&w->pe0, CU_EVENT_DEFAULT), err);
    CUB(b, cuEventCreate(&w->pe1, CU_EVENT_DEFAULT), err);
    snprintf(impl, implsz, "cuMemcpyPeerAsync %d -> %d (%s)", w->s.peer_src, w->s.peer_dst,
             can == 1 ? "peer access enabled" : "no peer access: staged through the host");
    return GV_OK;
}

static void b_release(struct gv_bdev *b, struct gv_bw *w)
{
    if (!w)
        return;
    struct gv_device *g = b->g;
    if (!g->broken) {
        g->cu.cuCtxSetCurrent(g->ctx);
        if (w->use_lt)
            gv_lt_plan_free(&b->lt, &w->plan);
        gv_bench_gemm_free(&b->gpu, &w->gm);
        if (w->scales)
            g->cu.cuMemFree(w->scales);
        if (w->sctx) {
            g->cu.cuCtxSetCurrent(w->sctx);
            if (w->pstream)
                g->cu.cuStreamDestroy(w->pstream);
            if (w->pe0)
                g->cu.cuEventDestroy(w->pe0);
            if (w->pe1)
                g->cu.cuEventDestroy(w->pe1);
            if (w->x)
                g->cu.cuMemFree(w->x);
            g->cu.cuCtxSetCurrent(w->dctx);
            if (w->y)
                g->cu.cuMemFree(w->y);
            w->x = w->y = 0;
            g->cu.cuCtxSetCurrent(g->ctx);
            CUdevice ds, dd;
            if (g->cu.cuDeviceGet(&ds, w->s.peer_src) == CUDA_SUCCESS)
                g->cu.cuDevicePrimaryCtxRelease(ds);
            if (g->cu.cuDeviceGet(&dd, w->s.peer_dst) == CUDA_SUCCESS)
                g->cu.cuDevicePrimaryCtxRelease(dd);
        }
        if (w->x)
            g->cu.cuMemFree(w->x);
        if (w->y)
            g->cu.cuMemFree(w->y);
        if (w->z)
            g->cu.cuMemFree(w->z);
        if (w->out)
            g->cu.cuMemFree(w->out);
    }
    if (w->host_pinned)
        g->cu.cuMemFreeHost(w->host);
    else
        free(w->host);
    free(w);
}

static int b_prepare(struct gv_bdev *b, const struct gv_bw_spec *s, struct gv_bw **out, char *impl,
                     size_t implsz, struct gv_err *err)
{
    *out = NULL;
    if (b->g->broken)
        return gv_err_set(err, GV_E_DEVICE, "the CUDA context is unusable after an earlier fault");
    struct gv_bw *w = calloc(1, sizeof *w);
    if (!w)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    w->s = *s;
    w->enq_per_iter = 20e-6;
    b->g->cu.cuCtxSetCurrent(b->g->ctx);
    int rc;
    switch (s->kind) {
    case GV_BW_GEMM: rc = gemm_prepare(b, w, impl, implsz, err); break;
    case GV_BW_LAUNCH: rc = launch_prepare(b, w, impl, implsz, err); break;
    case GV_BW_PEER: rc = peer_prepare(b, w, impl, implsz, err); break;
    default: rc = mem_prepare(b, w, impl, implsz, err); break;
    }
    if (rc) {
        b_release(b, w);
        return rc;
    }
    *out = w;
    return GV_OK;
}

/* One repetition, enqueued on the stream (asynchronous). */
static int enqueue(struct gv_bdev *b, struct gv_bw *w, int i, struct gv_err *err)
{
    struct gv_device *g = b->g;
    long long n4 = (long long)(w->s.bytes / 16);
    long long nn = n4;
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
                             w->s.stream == GV_ST_READ ? w->grid : w->vgrid, 256, 0, args[w->s.stream],
                             err);
    }
    case GV_BW_D2D:
        CUB(b, cuMemcpyDtoDAsync(w->y, w->x, w->s.bytes, g->stream), err);
        return GV_OK;
    case GV_BW_H2D:
        CUB(b, cuMemcpyHtoDAsync(w->x, w->host, w->s.bytes, g->stream), err);
        return GV_OK;
    case GV_BW_D2H:
        CUB(b, cuMemcpyDtoHAsync(w->host, w->x, w->s.bytes, g->stream), err);
        return GV_OK;
    case GV_BW_LAUNCH:
        return g->ops.launch(g, "gv_bench_empty", 1, 1, 0, NULL, err);
    case GV_BW_PEER:
        CUB(b, cuMemcpyPeerAsync(w->y, w->dctx, w->x, w->sctx, w->s.bytes, w->pstream), err);
        return GV_OK;
    }
    return GV_OK;
}

static int spin(struct gv_bdev *b, double seconds, struct gv_err *err)
{
    long long ns = (long long)(seconds * 1e9);
    void *args[] = {&b->gate, &ns};
    return b->g->ops.launch(b->g, "gv_bench_spin", 1, 1, 0, args, err);
}

/* The work on the host clock, each repetition waited for (pageable copies, launch and wait)
 * or not (issuing only; the wait after is not timed). */
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
            CUB(b, cuMemcpyHtoD(w->x, w->host, w->s.bytes), err);
            CUB(b, cuCtxSynchronize(), err);
        } else if (w->s.kind == GV_BW_D2H) {
            CUB(b, cuMemcpyDtoH(w->host, w->x, w->s.bytes), err);
        } else {
            if ((rc = enqueue(b, w, i, err)))
                return rc;
            if (!issue_only)
                CUB(b, cuStreamSynchronize(g->stream), err);
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
    CUevent e = end ? (peer ? w->pe1 : b->e1) : (peer ? w->pe0 : b->e0);
    CUB(b, cuEventRecord(e, peer ? w->pstream : b->g->stream), err);
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
    if (b->g->cu.cuStreamSynchronize(w->pstream) != CUDA_SUCCESS)
        return gv_err_set(err, GV_E_DEVICE, "cuStreamSynchronize failed");
    return GV_OK;
}

static int g_elapsed(void *ctx, double *sec, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    struct gv_bdev *b = w->bench;
    float ms = 0;
    int peer = w->s.kind == GV_BW_PEER;
    CUB(b, cuEventElapsedTime(&ms, peer ? w->pe0 : b->e0, peer ? w->pe1 : b->e1), err);
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
    if (b->g->broken)
        return gv_err_set(err, GV_E_DEVICE, "the CUDA context is unusable after an earlier fault");
    b->g->cu.cuCtxSetCurrent(w->sctx ? w->sctx : b->g->ctx);
    int host = ((w->s.kind == GV_BW_H2D || w->s.kind == GV_BW_D2H) && !w->s.pinned) ||
               (w->s.kind == GV_BW_LAUNCH && w->s.launch != GV_LAUNCH_BACK_TO_BACK);
    int rc = host ? time_host(b, w, iters, sec, err) : time_device(b, w, iters, sec, err);
    b->g->cu.cuCtxSetCurrent(b->g->ctx);
    return rc;
}

/* ---- checks ---- */

static struct gv_bench_mem mem_of(const struct gv_bw *w)
{
    return (struct gv_bench_mem){w->s.kind, w->s.stream, w->s.bytes, w->x, w->y, w->z, w->out,
                                 w->host, w->grid};
}

static int b_check(struct gv_bdev *b, struct gv_bw *w, int *ok, char *what, size_t whatsz,
                   struct gv_err *err)
{
    struct gv_device *g = b->g;
    if (g->broken)
        return gv_err_set(err, GV_E_DEVICE, "the CUDA context is unusable after an earlier fault");
    g->cu.cuCtxSetCurrent(g->ctx);
    struct gv_bench_mem m = mem_of(w);
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
        g->cu.cuCtxSetCurrent(w->dctx);
    rc = gv_bench_mem_check(&b->gpu, &m, ok, what, whatsz, err);
    g->cu.cuCtxSetCurrent(g->ctx);
    return rc;
}

static const struct {
    unsigned long long bit;
    const char *name;
} clock_reasons[] = {
    {0x1, "gpu_idle"},           {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},       {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},        {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

static json_t *b_conditions(struct gv_bdev *b)
{
    json_t *o = json_object();
    if (!b->nvdev) {
        json_object_set_new(o, "not_collected", json_sprintf("NVML: %s", b->nvml_why));
        return o;
    }
    const struct gv_api_nvml *n = &b->nvml;
    unsigned v;
    unsigned long long r;
    if (n->nvmlDeviceGetClockInfo && n->nvmlDeviceGetClockInfo(b->nvdev, NVML_CLOCK_SM, &v) == 0)
        json_object_set_new(o, "sm_clock_mhz", json_integer(v));
    if (n->nvmlDeviceGetClockInfo && n->nvmlDeviceGetClockInfo(b->nvdev, NVML_CLOCK_MEM, &v) == 0)
        json_object_set_new(o, "memory_clock_mhz", json_integer(v));
    if (n->nvmlDeviceGetMaxClockInfo &&
        n->nvmlDeviceGetMaxClockInfo(b->nvdev, NVML_CLOCK_SM, &v) == 0)
        json_object_set_new(o, "sm_clock_max_mhz", json_integer(v));
    if (n->nvmlDeviceGetPowerUsage && n->nvmlDeviceGetPowerUsage(b->nvdev, &v) == 0)
        json_object_set_new(o, "power_w", json_real(v / 1000.0));
    if (n->nvmlDeviceGetEnforcedPowerLimit && n->nvmlDeviceGetEnforcedPowerLimit(b->nvdev, &v) == 0)
        json_object_set_new(o, "power_limit_w", json_real(v / 1000.0));
    if (n->nvmlDeviceGetTemperature &&
        n->nvmlDeviceGetTemperature(b->nvdev, NVML_TEMPERATURE_GPU, &v) == 0)
        json_object_set_new(o, "temperature_c", json_integer(v));
    if (n->nvmlDeviceGetCurrentClocksEventReasons &&
        n->nvmlDeviceGetCurrentClocksEventReasons(b->nvdev, &r) == 0) {
        json_t *a = json_array();
        for (size_t i = 0; i < sizeof clock_reasons / sizeof clock_reasons[0]; i++)
            if (r & clock_reasons[i].bit)
                json_array_append_new(a, json_string(clock_reasons[i].name));
        json_object_set_new(o, "clocks_held_by", a);
    }
    json_object_set_new(o, "source", json_string(b->nvml_lib.path));
    return o;
}

/* A cuBLASLt GEMM's algorithm trial: the heuristic's rank of the one measured
 * (1 = its first, what PyTorch runs), how many were tried, and each one's trial
 * figure in TFLOP/s (null: it failed). */
static json_t *b_facts(struct gv_bdev *b, struct gv_bw *w)
{
    (void)b;
    return w->use_lt ? gv_bench_algo_facts(&w->s, &w->plan, w->trial) : NULL;
}

const struct gv_bench_backend gv_bench_cuda = {
    "cuda", b_open, b_close, b_describe, b_conditions, b_prepare, b_time, b_check, b_release,
    b_count, b_peer_access, b_pci_address, b_facts,
};
