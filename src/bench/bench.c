/* gpuvet bench: the list of benchmarks for a device, the measurement of each
 * (calibration, warm-up, samples, check), the fp16/bf16 verdict and the
 * document. See bench.h and docs/bench.md. */
#include "bench/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/globs.h"
#include "bench/coll.h"
#include "bench/load.h"
#include "bench/topo.h"
#include "dev/bench_dev.h"
#include "dev/kind.h"
#include "kb/gpu_peaks.h"
#include "num/types.h"

#define MAX_ITEMS 512

/* One benchmark to run. */
struct item {
    char id[128], name[128];
    const char *group, *unit;
    int lower_better;      /* latency */
    double work;           /* FLOP or bytes per repetition (throughput items) */
    double unit_scale;     /* value = work / seconds / unit_scale */
    double peak;           /* in the unit; NaN unknown */
    struct gv_bw_spec spec;
    char route_name[24];
};

struct plan {
    struct item items[MAX_ITEMS];
    int n;
};

/* How much of everything, per mode. */
struct sizes {
    int samples;           /* timed samples per benchmark */
    double min_sample_s;   /* device time per sample, at least */
    double warm_s;         /* warm-up of the first benchmark of a group */
    int rounds;            /* fp16/bf16 interleaved rounds */
    size_t stream_bytes, copy_bytes, peer_bytes;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void gv_bench_stats_of(double *v, int n, struct gv_bench_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n <= 0) {
        s->median = s->min = s->max = s->spread = NAN;
        return;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    s->min = v[0], s->max = v[n - 1];
    s->median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s->spread = s->median != 0 ? (s->max - s->min) / fabs(s->median) : NAN;
}

void gv_bench_compare_arms(const double *a, int na, const double *b, int nb, struct gv_bench_ab *r)
{
    double *x = malloc(sizeof(double) * (size_t)(na + nb));
    struct gv_bench_stats sa, sb;
    memset(r, 0, sizeof *r);
    if (!x || na < 1 || nb < 1) {
        free(x);
        r->ratio = NAN;
        return;
    }
    memcpy(x, a, sizeof(double) * (size_t)na);
    memcpy(x + na, b, sizeof(double) * (size_t)nb);
    gv_bench_stats_of(x, na, &sa);
    gv_bench_stats_of(x + na, nb, &sb);
    free(x);
    r->ratio = sb.median / sa.median;
    int apart = sb.min > sa.max || sb.max < sa.min;
    double noise = fmax(sa.spread, sb.spread);
    r->clear = apart && fabs(r->ratio - 1) > noise;
}

int gv_bench_selected(const char *only, const char *id) { return gv_globs_match(only, id); }

/* ---- the plan ---- */

static struct item *add(struct plan *p, const char *group)
{
    if (p->n >= MAX_ITEMS)
        return NULL;
    struct item *it = &p->items[p->n++];
    memset(it, 0, sizeof *it);
    it->group = group;
    it->peak = NAN;
    it->unit_scale = 1;
    return it;
}

static const char *size_name(size_t b, char *buf, size_t n)
{
    if (b >= (1u << 30) && b % (1u << 30) == 0)
        snprintf(buf, n, "%zu GiB", b >> 30);
    else if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, n, "%zu MiB", b >> 20);
    else
        snprintf(buf, n, "%zu B", b);
    return buf;
}

struct shape {
    long long m, n, k;
    const char *what;
};

static const struct shape gpu_quick[] = {{4096, 4096, 4096, "square"}};
static const struct shape gpu_default[] = {
    {1024, 1024, 1024, "square"},         {2048, 2048, 2048, "square"},
    {4096, 4096, 4096, "square"},         {8192, 8192, 8192, "square"},
    {4096, 12288, 4096, "LLM QKV projection (4096 tokens, 4096 hidden)"},
    {4096, 11008, 4096, "LLM MLP up (4096 tokens, Llama-7B)"},
    {4096, 4096, 11008, "LLM MLP down (4096 tokens, Llama-7B)"},
    {16, 4096, 4096, "LLM decode (16 tokens)"},
    {1280, 4096, 12032, "the best-known fp8 shape on an H200 (docs/facts/bench-anchors.md)"},
};
static const struct shape gpu_full_extra[] = {
    {8192, 28672, 8192, "LLM MLP up (8192 tokens, Llama-70B)"},
    {2048, 2048, 13312, "the best-known bf16 shape on an H100 (docs/facts/bench-anchors.md)"},
    {512, 512, 512, "square"},
};
static const struct shape cpu_quick[] = {{256, 256, 256, "square"}};
static const struct shape cpu_default[] = {{512, 512, 512, "square"}, {1024, 1024, 1024, "square"},
                                           {256, 1024, 1024, "LLM-like (256 tokens)"}};

