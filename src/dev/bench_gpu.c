/* gpuvet bench's code common to the CUDA and HIP backends (bench_gpu.h): the
 * memory, copy, launch and peer benchmarks and the timing loops, written once
 * over the timing primitives (struct gv_gpu_timing, gpu.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/bench_gpu.h"
#include "num/fp.h"

#define GEMM_SAMPLES 16
#define MEM_SAMPLES 4096
#define ALGO_TRIAL_S 0.5e-3 /* device time of one trial sample per algorithm */
#define ALGO_TRIAL_ROUNDS 3
#define GATE_MAX_S 0.25

double gv_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- GEMM operands ---- */

int gv_bench_gemm_sets(size_t set_bytes, size_t free_bytes, double rotate)
{
    if (set_bytes > free_bytes / 2)
        return 0;
    int n = 1;
    if (rotate > (double)set_bytes)
        n = (int)ceil(rotate / (double)set_bytes);
    if (n > GV_BENCH_MAX_SETS)
        n = GV_BENCH_MAX_SETS;
    while (n > 1 && set_bytes * (size_t)n > free_bytes / 2)
        n--;
    return n;
}

static int fill(const struct gv_bench_gpu *d, gv_dptr p, long long n, enum gv_dtype st,
                unsigned long long seed, struct gv_err *err)
{
    int width, man, ebits;
    gv_bench_format(st, &width, &man, &ebits);
    long long nn = n;
    void *args[] = {&p, &nn, &width, &man, &ebits, &seed};
    return d->ops->launch(d->ctx, "gv_bench_fill", d->grid, 256, 0, args, err);
}

int gv_bench_gemm_alloc(const struct gv_bench_gpu *d, struct gv_bench_gemm *g, enum gv_dtype dt,
                        size_t free_bytes, double rotate,
                        int (*memset_ff)(void *ctx, gv_dptr p, size_t bytes, struct gv_err *err),
                        struct gv_err *err)
{
    int wi, man, eb, wo;
    gv_bench_format(g->in_store, &wi, &man, &eb);
    gv_bench_format(g->out_store, &wo, &man, &eb);
    size_t ab = (size_t)(g->m * g->k) * wi, wb = (size_t)(g->n * g->k) * wi;
    size_t cb = (size_t)(g->m * g->n) * wo, set = ab + wb + cb;
    g->nsets = 0;
    int want = gv_bench_gemm_sets(set, free_bytes, rotate);
    if (want < 1)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%zu bytes of operands, %zu free on the device",
                          set, free_bytes);
    g->seed_a = 0xA11CE + (unsigned long long)dt;
    g->seed_w = 0xB0B + (unsigned long long)dt;
    for (int i = 0; i < want; i++) {
        int rc = d->ops->alloc(d->ctx, ab, &g->a[i], err);
        if (!rc && (rc = d->ops->alloc(d->ctx, wb, &g->w[i], err)) != GV_OK)
            d->ops->release(d->ctx, g->a[i]);
        if (!rc && (rc = d->ops->alloc(d->ctx, cb, &g->c[i], err)) != GV_OK) {
            d->ops->release(d->ctx, g->a[i]);
            d->ops->release(d->ctx, g->w[i]);
        }
        if (rc)
            return rc;
        g->nsets = i + 1;
        if ((rc = fill(d, g->a[i], g->m * g->k, g->in_store, g->seed_a, err)) ||
            (rc = fill(d, g->w[i], g->n * g->k, g->in_store, g->seed_w, err)) ||
            (memset_ff && (rc = memset_ff(d->ctx, g->c[i], cb, err))))
            return rc;
    }
    return d->ops->finish(d->ctx, err);
}

void gv_bench_gemm_free(const struct gv_bench_gpu *d, struct gv_bench_gemm *g)
{
    for (int i = 0; i < g->nsets; i++) {
        d->ops->release(d->ctx, g->a[i]);
        d->ops->release(d->ctx, g->w[i]);
        d->ops->release(d->ctx, g->c[i]);
    }
    g->nsets = 0;
}

/* The product of row i of A and row j of W, and the sum of |a||w| (the bound's scale). */
static double gemm_ref(const struct gv_bench_gemm *g, long long i, long long j, double *scale)
{
    double s = 0, a = 0;
    for (long long t = 0; t < g->k; t++) {
        double x = gv_bench_value(g->in_store, g->seed_a, (unsigned long long)(i * g->k + t));
        double y = gv_bench_value(g->in_store, g->seed_w, (unsigned long long)(j * g->k + t));
        s += x * y;
        a += fabs(x * y);
    }
    *scale = a;
    return s;
}

