/* Number formats: exhaustive fp16/bf16 checks against oracles that share no
 * code with src/num/fp.c: the compiler's _Float16 where it has one (libgcc
 * soft-fp conversions, one rounding from double), the value formula from the
 * fields, and a naive nearest-value search over a sorted table of every
 * finite value of the format, built from first principles. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "num/fp.h"
#include "t.h"

/* fp16 value from its fields, by the definition (second decode oracle). */
static double f16_formula(uint16_t u)
{
    int e = (u >> 10) & 31, m = u & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (u & 0x8000) ? -v : v;
}

#ifdef __FLT16_MAX__
/* The compiler's _Float16 (gcc >= 12, clang >= 15 on x86-64): conversions by
 * libgcc/compiler-rt soft-float, one rounding from double. */
#define HAVE_F16 1
static uint16_t oracle_enc(double x)
{
    _Float16 h = (_Float16)x;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}

static double oracle_dec(uint16_t u)
{
    _Float16 h;
    memcpy(&h, &u, 2);
    return (double)h;
}
#else
/* No _Float16 in this compiler: the naive nearest-value search and the
 * field formula are the oracles (see naive_round below). */
#define HAVE_F16 0
static uint32_t naive_round(double x, enum gv_round r, int fn);
static uint16_t oracle_enc(double x) { return (uint16_t)naive_round(x, GV_RNE, 0); }
static double oracle_dec(uint16_t u) { return f16_formula(u); }
#endif

static double bf16_oracle(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

static int same_double(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) && signbit(a) == signbit(b);
    return dbits(a) == dbits(b);
}

/* Tiny deterministic generator for test inputs (xorshift64*). */
static uint64_t t_state = 0x9e3779b97f4a7c15ull;
static uint64_t t_rand(void)
{
    t_state ^= t_state >> 12;
    t_state ^= t_state << 25;
    t_state ^= t_state >> 27;
    return t_state * 0x2545f4914f6cdd1dull;
}

/* A random double with exponent in [lo, hi]. */
static double rand_double(int lo, int hi)
{
    uint64_t r = t_rand();
    int e = lo + (int)(r % (uint64_t)(hi - lo + 1));
    double m = 1.0 + (double)(t_rand() >> 11) / 9007199254740992.0;
    double x = ldexp(m, e);
    return (r >> 40) & 1 ? -x : x;
}

/* ---- the naive reference ---- */

struct table {
    int n;           /* number of positive finite values incl. +0 */
    double val[65536];
    uint32_t enc[65536];
    uint32_t sign;   /* sign bit */
    uint32_t over;   /* encoding for positive overflow under RNE (inf, or max for e4m3) */
    uint32_t nan;    /* some NaN encoding without sign */
};

static struct table tab;

/* Positive values of a format with e exponent bits, f fraction bits, bias b,
 * from the definition v = 2^(1-b) * m/2^f (subnormal) or 2^(E-b) * (1 + m/2^f). */
static void build_table(int e, int f, int b, int fn)
{
    tab.n = 0;
    int emaxfield = (1 << e) - 1;
    for (int E = 0; E <= emaxfield; E++) {
        for (int m = 0; m < (1 << f); m++) {
            if (!fn && E == emaxfield)
                continue;
            if (fn && E == emaxfield && m == (1 << f) - 1)
                continue;
            double v = E == 0 ? ldexp((double)m / (1 << f), 1 - b)
                              : ldexp(1.0 + (double)m / (1 << f), E - b);
            tab.val[tab.n] = v;
            tab.enc[tab.n] = (uint32_t)(E << f | m);
            tab.n++;
        }
    }
    tab.sign = 1u << (e + f);
    tab.over = fn ? tab.enc[tab.n - 1] : (uint32_t)emaxfield << f;
    tab.nan = fn ? (uint32_t)emaxfield << f | ((1u << f) - 1) : (uint32_t)emaxfield << f | 1u << (f - 1);
}

