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
#include <stdio.h>
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
    if (m->chunk_promote < 0 || m->chunk_promote > 1)
        return gv_err_set(err, GV_E_USAGE, "mma model: chunk_promote %d is not 0 or 1",
                          m->chunk_promote);
    if (m->tile < 0 || m->tile > (1 << 20))
        return gv_err_set(err, GV_E_USAGE, "mma model: tile %d is not 0..%d", m->tile, 1 << 20);
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
static double dot_run(const struct gv_mma_model *m, const struct fmt *acc, double c,
                      const struct xv *a, const struct xv *b, long k0, long k1, struct term *t,
                      int *special)
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

/* The same with the model's tile: the first (k1 - k0) mod tile products (the
 * partial tile) summed first on their own blocks, then the whole tiles, as a
 * kernel that handles its partial K tile in its first iteration does. */
static double dot_blocks(const struct gv_mma_model *m, const struct fmt *acc, double c,
                         const struct xv *a, const struct xv *b, long k0, long k1,
                         struct term *t, int *special)
{
    long res = m->tile > 0 ? (k1 - k0) % m->tile : 0;
    if (res) {
        c = dot_run(m, acc, c, a, b, k0, k0 + res, t, special);
        if (*special)
            return NAN;
        k0 += res;
    }
    return dot_run(m, acc, c, a, b, k0, k1, t, special);
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
        struct fmt jacc = m->chunk_promote ? fmt_with(m->acc, -1, m->chunk_round, m->acc_flush)
                                           : *acc;
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

/* ---------- a kernel's structure as text ---------- */

/* The fp32 datapath without tensor cores: whole fp32 inputs, one fused
 * multiply-add per product, nearest-even. */
static void fp32_fma(struct gv_mma_model *m, enum gv_dtype out)
{
    gv_mma_model_plain(m, GV_F32, GV_F32, out);
    m->prod_round = 0;
}

static int is_fp32_fma(const struct gv_mma_model *m)
{
    if (m->out == GV_F16)
        return 0; /* the fit's fp32 datapath has a wider output */
    struct gv_mma_model f;
    fp32_fma(&f, m->out);
    f.tile = m->tile;
    f.chunk = m->chunk;
    f.chunk_round = m->chunk_round;
    f.chunk_promote = m->chunk_promote;
    return !memcmp(&f, m, sizeof f);
}

void gv_mma_structure_str(const struct gv_mma_model *m, char *buf, size_t n)
{
    int k = is_fp32_fma(m) ? snprintf(buf, n, "fp32 fma")
            : m->extra_bits < 0 ? snprintf(buf, n, "block %d, extra exact", m->block)
                                : snprintf(buf, n, "block %d, extra %d", m->block, m->extra_bits);
    if (k > 0 && (size_t)k < n && m->align_nominal && m->block > 1)
        k += snprintf(buf + k, n - (size_t)k, ", exponent aligned");
    if (k > 0 && (size_t)k < n && m->tile)
        k += snprintf(buf + k, n - (size_t)k, ", tile %d", m->tile);
    if (k > 0 && (size_t)k < n && m->chunk)
        snprintf(buf + k, n - (size_t)k, ", chunks %d %s%s", m->chunk,
                 gv_mma_round_name(m->chunk_round), m->chunk_promote ? ", promoted" : "");
}

static int round_of_name(const char *s, enum gv_mma_round *r)
{
    for (int i = GV_MMA_RNE; i <= GV_MMA_UP; i++)
        if (!strcmp(s, gv_mma_round_name((enum gv_mma_round)i))) {
            *r = (enum gv_mma_round)i;
            return 1;
        }
    return 0;
}

/* "NAME N" with 0 <= N <= max: N, else -1. */
static long item_int(const char *item, const char *name, long max)
{
    size_t l = strlen(name);
    if (strncmp(item, name, l) || item[l] != ' ' || !item[l + 1])
        return -1;
    long v = 0;
    for (const char *p = item + l + 1; *p; p++) {
        if (*p < '0' || *p > '9' || v > max)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v <= max ? v : -1;
}

/* One item of a structure text into m. */
static int structure_item(const char *it, struct gv_mma_model *m)
{
    long v;
    char name[24];
    int used = 0;
    if (!strcmp(it, "fp32 fma")) {
        if (m->in != GV_F32 || m->out == GV_F16)
            return 0; /* fp32 inputs only */
        fp32_fma(m, m->out);
        return 1;
    }
    if (!strcmp(it, "exponent aligned")) {
        m->align_nominal = 1;
        return 1;
    }
    if (!strcmp(it, "promoted")) {
        m->chunk_promote = 1;
        return 1;
    }
    if (!strcmp(it, "extra exact")) {
        m->extra_bits = -1;
        return 1;
    }
    if ((v = item_int(it, "block", 1 << 20)) >= 1)
        m->block = (int)v;
    else if ((v = item_int(it, "extra", 40)) >= 0)
        m->extra_bits = (int)v;
    else if ((v = item_int(it, "tile", 1 << 20)) >= 1)
        m->tile = (int)v;
    else if (sscanf(it, "chunks %ld %23s%n", &v, name, &used) == 2 && !it[used] && v >= 1 &&
             v <= (1 << 20) && round_of_name(name, &m->chunk_round))
        m->chunk = (int)v;
    else
        return 0;
    return 1;
}

int gv_mma_structure_parse(const char *s, struct gv_mma_model *m)
{
    struct gv_mma_model w = *m;
    w.tile = 0;
    w.chunk = 0;
    w.chunk_promote = 0;
    w.align_nominal = 0;
    char item[64];
    /* the datapath first, as gv_mma_structure_str writes it */
    if (strncmp(s, "block ", 6) && strncmp(s, "fp32 fma", 8))
        return -1;
    for (const char *p = s; *p;) {
        const char *end = strstr(p, ", ");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0 || n >= sizeof item || (end && !end[2]))
            return -1;
        memcpy(item, p, n);
        item[n] = 0;
        if (!structure_item(item, &w))
            return -1;
        p += n + (end ? 2 : 0);
    }
    if (w.block == 1)
        w.extra_bits = -1;
    if (w.chunk_promote && !w.chunk)
        return -1; /* promoted needs chunks to promote */
    struct gv_err e = {0};
    if (gv_mma_model_check(&w, &e))
        return -1;
    *m = w;
    return 0;
}

/* ---------- fitting the structure ---------- */

/* One GEMM of the fit, inputs decoded once per input format. */
struct fitg {
    const struct gv_mma_fit_gemm *g;
    struct xv *a, *bt; /* A row-major, B transposed */
    double *ad, *btd;
    double *want;      /* the device's outputs */
};

static void fitg_free(struct fitg *f)
{
    free(f->a);
    free(f->bt);
    free(f->ad);
    free(f->btd);
    free(f->want);
}

static int fitg_load(struct fitg *f, const struct gv_mma_fit_gemm *g)
{
    long M = g->M, N = g->N, K = g->K;
    memset(f, 0, sizeof *f);
    f->g = g;
    size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
    f->a = malloc((na ? na : 1) * sizeof *f->a);
    f->bt = malloc((nb ? nb : 1) * sizeof *f->bt);
    f->ad = malloc((na ? na : 1) * sizeof *f->ad);
    f->btd = malloc((nb ? nb : 1) * sizeof *f->btd);
    f->want = malloc((nc ? nc : 1) * sizeof *f->want);
    if (!f->a || !f->bt || !f->ad || !f->btd || !f->want)
        return -1;
    for (size_t i = 0; i < na; i++)
        f->ad[i] = gv_fp_load(g->a->data, g->a->dtype, i);
    for (long k = 0; k < K; k++)
        for (long j = 0; j < N; j++)
            f->btd[j * K + k] = gv_fp_load(g->b->data, g->b->dtype, (size_t)(k * N + j));
    for (size_t i = 0; i < nc; i++)
        f->want[i] = gv_fp_load(g->c->data, g->c->dtype, i);
    return 0;
}

static void fitg_inputs(struct fitg *f, const struct gv_mma_model *m)
{
    struct fmt in = fmt_with(m->in, m->in_frac_bits, m->in_round, m->in_flush);
    long K = f->g->K;
    for (long i = 0; i < f->g->M * K; i++)
        f->a[i] = input_of(m, &in, f->ad[i]);
    for (long i = 0; i < f->g->N * K; i++)
        f->bt[i] = input_of(m, &in, f->btd[i]);
}

static int same_value(double x, double y)
{
    return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
}

/* Outputs of each GEMM a fit checks, on a diagonal walk: every row and column
 * of a 64 x 64 output 8 times. */
#define FIT_OUTPUTS 512

static long fit_outputs(const struct fitg *f)
{
    long n = f->g->M * f->g->N;
    return n < FIT_OUTPUTS ? n : FIT_OUTPUTS;
}

/* How many outputs of f m reproduces before the first that differs (all:
 * fit_outputs). */
static long fit_run(const struct gv_mma_model *m, const struct fitg *f, struct term *t)
{
    struct fmt acc = acc_fmt(m);
    long M = f->g->M, N = f->g->N, K = f->g->K, n = 0;
    for (long o = 0; o < fit_outputs(f); o++, n++) {
        long i = o % M, j = (o / M + o) % N; /* a diagonal walk: every row and column early */
        int special;
        double s = dot_core(m, &acc, 0.0, f->a + i * K, f->bt + j * K, K, t, &special);
        if (special)
            s = dot_special(0.0, f->ad + i * K, 1, f->btd + j * K, 1, K);
        if (!same_value((double)to_out(m, s), f->want[i * N + j]))
            break;
    }
    return n;
}

/* The candidates' chunk lengths for inner dimension K: kernel chunks, then
 * split-K slices (K cut into S slices, each a multiple of 8 to 128). */
static int chunk_lengths(long K, int *c, int max)
{
    static const int fixed[] = {4, 8, 16, 32, 64, 128, 256};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && n < max; i++)
        if (fixed[i] < K)
            c[n++] = fixed[i];
    for (int g = 8; g <= 128; g *= 2)
        for (long S = 2; S <= 16 && n < max; S++) {
            long len = (K + S - 1) / S;
            len = (len + g - 1) / g * g;
            int dup = len >= K;
            for (int i = 0; i < n && !dup; i++)
                dup = c[i] == len;
            if (!dup)
                c[n++] = (int)len;
        }
    return n;
}