int gv_bench_gemm_check(const struct gv_bench_gpu *d, const struct gv_bench_gemm *g, double tol,
                        int *ok, char *what, size_t whatsz, struct gv_err *err)
{
    int wo, man, eb, bad = 0, n = 0;
    gv_bench_format(g->out_store, &wo, &man, &eb);
    double worst = 0;
    for (int s = 0; s < g->nsets; s++)
        for (int q = 0; q < GEMM_SAMPLES; q++) {
            unsigned long long h = gv_bench_hash(0xC4EC + (unsigned)s, (unsigned)q);
            long long i = q == 0 ? g->m - 1 : (long long)(h % (unsigned long long)g->m);
            long long j = q == 0 ? g->n - 1 : (long long)((h >> 32) % (unsigned long long)g->n);
            unsigned char cell[8];
            gv_dptr at = g->c[s] + (gv_dptr)((i * g->n + j) * wo);
            int rc = d->ops->download(d->ctx, cell, at, (size_t)wo, err);
            if (rc)
                return rc;
            double got = gv_fp_load(cell, g->out_store, 0), scale;
            double ref = gemm_ref(g, i, j, &scale);
            double e = fabs(got - ref) / (scale > 0 ? scale : 1);
            if (!(e <= tol))
                bad++;
            if (e > worst || e != e)
                worst = e;
            n++;
        }
    *ok = bad == 0;
    snprintf(what, whatsz, "%d sampled elements of the %d operand set(s)' last product against an "
             "fp64 product of the same operands: %d beyond %.0e of sum|a*w| (worst %.2g)", n,
             g->nsets, bad, tol, worst);
    return GV_OK;
}

/* ---- memory kernels and copies ---- */

int gv_bench_iota(const struct gv_bench_gpu *d, gv_dptr p, long long n, float base,
                  struct gv_err *err)
{
    long long nn = n;
    void *args[] = {&p, &nn, &base};
    return d->ops->launch(d->ctx, "gv_bench_iota", d->grid, 256, 0, args, err);
}

static float f_of(long long i) { return (float)(i & 0xFFFFF); }
static float ex_copy(long long i) { return f_of(i) + 1.0f; }
static float ex_scale(long long i) { return 3.0f * (f_of(i) + 3.0f); }
static float ex_add(long long i) { return (f_of(i) + 1.0f) + (f_of(i) + 2.0f); }
static float ex_triad(long long i) { return (f_of(i) + 2.0f) + 3.0f * (f_of(i) + 3.0f); }
static float ex_host(long long i) { return 5.0f + f_of(i); }

void gv_bench_host_pattern(float *host, size_t bytes)
{
    for (long long i = 0; i < (long long)(bytes / 4); i++)
        host[i] = ex_host(i);
}

static long long sample_index(int q, long long n)
{
    return q == 0 ? n - 1 : (long long)(gv_bench_hash(0x5EED, (unsigned)q) % (unsigned long long)n);
}

/* Elements of a float array on the device (or the host) against expect(i). */
static int check_floats(const struct gv_bench_gpu *d, gv_dptr p, const float *host, long long n,
                        float (*expect)(long long), int *bad, int *seen, struct gv_err *err)
{
    for (int q = 0; q < MEM_SAMPLES; q++) {
        long long i = sample_index(q, n);
        float v;
        if (host) {
            v = host[i];
        } else {
            int rc = d->ops->download(d->ctx, &v, p + (gv_dptr)i * 4, 4, err);
            if (rc)
                return rc;
        }
        if (v != expect(i))
            (*bad)++;
        (*seen)++;
    }
    return GV_OK;
}

/* What gv_bench_read leaves in out[t]: thread t's sum in the kernel's order. */
static float read_sum(long long t, long long n4, long long stride)
{
    float acc = 0.0f;
    for (long long i = t; i < n4; i += stride) {
        float x = (float)((4 * i) & 0xFFFFF) + 1.0f, y = (float)((4 * i + 1) & 0xFFFFF) + 1.0f;
        float z = (float)((4 * i + 2) & 0xFFFFF) + 1.0f, v = (float)((4 * i + 3) & 0xFFFFF) + 1.0f;
        acc += x + y + z + v;
    }
    return acc;
}