/* Round finite x by searching for its neighbours in the table. */
static uint32_t naive_round(double x, enum gv_round r, int fn)
{
    uint32_t s = signbit(x) ? tab.sign : 0;
    double a = fabs(x);
    double maxv = tab.val[tab.n - 1];
    double gap = maxv - tab.val[tab.n - 2];
    if (a > maxv) {
        if (r == GV_RTZ || fn)
            return s | tab.enc[tab.n - 1];
        if (a >= maxv + gap / 2) /* the tie goes to the even 2^emax+1 (inf) */
            return s | tab.over;
        return s | tab.enc[tab.n - 1];
    }
    int lo = 0, hi = tab.n - 1; /* invariant: val[lo] <= a <= val[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (tab.val[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    if (tab.val[hi] == a)
        return s | tab.enc[hi];
    if (tab.val[lo] == a || r == GV_RTZ)
        return s | tab.enc[lo];
    double dl = a - tab.val[lo], dh = tab.val[hi] - a; /* exact: same binade spacing */
    if (dl < dh)
        return s | tab.enc[lo];
    if (dh < dl)
        return s | tab.enc[hi];
    return s | ((tab.enc[lo] & 1) ? tab.enc[hi] : tab.enc[lo]);
}

/* ---- fp16 ---- */

static void test_f16_decode_exhaustive(void)
{
    int bad_dec = 0, bad_rt = 0, bad_nan = 0, bad_fast = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        double d = gv_fp_decode(b, GV_F16);
        double o = oracle_dec((uint16_t)b);
        if (!same_double(d, o) || !same_double(d, f16_formula((uint16_t)b)))
            bad_dec++;
        if (!same_double((double)gv_f16_to_f32((uint16_t)b), o))
            bad_fast++;
        if (isnan(d)) {
            uint32_t e = gv_fp_encode(d, GV_F16, GV_RNE);
            if ((e & 0x7c00) != 0x7c00 || !(e & 0x0200) || (e & 0x8000) != (b & 0x8000))
                bad_nan++;
        } else {
            if (gv_fp_encode(d, GV_F16, GV_RNE) != b || gv_fp_encode(d, GV_F16, GV_RTZ) != b)
                bad_rt++;
        }
    }
    T_EQ_INT(bad_dec, 0);
    T_EQ_INT(bad_fast, 0);
    T_EQ_INT(bad_rt, 0);
    T_EQ_INT(bad_nan, 0);
}

/* Midpoints between adjacent fp16 values, and the doubles just beside them. */
static void test_f16_midpoints(void)
{
    build_table(5, 10, 15, 0);
    int bad_gcc = 0, bad_naive = 0, bad_even = 0, bad_rtz = 0;
    for (int sgn = 0; sgn < 2; sgn++) {
        for (uint32_t i = 0; i < 0x7c00; i++) {
            double a = gv_fp_decode(i, GV_F16);
            double b = i == 0x7bff ? 65536.0 : gv_fp_decode(i + 1, GV_F16);
            double mid = (a + b) / 2; /* exact in double */
            double xs[3] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY)};
            for (int k = 0; k < 3; k++) {
                double x = sgn ? -xs[k] : xs[k];
                uint32_t got = gv_fp_encode(x, GV_F16, GV_RNE);
                if (got != oracle_enc(x))
                    bad_gcc++;
                if (got != naive_round(x, GV_RNE, 0))
                    bad_naive++;
                uint32_t want = k == 1 ? i : k == 2 ? i + 1 : (i & 1 ? i + 1 : i);
                if (got != (want | (sgn ? 0x8000u : 0)))
                    bad_even++;
                uint32_t z = gv_fp_encode(x, GV_F16, GV_RTZ);
                if (z != (i | (sgn ? 0x8000u : 0)) || z != naive_round(x, GV_RTZ, 0))
                    bad_rtz++;
            }
        }
    }
    T_EQ_INT(bad_gcc, 0);
    T_EQ_INT(bad_naive, 0);
    T_EQ_INT(bad_even, 0);
    T_EQ_INT(bad_rtz, 0);
}