int gv_mma_fit(const struct gv_mma_model *base, int extra_is_bound,
               const struct gv_mma_model *hint, const struct gv_mma_fit_gemm *g, int ng,
               struct gv_mma_fit *out, struct gv_err *err)
{
    int tile_hint = hint ? hint->tile : 0;
    memset(out, 0, sizeof *out);
    out->m = *base;
    int rc = gv_mma_model_check(base, err);
    if (rc)
        return rc;
    if (ng < 1 || ng > 8)
        return gv_err_set(err, GV_E_USAGE, "mma fit: %d GEMMs (1..8)", ng);
    long K = g[0].K, total = 0;
    struct fitg f[8];
    int nf = 0;
    for (; nf < ng; nf++) {
        rc = g[nf].K != K ? gv_err_set(err, GV_E_USAGE, "mma fit: GEMMs of different K")
                          : gemm_args_ok(base, g[nf].a, g[nf].b, g[nf].c, 1, g[nf].M, g[nf].N,
                                         g[nf].K, err);
        if (rc)
            break;
        if (fitg_load(&f[nf], &g[nf])) {
            fitg_free(&f[nf]);
            rc = gv_err_set(err, GV_E_NOMEM, "mma fit: out of memory");
            break;
        }
        total += fit_outputs(&f[nf]);
    }
    /* the datapaths: as measured; extra bits beyond a lower bound; fp32
     * inputs kept whole (a kernel without the reduced input format) */
    struct gv_mma_model dps[24];
    int ndp = 0;
    int xh = hint && extra_is_bound && hint->extra_bits > base->extra_bits ? hint->extra_bits : -1;
    if (xh >= 0) { /* the bits a larger K showed first */
        dps[ndp] = *base;
        dps[ndp++].extra_bits = xh;
    }
    dps[ndp++] = *base;
    for (int x = base->extra_bits + 1; extra_is_bound && base->extra_bits >= 0 && x <= 24; x++) {
        if (x == xh)
            continue;
        dps[ndp] = *base;
        dps[ndp++].extra_bits = x;
    }
    dps[ndp] = *base;
    dps[ndp++].align_nominal = !base->align_nominal;
    if (base->in == GV_F32 && base->in_frac_bits >= 0 && base->out != GV_F16)
        fp32_fma(&dps[ndp++], base->out);
    struct fmt whole;
    fmt_known(base->acc, &whole);
    int passes = base->acc_frac_bits < whole.frac ? 4 : 2; /* promoted: passes 2 and 3 */
    const int tiles[] = {tile_hint > 0 ? tile_hint : 0, 0, 16, 32, 64, 128, 256};
    const int blocks[] = {base->block, 1, 2, 4, 8, 16, 32};
    int chunks[96];
    int nch = chunk_lengths(K, chunks, 96);
    struct term *t = malloc(65 * sizeof *t > (size_t)(base->block + 1) * sizeof *t
                                ? 65 * sizeof *t
                                : (size_t)(base->block + 1) * sizeof *t);
    if (!rc && !t)
        rc = gv_err_set(err, GV_E_NOMEM, "mma fit: out of memory");
    long best = -1;
    for (int d = 0; d < ndp && !rc && !out->found; d++) {
        for (int i = 0; i < nf; i++)
            fitg_inputs(&f[i], &dps[d]);
        for (int c = -1; c < passes * nch && !out->found; c++)
            for (size_t ti = 0; ti < 7 && !out->found; ti++) {
                if (ti && (tiles[ti] == tiles[0] ||
                           (tiles[ti] && (tiles[ti] >= K || K % tiles[ti] == 0))))
                    continue; /* tried, or no partial tile: the same as none */
                for (size_t bi = 0; bi < 7 && !out->found; bi++) {
                    int fma = is_fp32_fma(&dps[d]); /* one product per rounding */
                    if (bi && (blocks[bi] == base->block || fma))
                        continue;
                    struct gv_mma_model m = dps[d];
                    m.block = fma ? 1 : blocks[bi];
                    if (m.block == 1)
                        m.extra_bits = -1;
                    m.tile = tiles[ti];
                    int pass = c < 0 ? 0 : c / nch;
                    m.chunk = c < 0 ? 0 : chunks[c % nch];
                    m.chunk_round = pass % 2 ? GV_MMA_RNE : m.acc_round;
                    m.chunk_promote = pass >= 2;
                    if (pass % 2 && m.acc_round == GV_MMA_RNE)
                        continue; /* the same as the pass before */
                    out->tried++;
                    long n = 0;
                    for (int i = 0; i < nf; i++) {
                        long r = fit_run(&m, &f[i], t);
                        n += r;
                        if (r < fit_outputs(&f[i]))
                            break;
                    }
                    if (n > best) {
                        best = n;
                        out->m = m;
                    }
                    out->found = n == total;
                }
            }
    }
    out->leading = best < 0 ? 0 : best;
    out->outputs = total;
    free(t);
    for (int i = 0; i < nf; i++)
        fitg_free(&f[i]);
    return rc;
}
