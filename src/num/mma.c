/* The block-FMA model of a GEMM output element (mma.h). Every value is an
 * integer significand times a power of two; a block's terms are added as
 * integers on the grid of its alignment (a 128-bit sum, or a wide sum of
 * 64-bit limbs when exact alignment spans more than 100 bits), then rounded
 * once. */
/* The integer loops below are all an emulated GEMM does: optimised even in
 * the Debug (sanitizer) build, so that emulation tests stay short. */
#pragma GCC optimize("O2")
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "num/fp.h"
#include "num/mma.h"

/* ---------- formats ---------- */

struct fmt {
    int frac, emin, emax; /* fraction bits; exponents of the smallest normal, largest binade */
    enum gv_mma_round r;
    int flush;
    double maxfin, minnorm; /* largest finite value, smallest normal (fmt_with) */
};

static int fmt_known(enum gv_dtype t, struct fmt *f)
{
    static const struct {
        enum gv_dtype t;
        int frac, emin, emax;
    } fmts[] = {{GV_F32, 23, -126, 127}, {GV_TF32, 10, -126, 127}, {GV_F16, 10, -14, 15},
                {GV_BF16, 7, -126, 127},  {GV_F8E4M3, 3, -6, 8},    {GV_F8E5M2, 2, -14, 15}};
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
        if (fmts[i].t == t) {
            f->frac = fmts[i].frac;
            f->emin = fmts[i].emin;
            f->emax = fmts[i].emax;
            return 1;
        }
    return 0;
}

static struct fmt fmt_with(enum gv_dtype t, int frac, enum gv_mma_round r, int flush)
{
    struct fmt f;
    fmt_known(t, &f);
    if (frac >= 0 && frac < f.frac)
        f.frac = frac;
    f.r = r;
    f.flush = flush;
    f.maxfin = ldexp((double)((1ull << (f.frac + 1)) - 1), f.emax - f.frac);
    f.minnorm = ldexp(1.0, f.emin);
    return f;
}

const char *gv_mma_round_name(enum gv_mma_round r)
{
    switch (r) {
    case GV_MMA_RNE: return "nearest-even";
    case GV_MMA_RNA: return "nearest-away";
    case GV_MMA_RZ: return "toward-zero";
    case GV_MMA_DOWN: return "down";
    case GV_MMA_UP: return "up";
    }
    return "?";
}

void gv_mma_model_plain(struct gv_mma_model *m, enum gv_dtype in, enum gv_dtype compute,
                        enum gv_dtype out)
{
    memset(m, 0, sizeof *m);
    m->in = in;
    m->in_frac_bits = compute == GV_TF32 ? 10 : -1;
    m->in_round = GV_MMA_RNE;
    m->block = 1;
    m->extra_bits = -1;
    m->prod_round = compute != GV_F16; /* fp16 products are exact in the fp32 the CPU adds in */
    m->acc = compute == GV_F16 ? GV_F16 : GV_F32;
    m->acc_frac_bits = compute == GV_F16 ? 10 : 23;
    m->acc_round = GV_MMA_RNE;
    m->out = out;
    m->out_round = GV_MMA_RNE;
}

static int round_ok(enum gv_mma_round r) { return r >= GV_MMA_RNE && r <= GV_MMA_UP; }

