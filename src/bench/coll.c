/* Collective benchmarks: the method (see coll.h). The device half (ranks,
 * streams, communicators, buffers, the library's calls, events, the check
 * kernels) is src/dev/coll.c's; this file chooses the sizes, counts bytes and
 * bandwidths as nccl-tests does, runs the sweep and judges and scores each
 * result.
 *
 * Method. Every size of an op is first run `warmup` times untimed. Then, per
 * size: the output region is poisoned, the gate closed, the timed iterations
 * queued behind it (each checked on the device: src/dev/coll.c) and the gate
 * opened. An iteration's time is the slowest rank's event interval. As
 * nccl-tests does, iteration i works on the buffers at offset
 * (i mod (buffer/size)) * size so that small sizes do not run from the cache. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/globs.h"
#include "bench/coll.h"
#include "dev/coll.h"
#include "dev/gpu.h"

#define MAXDEV GV_COLL_MAXDEV
#define MAXITERS 10000
#define MAXSIZES 64

static const char *const op_names[GV_COLL_NOPS] = {"all_reduce", "all_gather", "reduce_scatter",
                                                   "broadcast", "all_to_all"};

const char *gv_coll_op_name(enum gv_coll_op op)
{
    return (unsigned)op < GV_COLL_NOPS ? op_names[op] : "?";
}

int gv_coll_op_from_name(const char *name)
{
    for (int i = 0; name && i < GV_COLL_NOPS; i++)
        if (strcmp(name, op_names[i]) == 0)
            return i;
    return -1;
}

/* ---- nccl-tests' counting (pure) ---- */

void gv_coll_size(enum gv_coll_op op, size_t size, size_t elt, int nranks, struct gv_coll_size *s)
{
    size_t n = nranks > 0 ? (size_t)nranks : 1;
    size_t count = elt ? size / elt : 0;
    size_t align = elt && elt < 16 ? 16 / elt : 1; /* nccl-tests: & ~(16/eltSize - 1) */
    memset(s, 0, sizeof *s);
    switch (op) {
    case GV_COLL_ALL_REDUCE:
    case GV_COLL_BROADCAST:
        s->count = s->send_count = s->recv_count = count;
        break;
    case GV_COLL_ALL_GATHER:
        s->count = s->send_count = (count / n) & ~(align - 1);
        s->recv_count = s->count * n;
        break;
    case GV_COLL_REDUCE_SCATTER:
        s->count = s->recv_count = (count / n) & ~(align - 1);
        s->send_count = s->count * n;
        break;
    case GV_COLL_ALL_TO_ALL:
        s->count = (count / n) & ~(align - 1);
        s->send_count = s->recv_count = s->count * n;
        break;
    default:
        return;
    }
    size_t mx = s->send_count > s->recv_count ? s->send_count : s->recv_count;
    s->bytes = mx * elt;
}

double gv_coll_busbw_factor(enum gv_coll_op op, int nranks)
{
    double n = nranks > 0 ? nranks : 1;
    switch (op) {
    case GV_COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case GV_COLL_ALL_GATHER:
    case GV_COLL_REDUCE_SCATTER:
    case GV_COLL_ALL_TO_ALL:
        return (n - 1) / n;
    case GV_COLL_BROADCAST:
        return 1.0;
    default:
        return 0.0;
    }
}

void gv_coll_bw(enum gv_coll_op op, size_t bytes, int nranks, double sec, double *algbw,
                double *busbw)
{
    double a = sec > 0 ? (double)bytes / 1.0e9 / sec : 0.0;
    *algbw = a;
    *busbw = a * gv_coll_busbw_factor(op, nranks);
}

size_t gv_coll_sweep(size_t min, size_t max, int factor, size_t *out, size_t cap)
{
    if (min == 0 || max < min || factor < 2)
        return 0;
    size_t n = 0;
    for (size_t s = min; s <= max; s *= (size_t)factor) {
        if (n < cap)
            out[n] = s;
        n++;
        if (s > SIZE_MAX / (size_t)factor)
            break;
    }
    return n;
}