/* The GEMM precisions on a GPU (on the host, the kind's own list). */
static const enum gv_dtype gpu_types[] = {GV_F64, GV_F32, GV_TF32, GV_F16, GV_BF16, GV_F8E4M3};

static void plan_gemm(struct plan *p, const struct gv_dev_kind *kind, int on_gpu,
                      const struct gv_bench_opts *o, const struct kb_gpu_peak *peak, double l2)
{
    int cpu = !on_gpu;
    enum gv_bench_mode mode = o->mode;
    const struct gv_bench_route *routes = kind->bench_routes;
    int nr = o->first_route && kind->n_bench_routes ? 1 : (int)kind->n_bench_routes;
    const enum gv_dtype *types = cpu ? kind->host_types : gpu_types;
    int nt = cpu ? (int)kind->n_host_types : (int)(sizeof gpu_types / sizeof gpu_types[0]);
    struct shape shapes[16];
    int ns = 0;
#define ADD_SHAPES(arr)                                                                      \
    for (size_t i_ = 0; i_ < sizeof arr / sizeof arr[0]; i_++)                               \
        shapes[ns++] = arr[i_];
    if (cpu) {
        if (mode == GV_BENCH_QUICK) {
            ADD_SHAPES(cpu_quick)
        } else {
            ADD_SHAPES(cpu_default)
        }
    } else if (mode == GV_BENCH_QUICK) {
        ADD_SHAPES(gpu_quick)
    } else {
        ADD_SHAPES(gpu_default)
        if (mode == GV_BENCH_FULL)
            ADD_SHAPES(gpu_full_extra)
    }
#undef ADD_SHAPES
    for (int t = 0; t < nt; t++)
        for (int r = 0; r < nr; r++)
            for (int s = 0; s < ns; s++) {
                if (types[t] == GV_F8E4M3 && routes[r].no_fp8)
                    continue;
                struct item *it = add(p, "gemm");
                if (!it)
                    return;
                const struct shape *sh = &shapes[s];
                const char *route = routes[r].name;
                snprintf(it->id, sizeof it->id, "gemm.%s.%s.%lldx%lldx%lld", route,
                         gv_dtype_name(types[t]), sh->m, sh->n, sh->k);
                snprintf(it->name, sizeof it->name, "%s GEMM %lldx%lldx%lld (%s), %s",
                         gv_dtype_name(types[t]), sh->m, sh->n, sh->k, sh->what, route);
                it->unit = "TFLOP/s";
                it->unit_scale = 1e12;
                it->work = 2.0 * (double)sh->m * (double)sh->n * (double)sh->k;
                it->peak = kb_gpu_peak_tflops(peak, types[t]);
                it->spec.kind = GV_BW_GEMM;
                it->spec.route = route;
                it->spec.dtype = types[t];
                it->spec.m = sh->m, it->spec.n = sh->n, it->spec.k = sh->k;
                it->spec.rotate_bytes = cpu ? 0 : 2 * l2;
                snprintf(it->route_name, sizeof it->route_name, "%s", route);
            }
}

static void plan_memory(struct plan *p, int runtime_copy, const struct sizes *z,
                        const struct kb_gpu_peak *peak)
{
    static const char *const ops[] = {"copy", "scale", "add", "triad", "read"};
    static const int weight[] = {2, 2, 3, 3, 1}; /* arrays read + written per element */
    char sz[32];
    size_name(z->stream_bytes, sz, sizeof sz);
    for (int i = 0; i < 5; i++) {
        struct item *it = add(p, "memory");
        if (!it)
            return;
        snprintf(it->id, sizeof it->id, "memory.%s.%zuB", ops[i], z->stream_bytes);
        snprintf(it->name, sizeof it->name, "memory %s, arrays of %s (bytes read + written)",
                 ops[i], sz);
        it->unit = "GB/s", it->unit_scale = 1e9;
        it->work = (double)weight[i] * (double)z->stream_bytes;
        it->peak = peak ? peak->hbm_tbps * 1000 : NAN;
        it->spec.kind = GV_BW_STREAM;
        it->spec.stream = (enum gv_bw_stream)i;
        it->spec.bytes = z->stream_bytes;
    }
    if (!runtime_copy)
        return;
    struct item *it = add(p, "memory");
    if (!it)
        return;
    snprintf(it->id, sizeof it->id, "memory.d2d_memcpy.%zuB", z->stream_bytes);
    snprintf(it->name, sizeof it->name, "device-to-device copy by the runtime, %s (bytes read + "
             "written)", sz);
    it->unit = "GB/s", it->unit_scale = 1e9;
    it->work = 2.0 * (double)z->stream_bytes;
    it->peak = peak ? peak->hbm_tbps * 1000 : NAN;
    it->spec.kind = GV_BW_D2D;
    it->spec.bytes = z->stream_bytes;
}

