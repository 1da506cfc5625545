/* Deterministic generator: published vectors, golden draws, statistics. The
 * golden draws were computed once by a separate Python transcription of the
 * algorithm described in src/num/rng.c (Python floats are IEEE doubles with
 * correctly rounded + - * / and math.sqrt); the SplitMix64 and FNV-1a
 * vectors are the published reference outputs. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "num/fp.h"
#include "num/rng.h"
#include "t.h"

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

static void test_published_vectors(void)
{
    /* SplitMix64 seeded with 0 (Vigna's splitmix64.c reference outputs) */
    T_CHECK(gv_rng_splitmix64(0, 0) == 0xe220a8397b1dcdafull);
    T_CHECK(gv_rng_splitmix64(0, 1) == 0x6e789e6aa1b965f4ull);
    T_CHECK(gv_rng_splitmix64(0, 2) == 0x06c45d188009454full);
    /* key = seed = stream = 0 starts from state 0: the same sequence, two words per element */
    T_CHECK(gv_rng_bits(0, 0, 0, 0) == 0xe220a8397b1dcdafull);
    T_CHECK(gv_rng_bits(0, 0, 0, 1) == 0x06c45d188009454full);
    /* FNV-1a 64 test vectors */
    T_CHECK(gv_rng_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    T_CHECK(gv_rng_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    T_CHECK(gv_rng_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
}

static void test_golden(void)
{
    uint64_t k = gv_rng_key("gemm.f32.64x64x64.normal.s1");
    T_CHECK(k == 0x9507910139a86bb4ull);
    T_CHECK(gv_rng_bits(k, 1, 0, 0) == 0x5deee3f749e81882ull);
    T_CHECK(gv_rng_bits(k, 1, 0, 1) == 0xef381c6fb2a5e2b1ull);
    T_CHECK(gv_rng_bits(k, 1, 0, 2) == 0x323044662620f3afull);
    T_CHECK(gv_rng_uniform(k, 1, 0, 0) == 0.36692642962762567);
    T_CHECK(dbits(gv_rng_draw(GV_DIST_NORMAL, GV_F64, k, 1, 0, 0)) == 0xbfd5c2a3cab0dff1ull);
    T_CHECK(dbits(gv_rng_draw(GV_DIST_NORMAL, GV_F64, k, 1, 0, 1)) == 0x3ff8280cca9e9cf7ull);
    T_CHECK(dbits(gv_rng_draw(GV_DIST_NORMAL, GV_F64, k, 1, 0, 2)) == 0xbfeb62de2bdbc451ull);
    /* tails go through the library-independent log */
    T_CHECK(dbits(gv_rng_normal_quantile(1e-10)) == 0xc019720359482785ull);
    T_CHECK(dbits(gv_rng_normal_quantile(0.01)) == 0xc0029c5c463cecf1ull);
    T_CHECK(dbits(gv_rng_normal_quantile(0.3)) == 0xbfe0c7e395d14936ull);
    T_CHECK(dbits(gv_rng_normal_quantile(0.99)) == 0x40029c5c463cecf2ull);
    T_CHECK(dbits(gv_rng_normal_quantile(1 - 0x1p-40)) == 0x401c30d8558a178full);
}

/* The quantile inverts the normal CDF (libm's erfc as the independent oracle). */
static void test_quantile_accuracy(void)
{
    double worst = 0;
    for (int i = 1; i < 2000; i++) {
        double p = i / 2000.0;
        double x = gv_rng_normal_quantile(p);
        double back = 0.5 * erfc(-x / sqrt(2.0));
        double rel = fabs(back - p) / p;
        if (rel > worst)
            worst = rel;
    }
    for (int e = -54; e <= -2; e++) {
        double p = ldexp(1.0, e);
        double x = gv_rng_normal_quantile(p);
        double back = 0.5 * erfc(-x / sqrt(2.0));
        double rel = fabs(back - p) / p;
        if (rel > worst)
            worst = rel;
        T_CHECK(gv_rng_normal_quantile(1 - p) == -x || e < -53); /* symmetric where 1-p is exact */
    }
    T_CHECK(worst < 1e-6);
    T_CHECK(gv_rng_normal_quantile(0.5) == 0.0);
    T_CHECK(isinf(gv_rng_normal_quantile(0)) && gv_rng_normal_quantile(0) < 0);
    T_CHECK(isnan(gv_rng_normal_quantile(NAN)));
}

static void test_normal_stats(void)
{
    uint64_t k = gv_rng_key("stats.normal");
    const int n = 1000000;
    double s1 = 0, s2 = 0, s4 = 0;
    long within1 = 0, below3 = 0;
    for (int i = 0; i < n; i++) {
        double x = gv_rng_draw(GV_DIST_NORMAL, GV_F64, k, 7, 0, (uint64_t)i);
        s1 += x;
        s2 += x * x;
        s4 += x * x * x * x;
        within1 += fabs(x) < 1;
        below3 += x < -3;
    }
    double mean = s1 / n, var = s2 / n - mean * mean;
    /* 5-sigma tolerances of each statistic for n = 1e6 */
    T_NEAR(mean, 0.0, 5e-3);
    T_NEAR(var, 1.0, 7.1e-3);
    T_NEAR(s4 / n, 3.0, 0.05);
    T_NEAR((double)within1 / n, 0.682689, 2.4e-3);
    T_NEAR((double)below3 / n, 0.0013499, 1.9e-4);
}

static void test_uniform_positive_wide(void)
{
    uint64_t k = gv_rng_key("stats.other");
    const int n = 200000;
    double s = 0, mn = 1, mx = -1;
    for (int i = 0; i < n; i++) {
        double x = gv_rng_draw(GV_DIST_UNIFORM, GV_F64, k, 1, 0, (uint64_t)i);
        s += x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    T_NEAR(s / n, 0.0, 5 * sqrt(1.0 / 3 / n));
    T_CHECK(mn >= -1 && mn < -0.999);
    T_CHECK(mx < 1 && mx > 0.999);

    int bad = 0;
    for (int i = 0; i < n; i++) {
        double x = gv_rng_draw(GV_DIST_POSITIVE, GV_F32, k, 1, 0, (uint64_t)i);
        bad += !(x >= 0x1p-6 && x < 4);
    }
    T_EQ_INT(bad, 0);

    /* wide: every binade 2^-20 .. 2^19 is hit, nothing outside */
    int hits[40] = {0};
    bad = 0;
    long neg = 0;
    for (int i = 0; i < n; i++) {
        double x = gv_rng_draw(GV_DIST_WIDE, GV_F32, k, 1, 0, (uint64_t)i);
        int e = ilogb(x);
        if (e < -20 || e >= 20)
            bad++;
        else
            hits[e + 20]++;
        neg += x < 0;
    }
    T_EQ_INT(bad, 0);
    int empty = 0;
    for (int e = 0; e < 40; e++)
        empty += hits[e] < n / 40 / 2;
    T_EQ_INT(empty, 0);
    T_NEAR((double)neg / n, 0.5, 0.01);
    /* for fp16 the range is cut to what the format holds: no inf after rounding */
    bad = 0;
    for (int i = 0; i < n; i++) {
        double x = gv_rng_draw(GV_DIST_WIDE, GV_F16, k, 1, 0, (uint64_t)i);
        bad += !isfinite(gv_fp_round(x, GV_F16, GV_RNE));
        x = gv_rng_draw(GV_DIST_WIDE, GV_F8E4M3, k, 1, 0, (uint64_t)i);
        bad += fabs(x) >= 448;
    }
    T_EQ_INT(bad, 0);
}

static void test_subnormal_cancel(void)
{
    uint64_t k = gv_rng_key("stats.sub");
    const enum gv_dtype ts[4] = {GV_F16, GV_BF16, GV_F32, GV_F64};
    for (int t = 0; t < 4; t++) {
        long sub = 0, zero = 0, normal = 0, inexact = 0;
        const int n = 20000;
        for (int i = 0; i < n; i++) {
            double x = gv_rng_draw(GV_DIST_SUBNORMAL, ts[t], k, 3, 1, (uint64_t)i);
            if (x == 0)
                zero++;
            else if (fabs(x) < gv_fp_min_normal(ts[t])) {
                sub++;
                if (gv_fp_round(x, ts[t], GV_RNE) != x)
                    inexact++;
            }
            else
                normal++;
        }
        T_EQ_INT(inexact, 0); /* subnormals are exact values of the format */
        T_NEAR((double)sub / n, 0.8, 0.02);
        T_NEAR((double)zero / n, 0.1, 0.015);
        T_NEAR((double)normal / n, 0.1, 0.015);
    }

    /* cancel: each pair (2j, 2j+1) sums to much less than its magnitude */
    uint64_t kc = gv_rng_key("stats.cancel");
    int bad = 0;
    double maxmag = 0;
    for (uint64_t j = 0; j < 10000; j++) {
        double a = gv_rng_draw(GV_DIST_CANCEL, GV_F32, kc, 1, 0, 2 * j);
        double b = gv_rng_draw(GV_DIST_CANCEL, GV_F32, kc, 1, 0, 2 * j + 1);
        if (!(fabs(a + b) <= 2.0) || fabs(a) < 32 || (a > 0) == (b > 0))
            bad++;
        maxmag = fabs(a) > maxmag ? fabs(a) : maxmag;
    }
    T_EQ_INT(bad, 0);
    T_CHECK(maxmag > 512 && maxmag < 1025);
}

static void test_fill_matches_draw(void)
{
    uint64_t k = gv_rng_key("fill");
    uint16_t h[1000];
    gv_rng_fill(h, GV_F16, 1000, GV_DIST_NORMAL, k, 2, 5);
    int bad = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        double x = gv_rng_draw(GV_DIST_NORMAL, GV_F16, k, 2, 5, i);
        if (h[i] != gv_fp_encode(x, GV_F16, GV_RNE))
            bad++;
    }
    T_EQ_INT(bad, 0);
    /* seeds and streams give different sequences; same arguments the same */
    T_CHECK(gv_rng_bits(k, 2, 5, 9) == gv_rng_bits(k, 2, 5, 9));
    T_CHECK(gv_rng_bits(k, 2, 5, 9) != gv_rng_bits(k, 3, 5, 9));
    T_CHECK(gv_rng_bits(k, 2, 5, 9) != gv_rng_bits(k, 2, 6, 9));
    T_CHECK(gv_rng_key("a") != gv_rng_key("b"));
}

int main(void)
{
    T_RUN(test_published_vectors);
    T_RUN(test_golden);
    T_RUN(test_quantile_accuracy);
    T_RUN(test_normal_stats);
    T_RUN(test_uniform_positive_wide);
    T_RUN(test_subnormal_cancel);
    T_RUN(test_fill_matches_draw);
    return t_done();
}