static int read_check(const struct gv_bench_gpu *d, const struct gv_bench_mem *m, int *bad,
                      int *seen, struct gv_err *err)
{
    long long stride = (long long)m->grid * 256, n4 = (long long)(m->bytes / 16);
    long long ts[3] = {0, stride / 2, stride - 1};
    for (int q = 0; q < 3; q++) {
        float v;
        int rc = d->ops->download(d->ctx, &v, m->out + (gv_dptr)ts[q] * 4, 4, err);
        if (rc)
            return rc;
        if (v != read_sum(ts[q], n4, stride))
            (*bad)++;
        (*seen)++;
    }
    return GV_OK;
}

static int stream_check(const struct gv_bench_gpu *d, const struct gv_bench_mem *m, int *bad,
                        int *seen, struct gv_err *err)
{
    long long n = (long long)(m->bytes / 4);
    switch (m->stream) {
    case GV_ST_COPY: return check_floats(d, m->z, NULL, n, ex_copy, bad, seen, err);
    case GV_ST_SCALE: return check_floats(d, m->y, NULL, n, ex_scale, bad, seen, err);
    case GV_ST_ADD: return check_floats(d, m->z, NULL, n, ex_add, bad, seen, err);
    case GV_ST_TRIAD: return check_floats(d, m->x, NULL, n, ex_triad, bad, seen, err);
    case GV_ST_READ: return read_check(d, m, bad, seen, err);
    }
    return GV_OK;
}

int gv_bench_mem_check(const struct gv_bench_gpu *d, const struct gv_bench_mem *m, int *ok,
                       char *what, size_t whatsz, struct gv_err *err)
{
    int bad = 0, seen = 0, rc = GV_OK;
    long long n = (long long)(m->bytes / 4);
    switch (m->kind) {
    case GV_BW_STREAM: rc = stream_check(d, m, &bad, &seen, err); break;
    case GV_BW_D2D:
    case GV_BW_PEER: rc = check_floats(d, m->y, NULL, n, ex_copy, &bad, &seen, err); break;
    case GV_BW_H2D: rc = check_floats(d, m->x, NULL, n, ex_host, &bad, &seen, err); break;
    case GV_BW_D2H: rc = check_floats(d, 0, m->host, n, ex_copy, &bad, &seen, err); break;
    default: break;
    }
    if (rc)
        return rc;
    *ok = bad == 0;
    snprintf(what, whatsz, "%d sampled elements of the result compared exactly with the known "
             "values: %d wrong", seen, bad);
    return GV_OK;
}

/* ---- the test hook ---- */

static gv_dptr mem_result(const struct gv_bench_mem *m, size_t *last)
{
    *last = m->bytes / 4 - 1;
    switch (m->kind) {
    case GV_BW_STREAM:
        if (m->stream == GV_ST_READ) {
            *last = 0;
            return m->out;
        }
        return m->stream == GV_ST_SCALE ? m->y : m->stream == GV_ST_TRIAD ? m->x : m->z;
    case GV_BW_D2D: return m->y;
    case GV_BW_H2D: return m->x;
    default: return 0;
    }
}

int gv_bench_test_corrupt(const struct gv_bench_gpu *d, const struct gv_bench_gemm *g,
                          const struct gv_bench_mem *m, struct gv_err *err)
{
    const char *v = getenv("GPUVET_TEST_BENCH_CORRUPT");
    if (!v || strcmp(v, "1") != 0)
        return GV_OK;
    unsigned char junk[8] = {0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f};
    if (g && g->nsets > 0) {
        int wo, man, eb;
        gv_bench_format(g->out_store, &wo, &man, &eb);
        return d->ops->upload(d->ctx, g->c[0] + (gv_dptr)((g->m * g->n - 1) * wo), junk,
                              (size_t)wo, err);
    }
    if (!m)
        return GV_OK;
    size_t last;
    if (m->kind == GV_BW_D2H && m->host) {
        m->host[m->bytes / 4 - 1] += 1.0f;
        return GV_OK;
    }
    gv_dptr at = mem_result(m, &last);
    return at ? d->ops->upload(d->ctx, at + (gv_dptr)last * 4, junk, 4, err) : GV_OK;
}

/* ---- the gate ---- */