static void plan_transfers(struct plan *p, const struct sizes *z)
{
    char sz[32];
    size_name(z->copy_bytes, sz, sizeof sz);
    for (int dir = 0; dir < 2; dir++)
        for (int pinned = 1; pinned >= 0; pinned--) {
            struct item *it = add(p, "transfer");
            if (!it)
                return;
            const char *d = dir ? "d2h" : "h2d";
            snprintf(it->id, sizeof it->id, "transfer.%s.%s.%zuB", d,
                     pinned ? "pinned" : "pageable", z->copy_bytes);
            snprintf(it->name, sizeof it->name, "%s %s, %s", dir ? "device to host" : "host to device",
                     pinned ? "pinned" : "pageable", sz);
            it->unit = "GB/s", it->unit_scale = 1e9;
            it->work = (double)z->copy_bytes;
            it->spec.kind = dir ? GV_BW_D2H : GV_BW_H2D;
            it->spec.pinned = pinned;
            it->spec.bytes = z->copy_bytes;
        }
}

static void plan_launch(struct plan *p)
{
    static const char *const ids[] = {"back_to_back", "launch_and_wait", "issue"};
    static const char *const names[] = {
        "empty kernel, back to back on the device (per launch)",
        "empty kernel, launch and wait for it (host clock)",
        "empty kernel, the host's cost of issuing one launch"};
    for (int i = 0; i < 3; i++) {
        struct item *it = add(p, "latency");
        if (!it)
            return;
        snprintf(it->id, sizeof it->id, "latency.launch.%s", ids[i]);
        snprintf(it->name, sizeof it->name, "%s", names[i]);
        it->unit = "us", it->lower_better = 1;
        it->spec.kind = GV_BW_LAUNCH;
        it->spec.launch = (enum gv_bw_launch)i;
    }
}

static void plan_peers(struct plan *p, int ndev, const struct sizes *z)
{
    for (int s = 0; s < ndev; s++)
        for (int d = 0; d < ndev; d++) {
            if (s == d)
                continue;
            struct item *it = add(p, "peer");
            if (!it)
                return;
            snprintf(it->id, sizeof it->id, "peer.%d-%d.%zuB", s, d, z->peer_bytes);
            snprintf(it->name, sizeof it->name, "GPU %d to GPU %d copy", s, d);
            it->unit = "GB/s", it->unit_scale = 1e9;
            it->work = (double)z->peer_bytes;
            it->spec.kind = GV_BW_PEER;
            it->spec.bytes = z->peer_bytes;
            it->spec.peer_src = s, it->spec.peer_dst = d;
        }
}

static void sizes_for(enum gv_bench_mode mode, int cpu, struct sizes *z)
{
    memset(z, 0, sizeof *z);
    z->samples = mode == GV_BENCH_QUICK ? 5 : mode == GV_BENCH_DEFAULT ? 10 : 20;
    z->min_sample_s = mode == GV_BENCH_QUICK ? 1e-3 : 2e-3;
    z->warm_s = mode == GV_BENCH_QUICK ? 0.2 : 1.0;
    z->rounds = mode == GV_BENCH_QUICK ? 5 : 7;
    if (cpu)
        z->stream_bytes = mode == GV_BENCH_QUICK ? 64u << 20 : 256u << 20;
    else
        z->stream_bytes = mode == GV_BENCH_QUICK ? 256u << 20 : 1u << 30;
    z->copy_bytes = mode == GV_BENCH_QUICK ? 64u << 20 : mode == GV_BENCH_DEFAULT ? 256u << 20 : 1u << 30;
    z->peer_bytes = mode == GV_BENCH_QUICK ? 64u << 20 : 256u << 20;
}

/* ---- measuring ---- */

struct run {
    const struct gv_bench_backend *be;
    struct gv_bdev *d;
    const struct sizes *z;
    const char *warmed[8]; /* groups already warmed up */
    int nwarm;
};

static int warmed(struct run *r, const char *group)
{
    for (int i = 0; i < r->nwarm; i++)
        if (strcmp(r->warmed[i], group) == 0)
            return 1;
    if (r->nwarm < 8)
        r->warmed[r->nwarm++] = group;
    return 0;
}

static double value_of(const struct item *it, double seconds, int iters)
{
    if (it->lower_better)
        return seconds / iters * 1e6;
    return it->work * iters / seconds / it->unit_scale;
}

