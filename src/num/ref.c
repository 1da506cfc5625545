/* fp64 references, a-priori error bounds and signed-error scales.
 *
 * Inputs are read exactly (gv_fp_load) and everything is computed in double;
 * GEMM-shaped work (GEMM, convolution as im2col, both matmuls of attention)
 * goes through cblas_dgemm, which OpenBLAS threads by itself; the rest is
 * split over pthreads. The bound model is written down in docs/numerics.md:
 * keep the two in step (and bump GV_REF_MODEL_VERSION in ref.h, which
 * invalidates cached references). */
#include "num/ref.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "num/fp.h"

/* Safety factor of the probabilistic bounds (numerics.md: about 10 standard
 * deviations of the rounding error of recursive summation). */
#define LAMBDA 4.0
#define U64 0x1p-53

/* ---------- precision of a case ---------- */

struct prec {
    double u_acc;   /* accumulation (TF32: fp32) + the reference's own rounding */
    double u_inr;   /* rounding of inputs inside the op (TF32: 2^-11), else 0 */
    double u_out;   /* output format */
    double u_store; /* input format (intermediates such as attention P stored in it) */
    double sub_acc; /* subnormal spacing of the accumulation format */
    double min_acc; /* smallest normal of the accumulation format */
    double sub_out; /* subnormal spacing of the output format */
    double min_out; /* smallest normal of the output format (scale floor) */
};

static double sub_spacing(enum gv_dtype t)
{
    return gv_fp_min_normal(t) * (2 * gv_fp_unit_roundoff(t));
}

static void prec_of(const struct gv_case *c, struct prec *p)
{
    enum gv_dtype acc = c->compute_dtype == GV_TF32 ? GV_F32 : c->compute_dtype;
    double uc = gv_fp_unit_roundoff(c->compute_dtype), ui = gv_fp_unit_roundoff(c->in_dtype);
    p->u_acc = gv_fp_unit_roundoff(acc) + U64;
    p->u_inr = uc > ui ? uc : 0;
    p->u_out = gv_fp_unit_roundoff(c->out_dtype);
    p->u_store = ui;
    p->sub_acc = sub_spacing(acc);
    p->min_acc = gv_fp_min_normal(acc);
    p->sub_out = sub_spacing(c->out_dtype);
    p->min_out = gv_fp_min_normal(c->out_dtype);
}

static double gamma_k(double k, double u)
{
    double ku = k * u;
    return ku < 1 ? ku / (1 - ku) : INFINITY;
}

/* Error bound of a length-k dot product c = sum a_i b_i in precision p,
 * before output rounding. S = sum |a_i b_i| (INFINITY if unknown), R =
 * sqrt(sum (a_i b_i)^2). The accumulation term is the probabilistic
 * LAMBDA sqrt(k) u max(R, |c|), never above the deterministic gamma_k S. */
static double dot_bound(double c, double S, double R, double k, const struct prec *p)
{
    double big = R > fabs(c) ? R : fabs(c);
    double acc = LAMBDA * sqrt(k) * p->u_acc * big;
    double det = gamma_k(k, p->u_acc) * S;
    if (det < acc)
        acc = det;
    double prod = LAMBDA * p->u_acc * R;                     /* rounding of the products */
    double inr = 2 * p->u_inr * (fabs(c) + LAMBDA * R);      /* inputs rounded (RN or RZ) */
    double under = 0.5 * k * p->sub_acc;                     /* products in the subnormal range */
    return acc + prod + inr + under;
}

/* Adds output rounding and the output's subnormal spacing. Rounding to
 * nearest costs at most u_out |y|; the factor 1.5 leaves a correctly rounded
 * output at <= 2/3 of the bound while rounding toward zero (up to 2 u_out |y|)
 * still exceeds it on enough elements. */
static double out_bound(double e, double y, const struct prec *p)
{
    return e * (1 + p->u_out) + 1.5 * p->u_out * fabs(y) + p->sub_out;
}

static double scale_floor(double s, const struct prec *p) { return s > p->min_out ? s : p->min_out; }