/* ---- the run ---- */

struct coll {
    struct gv_coll_opts o;
    struct gv_coll_dev *dev;
    int n;               /* ranks */
    size_t alloc;        /* bytes of each rank's send and receive buffers */
    int corrupt, hang;   /* test hooks (coll.h) */
};

struct measured {
    struct gv_coll_times t;
    int deferred; /* the checks followed the last iteration (gv_coll_dev_timed) */
};

static int warm(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s, const char *id,
                struct gv_err *err)
{
    for (int w = 0; w < c->o.warmup; w++) {
        int rc = gv_coll_dev_enqueue(c->dev, op, s, 0, c->n, err);
        if (rc)
            return gv_err_prefix(err, "%s warm-up", id);
    }
    return GV_OK;
}

/* ---- results ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s || n <= 0) {
        free(s);
        return 0;
    }
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

static void human(size_t b, char *out, size_t outsz)
{
    if (b >= (1u << 30) && b % (1u << 30) == 0)
        snprintf(out, outsz, "%zu GiB", b >> 30);
    else if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(out, outsz, "%zu MiB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(out, outsz, "%zu KiB", b >> 10);
    else
        snprintf(out, outsz, "%zu B", b);
}

static json_t *new_result(struct coll *c, enum gv_coll_op op, size_t nominal,
                          const struct gv_coll_size *s, const char *id)
{
    char hs[32], name[64];
    human(nominal, hs, sizeof hs);
    snprintf(name, sizeof name, "%s %s", op_names[op], hs);
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "group", json_string("collective"));
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "unit", json_string("GB/s"));
    json_object_set_new(o, "better", json_string("higher"));
    json_t *p = json_object();
    json_object_set_new(p, "op", json_string(op_names[op]));
    json_object_set_new(p, "bytes", json_integer((json_int_t)s->bytes));
    json_object_set_new(p, "nominal_bytes", json_integer((json_int_t)nominal));
    json_object_set_new(p, "count", json_integer((json_int_t)s->count));
    json_object_set_new(p, "nranks", json_integer(c->n));
    json_object_set_new(p, "dtype", json_string("f32"));
    if (op == GV_COLL_ALL_REDUCE || op == GV_COLL_REDUCE_SCATTER)
        json_object_set_new(p, "redop", json_string("sum"));
    if (op == GV_COLL_BROADCAST)
        json_object_set_new(p, "root", json_integer(0));
    json_object_set_new(p, "in_place", json_false());
    if (op == GV_COLL_ALL_TO_ALL)
        json_object_set_new(p, "call", json_string(gv_coll_dev_alltoall_call(c->dev)));
    json_object_set_new(p, "iters", json_integer(c->o.iters));
    json_object_set_new(p, "warmup", json_integer(c->o.warmup));
    json_object_set_new(p, "gated", json_boolean(gv_coll_dev_gated(c->dev)));
    json_object_set_new(o, "params", p);
    json_object_set_new(o, "impl", json_sprintf("%s %s", gv_coll_dev_library(c->dev),
                                                gv_coll_dev_version(c->dev)));
    return o;
}

static void score(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s,
                  const struct measured *m, json_t *o)
{
    int n = c->o.iters;
    double *bus = malloc((size_t)n * sizeof *bus);
    json_t *samples = json_array(), *p = json_object_get(o, "params");
    double lo = 0, hi = 0;
    /* one GPU: the bus bandwidth is 0 by nccl-tests' definition (nothing crosses
     * a link); the value is then the algorithm bandwidth, and says so */
    int alg_value = gv_coll_busbw_factor(op, c->n) == 0;
    for (int i = 0; bus && i < n; i++) {
        double a, b;
        gv_coll_bw(op, s->bytes, c->n, m->t.sec[i], &a, &b);
        b = alg_value ? a : b;
        bus[i] = b;
        lo = i == 0 || b < lo ? b : lo;
        hi = i == 0 || b > hi ? b : hi;
        json_array_append_new(samples, json_real(b));
    }
    double t = median(m->t.sec, n), val = bus ? median(bus, n) : 0, alg, busm;
    gv_coll_bw(op, s->bytes, c->n, t, &alg, &busm);
    json_object_set_new(o, "value", json_real(val));
    json_object_set_new(o, "min", json_real(lo));
    json_object_set_new(o, "max", json_real(hi));
    json_object_set_new(o, "samples", samples);
    json_object_set_new(o, "spread", json_real(val > 0 ? (hi - lo) / val : 0.0));
    json_object_set_new(p, "algbw_gbps", json_real(alg));
    json_object_set_new(p, "busbw_gbps", json_real(busm));
    json_object_set_new(p, "busbw_factor", json_real(gv_coll_busbw_factor(op, c->n)));
    json_object_set_new(p, "value_is", json_string(alg_value ? "algbw (busbw is 0 on one GPU)"
                                                             : "busbw"));
    json_object_set_new(p, "time_us", json_real(t * 1e6));
    json_object_set_new(p, "checks", json_string(m->deferred ? "after the last iteration"
                                                            : "after each iteration"));
    if (m->deferred) { /* nccl-tests' figure: the whole run over the number of iterations */
        gv_coll_bw(op, s->bytes, c->n, m->t.batch, &alg, &busm);
        json_object_set_new(p, "batch_time_us", json_real(m->t.batch * 1e6));
        json_object_set_new(p, "batch_busbw_gbps", json_real(busm));
        json_object_set_new(p, "batch_algbw_gbps", json_real(alg));
    }
    free(bus);
}