/* Repetitions per sample so that a sample lasts at least min_sample_s. */
static int calibrate(struct run *r, struct gv_bw *w, int *iters, struct gv_err *err)
{
    double t = 0;
    int n = 1;
    int rc0 = r->be->time(r->d, w, 1, &t, err); /* the first run is cold: not used */
    if (rc0)
        return rc0;
    for (int step = 0; step < 8; step++) {
        int rc = r->be->time(r->d, w, n, &t, err);
        if (rc)
            return rc;
        if (t >= r->z->min_sample_s || n >= 100000)
            break;
        double want = t > 0 ? r->z->min_sample_s / t * n * 1.2 : n * 10.0;
        n = want > 100000 ? 100000 : want < n * 2 ? n * 2 : (int)want;
    }
    *iters = n;
    return GV_OK;
}

static void set_stats(json_t *o, double *v, int n, const struct item *it)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, json_real(v[i]));
    struct gv_bench_stats s;
    gv_bench_stats_of(v, n, &s);
    json_object_set_new(o, "value", json_real(s.median));
    json_object_set_new(o, "min", json_real(s.min));
    json_object_set_new(o, "max", json_real(s.max));
    json_object_set_new(o, "spread", json_real(s.spread));
    json_object_set_new(o, "samples", arr);
    if (isfinite(it->peak) && it->peak > 0) {
        json_object_set_new(o, "peak", json_real(it->peak));
        json_object_set_new(o, "of_peak", json_real(s.median / it->peak));
    }
}

static json_t *result_base(const struct item *it)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(it->id));
    json_object_set_new(o, "group", json_string(it->group));
    json_object_set_new(o, "name", json_string(it->name));
    json_object_set_new(o, "unit", json_string(it->unit));
    json_object_set_new(o, "better", json_string(it->lower_better ? "lower" : "higher"));
    json_t *pa = json_object();
    const struct gv_bw_spec *s = &it->spec;
    if (s->kind == GV_BW_GEMM) {
        json_object_set_new(pa, "route", json_string(s->route));
        json_object_set_new(pa, "dtype", json_string(gv_dtype_name(s->dtype)));
        json_object_set_new(pa, "m", json_integer(s->m));
        json_object_set_new(pa, "n", json_integer(s->n));
        json_object_set_new(pa, "k", json_integer(s->k));
        json_object_set_new(pa, "flop", json_real(it->work));
        json_object_set_new(pa, "layout", json_string("C = A . W^T (row-major, PyTorch's linear)"));
    } else if (s->kind != GV_BW_LAUNCH) {
        json_object_set_new(pa, "bytes", json_integer((json_int_t)s->bytes));
        json_object_set_new(pa, "bytes_counted", json_real(it->work));
    }
    if (s->kind == GV_BW_PEER) {
        json_object_set_new(pa, "src", json_integer(s->peer_src));
        json_object_set_new(pa, "dst", json_integer(s->peer_dst));
    }
    json_object_set_new(o, "params", pa);
    return o;
}

static void set_status(json_t *o, const char *status, const char *reason)
{
    json_object_set_new(o, "status", json_string(status));
    if (reason)
        json_object_set_new(o, "reason", json_string(reason));
    json_object_set_new(o, "value", json_null());
}

/* One benchmark, start to end; a failure of this one is in its result. A
 * device fault returns its status so the caller can stop. */
static int measure(struct run *r, const struct item *it, json_t *results)
{
    json_t *o = result_base(it);
    json_array_append_new(results, o);
    struct gv_err err = {0};
    struct gv_bw *w = NULL;
    char impl[2048] = ""; /* a worker's description whole, not cut at 511 */
    int rc = r->be->prepare(r->d, &it->spec, &w, impl, sizeof impl, &err);
    if (rc == GV_E_UNSUPPORTED) {
        set_status(o, "unsupported", err.msg);
        return GV_OK;
    }
    double *v = NULL;
    int iters = 0, ok = 0;
    char what[2048] = "";
    if (rc)
        goto fail;
    json_object_set_new(o, "impl", json_string(impl));
    json_t *facts = r->be->facts ? r->be->facts(r->d, w) : NULL;
    if (facts)
        json_object_update(json_object_get(o, "params"), facts);
    json_decref(facts);
    if ((rc = calibrate(r, w, &iters, &err)))
        goto fail;
    double t, t0 = now();
    int warm_min = 2;
    double warm_s = warmed(r, it->group) ? 0 : r->z->warm_s;
    for (int i = 0; i < warm_min || now() - t0 < warm_s; i++)
        if ((rc = r->be->time(r->d, w, iters, &t, &err)))
            goto fail;
    v = calloc((size_t)r->z->samples, sizeof *v);
    if (!v) {
        rc = gv_err_set(&err, GV_E_NOMEM, "samples");
        goto fail;
    }
    for (int s = 0; s < r->z->samples; s++) {
        if ((rc = r->be->time(r->d, w, iters, &t, &err)))
            goto fail;
        v[s] = value_of(it, t, iters);
    }
    if ((rc = r->be->check(r->d, w, &ok, what, sizeof what, &err)))
        goto fail;
    json_object_set_new(o, "iterations_per_sample", json_integer(iters));
    json_object_set_new(o, "check", json_pack("{s:b,s:s}", "ok", ok, "what", what));
    if (!ok) {
        set_status(o, "failed", "the result is wrong: the figure is withheld");
    } else {
        json_object_set_new(o, "status", json_string("ok"));
        set_stats(o, v, r->z->samples, it);
    }
    free(v);
    r->be->release(r->d, w);
    return GV_OK;
fail:
    free(v);
    set_status(o, rc == GV_E_TIMEOUT ? "timeout" : "error", err.msg);
    if (w)
        r->be->release(r->d, w);
    return rc == GV_E_TIMEOUT ? rc : GV_OK;
}