int gv_bench_gated_time(const struct gv_bench_gate *g, int iters, double *enq_per_iter,
                        int *gated, double *sec, struct gv_err *err)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        double gate = *enq_per_iter * iters * 1.5 + 100e-6;
        if (gate > GATE_MAX_S)
            gate = GATE_MAX_S;
        int rc = g->spin ? g->spin(g->ctx, gate, err) : GV_OK;
        if (rc)
            return rc;
        double t0 = gv_bench_now();
        if ((rc = g->mark(g->ctx, 0, err)))
            return rc;
        for (int i = 0; i < iters; i++)
            if ((rc = g->enqueue(g->ctx, i, err)))
                return rc;
        if ((rc = g->mark(g->ctx, 1, err)))
            return rc;
        double enq = gv_bench_now() - t0;
        if ((rc = g->wait(g->ctx, err)) || (rc = g->elapsed(g->ctx, sec, err)))
            return rc;
        *enq_per_iter = enq / iters;
        *gated = enq < gate || !g->spin;
        if (*gated || gate >= GATE_MAX_S)
            return GV_OK;
    }
    return GV_OK;
}

/* ---- the Lt algorithm trial ---- */

int gv_bench_pick_algo(struct gv_lt_plan *p, double trial[GV_LT_PLAN_ALGOS], const char *lib,
                       int (*time_fn)(void *ctx, int iters, double *sec, struct gv_err *err),
                       int (*broken)(void *ctx), void *ctx, struct gv_err *err)
{
    double t = 0;
    int rc;
    p->pick = 0;
    if ((rc = time_fn(ctx, 1, &t, err)) || (rc = time_fn(ctx, 1, &t, err)))
        return rc;
    int iters = t > 0 ? (int)ceil(ALGO_TRIAL_S / t) : 1;
    iters = iters < 1 ? 1 : iters > 1000 ? 1000 : iters;
    for (int i = 0; i < p->nalgo; i++)
        trial[i] = INFINITY;
    struct gv_err first = {0};
    for (int round = 0; round < ALGO_TRIAL_ROUNDS; round++)
        for (int i = 0; i < p->nalgo; i++) {
            if (trial[i] == 0)
                continue;
            struct gv_err e = {0};
            p->pick = i;
            if (time_fn(ctx, iters, &t, &e) != GV_OK) {
                trial[i] = 0;
                if (!first.msg[0])
                    first = e;
                if (broken(ctx))
                    return gv_err_set(err, e.code ? e.code : GV_E_DEVICE, "%s", e.msg);
                continue;
            }
            if (t / iters < trial[i])
                trial[i] = t / iters;
        }
    int best = -1;
    for (int i = 0; i < p->nalgo; i++)
        if (trial[i] > 0 && isfinite(trial[i]) && (best < 0 || trial[i] < trial[best]))
            best = i;
    if (best < 0)
        return gv_err_set(err, first.code ? first.code : GV_E_DEVICE, "every %s algorithm tried "
                          "failed: %s", lib, first.msg);
    p->pick = best;
    return GV_OK;
}

json_t *gv_bench_algo_facts(const struct gv_bw_spec *s, const struct gv_lt_plan *p,
                            const double trial[GV_LT_PLAN_ALGOS])
{
    if (s->kind != GV_BW_GEMM || p->nalgo < 1)
        return NULL;
    double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    json_t *tf = json_array();
    for (int i = 0; i < p->nalgo; i++)
        json_array_append_new(tf, trial[i] > 0 && isfinite(trial[i])
                                      ? json_real(flop / trial[i] / 1e12) : json_null());
    return json_pack("{s:{s:i,s:i,s:o}}", "algorithm", "heuristic_rank", p->pick + 1, "tried",
                     p->nalgo, "trial_tflops", tf);
}

/* ---- the device: the gate's events and word ---- */

int gv_bench_gpu_start(struct gv_bench_gpu *d, struct gv_err *err)
{
    d->t = d->ops->timing;
    if (!d->t)
        return gv_err_set(err, GV_E_UNSUPPORTED, "this backend has no timing primitives");
    int rc = d->t->use_device(d->ctx, -1, err);
    if (!rc)
        rc = d->t->event_create(d->ctx, &d->e0, err);
    if (!rc)
        rc = d->t->event_create(d->ctx, &d->e1, err);
    if (!rc)
        rc = d->ops->alloc(d->ctx, 16, &d->gate, err);
    if (!rc)
        rc = d->ops->upload(d->ctx, d->gate, (float[4]){0, 0, 0, 0}, 16, err);
    if (!rc)
        d->ndev = d->t->device_count(d->ctx);
    return rc;
}

void gv_bench_gpu_stop(struct gv_bench_gpu *d)
{
    if (!d->t)
        return;
    d->ops->release(d->ctx, d->gate);
    d->t->event_destroy(d->ctx, d->e0);
    d->t->event_destroy(d->ctx, d->e1);
    d->gate = 0, d->e0 = d->e1 = NULL;
}

void gv_bench_work_init(struct gv_bench_work *w, const struct gv_bw_spec *s)
{
    w->s = *s;
    w->enq_per_iter = 20e-6;
}

