/* gpuvet bench on CUDA (bench_dev.h): what only CUDA has. cuBLAS and
 * cuBLASLt GEMMs (with cuBLASLt's algorithm trial), NVML's clocks, power and
 * temperature, and opening the device. The STREAM kernels, copies, the empty
 * kernel, peer copies and every timing loop are bench_gpu.c's, over cuda.c's
 * timing primitives (struct gv_gpu_timing, gpu.h). The spin kernel that gates
 * device-timed work counts nanoseconds of %globaltimer. */
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
    struct gv_bench_gpu gpu; /* first: the shared code's view of the device (bench_gpu.h) */
    struct gv_device *g;
    struct gv_lt lt;          /* gpuvet bench's own cuBLASLt handle and workspace */
    int have_lt;
    char lt_why[256];
    struct gv_vlib nvml_lib;  /* NVML, for conditions(); optional */
    struct gv_api_nvml nvml;
    nvmlDevice_t nvdev;
    char nvml_why[512];
};

struct gv_bw {
    struct gv_bench_work w;   /* first: what the shared loops use (bench_gpu.h) */
    int use_lt, ab, ct, comp, math;
    gv_dptr scales;
    struct gv_lt_plan plan;
    double trial[GV_LT_PLAN_ALGOS]; /* seconds per product of each algorithm tried (0: failed) */
    struct gv_bdev *bench;    /* for the algorithm trial's callbacks */
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
        gv_bench_gpu_stop(&b->gpu);
        gv_backend_cuda_inproc.close(g);
    }
    free(b);
}

static int gemm_once(void *vendor, struct gv_bench_work *work, int set, struct gv_err *err);

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
    /* the spin kernel counts nanoseconds (%globaltimer) */
    b->gpu = (struct gv_bench_gpu){.ops = &g->ops, .ctx = g, .grid = (unsigned)(g->sms * 8),
                                   .spin_unit_s = 1e-9, .gemm_once = gemm_once, .vendor = b};
    rc = need_bench_syms(g, err);
    if (!rc)
        rc = gv_bench_gpu_start(&b->gpu, err);
    if (!rc)
        rc = start_lt(b, err);
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

/* ---- GEMM ---- */