static const char *const check_what = "every timed iteration compared with the exact result on "
                                      "the device (inputs are small integers, so every sum is "
                                      "exact in any order), outside the timing events";

static void judge(struct coll *c, const struct measured *m, json_t *o, int *failed)
{
    unsigned long long total = 0;
    json_t *bad_it = json_array();
    int first = -1, nbad = 0;
    for (int it = 0; it < c->o.iters; it++)
        if (m->t.miss[it]) {
            total += m->t.miss[it];
            nbad++;
            if (first < 0)
                first = it;
            json_array_append_new(bad_it, json_integer(it));
        }
    json_t *ck = json_object();
    json_object_set_new(ck, "ok", json_boolean(total == 0));
    json_object_set_new(ck, "what", json_string(check_what));
    json_object_set_new(ck, "mismatches", json_integer((json_int_t)total));
    json_object_set_new(ck, "failed_iterations", bad_it);
    json_object_set_new(o, "check", ck);
    *failed = total != 0;
    if (*failed) {
        json_object_set_new(o, "status", json_string("failed"));
        json_object_set_new(o, "reason",
                            json_sprintf("%llu wrong elements in %d of %d timed iterations "
                                         "(first: iteration %d); a wrong result has no score",
                                         total, nbad, c->o.iters, first));
    } else {
        json_object_set_new(o, "status", json_string("ok"));
    }
}

static int measure(struct coll *c, enum gv_coll_op op, const struct gv_coll_size *s, json_t *o,
                   const char *id, struct gv_err *err)
{
    size_t steps = c->alloc / s->bytes;
    if (steps < 1)
        steps = 1;
    size_t used = (steps < (size_t)c->o.iters ? steps : (size_t)c->o.iters) * s->bytes;
    struct measured m = {{0, calloc((size_t)c->o.iters, sizeof(double)),
                          calloc((size_t)c->o.iters, sizeof(unsigned long long))},
                         steps >= (size_t)c->o.iters};
    int rc = m.t.sec && m.t.miss ? GV_OK : gv_err_set(err, GV_E_NOMEM, "%s", id);
    if (!rc)
        rc = gv_coll_dev_poison(c->dev, used, err);
    if (!rc)
        rc = gv_coll_dev_gate_close(c->dev, err);
    if (!rc)
        rc = gv_coll_dev_timed(c->dev, op, s, steps, c->corrupt, err);
    if (!rc && c->hang && c->n > 1) /* test hook: rank 0 alone waits for its peers */
        rc = gv_coll_dev_enqueue(c->dev, op, s, 0, 1, err);
    gv_coll_dev_gate_open(c->dev); /* whatever happened */
    if (!rc)
        rc = gv_coll_dev_wait(c->dev, id, err);
    if (!rc)
        rc = gv_coll_dev_collect(c->dev, &m.t, err);
    if (!rc) {
        int failed = 0;
        judge(c, &m, o, &failed);
        if (!failed)
            score(c, op, s, &m, o);
    }
    free(m.t.sec);
    free(m.t.miss);
    return rc;
}