/* ---- memory, copies, launches, peers ---- */

static const char *const stream_kernel[] = {"gv_bench_copy", "gv_bench_scale", "gv_bench_add",
                                            "gv_bench_triad", "gv_bench_read"};

static int stream_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, long long n, char *impl,
                          size_t implsz, struct gv_err *err)
{
    int rc;
    if ((rc = d->ops->alloc(d->ctx, w->s.bytes, &w->y, err)) ||
        (rc = d->ops->alloc(d->ctx, w->s.bytes, &w->z, err)) ||
        (rc = d->ops->alloc(d->ctx, (size_t)w->grid * 256 * 4, &w->out, err)) ||
        (rc = gv_bench_iota(d, w->y, n, 2.0f, err)) || (rc = gv_bench_iota(d, w->z, n, 3.0f, err)))
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

static int host_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, char *impl,
                        size_t implsz, struct gv_err *err)
{
    const struct gv_gpu_timing *t = d->t;
    if (w->s.pinned) {
        int rc = t->host_alloc(d->ctx, w->s.bytes, &w->host, err);
        if (rc)
            return rc;
        w->host_pinned = 1;
    } else if (!(w->host = malloc(w->s.bytes))) {
        return gv_err_set(err, GV_E_NOMEM, "%zu bytes of host memory", w->s.bytes);
    }
    gv_bench_host_pattern(w->host, w->s.bytes);
    snprintf(impl, implsz, "%s%s, %s%s%s host memory", t->prefix,
             w->s.kind == GV_BW_H2D ? (w->s.pinned ? "MemcpyHtoDAsync" : "MemcpyHtoD")
                                    : (w->s.pinned ? "MemcpyDtoHAsync" : "MemcpyDtoH"),
             w->s.pinned ? "pinned (" : "pageable (malloc)", w->s.pinned ? t->pinned : "",
             w->s.pinned ? ")" : "");
    return GV_OK;
}

static int mem_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, char *impl, size_t implsz,
                       struct gv_err *err)
{
    size_t bytes = w->s.bytes & ~(size_t)63;
    if (bytes < 64)
        return gv_err_set(err, GV_E_USAGE, "a memory benchmark needs at least 64 bytes");
    w->s.bytes = bytes;
    long long n = (long long)(bytes / 4);
    w->grid = d->grid;
    int rc = d->ops->alloc(d->ctx, bytes, &w->x, err);
    if (!rc)
        rc = gv_bench_iota(d, w->x, n, 1.0f, err);
    if (!rc && w->s.kind == GV_BW_STREAM)
        rc = stream_prepare(d, w, n, impl, implsz, err);
    if (!rc && w->s.kind == GV_BW_D2D) {
        rc = d->ops->alloc(d->ctx, bytes, &w->y, err);
        snprintf(impl, implsz, "%sMemcpyDtoDAsync", d->t->prefix);
    }
    if (!rc && (w->s.kind == GV_BW_H2D || w->s.kind == GV_BW_D2H))
        rc = host_prepare(d, w, impl, implsz, err);
    return rc ? rc : d->ops->finish(d->ctx, err);
}

static int launch_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, char *impl,
                          size_t implsz, struct gv_err *err)
{
    int rc = d->t->kernel(d->ctx, "gv_bench_empty", err);
    if (rc)
        return rc;
    static const char *const how[] = {"back to back, device events", "launch and wait, host clock",
                                      "issue only, host clock"};
    snprintf(impl, implsz, "%s <<<1,1>>>, %s", d->t->launcher, how[w->s.launch]);
    return GV_OK;
}

/* The source's pattern, 1 + (i & 0xFFFFF), uploaded from the host. */
static int peer_fill(struct gv_bench_gpu *d, struct gv_bench_work *w, struct gv_err *err)
{
    long long n = (long long)(w->s.bytes / 4);
    float *pat = malloc(w->s.bytes);
    if (!pat)
        return gv_err_set(err, GV_E_NOMEM, "%zu bytes of host memory", w->s.bytes);
    for (long long i = 0; i < n; i++)
        pat[i] = (float)(i & 0xFFFFF) + 1.0f;
    int rc = d->ops->upload(d->ctx, w->x, pat, w->s.bytes, err);
    free(pat);
    return rc;
}

