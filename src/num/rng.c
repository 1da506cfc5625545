/* Counter-based inputs.
 *
 * Generator: SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014). Its n-th output from state s is
 * mix(s + (n+1)*G) with G = 0x9e3779b97f4a7c15 and mix the bijective
 * variant-13 finalizer, so any element is computed directly from its index:
 * no state, any order, any number of threads. Each (case key, seed, stream)
 * gets its own starting state base = mix(key ^ mix(seed << 32 | stream)),
 * and element i uses outputs 2i and 2i+1 of that sequence (two 64-bit words).
 * key = seed = stream = 0 gives base 0, i.e. the published SplitMix64
 * sequence for seed 0, which the unit test checks.
 *
 * Normal draws: the inverse normal CDF of a uniform p in (0,1), by Acklam's
 * rational approximation (relative error below 1.15e-9 over the whole range,
 * far below what any statistic of a test input can see) evaluated with + - * /
 * and sqrt only, which IEEE-754 rounds correctly on every platform. The tails
 * need log(p); libm's log is not correctly rounded everywhere, so log is
 * computed here from the exponent field plus an atanh series, again with
 * correctly rounded operations only. Box-Muller was rejected because it needs
 * cos/sin as well; a sum of uniforms is not normal in the tails.
 *
 * Bit-identical results need each expression evaluated exactly as written:
 * no fused multiply-add contraction (GCC contracts by default in GNU mode when
 * the target has FMA, e.g. aarch64; clang with -ffp-contract=fast ignores the
 * pragmas) and no excess precision (x87). Every inexact product that feeds an
 * addition goes through mul(), whose result passes an empty asm statement:
 * the compiler cannot fuse what it cannot see. The pragmas below are a second
 * line of defence. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "num/rng.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "num/fp.h"

#ifdef __FAST_MATH__
#error "rng.c must not be compiled with -ffast-math: the inputs would depend on the compiler"
#endif
_Static_assert(FLT_EVAL_METHOD == 0, "rng.c needs double arithmetic without excess precision");

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* a * b rounded to double, never fused with a following addition. */
static inline double mul(double a, double b)
{
    double p = a * b;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+x"(p));
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__("" : "+w"(p));
#else
    volatile double v = p;
    p = v;
#endif
    return p;
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t gv_rng_splitmix64(uint64_t state, uint64_t n) { return mix64(state + (n + 1) * GOLDEN); }

uint64_t gv_rng_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

uint64_t gv_rng_key(const char *case_id)
{
    return mix64(gv_rng_fnv1a64(case_id, strlen(case_id)));
}

static uint64_t stream_base(uint64_t key, uint32_t seed, uint32_t stream)
{
    return mix64(key ^ mix64((uint64_t)seed << 32 | stream));
}

/* Word j (0 or 1) of element index. */
static uint64_t word(uint64_t base, uint64_t index, int j)
{
    return gv_rng_splitmix64(base, 2 * index + (uint64_t)j);
}

uint64_t gv_rng_bits(uint64_t key, uint32_t seed, uint32_t stream, uint64_t index)
{
    return word(stream_base(key, seed, stream), index, 0);
}

static double pow2(int k)
{
    uint64_t u = (uint64_t)(k + 1023) << 52;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* 53 random bits as a double in [0,1): exact. */
static double unit(uint64_t w) { return (double)(w >> 11) * 0x1p-53; }

/* Uniform integer in [0, n) from the top 32 bits (bias below n / 2^32). */
static uint32_t below(uint64_t w, uint32_t n) { return (uint32_t)(((w >> 32) * n) >> 32); }

double gv_rng_uniform(uint64_t key, uint32_t seed, uint32_t stream, uint64_t index)
{
    return unit(gv_rng_bits(key, seed, stream, index));
}

/* Natural log of a positive normal double using only correctly rounded
 * operations: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s),
 * s = (m-1)/(m+1), |s| < 0.1716, series to s^25 (truncation < 1e-19). */
static double log_exact_ops(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    u = (u & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1023) << 52); /* m in [1,2) */
    double m;
    memcpy(&m, &u, sizeof m);
    if (m > 1.4142135623730951) {
        m = m / 2; /* exact */
        e++;
    }
    double s = (m - 1) / (m + 1);
    double s2 = mul(s, s);
    double poly = 2.0 / 25;
    for (int k = 11; k >= 0; k--)
        poly = 2.0 / (2 * k + 1) + mul(s2, poly);
    const double ln2_hi = 6.93147180369123816490e-01; /* 0x3fe62e42fee00000 */
    const double ln2_lo = 1.90821492927058770002e-10; /* 0x3dea39ef35793c76 */
    return mul(e, ln2_hi) + (mul(e, ln2_lo) + mul(s, poly));
}

double gv_rng_normal_quantile(double p)
{
    static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                -2.759285104469687e+02, 1.383577518672690e+02,
                                -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                -1.556989798598866e+02, 6.680131188771972e+01,
                                -1.328068155288572e+01};
    static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                -2.400758277161838e+00, -2.549732539343734e+00,
                                4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01,
                                2.445134137142996e+00, 3.754408661907416e+00};
    const double plow = 0.02425;
    if (!(p > 0 && p < 1))
        return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
    if (p < plow || p > 1 - plow) {
        double t = p < plow ? p : 1 - p; /* 1 - p is exact for p > 1/2 */
        double q = sqrt(-2 * log_exact_ops(t));
        double num = c[0];
        for (int i = 1; i < 6; i++)
            num = mul(num, q) + c[i];
        double den = d[0];
        for (int i = 1; i < 4; i++)
            den = mul(den, q) + d[i];
        den = mul(den, q) + 1;
        return p < plow ? num / den : -(num / den);
    }
    double q = p - 0.5;
    double r = mul(q, q);
    double num = a[0];
    for (int i = 1; i < 6; i++)
        num = mul(num, r) + a[i];
    num = mul(num, q);
    double den = b[0];
    for (int i = 1; i < 5; i++)
        den = mul(den, r) + b[i];
    den = mul(den, r) + 1;
    return num / den;
}