/* ---------- shapes ---------- */

static int64_t batch_of(const struct gv_case *c) { return gv_dim_value(c, GV_DIM_BATCH); }
static int64_t conv_p(const struct gv_case *c) { return gv_dim_value(c, GV_DIM_P); }
static int64_t conv_q(const struct gv_case *c) { return gv_dim_value(c, GV_DIM_Q); }

/* ---------- threads ---------- */

typedef void (*range_fn)(void *ctx, size_t lo, size_t hi);

struct worker {
    pthread_t tid;
    range_fn fn;
    void *ctx;
    size_t lo, hi;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->fn(w->ctx, w->lo, w->hi);
    return NULL;
}

static int threads_of(int nthreads)
{
    if (nthreads > 0)
        return nthreads > 256 ? 256 : nthreads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* Elementwise work below this many items per thread is not worth a thread. */
#define GRAIN 32768

/* fn over [0, n) in at most nt contiguous pieces of at least grain items; a
 * thread that cannot be started runs its piece on the caller's thread. */
static void par_for(int nt, size_t n, size_t grain, range_fn fn, void *ctx)
{
    if (nt > 1 && (size_t)nt > n / grain)
        nt = n / grain > 1 ? (int)(n / grain) : 1;
    if (nt <= 1) {
        fn(ctx, 0, n);
        return;
    }
    struct worker w[256];
    int started[256] = {0};
    for (int t = 0; t < nt; t++) {
        w[t] = (struct worker){0, fn, ctx, n * (size_t)t / (size_t)nt,
                               n * (size_t)(t + 1) / (size_t)nt};
        if (t > 0)
            started[t] = pthread_create(&w[t].tid, NULL, worker_main, &w[t]) == 0;
    }
    fn(ctx, w[0].lo, w[0].hi);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(w[t].tid, NULL);
        else
            fn(ctx, w[t].lo, w[t].hi);
    }
}

/* ---------- loading ---------- */

struct load_job {
    const struct gv_buffer *b;
    size_t off;
    double *out;
};

static void load_range(void *ctx, size_t lo, size_t hi)
{
    struct load_job *j = ctx;
    for (size_t i = lo; i < hi; i++)
        j->out[i] = gv_fp_load(j->b->data, j->b->dtype, j->off + i);
}

/* out[0..n) = elements off.. of b, as exact doubles. */
static void load_slice(const struct gv_buffer *b, size_t off, size_t n, double *out, int nt)
{
    struct load_job j = {b, off, out};
    par_for(nt, n, GRAIN, load_range, &j);
}

enum map_kind { MAP_ABS, MAP_SQUARE };

struct map_job {
    double *v;
    enum map_kind kind;
};

static void map_range(void *ctx, size_t lo, size_t hi)
{
    struct map_job *j = ctx;
    for (size_t i = lo; i < hi; i++)
        j->v[i] = j->kind == MAP_ABS ? fabs(j->v[i]) : j->v[i] * j->v[i];
}

static void map_all(double *v, size_t n, enum map_kind k, int nt)
{
    struct map_job j = {v, k};
    par_for(nt, n, GRAIN, map_range, &j);
}

static void dgemm(int m, int n, int k, const double *a, int transb, const double *b, double *c)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, transb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a,
                k, b, transb ? k : n, 0.0, c, n);
}

/* ---------- GEMM-shaped bound finalisation ---------- */

struct dot_job {
    const double *c;
    double *s;     /* in: S, out: scale */
    double *r2;    /* in: R^2, out: bound */
    double k;
    const struct prec *p;
};

static void dot_range(void *ctx, size_t lo, size_t hi)
{
    struct dot_job *j = ctx;
    for (size_t i = lo; i < hi; i++) {
        double e = dot_bound(j->c[i], j->s[i], sqrt(j->r2[i]), j->k, j->p);
        j->r2[i] = out_bound(e, j->c[i], j->p);
        j->s[i] = scale_floor(j->s[i], j->p);
    }
}