/* ---- fp16 against bf16 ---- */

/* Interleaved samples of two prepared GEMMs: a, b, a, b, ... */
static int interleave(struct run *r, struct gv_bw *wa, struct gv_bw *wb, const struct item *ia,
                      const struct item *ib, double *va, double *vb, int rounds, struct gv_err *err)
{
    int na, nb, rc;
    if ((rc = calibrate(r, wa, &na, err)) || (rc = calibrate(r, wb, &nb, err)))
        return rc;
    double t;
    for (int i = 0; i < 2; i++)
        if ((rc = r->be->time(r->d, wa, na, &t, err)) || (rc = r->be->time(r->d, wb, nb, &t, err)))
            return rc;
    for (int i = 0; i < rounds; i++) {
        if ((rc = r->be->time(r->d, wa, na, &t, err)))
            return rc;
        va[i] = value_of(ia, t, na);
        if ((rc = r->be->time(r->d, wb, nb, &t, err)))
            return rc;
        vb[i] = value_of(ib, t, nb);
    }
    return GV_OK;
}

static json_t *verdict_text(const char *route, const struct shape *sh, int rounds,
                            const struct gv_bench_ab *ab, double mf, double mb)
{
    const char *then = !ab->clear ? "no clear difference (the spread covers it): either will do"
                       : ab->ratio > 1 ? "prefer bf16"
                                       : "prefer fp16";
    char fb[64], ff[64];
    json_t *text = json_sprintf("bf16 is %.2fx the speed of fp16 here (%s, %lldx%lldx%lld, %d "
                                "interleaved rounds, medians %s and %s): %s", ab->ratio, route,
                                sh->m, sh->n, sh->k, rounds,
                                gv_bench_format_figure(mb, "TFLOP/s", fb, sizeof fb),
                                gv_bench_format_figure(mf, "TFLOP/s", ff, sizeof ff), then);
    return json_pack("{s:o,s:f,s:b,s:i,s:f,s:f,s:s}", "text", text, "ratio", ab->ratio, "clear",
                     ab->clear, "rounds", rounds, "fp16_median", mf, "bf16_median", mb, "route",
                     route);
}

static json_t *fp16_vs_bf16(struct run *r, const char *route, const struct shape *sh)
{
    struct item ia = {0}, ib = {0};
    ia.work = ib.work = 2.0 * (double)sh->m * (double)sh->n * (double)sh->k;
    ia.unit_scale = ib.unit_scale = 1e12;
    struct gv_bw_spec sa = {.kind = GV_BW_GEMM, .route = route, .dtype = GV_F16, .m = sh->m,
                            .n = sh->n, .k = sh->k, .rotate_bytes = 0};
    struct gv_bw_spec sb = sa;
    sb.dtype = GV_BF16;
    struct gv_bw *wa = NULL, *wb = NULL;
    struct gv_err err = {0};
    char impl[2048];
    int rounds = r->z->rounds;
    double va[16], vb[16];
    json_t *o = json_object();
    json_object_set_new(o, "id", json_sprintf("verdict.bf16_vs_fp16.%lldx%lldx%lld", sh->m, sh->n,
                                              sh->k));
    int rc = r->be->prepare(r->d, &sa, &wa, impl, sizeof impl, &err);
    if (!rc)
        rc = r->be->prepare(r->d, &sb, &wb, impl, sizeof impl, &err);
    if (!rc)
        rc = interleave(r, wa, wb, &ia, &ib, va, vb, rounds, &err);
    if (rc) {
        json_object_set_new(o, "text", json_sprintf("fp16 against bf16 not measured: %s", err.msg));
    } else {
        struct gv_bench_ab ab;
        gv_bench_compare_arms(va, rounds, vb, rounds, &ab);
        struct gv_bench_stats s16, s16b;
        gv_bench_stats_of(va, rounds, &s16);
        gv_bench_stats_of(vb, rounds, &s16b);
        json_t *t = verdict_text(route, sh, rounds, &ab, s16.median, s16b.median);
        json_object_update(o, t);
        json_decref(t);
    }
    if (wa)
        r->be->release(r->d, wa);
    if (wb)
        r->be->release(r->d, wb);
    return o;
}