static int peer_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, char *impl,
                        size_t implsz, struct gv_err *err)
{
    const struct gv_gpu_timing *t = d->t;
    int src = w->s.peer_src, dst = w->s.peer_dst, rc;
    if ((rc = t->peer_hold(d->ctx, src, err)))
        return rc;
    w->held_src = 1;
    if ((rc = t->peer_hold(d->ctx, dst, err)))
        return rc;
    w->held_dst = 1;
    char why[128];
    int can = t->peer_access(d->ctx, src, dst, why, sizeof why);
    if ((rc = t->use_device(d->ctx, dst, err)) ||
        (rc = d->ops->alloc(d->ctx, w->s.bytes, &w->y, err)) ||
        (rc = t->use_device(d->ctx, src, err)) ||
        (rc = d->ops->alloc(d->ctx, w->s.bytes, &w->x, err)) || (rc = peer_fill(d, w, err)))
        return rc;
    if (can == 1 && (rc = t->peer_enable(d->ctx, dst, err)))
        return rc;
    if ((rc = t->stream_create(d->ctx, &w->pstream, err)) ||
        (rc = t->event_create(d->ctx, &w->pe0, err)) ||
        (rc = t->event_create(d->ctx, &w->pe1, err)))
        return rc;
    snprintf(impl, implsz, "%sMemcpyPeerAsync %d -> %d (%s)", t->prefix, src, dst,
             can == 1 ? "peer access enabled" : "no peer access: staged through the host");
    return GV_OK;
}

int gv_bench_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, char *impl, size_t implsz,
                     struct gv_err *err)
{
    struct gv_err ignored = {0};
    int rc;
    switch (w->s.kind) {
    case GV_BW_LAUNCH: rc = launch_prepare(d, w, impl, implsz, err); break;
    case GV_BW_PEER: rc = peer_prepare(d, w, impl, implsz, err); break;
    default: rc = mem_prepare(d, w, impl, implsz, err); break;
    }
    d->t->use_device(d->ctx, -1, &ignored);
    return rc;
}

int gv_bench_gemm_prepare(struct gv_bench_gpu *d, struct gv_bench_work *w, struct gv_err *err)
{
    size_t fr = 0;
    int rc = d->t->mem_free(d->ctx, &fr, err);
    if (rc)
        return rc;
    w->gm.m = w->s.m, w->gm.n = w->s.n, w->gm.k = w->s.k;
    return gv_bench_gemm_alloc(d, &w->gm, w->s.dtype, fr, w->s.rotate_bytes, d->t->memset_ff, err);
}

static void release_peer(struct gv_bench_gpu *d, struct gv_bench_work *w)
{
    const struct gv_gpu_timing *t = d->t;
    struct gv_err ignored = {0};
    if (w->held_src && !t->use_device(d->ctx, w->s.peer_src, &ignored)) {
        t->stream_destroy(d->ctx, w->pstream);
        t->event_destroy(d->ctx, w->pe0);
        t->event_destroy(d->ctx, w->pe1);
        d->ops->release(d->ctx, w->x);
        w->x = 0;
    }
    if (w->held_dst && !t->use_device(d->ctx, w->s.peer_dst, &ignored)) {
        d->ops->release(d->ctx, w->y);
        w->y = 0;
    }
    t->use_device(d->ctx, -1, &ignored);
    if (w->held_src)
        t->peer_release(d->ctx, w->s.peer_src);
    if (w->held_dst)
        t->peer_release(d->ctx, w->s.peer_dst);
}

void gv_bench_work_release(struct gv_bench_gpu *d, struct gv_bench_work *w)
{
    const struct gv_gpu_timing *t = d->t;
    struct gv_err ignored = {0};
    if (!t->broken(d->ctx)) {
        t->use_device(d->ctx, -1, &ignored);
        gv_bench_gemm_free(d, &w->gm);
        if (w->s.kind == GV_BW_PEER)
            release_peer(d, w);
        d->ops->release(d->ctx, w->x);
        d->ops->release(d->ctx, w->y);
        d->ops->release(d->ctx, w->z);
        d->ops->release(d->ctx, w->out);
    }
    if (w->host_pinned)
        t->host_free(d->ctx, w->host);
    else
        free(w->host);
    w->host = NULL;
}

/* ---- timing ----
 *
 * Device-timed work is gated: a spin kernel holds the stream while the start
 * event, the `iters` repetitions and the end event are enqueued, so the events
 * time the GPU's work and not the host's launches (a lone small GEMM on an idle
 * GPU otherwise reads several times too slow). When enqueueing outlasts the
 * gate, the gate is lengthened and the sample taken again (gv_bench_gated_time).
 * Host-clock work (pageable copies, launch-and-wait, the cost of issuing a
 * launch) is timed with CLOCK_MONOTONIC, which is what that figure means. */

