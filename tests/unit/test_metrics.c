/* Metrics on vectors small enough to compute by hand (values in comments). */
#include <math.h>
#include <string.h>

#include "num/metrics.h"
#include "t.h"

static void test_hand_vector(void)
{
    double y[4] = {1.0, 2.5, -3.0, 0.0};
    double ref[4] = {1.0, 2.0, -4.0, 0.0};
    double bound[4] = {0.1, 1.0, 0.5, 0.0};
    double scale[4] = {1.0, 2.0, 4.0, 0.0};
    struct gv_metrics m;
    gv_metrics_compute(y, ref, bound, scale, 4, GV_F16, "abc", 3, &m);
    T_EQ_INT(m.count, 4);
    T_CHECK(m.max_abs == 1.0);                       /* |-3 - -4| */
    T_CHECK(m.max_rel == 0.25);                      /* 0.5/2 and 1/4 */
    T_NEAR(m.normwise, sqrt(1.25 / 21.0), 1e-15);    /* sqrt(0.25 + 1) / sqrt(1 + 4 + 16) */
    T_CHECK(m.err_over_bound == 2.0);                /* 1 / 0.5; 0/0 counts as 0 */
    T_EQ_INT(m.worst_index, 2);
    T_NEAR(m.mean_signed, 1.0 / 6.0, 1e-15);         /* (0 + 0.5/2 + 1/4) / 3, scale 0 skipped */
    T_NEAR(m.eff_bits, 0.5 * log2(16.8), 1e-12);
    /* fp16 spacing in [2,4) is 2^-9: 0.5 -> 256 ulps, 1.0 -> 512 ulps */
    T_EQ_INT(m.ulp_hist[0], 2);
    T_EQ_INT(m.ulp_hist[6], 2);
    T_EQ_INT(m.nan_count + m.inf_count + m.ref_nonfinite, 0);
    T_EQ_STR(m.out_digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_nonfinite(void)
{
    double y[3] = {NAN, INFINITY, 1.0};
    double ref[3] = {1.0, 1.0, INFINITY};
    struct gv_metrics m;
    gv_metrics_compute(y, ref, NULL, NULL, 3, GV_F32, NULL, 0, &m);
    T_EQ_INT(m.nan_count, 1);
    T_EQ_INT(m.inf_count, 1);
    T_EQ_INT(m.ref_nonfinite, 1);
    T_CHECK(isinf(m.err_over_bound));
    T_CHECK(m.eff_bits == 0);
    T_EQ_INT(m.ulp_hist[GV_ULP_BUCKETS - 1], 2);
    T_EQ_STR(m.out_digest, "");
}

static void test_defaults_and_caps(void)
{
    /* without bound: u_out * |ref| = 2^-11 for fp16 at 1.0, so one fp16 ulp (2^-10) is 2 bounds */
    double y[1] = {1.0 + 0x1p-10}, ref[1] = {1.0};
    struct gv_metrics m;
    gv_metrics_compute(y, ref, NULL, NULL, 1, GV_F16, NULL, 0, &m);
    T_CHECK(m.err_over_bound == 2.0);
    T_CHECK(m.mean_signed == 0x1p-10);
    T_EQ_INT(m.ulp_hist[1], 1);
    T_CHECK(m.eff_bits == 10.0);

    /* exact output: effective bits capped at the format's precision */
    gv_metrics_compute(ref, ref, NULL, NULL, 1, GV_F32, NULL, 0, &m);
    T_CHECK(m.normwise == 0 && m.eff_bits == 24.0 && m.err_over_bound == 0);
    T_EQ_INT(m.ulp_hist[0], 1);

    /* a value off by one fp32 ulp in fp32 output, but below one bf16 ulp: ulp 0 in bf16 */
    double y2[1] = {1.0 + 0x1p-23};
    gv_metrics_compute(y2, ref, NULL, NULL, 1, GV_BF16, NULL, 0, &m);
    T_EQ_INT(m.ulp_hist[0], 1);
    gv_metrics_compute(y2, ref, NULL, NULL, 1, GV_F32, NULL, 0, &m);
    T_EQ_INT(m.ulp_hist[1], 1);

    /* all-zero reference with a nonzero output: infinite normwise error, no bits */
    double z[2] = {0, 0}, w[2] = {0, 1e-30};
    gv_metrics_compute(w, z, NULL, NULL, 2, GV_F32, NULL, 0, &m);
    T_CHECK(isinf(m.normwise) && m.eff_bits == 0 && isinf(m.err_over_bound));
}

static void test_directed(void)
{
    /* truncation toward zero of positive values: mean signed error negative */
    double y[100], ref[100];
    for (int i = 0; i < 100; i++) {
        ref[i] = 1.0 + i / 64.0;
        y[i] = ref[i] * (1 - 0x1p-20);
    }
    struct gv_metrics m;
    gv_metrics_compute(y, ref, NULL, NULL, 100, GV_F32, NULL, 0, &m);
    T_NEAR(m.mean_signed, -0x1p-20, 1e-20);
    T_NEAR(m.eff_bits, 20.0, 1e-9);
}

static void test_verdict_names(void)
{
    T_EQ_STR(gv_verdict_name(GV_PASS), "pass");
    T_EQ_STR(gv_verdict_name(GV_FAIL), "fail");
    T_EQ_STR(gv_verdict_name(GV_ERROR), "error");
    T_EQ_STR(gv_verdict_name(GV_SKIPPED), "skipped");
    T_EQ_STR(gv_verdict_name((enum gv_verdict)42), "?");
}

int main(void)
{
    T_RUN(test_hand_vector);
    T_RUN(test_nonfinite);
    T_RUN(test_defaults_and_caps);
    T_RUN(test_directed);
    T_RUN(test_verdict_names);
    return t_done();
}