/* Format parameters taken from fp.h: fraction bits and exponent range. */
static int frac_bits(enum gv_dtype t) { return -ilogb(gv_fp_unit_roundoff(t)) - 1; }

static double draw_normal(uint64_t w0)
{
    double p = ((double)(w0 >> 11) + 0.5) * 0x1p-53; /* in (0,1), exact */
    return gv_rng_normal_quantile(p);
}

static double draw_uniform(uint64_t w0) { return (double)(w0 >> 11) * 0x1p-52 - 1.0; }

/* sign * 2^E * (1 + f), E uniform integer in [lo, hi), f uniform on a 2^-52
 * grid: spans 2^-20 .. 2^20 where the format can hold it. */
static double draw_wide(enum gv_dtype t, uint64_t w0, uint64_t w1)
{
    int lo = -20, hi = 20;
    int emax = ilogb(gv_fp_max_finite(t));
    int emin_sub = ilogb(gv_fp_min_normal(t)) - frac_bits(t);
    if (hi > emax)
        hi = emax; /* keeps (1+f)*2^E below max finite */
    if (lo < emin_sub)
        lo = emin_sub;
    int e = lo + (int)below(w0, (uint32_t)(hi - lo));
    double m = 1.0 + (double)(w1 >> 12) * 0x1p-52;
    double x = m * pow2(e);
    return (w0 & 1) ? -x : x;
}

/* 80% subnormals of t (uniform over the subnormal encodings), 10% normals
 * just above the subnormal range (2^emin .. 2^(emin+4)), 10% signed zeros. */
static double draw_subnormal(enum gv_dtype t, uint64_t w0, uint64_t w1)
{
    double minnorm = gv_fp_min_normal(t);
    double u = gv_fp_unit_roundoff(t);
    double minsub = minnorm * (2 * u); /* exact, also for fp64 (2^-1074) */
    uint32_t cat = below(w0, 10);
    double sign = (w0 & 1) ? -1.0 : 1.0;
    if (cat == 0)
        return sign * 0.0;
    if (cat == 1) {
        double m = 1.0 + (double)(w1 >> 12) * 0x1p-52;
        return sign * m * minnorm * (double)(1u << ((w0 >> 8) & 3));
    }
    uint64_t nsub = (uint64_t)(0.5 / u) - 1; /* subnormal encodings 1 .. 2^f - 1 */
    uint64_t k = 1 + (w1 >> 11) % nsub;
    return sign * (double)k * minsub; /* exact */
}

/* Pairs (2j, 2j+1) share a magnitude M_j = 2^E * (1+f) and have opposite
 * signs; each adds its own small offset in [-1, 1), so sums of a pair are
 * small against M_j: catastrophic cancellation in any reduction over them. */
static double draw_cancel(enum gv_dtype t, uint64_t base, uint64_t index)
{
    uint64_t pair = index & ~UINT64_C(1);
    uint64_t p0 = word(base, pair, 0), p1 = word(base, pair, 1);
    int hi = 10;
    int emax = ilogb(gv_fp_max_finite(t)) - 2;
    if (hi > emax)
        hi = emax;
    int lo = hi - 4;
    int e = lo + (int)below(p0, (uint32_t)(hi - lo));
    double mag = (1.0 + (double)(p1 >> 12) * 0x1p-52) * pow2(e);
    double off = draw_uniform(word(base, index, 1));
    double sign = ((p0 & 1) ^ (index & 1)) ? -1.0 : 1.0;
    return sign * (mag + off);
}

static double draw_positive(uint64_t w0)
{
    return 0x1p-6 + mul(4.0 - 0x1p-6, unit(w0));
}

static double draw_at(enum gv_dist d, enum gv_dtype t, uint64_t base, uint64_t index)
{
    uint64_t w0 = word(base, index, 0);
    switch (d) {
    case GV_DIST_NORMAL:
        return draw_normal(w0);
    case GV_DIST_UNIFORM:
        return draw_uniform(w0);
    case GV_DIST_WIDE:
        return draw_wide(t, w0, word(base, index, 1));
    case GV_DIST_SUBNORMAL:
        return draw_subnormal(t, w0, word(base, index, 1));
    case GV_DIST_CANCEL:
        return draw_cancel(t, base, index);
    case GV_DIST_POSITIVE:
        return draw_positive(w0);
    default:
        return NAN;
    }
}

double gv_rng_draw(enum gv_dist d, enum gv_dtype t, uint64_t key, uint32_t seed, uint32_t stream,
                   uint64_t index)
{
    return draw_at(d, t, stream_base(key, seed, stream), index);
}

void gv_rng_fill(void *buf, enum gv_dtype t, size_t n, enum gv_dist d, uint64_t key, uint32_t seed,
                 uint32_t stream)
{
    uint64_t base = stream_base(key, seed, stream);
    for (size_t i = 0; i < n; i++)
        gv_fp_store(buf, t, i, draw_at(d, t, base, i));
}