/* C = A B, S = |A||B|, R^2 = A^2 B^2 for one (m x k) (k x n) product;
 * a and b are overwritten (|.| then squares). */
static void gemm3(int m, int n, int k, double *a, double *b, double *c, double *s, double *r2,
                  int nt)
{
    dgemm(m, n, k, a, 0, b, c);
    map_all(a, (size_t)m * k, MAP_ABS, nt);
    map_all(b, (size_t)k * n, MAP_ABS, nt);
    dgemm(m, n, k, a, 0, b, s);
    map_all(a, (size_t)m * k, MAP_SQUARE, nt);
    map_all(b, (size_t)k * n, MAP_SQUARE, nt);
    dgemm(m, n, k, a, 0, b, r2);
}

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

static int ref_gemm(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                    double *bound, double *scale, int nt, struct gv_err *err)
{
    int64_t nb = batch_of(c);
    if (!fits_int(c->m) || !fits_int(c->n) || !fits_int(c->k))
        return gv_err_set(err, GV_E_USAGE, "%s: GEMM dimensions too large for BLAS", c->id);
    size_t sa = (size_t)(c->m * c->k), sb = (size_t)(c->k * c->n), sc = (size_t)(c->m * c->n);
    double *a = malloc((sa ? sa : 1) * sizeof *a), *b = malloc((sb ? sb : 1) * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory for the reference", c->id);
    }
    struct prec p;
    prec_of(c, &p);
    for (int64_t bi = 0; bi < nb; bi++) {
        load_slice(&in[0], (size_t)bi * sa, sa, a, nt);
        load_slice(&in[1], (size_t)bi * sb, sb, b, nt);
        size_t o = (size_t)bi * sc;
        gemm3((int)c->m, (int)c->n, (int)c->k, a, b, ref + o, scale + o, bound + o, nt);
        struct dot_job j = {ref + o, scale + o, bound + o, (double)c->k, &p};
        par_for(nt, sc, GRAIN, dot_range, &j);
    }
    free(a);
    free(b);
    return GV_OK;
}

/* ---------- convolution (im2col + GEMM) ---------- */

static void im2col(const struct gv_case *c, const struct gv_buffer *x, int64_t img, double *col,
                   int64_t P, int64_t Q)
{
    size_t row = 0;
    for (int64_t ch = 0; ch < c->c; ch++)
        for (int64_t r = 0; r < c->r; r++)
            for (int64_t s = 0; s < c->s; s++, row++) {
                double *dst = col + row * (size_t)(P * Q);
                for (int64_t pp = 0; pp < P; pp++) {
                    int64_t h = pp * c->stride + r - c->pad;
                    for (int64_t qq = 0; qq < Q; qq++) {
                        int64_t w = qq * c->stride + s - c->pad;
                        double v = 0;
                        if (h >= 0 && h < c->h && w >= 0 && w < c->w)
                            v = gv_fp_load(x->data, x->dtype,
                                           (size_t)(((img * c->c + ch) * c->h + h) * c->w + w));
                        dst[pp * Q + qq] = v;
                    }
                }
            }
}

static int ref_conv(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                    double *bound, double *scale, int nt, struct gv_err *err)
{
    int64_t P = conv_p(c), Q = conv_q(c), K = c->c * c->r * c->s;
    if (!fits_int(P * Q) || !fits_int(K) || !fits_int(c->k))
        return gv_err_set(err, GV_E_USAGE, "%s: convolution too large for BLAS", c->id);
    size_t ncol = (size_t)(K * P * Q), nw = (size_t)(c->k * K), no = (size_t)(c->k * P * Q);
    double *col = malloc((ncol ? ncol : 1) * sizeof *col);
    double *w = malloc((nw ? nw : 1) * sizeof *w);
    if (!col || !w) {
        free(col);
        free(w);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory for the reference", c->id);
    }
    struct prec p;
    prec_of(c, &p);
    for (int64_t img = 0; img < c->n; img++) {
        im2col(c, &in[0], img, col, P, Q);
        load_slice(&in[1], 0, nw, w, nt);
        size_t o = (size_t)img * no;
        gemm3((int)c->k, (int)(P * Q), (int)K, w, col, ref + o, scale + o, bound + o, nt);
        struct dot_job j = {ref + o, scale + o, bound + o, (double)K, &p};
        par_for(nt, no, GRAIN, dot_range, &j);
    }
    free(col);
    free(w);
    return GV_OK;
}