int gv_mma_model_check(const struct gv_mma_model *m, struct gv_err *err)
{
    struct fmt f;
    if (m->in == GV_F64 || !fmt_known(m->in, &f))
        return gv_err_set(err, GV_E_USAGE, "mma model: input format %s is not modelled",
                          gv_dtype_name(m->in));
    if (m->in_frac_bits < -1 || m->in_frac_bits > f.frac)
        return gv_err_set(err, GV_E_USAGE, "mma model: in_frac_bits %d is not -1..%d",
                          m->in_frac_bits, f.frac);
    if (m->block < 1 || m->block > (1 << 20))
        return gv_err_set(err, GV_E_USAGE, "mma model: block %d is not 1..%d", m->block, 1 << 20);
    if (m->chunk < 0 || m->chunk > (1 << 20))
        return gv_err_set(err, GV_E_USAGE, "mma model: chunk %d is not 0..%d", m->chunk, 1 << 20);
    if (m->extra_bits < -1 || m->extra_bits > 40)
        return gv_err_set(err, GV_E_USAGE, "mma model: extra_bits %d is not -1..40",
                          m->extra_bits);
    if (m->acc != GV_F32 && m->acc != GV_F16)
        return gv_err_set(err, GV_E_USAGE, "mma model: accumulator format %s is not f32 or f16",
                          gv_dtype_name(m->acc));
    fmt_known(m->acc, &f);
    if (m->acc_frac_bits < 1 || m->acc_frac_bits > f.frac)
        return gv_err_set(err, GV_E_USAGE, "mma model: acc_frac_bits %d is not 1..%d",
                          m->acc_frac_bits, f.frac);
    if (m->out != GV_F32 && m->out != GV_F16 && m->out != GV_BF16)
        return gv_err_set(err, GV_E_USAGE, "mma model: output format %s is not f32, f16 or bf16",
                          gv_dtype_name(m->out));
    if (!round_ok(m->in_round) || !round_ok(m->acc_round) || !round_ok(m->out_round) ||
        !round_ok(m->chunk_round))
        return gv_err_set(err, GV_E_USAGE, "mma model: unknown rounding mode");
    return GV_OK;
}

/* ---------- rounding ---------- */

#define WL 16 /* limbs of a wide sum: 1024 bits */

static int goes_up(enum gv_mma_round r, int neg, int half, int sticky, int odd)
{
    switch (r) {
    case GV_MMA_RNE: return half && (sticky || odd);
    case GV_MMA_RNA: return half;
    case GV_MMA_RZ: return 0;
    case GV_MMA_DOWN: return neg && (half || sticky);
    case GV_MMA_UP: return !neg && (half || sticky);
    }
    return 0;
}

/* The magnitude past the largest finite value: infinity or that value. */
static double overflowed(const struct fmt *f, int neg, double maxfin)
{
    int to_inf = f->r == GV_MMA_RNE || f->r == GV_MMA_RNA || (f->r == GV_MMA_DOWN && neg) ||
                 (f->r == GV_MMA_UP && !neg);
    return to_inf ? INFINITY : maxfin;
}

typedef unsigned __int128 u128;

static int top_of(u128 v)
{
    uint64_t hi = (uint64_t)(v >> 64);
    return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)v);
}

/* (-1)^neg * mag * 2^g rounded to format f; mag != 0. */
static double round_mag(u128 mag, int g, int neg, const struct fmt *f)
{
    int t = top_of(mag);
    int lead = g + t;
    int q = (lead < f->emin ? f->emin : lead) - f->frac; /* weight of the last kept bit */
    int sh = q - g;
    uint64_t keep = 0;
    if (sh <= 0) {
        keep = (uint64_t)mag; /* t <= frac: exact */
        q = g;
    } else {
        int half = sh - 1 <= t && (int)((mag >> (sh - 1)) & 1);
        int sticky = sh - 1 > t ? 1 : (mag & (((u128)1 << (sh - 1)) - 1)) != 0;
        keep = sh > t ? 0 : (uint64_t)(mag >> sh);
        keep += (uint64_t)goes_up(f->r, neg, half, sticky, (int)(keep & 1));
    }
    double v = ldexp((double)keep, q);
    if (v > f->maxfin)
        v = overflowed(f, neg, f->maxfin);
    if (f->flush && v < f->minnorm)
        v = 0;
    return neg ? -v : v;
}

/* The same for a magnitude of WL limbs: its top 128 bits, with every bit
 * below them folded into the lowest one (a sticky bit far below the
 * rounding position, which is all rounding needs). */
static double round_limbs(const uint64_t *w, int g, int neg, const struct fmt *f)
{
    int top = WL - 1;
    while (top > 0 && !w[top])
        top--;
    if (top < 2)
        return round_mag(((u128)w[1] << 64) | w[0], g, neg, f);
    int t = top * 64 + 63 - __builtin_clzll(w[top]);
    int drop = t - 127, li = drop / 64, bo = drop % 64;
    uint64_t l0 = w[li], l1 = li + 1 < WL ? w[li + 1] : 0, l2 = li + 2 < WL ? w[li + 2] : 0;
    u128 low = ((u128)l1 << 64) | l0;
    u128 v = bo ? (low >> bo) | ((u128)l2 << (128 - bo)) : low; /* bits drop .. drop+127 */
    int sticky = bo && (l0 & ((1ull << bo) - 1)) != 0;
    for (int i = 0; i < li && !sticky; i++)
        sticky = w[i] != 0;
    return round_mag(v | (u128)sticky, g + drop, neg, f);
}

