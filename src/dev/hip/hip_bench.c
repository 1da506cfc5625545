/* gpuvet bench on HIP (bench_dev.h): what only HIP has. rocBLAS and
 * hipBLASLt GEMMs (with hipBLASLt's algorithm trial), the amdgpu driver's
 * clocks, power and temperature from its hwmon files in sysfs (no vendor
 * library needed), and opening the device. The STREAM kernels, copies, the
 * empty kernel, peer copies and every timing loop are bench_gpu.c's, over
 * hip.c's timing primitives (struct gv_gpu_timing, gpu.h).
 *
 * hipRTC's spin kernel counts volatile reads (bench.cu: HIP has no
 * %globaltimer, and clock64 does not build for every arch), so at open the
 * backend times a known count of them with events and gives the gate the
 * seconds per read. */
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
    struct gv_bench_gpu gpu; /* first: the shared code's view of the device (bench_gpu.h) */
    struct gv_device *g;
    int cus;                    /* compute units (0: unknown) */
    struct gv_lt lt;            /* gpuvet bench's own hipBLASLt handle and workspace */
    int have_lt;
    char lt_why[256];
    char hwmon[512];            /* the device's hwmon directory, or "" */
    char hwmon_why[256];
};

struct gv_bw {
    struct gv_bench_work w;     /* first: what the shared loops use (bench_gpu.h) */
    int use_lt, ab, ct, comp;
    struct gv_lt_plan plan;
    double trial[GV_LT_PLAN_ALGOS];
    struct gv_bdev *bench;
};

#define HB(b, call, err)                                                                     \
    do {                                                                                     \
        hipError_t r_ = (b)->g->hip.call;                                                    \
        if (r_ != hipSuccess)                                                                \
            return gv_hip_fail((b)->g, r_, (err), #call);                                    \
    } while (0)

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
        gv_bench_gpu_stop(&b->gpu);
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

/* Seconds per read of the spin kernel: a known count timed with the events. */
static int calibrate_spin(struct gv_bdev *b, struct gv_err *err)
{
    struct gv_device *g = b->g;
    const struct gv_gpu_timing *t = g->ops.timing;
    long long reads = SPIN_CALIBRATION_READS;
    void *args[] = {&b->gpu.gate, &reads};
    double sec = 0;
    int rc = t->event_record(g, b->gpu.e0, NULL, err);
    if (!rc)
        rc = g->ops.launch(g, "gv_bench_spin", 1, 1, 0, args, err);
    if (!rc)
        rc = t->event_record(g, b->gpu.e1, NULL, err);
    if (!rc)
        rc = g->ops.finish(g, err);
    if (!rc)
        rc = t->event_elapsed(g, b->gpu.e0, b->gpu.e1, &sec, err);
    if (!rc)
        b->gpu.spin_unit_s = sec > 0 ? sec / SPIN_CALIBRATION_READS : 1e-6;
    return rc;
}

static void find_hwmon(struct gv_bdev *b);
static int gemm_once(void *vendor, struct gv_bench_work *work, int set, struct gv_err *err);

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
    /* the spin kernel counts volatile reads: calibrated below */
    b->gpu = (struct gv_bench_gpu){.ops = &g->ops, .ctx = g, .grid = DEFAULT_GRID,
                                   .spin_unit_s = 1e-6, .gemm_once = gemm_once, .vendor = b};
    rc = need_bench_syms(g, err);
    if (!rc)
        rc = gv_bench_gpu_start(&b->gpu, err);
    if (!rc && device_int(g, hipDeviceAttributeMultiprocessorCount, &b->cus))
        b->gpu.grid = (unsigned)(b->cus * 8);
    if (!rc)
        rc = calibrate_spin(b, err);
    if (!rc)
        rc = start_lt(b, err);
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
                                     "read, timed at open)", b->gpu.spin_unit_s * 1e9));
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

/* ---- GEMM ---- */

static int gemm_types(struct gv_bw *w, struct gv_err *err)
{
    struct gv_bench_gemm *g = &w->w.gm;
    int lt = w->use_lt;
    switch (w->w.s.dtype) {
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
            w->ab = w->ct = w->w.s.dtype == GV_F16 ? HIP_R_16F : HIP_R_16BF, w->comp = HIPBLAS_COMPUTE_32F;
        else
            w->ab = w->ct = w->w.s.dtype == GV_F16 ? rocblas_datatype_f16_r : rocblas_datatype_bf16_r,
            w->comp = rocblas_datatype_f32_r;
        g->in_store = g->out_store = w->w.s.dtype;
        return GV_OK;
    case GV_F8E4M3:
        return gv_err_set(err, GV_E_UNSUPPORTED, "no fp8 GEMM on HIP yet: gpuvet's fp8 operands "
                          "are OCP e4m3 (e4m3fn), and gfx942's fp8 (rocBLAS rocblas_gemm_ex3, "
                          "hipBLASLt) is the FNUZ variant; gpuvet declares neither library's fp8 "
                          "types");
    default:
        return gv_err_set(err, GV_E_UNSUPPORTED, "no GEMM benchmark for %s",
                          gv_dtype_name(w->w.s.dtype));
    }
}