/* ---------- row operations ---------- */

/* Kahan-Babuska-Neumaier summation: the reference's sums are exact to a few
 * ulps of double regardless of length. */
struct ksum {
    double s, c;
};

static void ksum_add(struct ksum *k, double x)
{
    double t = k->s + x;
    if (fabs(k->s) >= fabs(x))
        k->c += (k->s - t) + x;
    else
        k->c += (x - t) + k->s;
    k->s = t;
}

static double ksum_get(const struct ksum *k) { return k->s + k->c; }

struct rows_job {
    const struct gv_case *c;
    const struct gv_buffer *in;
    double *ref, *bound, *scale;
    struct prec p;
};

static double row_x(const struct rows_job *j, int64_t r, int64_t i)
{
    return gv_fp_load(j->in[0].data, j->in[0].dtype, (size_t)(r * j->c->len + i));
}

static void softmax_row(const struct rows_job *j, int64_t r)
{
    int64_t n = j->c->len;
    const struct prec *p = &j->p;
    size_t o = (size_t)(r * n);
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double x = row_x(j, r, i);
        m = x > m ? x : m;
    }
    struct ksum s = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        double e = exp(row_x(j, r, i) - m);
        j->ref[o + i] = e;
        ksum_add(&s, e);
    }
    double sum = ksum_get(&s);
    double common = LAMBDA * sqrt((double)n) * p->u_acc;
    for (int64_t i = 0; i < n; i++) {
        double y = j->ref[o + i] / sum;
        double d = fabs(row_x(j, r, i) - m);
        double rel = (8 + 2 * d) * p->u_acc + common;
        j->ref[o + i] = y;
        j->bound[o + i] = out_bound(rel * y + p->sub_acc, y, p);
        j->scale[o + i] = scale_floor(y, p);
    }
}

/* LAYERNORM (beta != NULL) and RMSNORM (beta == NULL, no centring). */
static void norm_row(const struct rows_job *j, int64_t r)
{
    const struct gv_case *c = j->c;
    const struct prec *p = &j->p;
    int64_t n = c->len;
    int layer = c->op == GV_OP_LAYERNORM;
    size_t o = (size_t)(r * n);
    struct ksum s = {0, 0}, sa = {0, 0}, s2 = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        double x = row_x(j, r, i);
        ksum_add(&s, x);
        ksum_add(&sa, fabs(x));
        ksum_add(&s2, x * x);
    }
    double mu = layer ? ksum_get(&s) / n : 0;
    double ma = ksum_get(&sa) / n, ms = ksum_get(&s2) / n;
    struct ksum sv = {0, 0};
    for (int64_t i = 0; i < n && layer; i++) {
        double d = row_x(j, r, i) - mu;
        ksum_add(&sv, d * d);
    }
    double var = layer ? ksum_get(&sv) / n : ms;
    double rs = 1 / sqrt(var + c->eps);
    double growth = (LAMBDA * sqrt((double)n) + 4) * p->u_acc;
    double e_mu = layer ? growth * ma : 0;
    double dvar = growth * ms + 2 * sqrt(ms) * e_mu; /* also covers E[x^2] - mean^2 */
    double rel_rs = 0.5 * dvar / (var + c->eps) + 4 * p->u_acc;
    for (int64_t i = 0; i < n; i++) {
        double d = row_x(j, r, i) - mu;
        double g = gv_fp_load(j->in[1].data, j->in[1].dtype, (size_t)i);
        double b = layer ? gv_fp_load(j->in[2].data, j->in[2].dtype, (size_t)i) : 0;
        double z = d * rs, y = z * g + b;
        double e_z = (e_mu + p->u_acc * fabs(d)) * rs + fabs(z) * (rel_rs + p->u_acc);
        double e = fabs(g) * e_z + 2 * p->u_acc * (fabs(z * g) + fabs(b));
        j->ref[o + i] = y;
        j->bound[o + i] = out_bound(e, y, p);
        j->scale[o + i] = scale_floor(fabs(z * g) + fabs(b), p);
    }
}