/* A finite double as (-1)^neg * m * 2^e, m odd or 0. */
struct xv {
    int64_t m; /* signed significand; 0 for zero */
    int e;     /* XV_SPECIAL: inf or NaN */
};
#define XV_SPECIAL INT_MAX

static struct xv split(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int be = (int)((u >> 52) & 0x7ff);
    int64_t m = (int64_t)(u & ((1ull << 52) - 1));
    if (be == 0x7ff)
        return (struct xv){0, XV_SPECIAL};
    if (be == 0 && m == 0)
        return (struct xv){0, 0};
    int e = be ? be - 1075 : -1074;
    if (be)
        m |= (int64_t)1 << 52;
    int tz = __builtin_ctzll((uint64_t)m);
    m >>= tz;
    e += tz;
    return (struct xv){(u >> 63) ? -m : m, e};
}

static double round_double(double x, const struct fmt *f)
{
    if (!isfinite(x) || x == 0)
        return x;
    struct xv v = split(x);
    return round_mag((u128)(v.m < 0 ? -v.m : v.m), v.e, v.m < 0, f);
}

/* ---------- one block FMA ---------- */

struct term {
    uint64_t m; /* magnitude */
    int e, neg;
    int nominal; /* a product's exponent sum (its inputs' leading bits added), INT_MIN:
                  * not a product; its leading bit is there or one above */
};

static int lead_of(const struct term *t) { return t->e + 63 - __builtin_clzll(t->m); }

/* The exponent a term is aligned by: its leading bit, or a product's exponent
 * sum where the model aligns products so (align_nominal). */
static int align_of(const struct gv_mma_model *m, const struct term *t)
{
    return m->align_nominal && t->nominal != INT_MIN ? t->nominal : lead_of(t);
}

static int lead_xv(int64_t m, int e)
{
    return e + 63 - __builtin_clzll((uint64_t)(m < 0 ? -m : m));
}

static void wide_add(uint64_t *w, uint64_t m, int s)
{
    int li = s / 64, bo = s % 64;
    if (li >= WL)
        return; /* beyond any sum of format values (see sum_wide) */
    uint64_t lo = m << bo, hi = bo ? m >> (64 - bo) : 0;
    unsigned __int128 c = (unsigned __int128)w[li] + lo;
    w[li] = (uint64_t)c;
    c = (c >> 64) + (unsigned __int128)(li + 1 < WL ? w[li + 1] : 0) + hi;
    if (li + 1 < WL)
        w[li + 1] = (uint64_t)c;
    for (int i = li + 2; i < WL && (c >> 64); i++) {
        c = (c >> 64) + w[i];
        w[i] = (uint64_t)c;
    }
}