/* ---- the sweep ---- */


struct plan {
    size_t nominal[MAXSIZES];
    struct gv_coll_size size[MAXSIZES];
    char id[MAXSIZES][80];
    int n;
};

static void plan_op(const struct coll *c, enum gv_coll_op op, const size_t *sweep, size_t nsw,
                    int nranks, struct plan *pl)
{
    pl->n = 0;
    for (size_t i = 0; i < nsw && pl->n < MAXSIZES; i++) {
        struct gv_coll_size s;
        gv_coll_size(op, sweep[i], 4, nranks, &s);
        char id[80];
        snprintf(id, sizeof id, "coll.%s.f32.%zuB", op_names[op], sweep[i]);
        if (s.count == 0 || !gv_globs_match(c->o.only, id))
            continue; /* too small to split over the ranks, or not asked for */
        pl->nominal[pl->n] = sweep[i];
        pl->size[pl->n] = s;
        snprintf(pl->id[pl->n], sizeof pl->id[0], "%s", id);
        pl->n++;
    }
}

static void error_result(json_t *o, const struct gv_err *err)
{
    json_object_set_new(o, "status", json_string("error"));
    json_object_set_new(o, "reason", json_string(err->msg));
}

static int run_op(struct coll *c, enum gv_coll_op op, const struct plan *pl, json_t *results,
                  struct gv_err *err)
{
    if (pl->n == 0)
        return GV_OK;
    for (int i = 0; i < pl->n; i++) {
        int rc = warm(c, op, &pl->size[i], pl->id[i], err);
        if (rc)
            return rc;
    }
    char what[96];
    snprintf(what, sizeof what, "%s warm-up", op_names[op]);
    int rc = gv_coll_dev_wait(c->dev, what, err);
    if (rc)
        return rc;
    for (int i = 0; i < pl->n; i++) {
        json_t *o = new_result(c, op, pl->nominal[i], &pl->size[i], pl->id[i]);
        rc = measure(c, op, &pl->size[i], o, pl->id[i], err);
        if (rc)
            error_result(o, err);
        json_array_append_new(results, o);
        if (rc)
            return rc;
    }
    return GV_OK;
}

static int resolve_opts(const struct gv_coll_opts *in, struct gv_coll_opts *o, struct gv_err *err)
{
    *o = in ? *in : (struct gv_coll_opts){0};
    if (!o->min_bytes)
        o->min_bytes = 8;
    if (!o->max_bytes)
        o->max_bytes = (size_t)128 << 20;
    if (!o->factor)
        o->factor = 2;
    if (!o->iters)
        o->iters = 20;
    if (!o->warmup)
        o->warmup = 5;
    if (o->warmup < 0)
        o->warmup = 0;
    if (!o->ops)
        o->ops = (1u << GV_COLL_NOPS) - 1;
    if (o->ndev < 0 || o->ndev > MAXDEV)
        return gv_err_set(err, GV_E_USAGE, "ndev %d: expected 0 (all) to %d", o->ndev, MAXDEV);
    if (o->iters < 1 || o->iters > MAXITERS)
        return gv_err_set(err, GV_E_USAGE, "iters %d: expected 1 to %d", o->iters, MAXITERS);
    if (o->factor < 2)
        return gv_err_set(err, GV_E_USAGE, "factor %d: expected 2 or more", o->factor);
    if (o->max_bytes < o->min_bytes)
        return gv_err_set(err, GV_E_USAGE, "sizes %zu to %zu bytes: the end is below the start",
                          o->min_bytes, o->max_bytes);
    if (o->max_bytes > ((size_t)1 << 40))
        return gv_err_set(err, GV_E_USAGE, "max_bytes %zu: more than 1 TiB", o->max_bytes);
    size_t tmp[1];
    if (gv_coll_sweep(o->min_bytes, o->max_bytes, o->factor, tmp, 1) > MAXSIZES)
        return gv_err_set(err, GV_E_USAGE, "more than %d sizes in the sweep", MAXSIZES);
    return GV_OK;
}