static void reduce_row(const struct rows_job *j, int64_t r)
{
    int64_t n = j->c->len;
    struct ksum s = {0, 0}, sa = {0, 0}, s2 = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        double x = row_x(j, r, i);
        ksum_add(&s, x);
        ksum_add(&sa, fabs(x));
        ksum_add(&s2, x * x);
    }
    double sum = ksum_get(&s), S = ksum_get(&sa), R = sqrt(ksum_get(&s2));
    double e = dot_bound(sum, S, R, (double)n, &j->p);
    if (j->c->op == GV_OP_MEAN) {
        double mean = sum / (double)n;
        e = e / (double)n + j->p.u_acc * fabs(mean);
        sum = mean;
        S /= (double)n;
    }
    j->ref[r] = sum;
    j->bound[r] = out_bound(e, sum, &j->p);
    j->scale[r] = scale_floor(S, &j->p);
}

static void rows_range(void *ctx, size_t lo, size_t hi)
{
    struct rows_job *j = ctx;
    for (size_t r = lo; r < hi; r++) {
        switch (j->c->op) {
        case GV_OP_SOFTMAX:
            softmax_row(j, (int64_t)r);
            break;
        case GV_OP_LAYERNORM:
        case GV_OP_RMSNORM:
            norm_row(j, (int64_t)r);
            break;
        default:
            reduce_row(j, (int64_t)r);
            break;
        }
    }
}

/* ---------- elementwise ---------- */

static double unary_ref(enum gv_unary u, double x)
{
    switch (u) {
    case GV_UN_EXP:
        return exp(x);
    case GV_UN_LOG:
        return log(x);
    case GV_UN_TANH:
        return tanh(x);
    case GV_UN_ERF:
        return erf(x);
    case GV_UN_GELU:
        return x * 0.5 * (1 + erf(x / sqrt(2.0)));
    case GV_UN_SILU:
        return x / (1 + exp(-x));
    case GV_UN_SIGMOID:
        return 1 / (1 + exp(-x));
    case GV_UN_RSQRT:
        return 1 / sqrt(x);
    default:
        return NAN;
    }
}

/* Error of a compute-precision implementation of f at x, before output
 * rounding: a few ulps relative to |y| plus, where the function is
 * ill-conditioned or usually computed with cancellation, an allowance.
 * The caller adds the compute format's smallest normal: a result in the
 * underflow range may be lost (1/(1 + exp(100)) is 0 in fp32). */
static double unary_err(enum gv_unary u, double x, double y, double uc)
{
    double ay = fabs(y), ax = fabs(x);
    switch (u) {
    case GV_UN_EXP:
        return (4 + ax) * uc * ay;      /* exp2(x log2 e) style argument rounding */
    case GV_UN_LOG:
        return 4 * uc * ay + 2 * uc;    /* absolute near x = 1 where log x -> 0 */
    case GV_UN_GELU:
        return 4 * uc * ay + 2 * uc * ax; /* 1 + erf(x/sqrt 2) cancels for x < 0 */
    case GV_UN_SILU:
    case GV_UN_SIGMOID:
        return (6 + ax) * uc * ay;      /* exp(-x) argument rounding */
    default:
        return 4 * uc * ay;             /* tanh, erf, rsqrt */
    }
}

struct elem_job {
    const struct gv_case *c;
    const struct gv_buffer *x;
    double *ref, *bound, *scale;
    struct prec p;
};