static const char *compute_name(const struct gv_bw *w)
{
    switch (w->w.s.dtype) {
    case GV_F64: return "COMPUTE_64F";
    case GV_TF32: return "COMPUTE_32F_FAST_TF32";
    default: return "COMPUTE_32F";
    }
}

static int trial_time(void *ctx, int iters, double *sec, struct gv_err *err)
{
    struct gv_bw *w = ctx;
    return gv_bench_time_device(&w->bench->gpu, &w->w, iters, sec, err);
}


static int trial_broken(void *ctx) { return ((struct gv_bw *)ctx)->bench->g->broken; }

static int lt_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                      struct gv_err *err)
{
    struct gv_lt_plan_spec ps = {w->ab, w->ct, w->comp,
                                 w->comp == HIPBLAS_COMPUTE_64F ? HIP_R_64F : HIP_R_32F,
                                 compute_name(w), w->w.s.n, w->w.s.m, w->w.s.k, 0, 0, GV_LT_PLAN_ALGOS};
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
             b->lt.workspace_bytes, gv_dtype_name(w->w.gm.in_store), w->w.gm.nsets);
    return GV_OK;
}

static int gemm_prepare(struct gv_bdev *b, struct gv_bw *w, char *impl, size_t implsz,
                        struct gv_err *err)
{
    struct gv_device *g = b->g;
    w->use_lt = strcmp(w->w.s.route, "hipblaslt") == 0;
    if (!w->use_lt && strcmp(w->w.s.route, "rocblas") != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "route %s is not a HIP GEMM route", w->w.s.route);
    int rc = gemm_types(w, err);
    if (rc)
        return rc;
    if (w->use_lt && !b->have_lt)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s", b->lt_why);
    if (!w->use_lt && !g->have_blas)
        return gv_err_set(err, GV_E_UNSUPPORTED, "rocBLAS not loaded: %s", g->liberr[L_ROCBLAS]);
    if (!w->use_lt && !g->rb.rocblas_gemm_ex)
        return gv_err_set(err, GV_E_LIB, "%s lacks rocblas_gemm_ex", g->lib[L_ROCBLAS].path);
    if ((rc = gv_bench_gemm_prepare(&b->gpu, &w->w, err)))
        return rc;
    if (w->use_lt)
        return lt_prepare(b, w, impl, implsz, err);
    snprintf(impl, implsz, "rocblas_gemm_ex %s (rocblas_gemm_algo_standard), %s operands, %d "
             "operand set(s)", compute_name(w), gv_dtype_name(w->w.gm.in_store), w->w.gm.nsets);
    return GV_OK;
}

/* Column-major C^T(n x m) = W(n x k, op T of k x n) . X^T(k x m): row-major C = X.W^T. */
static int gemm_once(void *vendor, struct gv_bench_work *work, int set, struct gv_err *err)
{
    struct gv_bdev *b = vendor;
    struct gv_bw *w = (struct gv_bw *)work;
    struct gv_device *g = b->g;
    const struct gv_bench_gemm *gm = &w->w.gm;
    if (w->use_lt)
        return gv_lt_plan_run(&b->lt, &w->plan, gm->w[set], gm->a[set], gm->c[set], err);
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    const void *alpha = &one32, *beta = &zero32;
    if (w->comp == rocblas_datatype_f64_r)
        alpha = &one64, beta = &zero64;
    int m = (int)w->w.s.n, n = (int)w->w.s.m, k = (int)w->w.s.k;
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
    switch (w->w.s.dtype) {
    case GV_F64: return 1e-12;
    case GV_F32: return 1e-5;
    default: return 2e-2;
    }
}

/* ---- the work: the shared loops (bench_gpu.c) ---- */

static void b_release(struct gv_bdev *b, struct gv_bw *w)
{
    if (!w)
        return;
    struct gv_device *g = b->g;
    if (!g->broken) {
        g->hip.hipSetDevice(g->ordinal);
        if (w->use_lt)
            gv_lt_plan_free(&b->lt, &w->plan);
    }
    gv_bench_work_release(&b->gpu, &w->w);
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
    gv_bench_work_init(&w->w, s);
    b->g->hip.hipSetDevice(b->g->ordinal);
    int rc = s->kind == GV_BW_GEMM ? gemm_prepare(b, w, impl, implsz, err)
                                   : gv_bench_prepare(&b->gpu, &w->w, impl, implsz, err);
    b->g->hip.hipSetDevice(b->g->ordinal);
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

/* ---- conditions: the amdgpu driver's hwmon files ---- */

/* /sys/bus/pci/devices/ADDR/hwmon/hwmonN of the device, or why not. */
static void find_hwmon(struct gv_bdev *b)
{
    char pci[64], dir[256];
    if (gv_bench_gpu_pci_address(b, b->g->ordinal, pci, sizeof pci) != 0) {
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
    return w->use_lt ? gv_bench_algo_facts(&w->w.s, &w->plan, w->trial) : NULL;
}

const struct gv_bench_backend gv_bench_hip = {
    "hip", b_open, b_close, b_describe, b_conditions, b_prepare, gv_bench_gpu_time, b_check,
    b_release, gv_bench_gpu_count, gv_bench_gpu_peer_access, gv_bench_gpu_pci_address, b_facts,
};