/* One repetition, enqueued on the stream (asynchronous). */
static int enqueue(struct gv_bench_gpu *d, struct gv_bench_work *w, int i, struct gv_err *err)
{
    const struct gv_gpu_timing *t = d->t;
    long long nn = (long long)(w->s.bytes / 16);
    float sc = 3.0f;
    switch (w->s.kind) {
    case GV_BW_GEMM:
        return d->gemm_once(d->vendor, w, i % w->gm.nsets, err);
    case GV_BW_STREAM: {
        void *copy[] = {&w->x, &w->z, &nn}, *scale[] = {&w->y, &w->z, &sc, &nn};
        void *add[] = {&w->x, &w->y, &w->z, &nn}, *triad[] = {&w->x, &w->y, &w->z, &sc, &nn};
        void *rd[] = {&w->x, &w->out, &nn};
        void **args[] = {copy, scale, add, triad, rd};
        return d->ops->launch(d->ctx, stream_kernel[w->s.stream],
                              w->s.stream == GV_ST_READ ? w->grid : w->vgrid, 256, 0,
                              args[w->s.stream], err);
    }
    case GV_BW_D2D:
        return t->copy(d->ctx, GV_COPY_D2D, 1, w->y, w->x, NULL, w->s.bytes, err);
    case GV_BW_H2D:
        return t->copy(d->ctx, GV_COPY_H2D, 1, w->x, 0, w->host, w->s.bytes, err);
    case GV_BW_D2H:
        return t->copy(d->ctx, GV_COPY_D2H, 1, 0, w->x, w->host, w->s.bytes, err);
    case GV_BW_LAUNCH:
        return d->ops->launch(d->ctx, "gv_bench_empty", 1, 1, 0, NULL, err);
    case GV_BW_PEER:
        return t->peer_copy(d->ctx, w->y, w->s.peer_dst, w->x, w->s.peer_src, w->s.bytes,
                            w->pstream, err);
    }
    return GV_OK;
}

/* The work on the host clock, each repetition waited for (pageable copies,
 * launch and wait) or not (issuing only; the wait after is not timed). */
static int time_host(struct gv_bench_gpu *d, struct gv_bench_work *w, int iters, double *sec,
                     struct gv_err *err)
{
    const struct gv_gpu_timing *t = d->t;
    int issue_only = w->s.kind == GV_BW_LAUNCH && w->s.launch == GV_LAUNCH_ENQUEUE;
    double total = 0;
    for (int i = 0; i < iters; i++) {
        double t0 = gv_bench_now();
        int rc;
        if (w->s.kind == GV_BW_H2D)
            rc = t->copy(d->ctx, GV_COPY_H2D, 0, w->x, 0, w->host, w->s.bytes, err);
        else if (w->s.kind == GV_BW_D2H)
            rc = t->copy(d->ctx, GV_COPY_D2H, 0, 0, w->x, w->host, w->s.bytes, err);
        else if (!(rc = enqueue(d, w, i, err)) && !issue_only)
            rc = t->stream_sync(d->ctx, NULL, err);
        if (rc)
            return rc;
        total += gv_bench_now() - t0;
    }
    *sec = total;
    return issue_only ? d->ops->finish(d->ctx, err) : GV_OK;
}

/* The gate's calls (gv_bench_gated_time) on a piece of work. */
struct gate_ctx {
    struct gv_bench_gpu *d;
    struct gv_bench_work *w;
};

static int g_spin(void *ctx, double seconds, struct gv_err *err)
{
    struct gv_bench_gpu *d = ((struct gate_ctx *)ctx)->d;
    long long count = (long long)(seconds / d->spin_unit_s);
    void *args[] = {&d->gate, &count};
    return d->ops->launch(d->ctx, "gv_bench_spin", 1, 1, 0, args, err);
}

static int g_mark(void *ctx, int end, struct gv_err *err)
{
    struct gate_ctx *g = ctx;
    int peer = g->w->s.kind == GV_BW_PEER;
    void *e = end ? (peer ? g->w->pe1 : g->d->e1) : (peer ? g->w->pe0 : g->d->e0);
    return g->d->t->event_record(g->d->ctx, e, peer ? g->w->pstream : NULL, err);
}

static int g_enqueue(void *ctx, int i, struct gv_err *err)
{
    struct gate_ctx *g = ctx;
    return enqueue(g->d, g->w, i, err);
}