static void elem_range(void *ctx, size_t lo, size_t hi)
{
    struct elem_job *j = ctx;
    for (size_t i = lo; i < hi; i++) {
        double x = gv_fp_load(j->x->data, j->x->dtype, i), y, e;
        if (j->c->op == GV_OP_CONVERT) {
            y = gv_fp_round(x, j->c->out_dtype, GV_RNE);
            e = 0; /* a conversion is exact or wrong */
            j->bound[i] = 0;
        } else {
            y = unary_ref(j->c->unary, x);
            e = unary_err(j->c->unary, x, y, j->p.u_acc) + j->p.min_acc;
            j->bound[i] = out_bound(e, y, &j->p);
        }
        j->ref[i] = y;
        j->scale[i] = scale_floor(fabs(y), &j->p);
    }
}

/* ---------- scaled dot-product attention ---------- */

#define SDPA_CHUNK 128

struct sdpa_ws {
    double *q, *k, *v, *k2, *v2, *vabs;     /* [seq][d] of one head */
    double *qc, *s, *r, *pm, *w;            /* chunk scratch: [rows][seq] or [rows][d] */
    double *o, *wo, *ro, *so;               /* [rows][d] */
};

static void sdpa_free(struct sdpa_ws *w)
{
    double **f = (double **)w;
    for (size_t i = 0; i < sizeof *w / sizeof(double *); i++)
        free(f[i]);
}

static int sdpa_alloc(struct sdpa_ws *w, size_t seq, size_t d)
{
    memset(w, 0, sizeof *w);
    size_t hd = seq * d, cs = (size_t)SDPA_CHUNK * seq, cd = (size_t)SDPA_CHUNK * d;
    size_t sizes[] = {hd, hd, hd, hd, hd, hd, cd, cs, cs, cs, cs, cd, cd, cd, cd};
    double **f = (double **)w;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!(f[i] = malloc((sizes[i] ? sizes[i] : 1) * sizeof(double))))
            return -1;
    return 0;
}

/* Query rows [r0, r0+nr) of one head: softmax(Q K^T / sqrt(d)) V with the
 * bound of section "sdpa" in numerics.md. */
static void sdpa_chunk(const struct gv_case *c, const struct prec *p, struct sdpa_ws *w,
                       int64_t r0, int nr, double *ref, double *bound, double *scale)
{
    int seq = (int)c->seq, d = (int)c->d;
    double sc = 1 / sqrt((double)d);
    memcpy(w->qc, w->q + (size_t)r0 * d, (size_t)nr * d * sizeof(double));
    dgemm(nr, seq, d, w->qc, 1, w->k, w->s);            /* Q K^T */
    for (size_t i = 0; i < (size_t)nr * d; i++)
        w->qc[i] *= w->qc[i];
    dgemm(nr, seq, d, w->qc, 1, w->k2, w->r);           /* Q^2 (K^2)^T */
    for (int i = 0; i < nr; i++) {
        int64_t qi = r0 + i;
        int nvalid = c->causal ? (int)(qi + 1) : seq;
        double *srow = w->s + (size_t)i * seq, *rrow = w->r + (size_t)i * seq;
        double *prow = w->pm + (size_t)i * seq, *wrow = w->w + (size_t)i * seq;
        double m = -INFINITY;
        for (int jj = 0; jj < nvalid; jj++)
            m = srow[jj] * sc > m ? srow[jj] * sc : m;
        struct ksum tot = {0, 0};
        double es_avg = 0;
        for (int jj = 0; jj < seq; jj++) {
            if (jj >= nvalid) {
                prow[jj] = 0;
                rrow[jj] = 0; /* error of the score, reused below */
                continue;
            }
            double qk = srow[jj];
            double es = sc * (dot_bound(qk, INFINITY, sqrt(rrow[jj]), d, p) + p->u_acc * fabs(qk));
            prow[jj] = exp(qk * sc - m);
            ksum_add(&tot, prow[jj]);
            rrow[jj] = es;
        }
        double t = ksum_get(&tot);
        for (int jj = 0; jj < nvalid; jj++) {
            prow[jj] /= t;
            es_avg += prow[jj] * rrow[jj];
        }
        double common = LAMBDA * sqrt((double)nvalid) * p->u_acc + p->u_store;
        for (int jj = 0; jj < seq; jj++) {
            double rel = 0;
            if (jj < nvalid)
                rel = rrow[jj] + es_avg + (8 + 2 * fabs(srow[jj] * sc - m)) * p->u_acc + common;
            wrow[jj] = rel * prow[jj]; /* absolute error of P */
        }
    }
    dgemm(nr, d, seq, w->pm, 0, w->v, w->o);            /* P V */
    dgemm(nr, d, seq, w->w, 0, w->vabs, w->wo);         /* |dP| |V| */
    dgemm(nr, d, seq, w->pm, 0, w->vabs, w->so);        /* P |V| : scale */
    for (size_t i = 0; i < (size_t)nr * seq; i++)
        w->pm[i] *= w->pm[i];
    dgemm(nr, d, seq, w->pm, 0, w->v2, w->ro);          /* P^2 V^2 */
    for (int i = 0; i < nr; i++) {
        int nvalid = c->causal ? (int)(r0 + i + 1) : seq;
        for (int jd = 0; jd < d; jd++) {
            size_t li = (size_t)i * d + jd, go = (size_t)(r0 + i) * d + jd;
            double o = w->o[li];
            double e = w->wo[li] + dot_bound(o, w->so[li], sqrt(w->ro[li]), nvalid, p);
            ref[go] = o;
            bound[go] = out_bound(e, o, p);
            scale[go] = scale_floor(w->so[li], p);
        }
    }
}