static int gemm_types(struct gv_bw *w, struct gv_err *err)
{
    switch (w->w.s.dtype) {
    case GV_F64:
        w->ab = w->ct = CUDA_R_64F, w->comp = CUBLAS_COMPUTE_64F, w->w.gm.in_store = w->w.gm.out_store = GV_F64;
        break;
    case GV_F32:
        w->ab = w->ct = CUDA_R_32F, w->comp = CUBLAS_COMPUTE_32F, w->w.gm.in_store = w->w.gm.out_store = GV_F32;
        break;
    case GV_TF32:
        w->ab = w->ct = CUDA_R_32F, w->comp = CUBLAS_COMPUTE_32F_FAST_TF32;
        w->w.gm.in_store = w->w.gm.out_store = GV_F32, w->math = CUBLAS_TF32_TENSOR_OP_MATH;
        break;
    case GV_F16:
        w->ab = w->ct = CUDA_R_16F, w->comp = CUBLAS_COMPUTE_32F, w->w.gm.in_store = w->w.gm.out_store = GV_F16;
        break;
    case GV_BF16:
        w->ab = w->ct = CUDA_R_16BF, w->comp = CUBLAS_COMPUTE_32F;
        w->w.gm.in_store = w->w.gm.out_store = GV_BF16;
        break;
    case GV_F8E4M3:
        w->ab = CUDA_R_8F_E4M3, w->ct = CUDA_R_16BF, w->comp = CUBLAS_COMPUTE_32F;
        w->w.gm.in_store = GV_F8E4M3, w->w.gm.out_store = GV_BF16;
        break;
    default:
        return gv_err_set(err, GV_E_UNSUPPORTED, "no GEMM benchmark for %s",
                          gv_dtype_name(w->w.s.dtype));
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

static int gemm_alloc(struct gv_bdev *b, struct gv_bw *w, struct gv_err *err)
{
    int rc = gv_bench_gemm_prepare(&b->gpu, &w->w, err);
    if (rc || w->w.s.dtype != GV_F8E4M3)
        return rc;
    /* one float each, 256 bytes apart (as two separate tensors would be) */
    float one[65] = {1.0f};
    one[64] = 1.0f;
    CUB(b, cuMemAlloc(&w->scales, sizeof one), err);
    CUB(b, cuMemcpyHtoD(w->scales, one, sizeof one), err);
    return GV_OK;
}

static int trial_time(void *ctx, int iters, double *sec, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    return gv_bench_time_device(&w->bench->gpu, &w->w, iters, sec, err);
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
    w->use_lt = strcmp(w->w.s.route, "cublaslt") == 0;
    if (!w->use_lt && strcmp(w->w.s.route, "cublas") != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "route %s is not a CUDA GEMM route", w->w.s.route);
    if (w->use_lt && !b->have_lt)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s", b->lt_why);
    if (!w->use_lt && !g->have_blas)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLAS not loaded: %s", g->liberr[L_CUBLAS]);
    if (!w->use_lt && w->w.s.dtype == GV_F8E4M3)
        return gv_err_set(err, GV_E_UNSUPPORTED, "cuBLAS's GemmEx has no fp8 inputs (cuBLASLt has)");
    if (w->w.s.dtype == GV_F8E4M3 && (rc = gv_cuda_fp8_capable(g, err)))
        return rc;
    if ((rc = gemm_alloc(b, w, err)))
        return rc;
    if (w->use_lt) {
        struct gv_lt_plan_spec ps = {w->ab, w->ct, w->comp,
                                     w->comp == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F,
                                     compute_name(w->comp), w->w.s.n, w->w.s.m, w->w.s.k,
                                     w->scales, w->scales ? w->scales + 256 : 0,
                                     GV_LT_PLAN_ALGOS};
        if ((rc = gv_lt_plan_make(&b->lt, &ps, &w->plan, err)) || (rc = pick_algo(b, w, err)))
            return rc;
        const struct gv_lt_plan *p = &w->plan;
        snprintf(impl, implsz, "cublasLtMatmul %s (the fastest in a trial of the heuristic's first "
                 "%d algorithm(s): its #%d, workspace %zu of %zu bytes), %s operands, %d operand "
                 "set(s)", compute_name(w->comp), p->nalgo, p->pick + 1, p->ws_need[p->pick],
                 b->lt.workspace_bytes, gv_dtype_name(w->w.gm.in_store), w->w.gm.nsets);
    } else {
        snprintf(impl, implsz, "cublasGemmStridedBatchedEx %s%s, %s operands, %d operand set(s)",
                 compute_name(w->comp), w->math ? " TF32_TENSOR_OP_MATH" : " DEFAULT_MATH",
                 gv_dtype_name(w->w.gm.in_store), w->w.gm.nsets);
    }
    return GV_OK;
}

/* Column-major C^T(n x m) = W(n x k, op T of k x n) . X^T(k x m): row-major C = X.W^T. */
static int gemm_once(void *vendor, struct gv_bench_work *work, int set, struct gv_err *err)
{
    struct gv_bdev *b = vendor;
    struct gv_bw *w = (struct gv_bw *)work;
    struct gv_device *g = b->g;
    if (w->use_lt)
        return gv_lt_plan_run(&b->lt, &w->plan, w->w.gm.w[set], w->w.gm.a[set], w->w.gm.c[set], err);
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    const void *alpha = &one32, *beta = &zero32;
    if (w->comp == CUBLAS_COMPUTE_64F)
        alpha = &one64, beta = &zero64;
    int m = (int)w->w.s.n, n = (int)w->w.s.m, k = (int)w->w.s.k;
    int st = g->blas.cublasGemmStridedBatchedEx(
        g->bh, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, alpha, (const void *)(uintptr_t)w->w.gm.w[set], w->ab,
        k, (long long)m * k, (const void *)(uintptr_t)w->w.gm.a[set], w->ab, k, (long long)k * n, beta,
        (void *)(uintptr_t)w->w.gm.c[set], w->ct, m, (long long)m * n, 1, w->comp, CUBLAS_GEMM_DEFAULT);
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
    switch (w->w.s.dtype) {
    case GV_F64: return 1e-12;
    /* the override makes cuBLAS run fp32 GEMMs as TF32: still right, less exact */
    case GV_F32: return tf32 && strcmp(tf32, "1") == 0 ? 2e-2 : 1e-5;
    default: return 2e-2;
    }
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
        if (w->scales)
            g->cu.cuMemFree(w->scales);
    }
    gv_bench_work_release(&b->gpu, &w->w);
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
    gv_bench_work_init(&w->w, s);
    b->g->cu.cuCtxSetCurrent(b->g->ctx);
    int rc = s->kind == GV_BW_GEMM ? gemm_prepare(b, w, impl, implsz, err)
                                   : gv_bench_prepare(&b->gpu, &w->w, impl, implsz, err);
    if (rc) {
        b_release(b, w);
        return rc;
    }
    *out = w;
    return GV_OK;
}

static int b_check(struct gv_bdev *b, struct gv_bw *w, int *ok, char *what, size_t whatsz,
                   struct gv_err *err)
{
    return gv_bench_check(&b->gpu, &w->w, gemm_tol(w), ok, what, whatsz, err);
}

/* ---- conditions: NVML ---- */

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
    return w->use_lt ? gv_bench_algo_facts(&w->w.s, &w->plan, w->trial) : NULL;
}

const struct gv_bench_backend gv_bench_cuda = {
    "cuda", b_open, b_close, b_describe, b_conditions, b_prepare, gv_bench_gpu_time, b_check,
    b_release, gv_bench_gpu_count, gv_bench_gpu_peer_access, gv_bench_gpu_pci_address, b_facts,
};