static json_t *describe(struct coll *c, int nvls_set)
{
    json_t *o = gv_coll_dev_describe(c->dev, nvls_set);
    json_object_set_new(o, "method", json_string(
        "nccl-tests' sizes and algbw/busbw; out of place; per size: warm-up iterations, then "
        "timed iterations queued behind a gate kernel, each between CUDA events on every "
        "GPU's stream and followed (outside the events) by a check kernel; an iteration's time "
        "is the slowest rank's; value = median busbw (algbw where busbw is 0 by definition: one "
        "GPU); buffers at rotating offsets as in "
        "nccl-tests"));
    return o;
}

int gv_coll_bench(const struct gv_coll_opts *opts, json_t *results, json_t **info,
                  struct gv_err *err)
{
    if (info)
        *info = NULL;
    struct coll *c = calloc(1, sizeof *c);
    if (!c)
        return gv_err_set(err, GV_E_NOMEM, "collective benchmark");
    int rc = resolve_opts(opts, &c->o, err);
    const char *cv = getenv("GPUVET_TEST_COLL_CORRUPT");
    c->corrupt = cv && *cv && strcmp(cv, "0") != 0;
    const char *hv = getenv("GPUVET_TEST_COLL_HANG");
    c->hang = hv && *hv && strcmp(hv, "0") != 0;
    int nvls_set = !getenv("NCCL_NVLS_ENABLE");
    if (!rc)
        rc = gv_coll_dev_open(c->o.kind, c->o.ndev, c->o.iters, gv_gpu_case_timeout(), &c->dev,
                              err);
    c->n = c->dev ? gv_coll_dev_nranks(c->dev) : 0;
    size_t sweep[MAXSIZES];
    size_t nsw = rc ? 0 : gv_coll_sweep(c->o.min_bytes, c->o.max_bytes, c->o.factor, sweep,
                                        MAXSIZES);
    struct plan *pl = calloc(GV_COLL_NOPS, sizeof *pl);
    if (!rc && !pl)
        rc = gv_err_set(err, GV_E_NOMEM, "collective benchmark plan");
    size_t need = 0;
    for (int op = 0; !rc && op < GV_COLL_NOPS; op++) {
        pl[op].n = 0;
        if (c->o.ops & (1u << op))
            plan_op(c, (enum gv_coll_op)op, sweep, nsw, c->n, &pl[op]);
        for (int i = 0; i < pl[op].n; i++)
            if (pl[op].size[i].bytes > need)
                need = pl[op].size[i].bytes;
    }
    c->alloc = need ? need : 64;
    if (!rc && need)
        rc = gv_coll_dev_setup(c->dev, c->alloc, err);
    for (int op = 0; !rc && need && op < GV_COLL_NOPS; op++)
        rc = run_op(c, (enum gv_coll_op)op, &pl[op], results, err);
    if (rc && c->dev) /* work may be left queued on some ranks only */
        gv_coll_dev_abort(c->dev);
    nvls_set = nvls_set && getenv("NCCL_NVLS_ENABLE");
    if (info)
        *info = describe(c, nvls_set);
    gv_coll_dev_close(c->dev);
    free(pl);
    free(c);
    return rc;
}