static int ref_sdpa(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                    double *bound, double *scale, struct gv_err *err)
{
    if (!fits_int(c->seq) || !fits_int(c->d))
        return gv_err_set(err, GV_E_USAGE, "%s: attention too large for BLAS", c->id);
    size_t hd = (size_t)(c->seq * c->d);
    struct sdpa_ws w;
    if (sdpa_alloc(&w, (size_t)c->seq, (size_t)c->d) != 0) {
        sdpa_free(&w);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory for the reference", c->id);
    }
    struct prec p;
    prec_of(c, &p);
    for (int64_t h = 0; h < c->bh; h++) {
        for (size_t i = 0; i < hd; i++) {
            size_t gi = (size_t)h * hd + i;
            w.q[i] = gv_fp_load(in[0].data, in[0].dtype, gi);
            w.k[i] = gv_fp_load(in[1].data, in[1].dtype, gi);
            w.v[i] = gv_fp_load(in[2].data, in[2].dtype, gi);
            w.k2[i] = w.k[i] * w.k[i];
            w.v2[i] = w.v[i] * w.v[i];
            w.vabs[i] = fabs(w.v[i]);
        }
        for (int64_t r0 = 0; r0 < c->seq; r0 += SDPA_CHUNK) {
            int nr = (int)(c->seq - r0 < SDPA_CHUNK ? c->seq - r0 : SDPA_CHUNK);
            size_t o = (size_t)h * hd;
            sdpa_chunk(c, &p, &w, r0, nr, ref + o, bound + o, scale + o);
        }
    }
    sdpa_free(&w);
    return GV_OK;
}

/* ---------- entry point ---------- */