static void test_f16_random(void)
{
    build_table(5, 10, 15, 0);
    int bad = 0, bad_rtz_mag = 0, bad_fast = 0;
    for (int i = 0; i < 200000; i++) {
        double x = rand_double(-30, 17);
        uint32_t got = gv_fp_encode(x, GV_F16, GV_RNE);
        if (got != oracle_enc(x) || got != naive_round(x, GV_RNE, 0))
            bad++;
        double z = gv_fp_round(x, GV_F16, GV_RTZ);
        if (fabs(z) > fabs(x) || gv_fp_encode(x, GV_F16, GV_RTZ) != naive_round(x, GV_RTZ, 0))
            bad_rtz_mag++;
        float f = (float)x;
        if (gv_f32_to_f16(f, GV_RNE) != oracle_enc(f) ||
            gv_f32_to_f16(f, GV_RTZ) != naive_round(f, GV_RTZ, 0))
            bad_fast++;
    }
    T_EQ_INT(bad, 0);
    T_EQ_INT(bad_rtz_mag, 0);
    T_EQ_INT(bad_fast, 0);
}

static void test_f16_specials(void)
{
    /* largest subnormal 1023 * 2^-24; the midpoint to 2^-14 ties to the even normal */
    T_EQ_INT(gv_fp_encode(1023.5 * 0x1p-24, GV_F16, GV_RNE), 0x0400);
    T_EQ_INT(gv_fp_encode(1023.5 * 0x1p-24, GV_F16, GV_RTZ), 0x03ff);
    T_EQ_INT(gv_fp_encode(1022.5 * 0x1p-24, GV_F16, GV_RNE), 0x03fe);
    T_EQ_INT(gv_fp_encode(0x1p-25, GV_F16, GV_RNE), 0x0000);            /* tie to even 0 */
    T_EQ_INT(gv_fp_encode(nextafter(0x1p-25, 1), GV_F16, GV_RNE), 0x0001);
    T_EQ_INT(gv_fp_encode(-0x1p-25, GV_F16, GV_RNE), 0x8000);           /* signed zero */
    T_EQ_INT(gv_fp_encode(-0.0, GV_F16, GV_RNE), 0x8000);
    T_EQ_INT(gv_fp_encode(5e-324, GV_F16, GV_RNE), 0x0000);             /* double subnormal */
    T_EQ_INT(gv_fp_encode(65504.0, GV_F16, GV_RNE), 0x7bff);
    T_EQ_INT(gv_fp_encode(65519.99, GV_F16, GV_RNE), 0x7bff);
    T_EQ_INT(gv_fp_encode(65520.0, GV_F16, GV_RNE), 0x7c00);            /* overflow: inf */
    T_EQ_INT(gv_fp_encode(1e300, GV_F16, GV_RTZ), 0x7bff);              /* RTZ: max finite */
    T_EQ_INT(gv_fp_encode(-1e300, GV_F16, GV_RNE), 0xfc00);
    T_EQ_INT(gv_fp_encode(-INFINITY, GV_F16, GV_RTZ), 0xfc00);
    /* a signalling NaN double becomes a quiet NaN */
    double snan;
    uint64_t sn = 0x7ff0000000000001ull;
    memcpy(&snan, &sn, 8);
    uint32_t e = gv_fp_encode(snan, GV_F16, GV_RNE);
    T_CHECK((e & 0x7c00) == 0x7c00 && (e & 0x0200));
    T_CHECK(isnan(gv_fp_round(NAN, GV_F16, GV_RNE)));
}

/* ---- bf16 ---- */