/* ---- summaries ---- */

/* The best ok GEMM result per precision. */
static json_t *best_gemm(json_t *results)
{
    json_t *best = json_array();
    for (int t = 0; t < GV_DTYPE_COUNT; t++) {
        const char *dt = gv_dtype_name((enum gv_dtype)t);
        json_t *top = NULL;
        double tv = -1;
        size_t i;
        json_t *r;
        json_array_foreach(results, i, r) {
            json_t *pa = json_object_get(r, "params");
            if (strcmp(json_string_value(json_object_get(r, "group")) ?: "", "gemm") != 0 ||
                strcmp(json_string_value(json_object_get(r, "status")) ?: "", "ok") != 0 ||
                strcmp(json_string_value(json_object_get(pa, "dtype")) ?: "", dt) != 0)
                continue;
            double v = json_real_value(json_object_get(r, "value"));
            if (v > tv)
                tv = v, top = r;
        }
        if (!top)
            continue;
        json_t *o = json_pack("{s:s,s:O,s:f,s:O,s:O}", "dtype", dt, "id", json_object_get(top, "id"),
                              "tflops", tv, "route",
                              json_object_get(json_object_get(top, "params"), "route"), "name",
                              json_object_get(top, "name"));
        json_t *op = json_object_get(top, "of_peak");
        if (op)
            json_object_set(o, "of_peak", op);
        json_array_append_new(best, o);
    }
    return best;
}

/* The largest spread of an ok result, and its id. */
static double max_spread(json_t *results, const char **id)
{
    double top = NAN;
    size_t i;
    json_t *r;
    *id = NULL;
    json_array_foreach(results, i, r) {
        json_t *sp = json_object_get(r, "spread");
        if (strcmp(json_string_value(json_object_get(r, "status")) ?: "", "ok") != 0 ||
            !json_is_number(sp) || !isfinite(json_number_value(sp)))
            continue;
        if (isnan(top) || json_number_value(sp) > top)
            top = json_number_value(sp), *id = json_string_value(json_object_get(r, "id"));
    }
    return top;
}

static json_t *method(const struct sizes *z, const char *timer)
{
    return json_pack(
        "{s:s,s:i,s:f,s:f,s:s,s:s,s:s,s:s,s:s}", "timer", timer, "samples", z->samples,
        "min_sample_seconds", z->min_sample_s, "warmup_seconds", z->warm_s, "statistic",
        "median of the samples; min, max and spread = (max - min) / median beside it",
        "gemm_data",
        "random signs and mantissas, magnitudes in [0.25, 1) (no zeros, no low-toggle data); "
        "operand sets rotated through at least twice the L2 cache, so products read memory",
        "bytes",
        "memory kernels and device copies count bytes read plus written (GB = 1e9); host and "
        "peer copies count the bytes moved once",
        "checks",
        "every benchmark's result is checked after its timed samples: GEMM outputs on sampled "
        "elements against fp64, copies and memory kernels exactly; a wrong result has no figure",
        "comparisons",
        "fp16 against bf16: interleaved rounds; a difference is called only when the two sample "
        "ranges do not overlap and it exceeds both spreads");
}

/* ---- the run ---- */

static void add_if(struct plan *src, struct plan *dst, const char *only)
{
    for (int i = 0; i < src->n; i++)
        if (gv_bench_selected(only, src->items[i].id) && dst->n < MAX_ITEMS)
            dst->items[dst->n++] = src->items[i];
}

static double l2_bytes(json_t *desc)
{
    json_t *l2 = json_object_get(desc, "l2_cache_bytes");
    return json_is_integer(l2) ? (double)json_integer_value(l2) : 0;
}

static void run_collectives(const struct gv_bench_opts *o, const char *kind, json_t *doc,
                            json_t *results)
{
    struct gv_coll_opts co = {0};
    co.kind = kind;
    co.max_bytes = o->mode == GV_BENCH_QUICK ? 64u << 20 : o->mode == GV_BENCH_DEFAULT ? 1u << 30
                                                                                     : 4ull << 30;
    co.factor = o->mode == GV_BENCH_QUICK ? 4 : 2;
    co.only = o->only;
    json_t *info = NULL;
    struct gv_err err = {0};
    int rc = gv_coll_bench(&co, results, &info, &err);
    if (rc)
        json_object_set_new(doc, "collectives", json_pack("{s:s}", "error", err.msg));
    else
        json_object_set_new(doc, "collectives", info ? info : json_object());
}