static int check_case(const struct gv_case *c, const struct gv_buffer *in, int nin,
                      struct gv_err *err)
{
    if ((unsigned)c->op >= GV_OP_COUNT || (unsigned)c->in_dtype >= GV_DTYPE_COUNT ||
        (unsigned)c->compute_dtype >= GV_DTYPE_COUNT || (unsigned)c->out_dtype >= GV_DTYPE_COUNT)
        return gv_err_set(err, GV_E_USAGE, "%s: unknown operation or number format",
                          c->id ? c->id : "case");
    if (c->op == GV_OP_UNARY && (c->unary <= GV_UN_NONE || c->unary >= GV_UN_COUNT))
        return gv_err_set(err, GV_E_USAGE, "%s: unknown unary function", c->id);
    if (c->op == GV_OP_CONV2D && c->stride <= 0)
        return gv_err_set(err, GV_E_USAGE, "%s: convolution stride must be positive", c->id);
    if (gv_case_out_count(c) == 0)
        return gv_err_set(err, GV_E_USAGE, "%s: empty or oversized shape", c->id);
    size_t counts[GV_OP_MAX_IN];
    int need = gv_case_inputs(c, counts);
    if (nin != need)
        return gv_err_set(err, GV_E_USAGE, "%s: %d inputs given, %s needs %d", c->id, nin,
                          gv_op_name(c->op), need);
    for (int i = 0; i < need; i++) {
        if (!in[i].data || in[i].count != counts[i] || counts[i] == 0)
            return gv_err_set(err, GV_E_USAGE, "%s: input %d has %zu elements, %zu expected",
                              c->id, i, in[i].count, counts[i]);
        if (in[i].dtype == GV_TF32 || (unsigned)in[i].dtype >= GV_DTYPE_COUNT)
            return gv_err_set(err, GV_E_USAGE, "%s: input %d has format %s", c->id, i,
                              gv_dtype_name(in[i].dtype));
    }
    return GV_OK;
}

static int ref_rows(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                    double *bound, double *scale, int nt, struct gv_err *err)
{
    (void)err;
    struct rows_job j = {.c = c, .in = in, .ref = ref, .bound = bound, .scale = scale};
    prec_of(c, &j.p);
    par_for(nt, (size_t)c->rows, 1, rows_range, &j);
    return GV_OK;
}

static int ref_elem(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                    double *bound, double *scale, int nt, struct gv_err *err)
{
    (void)err;
    struct elem_job j = {.c = c, .x = &in[0], .ref = ref, .bound = bound, .scale = scale};
    prec_of(c, &j.p);
    par_for(nt, (size_t)c->len, 4096, elem_range, &j);
    return GV_OK;
}

static int ref_sdpa_nt(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                       double *bound, double *scale, int nt, struct gv_err *err)
{
    (void)nt; /* threads come from BLAS */
    return ref_sdpa(c, in, ref, bound, scale, err);
}

static int ref_mlp(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                   double *bound, double *scale, int nt, struct gv_err *err)
{
    (void)nt;
    if (!fits_int(c->m) || !fits_int(c->k) || !fits_int(c->n) || !fits_int(c->d))
        return gv_err_set(err, GV_E_USAGE, "%s: empty or oversized shape", c->id);
    return gv_ref_mlp(c, in, ref, bound, scale, err);
}

typedef int (*ref_fn)(const struct gv_case *c, const struct gv_buffer *in, double *ref,
                      double *bound, double *scale, int nt, struct gv_err *err);

/* The reference of each operation of the op table (num/op.c). */
static const ref_fn refs[GV_OP_COUNT] = {
    [GV_OP_GEMM] = ref_gemm,
    [GV_OP_CONV2D] = ref_conv,
    [GV_OP_SOFTMAX] = ref_rows,
    [GV_OP_LAYERNORM] = ref_rows,
    [GV_OP_RMSNORM] = ref_rows,
    [GV_OP_SDPA] = ref_sdpa_nt,
    [GV_OP_SUM] = ref_rows,
    [GV_OP_MEAN] = ref_rows,
    [GV_OP_UNARY] = ref_elem,
    [GV_OP_CONVERT] = ref_elem,
    [GV_OP_MLP] = ref_mlp,
};

int gv_ref_compute(const struct gv_case *c, const struct gv_buffer *in, int nin, double *ref,
                   double *bound, double *scale, int nthreads, struct gv_err *err)
{
    int rc = check_case(c, in, nin, err);
    if (rc)
        return rc;
    if (!refs[c->op])
        return gv_err_set(err, GV_E_USAGE, "%s: %s has no fp64 reference", c->id,
                          gv_op_name(c->op));
    return refs[c->op](c, in, ref, bound, scale, threads_of(nthreads), err);
}