static void test_bf16_exhaustive(void)
{
    build_table(8, 7, 127, 0);
    int bad_dec = 0, bad_rt = 0, bad_mid = 0, bad_fast = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        double d = gv_fp_decode(b, GV_BF16);
        if (!same_double(d, bf16_oracle((uint16_t)b)) ||
            !same_double((double)gv_bf16_to_f32((uint16_t)b), d))
            bad_dec++;
        if (!isnan(d) &&
            (gv_fp_encode(d, GV_BF16, GV_RNE) != b || gv_fp_encode(d, GV_BF16, GV_RTZ) != b))
            bad_rt++;
        uint32_t mag = b & 0x7fff;
        if (mag >= 0x7f80)
            continue;
        /* midpoint to the next larger magnitude (past the max: 2^128) */
        double a = fabs(d);
        double nb = mag == 0x7f7f ? 0x1p128 : fabs(gv_fp_decode(mag + 1, GV_BF16));
        double mid = (a + nb) / 2;
        double xs[3] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY)};
        for (int k = 0; k < 3; k++) {
            double x = (b & 0x8000) ? -xs[k] : xs[k];
            uint32_t got = gv_fp_encode(x, GV_BF16, GV_RNE);
            uint32_t want = k == 1 ? mag : k == 2 ? mag + 1 : (mag & 1 ? mag + 1 : mag);
            want |= b & 0x8000;
            if (got != want || got != naive_round(x, GV_RNE, 0))
                bad_mid++;
            if (gv_fp_encode(x, GV_BF16, GV_RTZ) != (b | 0u) ||
                naive_round(x, GV_RTZ, 0) != b)
                bad_mid++;
            float f = (float)x; /* only where the float is exact: compare fast path */
            if ((double)f == x && (gv_f32_to_bf16(f, GV_RNE) != got ||
                                   gv_f32_to_bf16(f, GV_RTZ) != b))
                bad_fast++;
        }
    }
    T_EQ_INT(bad_dec, 0);
    T_EQ_INT(bad_rt, 0);
    T_EQ_INT(bad_mid, 0);
    T_EQ_INT(bad_fast, 0);
}

static void test_bf16_random(void)
{
    build_table(8, 7, 127, 0);
    int bad = 0, bad_fast = 0;
    for (int i = 0; i < 200000; i++) {
        double x = rand_double(-140, 129);
        for (int r = 0; r < 2; r++) {
            uint32_t got = gv_fp_encode(x, GV_BF16, (enum gv_round)r);
            if (got != naive_round(x, (enum gv_round)r, 0))
                bad++;
            if (r == GV_RTZ && fabs(gv_fp_round(x, GV_BF16, GV_RTZ)) > fabs(x))
                bad++;
        }
        float f = (float)x;
        if (isfinite(f) && (gv_f32_to_bf16(f, GV_RNE) != gv_fp_encode(f, GV_BF16, GV_RNE) ||
                            gv_f32_to_bf16(f, GV_RTZ) != gv_fp_encode(f, GV_BF16, GV_RTZ)))
            bad_fast++;
    }
    T_EQ_INT(bad, 0);
    T_EQ_INT(bad_fast, 0);
    T_EQ_INT(gv_f32_to_bf16(NAN, GV_RNE) & 0x7fc0, 0x7fc0);
    T_EQ_INT(gv_f32_to_bf16(INFINITY, GV_RNE), 0x7f80);
    T_EQ_INT(gv_f32_to_bf16(FLT_MAX, GV_RNE), 0x7f80);
    T_EQ_INT(gv_f32_to_bf16(FLT_MAX, GV_RTZ), 0x7f7f);
    /* NaN whose payload sits only in the dropped bits must stay NaN */
    uint32_t nb = 0x7f800001u;
    float fn;
    memcpy(&fn, &nb, 4);
    T_CHECK(isnan(gv_bf16_to_f32(gv_f32_to_bf16(fn, GV_RTZ))));
}

/* ---- fp32 and tf32 ---- */