int gv_bench_run(const struct gv_bench_opts *o, json_t **doc_out, struct gv_err *err)
{
    *doc_out = NULL;
    const struct gv_dev_kind *kind = NULL;
    struct gv_bdev *d = NULL;
    char note[1200];
    int rc = gv_bench_device_open(o->device, &kind, &d, note, sizeof note, err);
    if (rc)
        return rc;
    const struct gv_bench_backend *be = kind->bench;
    double t0 = now();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct gv_bench_load load = {.ncpu = ncpu > 0 ? (int)ncpu : -1, .load1_before = NAN,
                                 .load1_after = NAN};
    gv_bench_load_read("/", 1, &load);
    json_t *desc = be->describe(d);
    const char *spec = o->device ? o->device : kind->name;
    int cpu = gv_dev_spec_on_host(spec);
    struct sizes z;
    sizes_for(o->mode, cpu, &z);
    const char *devname = json_string_value(json_object_get(desc, "name"));
    const struct kb_gpu_peak *peak = cpu ? NULL : kb_gpu_peak_find(devname);
    static struct plan all, sel;
    all.n = sel.n = 0;
    double cache = kb_gpu_cache_bytes(peak, l2_bytes(desc), kind->amd);
    /* each device array at least 4x the last-level cache (docs/facts/bench-anchors.md §3) */
    if (!cpu && z.stream_bytes < 4 * cache)
        z.stream_bytes = (size_t)(4 * cache);
    plan_gemm(&all, kind, !cpu, o, peak, cache);
    if (kind->bench_parts & GV_BENCH_MEMORY)
        plan_memory(&all, kind->bench_parts & GV_BENCH_RUNTIME, &z, peak);
    if (kind->bench_parts & GV_BENCH_RUNTIME) {
        plan_transfers(&all, &z);
        plan_launch(&all);
        plan_peers(&all, be->count(d), &z);
    }
    add_if(&all, &sel, o->only);

    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(GV_BENCH_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_BENCH_SCHEMA_VERSION));
    json_object_set_new(doc, "mode", json_string(o->mode == GV_BENCH_QUICK     ? "quick"
                                                 : o->mode == GV_BENCH_DEFAULT ? "default"
                                                                               : "full"));
    json_object_set_new(doc, "device_spec", json_string(spec));
    if (note[0])
        json_object_set_new(doc, "device_note", json_string(note));
    json_object_set_new(doc, "device", desc);
    json_object_set_new(doc, "only", o->only ? json_string(o->only) : json_null());
    json_object_set_new(doc, "method",
                        method(&z, json_string_value(json_object_get(desc, "bench_timer")) ?: ""));
    if (peak)
        json_object_set_new(doc, "peaks", json_pack("{s:s,s:s}", "part", peak->part, "source",
                                                    peak->source));
    else
        json_object_set_new(doc, "peaks", json_pack("{s:s}", "part", "unknown: no entry in "
                                                    "gpuvet's table for this device"));
    json_t *cond = json_object();
    json_object_set_new(cond, "before", be->conditions(d));
    json_object_set_new(doc, "conditions", cond);
    json_t *results = json_array();
    json_object_set_new(doc, "results", results);

    struct run r = {be, d, &z, {0}, 0};
    int fatal = 0;
    for (int i = 0; i < sel.n && !fatal; i++) {
        if (o->progress)
            o->progress(o->progress_ctx, sel.items[i].id, i, sel.n);
        fatal = measure(&r, &sel.items[i], results);
        /* the clocks while the GPU is still hot from the GEMMs */
        if (strcmp(sel.items[i].group, "gemm") == 0 &&
            (i + 1 == sel.n || strcmp(sel.items[i + 1].group, "gemm") != 0))
            json_object_set_new(cond, "after_gemm", be->conditions(d));
    }
    if (fatal)
        json_object_set_new(doc, "stopped",
                            json_string("a device fault or timeout stopped the run; the "
                                        "benchmarks after it did not run"));
    json_t *verdicts = json_array();
    if (!cpu && !fatal && gv_bench_selected(o->only, "verdict.bf16_vs_fp16")) {
        const char *vroute = kind->bench_routes[0].name;
        static const struct shape vs[] = {{4096, 4096, 4096, "square"}, {8192, 8192, 8192, "square"}};
        int nv = o->mode == GV_BENCH_QUICK ? 1 : 2;
        for (int i = 0; i < nv; i++)
            json_array_append_new(verdicts, fp16_vs_bf16(&r, vroute, &vs[i]));
    }
    json_object_set_new(doc, "verdicts", verdicts);
    json_object_set_new(doc, "best", best_gemm(results));
    json_object_set_new(cond, "after", be->conditions(d));
    if (!o->gemm_only)
        json_object_set_new(doc, "topology", gv_bench_topology(be, d));
    be->close(d);
    /* collectives open their own contexts on every GPU (after this one is closed) */
    if (o->gemm_only)
        json_object_set_new(doc, "collectives", json_pack("{s:s}", "skipped", "GEMMs only"));
    else if (!kind->no_collectives && !fatal)
        run_collectives(o, kind->name, doc, results);
    else
        json_object_set_new(doc, "collectives",
                            json_pack("{s:s}", "skipped", kind->no_collectives
                                                              ? kind->no_collectives
                                                              : "the run stopped at a fault"));
    gv_bench_load_read("/", 0, &load);
    const char *spread_id;
    double spread = max_spread(results, &spread_id);
    json_object_set_new(doc, "machine_load", gv_bench_load_judge(&load, spread, spread_id));
    json_object_set_new(doc, "seconds", json_real(now() - t0));
    *doc_out = doc;
    return GV_OK;
}