static int wide_cmp(const uint64_t *a, const uint64_t *b)
{
    for (int i = WL - 1; i >= 0; i--)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static void wide_sub(uint64_t *a, const uint64_t *b) /* a -= b, a >= b */
{
    unsigned borrow = 0;
    for (int i = 0; i < WL; i++) {
        uint64_t bi = b[i] + borrow;
        unsigned nb = bi < b[i] || a[i] < bi;
        a[i] -= bi;
        borrow = nb;
    }
}

/* The exact sum of terms too far apart for 128 bits, rounded once. */
static double sum_wide(const struct term *t, int nt, const struct fmt *f, int *zero)
{
    int g = INT_MAX;
    for (int i = 0; i < nt; i++)
        if (t[i].m && t[i].e < g)
            g = t[i].e;
    uint64_t pos[WL] = {0}, neg[WL] = {0};
    for (int i = 0; i < nt; i++)
        if (t[i].m)
            wide_add(t[i].neg ? neg : pos, t[i].m, t[i].e - g);
    int c = wide_cmp(pos, neg);
    *zero = c == 0;
    if (c == 0)
        return 0;
    uint64_t *big = c > 0 ? pos : neg;
    wide_sub(big, c > 0 ? neg : pos);
    return round_limbs(big, g, c < 0, f);
}

/* The terms of one block summed on the grid 2^g (truncated below it when
 * trunc), rounded once; NaN-free, nonzero terms only. */
static double sum_grid(const struct term *t, int nt, int g, int trunc, const struct fmt *f,
                       int *zero)
{
    __int128 s = 0;
    for (int i = 0; i < nt; i++) {
        uint64_t m = t[i].m;
        int d = t[i].e - g;
        unsigned __int128 v;
        if (d < 0) {
            if (!trunc)
                return sum_wide(t, nt, f, zero);
            v = -d >= 64 ? 0 : m >> -d;
        } else {
            v = (unsigned __int128)m << d;
        }
        s += t[i].neg ? -(__int128)v : (__int128)v;
    }
    *zero = s == 0;
    if (s == 0)
        return 0;
    unsigned __int128 a = s < 0 ? -(unsigned __int128)s : (unsigned __int128)s;
    return round_mag(a, g, s < 0, f);
}

/* acc + the products t[1..nt] of one block, rounded to the accumulator
 * (t[0] is room for the accumulator's term). */
static double block_fma(const struct gv_mma_model *m, const struct fmt *acc, double c,
                        struct term *t, int nt)
{
    struct xv cv = split(c);
    int n = 0, lead = INT_MIN;
    if (cv.m)
        t[n++] = (struct term){(uint64_t)(cv.m < 0 ? -cv.m : cv.m), cv.e, cv.m < 0, INT_MIN};
    for (int i = 1; i <= nt; i++) {
        if (!t[i].m)
            continue;
        t[n] = t[i];
        if (m->prod_round) {
            double p = round_mag(t[i].m, t[i].e, t[i].neg, acc);
            if (!isfinite(p))
                return c + p;
            struct xv pv = split(p);
            t[n] = (struct term){(uint64_t)(pv.m < 0 ? -pv.m : pv.m), pv.e, pv.m < 0, INT_MIN};
            if (!pv.m)
                continue;
        }
        n++;
    }
    for (int i = 0; i < n; i++)
        if (align_of(m, &t[i]) > lead)
            lead = align_of(m, &t[i]);
    if (n == 0)
        return c; /* only zeros: the accumulator as it was */
    int zero = 0;
    double r;
    if (m->extra_bits >= 0)
        r = sum_grid(t, n, lead - (acc->frac + m->extra_bits), 1, acc, &zero);
    else
        r = sum_grid(t, n, lead - 100, 0, acc, &zero);
    if (zero)
        return m->acc_round == GV_MMA_DOWN ? -0.0 : 0.0;
    return r;
}

/* ---------- one output element ---------- */

static struct xv input_of(const struct gv_mma_model *m, const struct fmt *in, double x)
{
    if (!isfinite(x))
        return (struct xv){0, XV_SPECIAL};
    if (m->in_flush && fabs(x) < in->minnorm)
        x = 0;
    return split(round_double(x, in));
}

/* c plus the products k0..k1-1 in blocks; *special when an input is inf or NaN. */
static double dot_blocks(const struct gv_mma_model *m, const struct fmt *acc, double c,
                         const struct xv *a, const struct xv *b, long k0, long k1,
                         struct term *t, int *special)
{
    for (; k0 < k1; k0 += m->block) {
        long kn = k1 - k0 < m->block ? k1 - k0 : m->block;
        int nt = 0;
        for (long i = k0; i < k0 + kn; i++) {
            if (a[i].e == XV_SPECIAL || b[i].e == XV_SPECIAL) {
                *special = 1;
                return NAN;
            }
            if (!a[i].m || !b[i].m)
                continue;
            int64_t pm = a[i].m * b[i].m; /* |significands| < 2^31: exact */
            t[++nt] = (struct term){(uint64_t)(pm < 0 ? -pm : pm), a[i].e + b[i].e, pm < 0,
                                    lead_xv(a[i].m, a[i].e) + lead_xv(b[i].m, b[i].e)};
        }
        if (!isfinite(c))
            continue; /* an overflowed accumulator stays infinite */
        c = block_fma(m, acc, c, t, nt);
    }
    return c;
}

/* The accumulator after all blocks (and chunks); *special when an input is
 * inf or NaN. */
static double dot_core(const struct gv_mma_model *m, const struct fmt *acc, double c,
                       const struct xv *a, const struct xv *b, long k, struct term *t,
                       int *special)
{
    *special = 0;
    if (m->chunk <= 0 || k <= m->chunk)
        return dot_blocks(m, acc, c, a, b, 0, k, t, special);
    double total = 0;
    for (long k0 = 0; k0 < k && !*special; k0 += m->chunk) {
        long k1 = k - k0 < m->chunk ? k : k0 + m->chunk;
        double part = dot_blocks(m, acc, k0 ? 0.0 : c, a, b, k0, k1, t, special);
        if (!k0 || !isfinite(total) || !isfinite(part)) {
            total = k0 ? total + part : part;
            continue;
        }
        struct xv pv = split(part);
        int nt = 0;
        if (pv.m)
            t[++nt] = (struct term){(uint64_t)(pv.m < 0 ? -pv.m : pv.m), pv.e, pv.m < 0,
                                    INT_MIN};
        struct gv_mma_model join = *m;
        join.acc_round = m->chunk_round;
        struct fmt jacc = *acc;
        jacc.r = m->chunk_round;
        total = block_fma(&join, &jacc, total, t, nt);
    }
    return *special ? NAN : total;
}

/* Inputs with inf or NaN: IEEE arithmetic in double is enough to say which
 * special value results. */
static double dot_special(double c, const double *a, long as, const double *b, long bs, long k)
{
    for (long i = 0; i < k; i++)
        c += a[i * as] * b[i * bs];
    return c;
}

static float to_out(const struct gv_mma_model *m, double acc)
{
    struct fmt o = fmt_with(m->out, -1, m->out_round, m->out_flush);
    return (float)round_double(acc, &o);
}

static struct fmt acc_fmt(const struct gv_mma_model *m)
{
    return fmt_with(m->acc, m->acc_frac_bits, m->acc_round, m->acc_flush);
}

float gv_mma_dot_acc(const struct gv_mma_model *m, double c, const double *a, const double *b,
                     int k)
{
    struct fmt in = fmt_with(m->in, m->in_frac_bits, m->in_round, m->in_flush);
    struct fmt acc = acc_fmt(m);
    long n = k > 0 ? k : 0;
    struct xv *xa = malloc((size_t)(n ? n : 1) * sizeof *xa);
    struct xv *xb = malloc((size_t)(n ? n : 1) * sizeof *xb);
    struct term *t = malloc((size_t)(m->block + 1) * sizeof *t);
    float r = NAN;
    if (xa && xb && t) {
        for (long i = 0; i < n; i++) {
            xa[i] = input_of(m, &in, a[i]);
            xb[i] = input_of(m, &in, b[i]);
        }
        int special;
        double s = dot_core(m, &acc, round_double(c, &acc), xa, xb, n, t, &special);
        if (special)
            s = dot_special(c, a, 1, b, 1, n);
        r = to_out(m, s);
    }
    free(xa);
    free(xb);
    free(t);
    return r;
}

float gv_mma_dot(const struct gv_mma_model *m, const double *a, const double *b, int k)
{
    return gv_mma_dot_acc(m, 0.0, a, b, k);
}

/* ---------- GEMM ---------- */

struct gemm {
    const struct gv_mma_model *m;
    struct fmt acc;
    const struct xv *a, *bt; /* A row-major, B transposed (N x K) */
    const double *ad, *btd;  /* the same as values, for inputs with inf or NaN */
    struct gv_buffer *c;
    long M, N, K;
    size_t c0; /* first output element of this batch */
    volatile int oom;
};

static void gemm_rows(struct gemm *g, long lo, long hi)
{
    struct term *t = malloc((size_t)(g->m->block + 1) * sizeof *t);
    if (!t) {
        g->oom = 1;
        return;
    }
    for (long i = lo; i < hi; i++)
        for (long j = 0; j < g->N; j++) {
            int special;
            const struct xv *a = g->a + i * g->K, *b = g->bt + j * g->K;
            double s = dot_core(g->m, &g->acc, 0.0, a, b, g->K, t, &special);
            if (special)
                s = dot_special(0.0, g->ad + i * g->K, 1, g->btd + j * g->K, 1, g->K);
            gv_fp_store(g->c->data, g->c->dtype, g->c0 + (size_t)(i * g->N + j),
                        (double)to_out(g->m, s));
        }
    free(t);
}

struct part {
    struct gemm *g;
    long lo, hi;
};

static void *part_main(void *arg)
{
    struct part *p = arg;
    gemm_rows(p->g, p->lo, p->hi);
    return NULL;
}

static void rows_parallel(struct gemm *g, int nthreads)
{
    int t = nthreads < 1 ? 1 : nthreads > 64 ? 64 : nthreads;
    if (t > g->M)
        t = (int)(g->M > 0 ? g->M : 1);
    struct part p[64];
    pthread_t th[64];
    int started[64] = {0};
    for (int i = 0; i < t; i++)
        p[i] = (struct part){g, g->M * i / t, g->M * (i + 1) / t};
    for (int i = 1; i < t; i++)
        started[i] = pthread_create(&th[i], NULL, part_main, &p[i]) == 0;
    part_main(&p[0]);
    for (int i = 1; i < t; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            part_main(&p[i]);
    }
}

static int gemm_args_ok(const struct gv_mma_model *m, const struct gv_buffer *a,
                        const struct gv_buffer *b, const struct gv_buffer *c, long batch, long M,
                        long N, long K, struct gv_err *err)
{
    int rc = gv_mma_model_check(m, err);
    if (rc)
        return rc;
    enum gv_dtype store_in = m->in == GV_TF32 ? GV_F32 : m->in;
    if ((a->dtype != store_in && a->dtype != m->in) || b->dtype != a->dtype || c->dtype != m->out)
        return gv_err_set(err, GV_E_USAGE, "mma gemm: buffers %s/%s/%s, the model %s in, %s out",
                          gv_dtype_name(a->dtype), gv_dtype_name(b->dtype),
                          gv_dtype_name(c->dtype), gv_dtype_name(m->in), gv_dtype_name(m->out));
    if (batch < 1 || M < 0 || N < 0 || K < 0 || K > INT_MAX ||
        a->count != (size_t)(batch * M * K) || b->count != (size_t)(batch * K * N) ||
        c->count != (size_t)(batch * M * N))
        return gv_err_set(err, GV_E_USAGE, "mma gemm: buffer sizes do not match %ldx%ldx%ldx%ld",
                          batch, M, N, K);
    return GV_OK;
}

int gv_mma_gemm(const struct gv_mma_model *m, const struct gv_buffer *a,
                const struct gv_buffer *b, struct gv_buffer *c, long batch, long M, long N,
                long K, int nthreads, struct gv_err *err)
{
    int rc = gemm_args_ok(m, a, b, c, batch, M, N, K, err);
    if (rc)
        return rc;
    struct fmt in = fmt_with(m->in, m->in_frac_bits, m->in_round, m->in_flush);
    size_t na = (size_t)(M * K), nb = (size_t)(K * N);
    struct xv *xa = malloc((na ? na : 1) * sizeof *xa), *xb = malloc((nb ? nb : 1) * sizeof *xb);
    double *da = malloc((na ? na : 1) * sizeof *da), *db = malloc((nb ? nb : 1) * sizeof *db);
    rc = xa && xb && da && db ? GV_OK : gv_err_set(err, GV_E_NOMEM, "mma gemm: out of memory");
    for (long bi = 0; bi < batch && !rc; bi++) {
        for (size_t i = 0; i < na; i++) {
            da[i] = gv_fp_load(a->data, a->dtype, (size_t)bi * na + i);
            xa[i] = input_of(m, &in, da[i]);
        }
        for (long k = 0; k < K; k++)
            for (long j = 0; j < N; j++) {
                double v = gv_fp_load(b->data, b->dtype, (size_t)bi * nb + (size_t)(k * N + j));
                db[j * K + k] = v;
                xb[j * K + k] = input_of(m, &in, v);
            }
        struct gemm g = {m, acc_fmt(m), xa, xb, da, db, c, M, N, K, (size_t)(bi * M * N), 0};
        rows_parallel(&g, nthreads);
        if (g.oom)
            rc = gv_err_set(err, GV_E_NOMEM, "mma gemm: out of memory");
    }
    free(xa);
    free(xb);
    free(da);
    free(db);
    return rc;
}