static void test_f32_tf32(void)
{
    int bad32 = 0, badtf = 0, badfast = 0;
    for (int i = 0; i < 200000; i++) {
        double x = rand_double(-155, 129);
        float f = (float)x; /* SSE2 cvtsd2ss: one IEEE rounding */
        uint32_t fb;
        memcpy(&fb, &f, 4);
        if (gv_fp_encode(x, GV_F32, GV_RNE) != fb)
            bad32++;
        if (fabs(gv_fp_round(x, GV_F32, GV_RTZ)) > fabs(x))
            bad32++;
        uint32_t t = gv_fp_encode(x, GV_TF32, GV_RNE);
        if (t & 0x1fff)
            badtf++;
        float tf = gv_round_f32_to_tf32(f, GV_RNE);
        if (isfinite(f) && gv_fp_round(f, GV_TF32, GV_RNE) != (double)tf)
            badfast++;
        if (isfinite(f) && gv_fp_round(f, GV_TF32, GV_RTZ) != (double)gv_round_f32_to_tf32(f, GV_RTZ))
            badfast++;
    }
    T_EQ_INT(bad32, 0);
    T_EQ_INT(badtf, 0);
    T_EQ_INT(badfast, 0);
    T_CHECK(gv_fp_round(1.0 + 0x1p-11, GV_TF32, GV_RNE) == 1.0);               /* tie to even */
    T_CHECK(gv_fp_round(1.0 + 3 * 0x1p-11, GV_TF32, GV_RNE) == 1.0 + 0x1p-9);
    T_CHECK(gv_fp_round(1.0 + 0x1p-10 + 0x1p-30, GV_TF32, GV_RTZ) == 1.0 + 0x1p-10);
    T_CHECK(gv_fp_round(0x1p-149, GV_F32, GV_RNE) == 0x1p-149);
    T_CHECK(gv_fp_round(0x1p-150, GV_F32, GV_RNE) == 0.0);
    T_CHECK(gv_fp_round(0x1.8p-150, GV_F32, GV_RNE) == 0x1p-149);
    T_CHECK(isinf(gv_fp_round(0x1.ffffffp127, GV_F32, GV_RNE)));
    T_CHECK(gv_fp_round(0x1.ffffffp127, GV_F32, GV_RTZ) == FLT_MAX);
    T_CHECK(gv_fp_round(0x1p-136, GV_TF32, GV_RNE) == 0x1p-136); /* smallest tf32 subnormal */
    T_CHECK(gv_fp_round(0x1p-137, GV_TF32, GV_RNE) == 0.0);
    T_CHECK(gv_round_f32_to_tf32(0x1p-149f, GV_RNE) == 0.0f);
    T_CHECK(isinf(gv_round_f32_to_tf32(FLT_MAX, GV_RNE)));
    T_CHECK(gv_round_f32_to_tf32(FLT_MAX, GV_RTZ) == (float)gv_fp_max_finite(GV_TF32));
}

/* ---- fp8 ---- */