/* ---- fleet's short bench ---- */

#define FLEET_SHORT_BUDGET_S 120.0 /* under it: the first route only */

static json_t *figure_of(const json_t *r, double scale, const char *unit)
{
    json_t *sp = json_object_get(r, "spread");
    return json_pack("{s:O,s:s,s:f,s:o}", "id", json_object_get(r, "id"), "unit", unit,
                     "median", json_number_value(json_object_get(r, "value")) * scale, "spread",
                     json_is_number(sp) ? json_real(json_number_value(sp)) : json_null());
}

int gv_bench_figures(const char *device, double budget, json_t **figures, struct gv_err *err)
{
    *figures = NULL;
    struct gv_bench_opts o = {.device = device, .only = "gemm.*", .mode = GV_BENCH_QUICK,
                              .first_route = budget > 0 && budget < FLEET_SHORT_BUDGET_S,
                              .gemm_only = 1};
    json_t *doc = NULL;
    int rc = gv_bench_run(&o, &doc, err);
    if (rc)
        return rc;
    /* the unit gpuvet bench shows: TFLOP/s on a GPU, GFLOP/s on the host */
    int host = gv_dev_spec_on_host(json_string_value(json_object_get(doc, "device_spec")));
    json_t *out = json_array(), *r;
    size_t i;
    json_array_foreach(json_object_get(doc, "results"), i, r) {
        const char *st = json_string_value(json_object_get(r, "status"));
        const char *unit = json_string_value(json_object_get(r, "unit"));
        if (!st || strcmp(st, "ok") || !unit || strcmp(unit, "TFLOP/s"))
            continue;
        json_array_append_new(out, figure_of(r, host ? 1e3 : 1, host ? "GFLOP/s" : "TFLOP/s"));
    }
    json_decref(doc);
    *figures = out;
    return GV_OK;
}

/* ---- reading ---- */

int gv_bench_validate(const json_t *doc, const char *path, struct gv_err *err)
{
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (!schema || strcmp(schema, GV_BENCH_SCHEMA) != 0)
        return gv_err_set(err, GV_E_SCHEMA, "%s: not a gpuvet bench result (schema %s)", path,
                          schema ? schema : "missing");
    json_t *ver = json_object_get(doc, "schema_version");
    if (!json_is_integer(ver))
        return gv_err_set(err, GV_E_FORMAT, "%s: schema_version missing or not an integer", path);
    if (json_integer_value(ver) != GV_BENCH_SCHEMA_VERSION)
        return gv_err_set(err, GV_E_SCHEMA, "%s: gpuvet.bench version %lld; this gpuvet reads "
                          "version %d", path, (long long)json_integer_value(ver),
                          GV_BENCH_SCHEMA_VERSION);
    json_t *results = json_object_get(doc, "results");
    if (!json_is_array(results))
        return gv_err_set(err, GV_E_FORMAT, "%s: results is not an array", path);
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *id = json_string_value(json_object_get(r, "id"));
        const char *st = json_string_value(json_object_get(r, "status"));
        if (!json_is_object(r) || !id || !st)
            return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] lacks id or status", path, i);
        const char *better = json_string_value(json_object_get(r, "better"));
        if (!better || (strcmp(better, "higher") && strcmp(better, "lower")))
            return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] (%s): better must be higher "
                              "or lower", path, i, id);
        if (strcmp(st, "ok") == 0) {
            json_t *v = json_object_get(r, "value");
            if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
                json_number_value(v) < 0)
                return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] (%s): status ok without "
                                  "a finite value", path, i, id);
            json_t *sp = json_object_get(r, "spread");
            if (sp && !json_is_number(sp))
                return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] (%s): spread is not a "
                                  "number", path, i, id);
        }
    }
    return GV_OK;
}