/* The backend's own stream under the case timeout, or the peer one. */
static int g_wait(void *ctx, struct gv_err *err)
{
    struct gate_ctx *g = ctx;
    if (g->w->s.kind != GV_BW_PEER)
        return g->d->ops->finish(g->d->ctx, err);
    return g->d->t->stream_sync(g->d->ctx, g->w->pstream, err);
}

static int g_elapsed(void *ctx, double *sec, struct gv_err *err)
{
    struct gate_ctx *g = ctx;
    int peer = g->w->s.kind == GV_BW_PEER;
    return g->d->t->event_elapsed(g->d->ctx, peer ? g->w->pe0 : g->d->e0,
                                  peer ? g->w->pe1 : g->d->e1, sec, err);
}

int gv_bench_time_device(struct gv_bench_gpu *d, struct gv_bench_work *w, int iters, double *sec,
                         struct gv_err *err)
{
    struct gate_ctx c = {d, w};
    struct gv_bench_gate g = {&c, w->s.kind == GV_BW_PEER ? NULL : g_spin, g_mark, g_enqueue,
                              g_wait, g_elapsed};
    return gv_bench_gated_time(&g, iters, &w->enq_per_iter, &w->gated, sec, err);
}

int gv_bench_time(struct gv_bench_gpu *d, struct gv_bench_work *w, int iters, double *sec,
                  struct gv_err *err)
{
    const struct gv_gpu_timing *t = d->t;
    struct gv_err ignored = {0};
    if (t->broken(d->ctx))
        return gv_err_set(err, GV_E_DEVICE, "%s", t->unusable);
    t->use_device(d->ctx, w->s.kind == GV_BW_PEER ? w->s.peer_src : -1, &ignored);
    int host = ((w->s.kind == GV_BW_H2D || w->s.kind == GV_BW_D2H) && !w->s.pinned) ||
               (w->s.kind == GV_BW_LAUNCH && w->s.launch != GV_LAUNCH_BACK_TO_BACK);
    int rc = host ? time_host(d, w, iters, sec, err) : gv_bench_time_device(d, w, iters, sec, err);
    t->use_device(d->ctx, -1, &ignored);
    return rc;
}

/* ---- checks ---- */

int gv_bench_check(struct gv_bench_gpu *d, struct gv_bench_work *w, double tol, int *ok,
                   char *what, size_t whatsz, struct gv_err *err)
{
    const struct gv_gpu_timing *t = d->t;
    struct gv_err ignored = {0};
    if (t->broken(d->ctx))
        return gv_err_set(err, GV_E_DEVICE, "%s", t->unusable);
    t->use_device(d->ctx, -1, &ignored);
    struct gv_bench_mem m = {w->s.kind, w->s.stream, w->s.bytes, w->x, w->y, w->z, w->out,
                             w->host, w->grid};
    int rc = gv_bench_test_corrupt(d, w->s.kind == GV_BW_GEMM ? &w->gm : NULL, &m, err);
    if (rc)
        return rc;
    if (w->s.kind == GV_BW_GEMM)
        return gv_bench_gemm_check(d, &w->gm, tol, ok, what, whatsz, err);
    if (w->s.kind == GV_BW_LAUNCH) {
        *ok = 1;
        snprintf(what, whatsz, "an empty kernel: the stream completed without an error");
        return GV_OK;
    }
    if (w->s.kind == GV_BW_PEER)
        t->use_device(d->ctx, w->s.peer_dst, &ignored);
    rc = gv_bench_mem_check(d, &m, ok, what, whatsz, err);
    t->use_device(d->ctx, -1, &ignored);
    return rc;
}

/* ---- a backend's calls on its struct gv_bdev (bench_gpu.h) ---- */

static struct gv_bench_gpu *gpu_of(struct gv_bdev *b) { return (struct gv_bench_gpu *)b; }

int gv_bench_gpu_time(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec,
                      struct gv_err *err)
{
    return gv_bench_time(gpu_of(b), (struct gv_bench_work *)w, iters, sec, err);
}

int gv_bench_gpu_count(struct gv_bdev *b) { return gpu_of(b)->ndev; }

int gv_bench_gpu_peer_access(struct gv_bdev *b, int src, int dst, char *why, size_t whysz)
{
    struct gv_bench_gpu *d = gpu_of(b);
    return d->t->peer_access(d->ctx, src, dst, why, whysz);
}

int gv_bench_gpu_pci_address(struct gv_bdev *b, int i, char *buf, size_t bufsz)
{
    struct gv_bench_gpu *d = gpu_of(b);
    return d->t->pci_address(d->ctx, i, buf, bufsz);
}