static void test_f8(void)
{
    /* e4m3fn */
    int bad_rt = 0;
    for (uint32_t b = 0; b < 256; b++) {
        double d = gv_fp_decode(b, GV_F8E4M3);
        if ((b & 0x7f) == 0x7f) {
            if (!isnan(d))
                bad_rt++;
            continue;
        }
        if (isnan(d) || isinf(d) || gv_fp_encode(d, GV_F8E4M3, GV_RNE) != b ||
            gv_fp_encode(d, GV_F8E4M3, GV_RTZ) != b)
            bad_rt++;
    }
    T_EQ_INT(bad_rt, 0);
    T_CHECK(gv_fp_decode(0x7e, GV_F8E4M3) == 448.0);
    T_CHECK(gv_fp_decode(0x01, GV_F8E4M3) == 0x1p-9);
    T_CHECK(gv_fp_decode(0x08, GV_F8E4M3) == 0x1p-6);
    T_CHECK(gv_fp_decode(0x38, GV_F8E4M3) == 1.0);
    T_CHECK(gv_fp_decode(0xfe, GV_F8E4M3) == -448.0);
    T_EQ_INT(gv_fp_encode(464.0, GV_F8E4M3, GV_RNE), 0x7e);
    T_EQ_INT(gv_fp_encode(1e6, GV_F8E4M3, GV_RNE), 0x7e); /* saturates */
    T_EQ_INT(gv_fp_encode(-1e6, GV_F8E4M3, GV_RTZ), 0xfe);
    T_EQ_INT(gv_fp_encode(INFINITY, GV_F8E4M3, GV_RNE), 0x7f); /* inf -> NaN */
    T_EQ_INT(gv_fp_encode(-INFINITY, GV_F8E4M3, GV_RNE), 0xff);
    T_EQ_INT(gv_fp_encode(NAN, GV_F8E4M3, GV_RNE) & 0x7f, 0x7f);
    T_EQ_INT(gv_fp_encode(0x1p-10, GV_F8E4M3, GV_RNE), 0x00); /* tie to even zero */
    T_EQ_INT(gv_fp_encode(0x1.8p-10, GV_F8E4M3, GV_RNE), 0x01);
    T_EQ_INT(gv_fp_encode(7.5 * 0x1p-9, GV_F8E4M3, GV_RNE), 0x08); /* subnormal -> normal */
    T_CHECK(gv_fp_max_finite(GV_F8E4M3) == 448.0);

    /* e5m2 */
    bad_rt = 0;
    for (uint32_t b = 0; b < 256; b++) {
        double d = gv_fp_decode(b, GV_F8E5M2);
        if ((b & 0x7c) == 0x7c && (b & 3)) {
            if (!isnan(d))
                bad_rt++;
            continue;
        }
        if (gv_fp_encode(d, GV_F8E5M2, GV_RNE) != b || gv_fp_encode(d, GV_F8E5M2, GV_RTZ) != b)
            bad_rt++;
    }
    T_EQ_INT(bad_rt, 0);
    T_CHECK(gv_fp_decode(0x7b, GV_F8E5M2) == 57344.0);
    T_CHECK(isinf(gv_fp_decode(0x7c, GV_F8E5M2)));
    T_CHECK(gv_fp_decode(0x01, GV_F8E5M2) == 0x1p-16);
    T_EQ_INT(gv_fp_encode(61440.0, GV_F8E5M2, GV_RNE), 0x7c); /* tie goes to even inf */
    T_EQ_INT(gv_fp_encode(61439.0, GV_F8E5M2, GV_RNE), 0x7b);
    T_EQ_INT(gv_fp_encode(1e6, GV_F8E5M2, GV_RTZ), 0x7b);
    T_EQ_INT(gv_fp_encode(INFINITY, GV_F8E5M2, GV_RNE), 0x7c);
    T_CHECK(gv_fp_max_finite(GV_F8E5M2) == 57344.0);

    /* random values against the naive reference */
    int bad = 0;
    for (int fmt = 0; fmt < 2; fmt++) {
        if (fmt == 0)
            build_table(4, 3, 7, 1);
        else
            build_table(5, 2, 15, 0);
        enum gv_dtype t = fmt == 0 ? GV_F8E4M3 : GV_F8E5M2;
        for (int i = 0; i < 50000; i++) {
            double x = rand_double(fmt == 0 ? -12 : -19, fmt == 0 ? 10 : 17);
            for (int r = 0; r < 2; r++)
                if (gv_fp_encode(x, t, (enum gv_round)r) != naive_round(x, (enum gv_round)r, fmt == 0))
                    bad++;
        }
    }
    T_EQ_INT(bad, 0);
}

static void test_constants_ulp(void)
{
    T_CHECK(gv_fp_unit_roundoff(GV_F64) == 0x1p-53);
    T_CHECK(gv_fp_unit_roundoff(GV_F32) == 0x1p-24);
    T_CHECK(gv_fp_unit_roundoff(GV_TF32) == 0x1p-11);
    T_CHECK(gv_fp_unit_roundoff(GV_F16) == 0x1p-11);
    T_CHECK(gv_fp_unit_roundoff(GV_BF16) == 0x1p-8);
    T_CHECK(gv_fp_unit_roundoff(GV_F8E4M3) == 0x1p-4);
    T_CHECK(gv_fp_unit_roundoff(GV_F8E5M2) == 0x1p-3);
    T_CHECK(gv_fp_min_normal(GV_F16) == 0x1p-14);
    T_CHECK(gv_fp_min_normal(GV_BF16) == 0x1p-126);
    T_CHECK(gv_fp_min_normal(GV_F8E4M3) == 0x1p-6);
    T_CHECK(gv_fp_min_normal(GV_F8E5M2) == 0x1p-14);
    T_CHECK(gv_fp_max_finite(GV_F16) == 65504.0);
    T_CHECK(gv_fp_max_finite(GV_F32) == FLT_MAX);
    T_CHECK(gv_fp_max_finite(GV_BF16) == 0x1.fep127);
    T_CHECK(gv_fp_max_finite(GV_F64) == DBL_MAX);

    T_EQ_INT(gv_fp_ulp_distance(1.0, 1.0 + 0x1p-10, GV_F16), 1);
    T_EQ_INT(gv_fp_ulp_distance(1.0, 1.0 - 0x1p-11, GV_F16), 1);
    T_EQ_INT(gv_fp_ulp_distance(-0.0, 0.0, GV_F16), 0);
    T_EQ_INT(gv_fp_ulp_distance(-0x1p-24, 0x1p-24, GV_F16), 2);
    T_EQ_INT(gv_fp_ulp_distance(65504.0, INFINITY, GV_F16), 1);
    T_EQ_INT(gv_fp_ulp_distance(1.0, 2.0, GV_F16), 1024);
    T_EQ_INT(gv_fp_ulp_distance(1.0, 2.0, GV_BF16), 128);
    T_EQ_INT(gv_fp_ulp_distance(1.0, 2.0, GV_TF32), 1024);
    T_EQ_INT(gv_fp_ulp_distance(1.0, 2.0, GV_F32), 1 << 23);
    T_EQ_INT(gv_fp_ulp_distance(1.0, 2.0, GV_F64), 1ll << 52);
    T_EQ_INT(gv_fp_ulp_distance(-1.0, 1.0, GV_F8E4M3), 2 * 0x38);
    T_CHECK(gv_fp_ulp_distance(NAN, 1.0, GV_F16) == UINT64_MAX);
    T_CHECK(gv_fp_ulp_distance(INFINITY, 448.0, GV_F8E4M3) == UINT64_MAX);
}

static void test_load_store(void)
{
    double vals[5] = {1.5, -0.0, 0x1p-24, 65504.0, -3.25};
    enum gv_dtype ts[6] = {GV_F64, GV_F32, GV_F16, GV_BF16, GV_F8E4M3, GV_F8E5M2};
    for (int k = 0; k < 6; k++) {
        unsigned char buf[64];
        memset(buf, 0xaa, sizeof buf);
        for (int i = 0; i < 5; i++)
            gv_fp_store(buf, ts[k], (size_t)i, vals[i]);
        for (int i = 0; i < 5; i++)
            T_CHECK(same_double(gv_fp_load(buf, ts[k], (size_t)i),
                                gv_fp_round(vals[i], ts[k], GV_RNE)));
        /* nothing written past the 5 elements */
        T_EQ_INT(buf[5 * gv_dtype_size(ts[k])], 0xaa);
    }
    float f[2] = {1.0f, 0.1f};
    T_CHECK(gv_fp_load(f, GV_TF32, 1) == (double)0.1f);
}

int main(void)
{
    if (!HAVE_F16)
        fprintf(stderr, "note: no _Float16 in this compiler; fp16 is checked against the naive search only\n");
    T_RUN(test_f16_decode_exhaustive);
    T_RUN(test_f16_midpoints);
    T_RUN(test_f16_random);
    T_RUN(test_f16_specials);
    T_RUN(test_bf16_exhaustive);
    T_RUN(test_bf16_random);
    T_RUN(test_f32_tf32);
    T_RUN(test_f8);
    T_RUN(test_constants_ulp);
    T_RUN(test_load_store);
    return t_done();
}
