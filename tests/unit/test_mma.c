/* The block-FMA model (src/num/mma.c) on the published test vectors, whose
 * expected outputs are the papers' (numerics-methods.md §1 Fasi et al. 2021
 * table, §2a HPEC 2025 F1-F3), and against the CPU backend: with one product
 * per block, exact alignment and nearest-even the model must give the CPU
 * backend's GEMM bit for bit (also under its trunc, tf32 and ftz emulations),
 * a check that needs no trust in the model. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dev/backend.h"
#include "num/fp.h"
#include "num/mma.h"
#include "t.h"

#define P2(e) ldexp(1.0, e)

/* An fp16-input block FMA with fp32 accumulation: V100/T4/A100-like. */
static struct gv_mma_model tc(int block, int extra, enum gv_mma_round acc_round)
{
    struct gv_mma_model m;
    gv_mma_model_plain(&m, GV_F16, GV_F32, GV_F32);
    m.block = block;
    m.extra_bits = extra;
    m.prod_round = 0;
    m.acc_round = acc_round;
    return m;
}

static void test_check(void)
{
    struct gv_err err = {0};
    struct gv_mma_model m = tc(4, 0, GV_MMA_RZ);
    T_EQ_INT(gv_mma_model_check(&m, &err), GV_OK);
    m.block = 0;
    T_EQ_INT(gv_mma_model_check(&m, &err), GV_E_USAGE);
    T_CHECK(strstr(err.msg, "block") != NULL);
    m = tc(4, 41, GV_MMA_RZ);
    T_EQ_INT(gv_mma_model_check(&m, &err), GV_E_USAGE);
    m = tc(4, 0, GV_MMA_RZ);
    m.acc_frac_bits = 24;
    T_EQ_INT(gv_mma_model_check(&m, &err), GV_E_USAGE);
    m = tc(4, 0, GV_MMA_RZ);
    m.in = GV_F64;
    T_EQ_INT(gv_mma_model_check(&m, &err), GV_E_USAGE);
}

/* D1 (Fasi et al.): a0 = b0 = 1, c = -(1-2^-24): 2^-23 without an extra
 * alignment bit (V100), 2^-24 with one (T4, A100). */
static void test_d1_extra_bit(void)
{
    double a[4] = {1, 0, 0, 0}, b[4] = {1, 0, 0, 0}, c = -(1 - P2(-24));
    struct gv_mma_model m0 = tc(4, 0, GV_MMA_RZ), m1 = tc(4, 1, GV_MMA_RZ);
    T_CHECK(gv_mma_dot_acc(&m0, c, a, b, 4) == P2(-23));
    T_CHECK(gv_mma_dot_acc(&m1, c, a, b, 4) == P2(-24));
    struct gv_mma_model mx = tc(4, -1, GV_MMA_RNE);
    T_CHECK(gv_mma_dot_acc(&mx, c, a, b, 4) == P2(-24));
}

/* HPEC 2025 F1: c = 1, a = (2^-24, 2^-24), b = (1, 1): 1+2^-23 iff >= 1
 * extra bit; a = (2^-24 x3), b = (1, 2^-1, 2^-1): 1+2^-23 iff >= 2. */
static void test_hpec_extra_bits(void)
{
    double a1[2] = {P2(-24), P2(-24)}, b1[2] = {1, 1};
    double a2[3] = {P2(-24), P2(-24), P2(-24)}, b2[3] = {1, P2(-1), P2(-1)};
    for (int x = 0; x <= 3; x++) {
        struct gv_mma_model m = tc(4, x, GV_MMA_RZ);
        T_CHECK(gv_mma_dot_acc(&m, 1, a1, b1, 2) == (x >= 1 ? 1 + P2(-23) : 1));
        T_CHECK(gv_mma_dot_acc(&m, 1, a2, b2, 3) == (x >= 2 ? 1 + P2(-23) : 1));
    }
    struct gv_mma_model mx = tc(4, -1, GV_MMA_RZ);
    T_CHECK(gv_mma_dot_acc(&mx, 1, a2, b2, 3) == 1 + P2(-23));
}

/* B3: four products 0.5 * 2^-24 vanish next to c = 1 (fp32 accumulation). */
static void test_b3_small_terms(void)
{
    double a[4] = {0.5, 0.5, 0.5, 0.5}, b[4] = {P2(-24), P2(-24), P2(-24), P2(-24)};
    struct gv_mma_model m = tc(4, 0, GV_MMA_RZ);
    T_CHECK(gv_mma_dot_acc(&m, 1, a, b, 4) == 1);
}

/* C1/C2: a = 1s, b = (2, 2^-23+2^-24): D = 2 (the 0.75 ulp is truncated in
 * the alignment); -2 for the negated case. Exact alignment with nearest-even
 * gives 2+2^-22, with toward-zero 2 again. */
static void test_c1_c2_truncation(void)
{
    double a[4] = {1, 1, 0, 0}, b[4] = {2, P2(-23) + P2(-24), 0, 0};
    double bn[4] = {-2, -(P2(-23) + P2(-24)), 0, 0};
    struct gv_mma_model m0 = tc(4, 0, GV_MMA_RNE), rz = tc(4, -1, GV_MMA_RZ);
    struct gv_mma_model rn = tc(4, -1, GV_MMA_RNE);
    T_CHECK(gv_mma_dot(&m0, a, b, 4) == 2);
    T_CHECK(gv_mma_dot(&m0, a, bn, 4) == -2);
    T_CHECK(gv_mma_dot(&rz, a, b, 4) == 2);
    T_CHECK(gv_mma_dot(&rz, a, bn, 4) == -2);
    T_CHECK(gv_mma_dot(&rn, a, b, 4) == 2 + P2(-22));
    T_CHECK(gv_mma_dot(&rn, a, bn, 4) == -(2 + P2(-22)));
    struct gv_mma_model dn = tc(4, -1, GV_MMA_DOWN), up = tc(4, -1, GV_MMA_UP);
    T_CHECK(gv_mma_dot(&dn, a, bn, 4) == -(2 + P2(-22)));
    T_CHECK(gv_mma_dot(&up, a, bn, 4) == -2);
    T_CHECK(gv_mma_dot(&up, a, b, 4) == 2 + P2(-22));
}

/* C3: fp16 accumulator, a = (2^-24, 2^-24), b = (2^-1, 2^-2): the sum
 * 3*2^-26 rounds to nearest 2^-24 (truncation would give 0). */
static void test_c3_fp16_acc(void)
{
    double a[2] = {P2(-24), P2(-24)}, b[2] = {P2(-1), P2(-2)};
    struct gv_mma_model m;
    gv_mma_model_plain(&m, GV_F16, GV_F16, GV_F16);
    m.block = 4;
    m.extra_bits = -1;
    m.prod_round = 0;
    T_CHECK(gv_mma_dot(&m, a, b, 2) == P2(-24));
    m.acc_round = GV_MMA_RZ;
    T_CHECK(gv_mma_dot(&m, a, b, 2) == 0);
}

/* D2: a = 1s, b = 2^-24 x4, c = 1-2^-24: 1+2^-23 (late normalization, then
 * truncation); nearest-even would give 1+2^-22. */
static void test_d2_normalization(void)
{
    double a[4] = {1, 1, 1, 1}, b[4] = {P2(-24), P2(-24), P2(-24), P2(-24)};
    struct gv_mma_model m = tc(4, 0, GV_MMA_RZ), rn = tc(4, 0, GV_MMA_RNE);
    T_CHECK(gv_mma_dot_acc(&m, 1 - P2(-24), a, b, 4) == 1 + P2(-23));
    T_CHECK(gv_mma_dot_acc(&rn, 1 - P2(-24), a, b, 4) == 1 + P2(-22));
}

/* HPEC F2/F3: c = 1+2^-23, a0 = b0 = 1, a_{k-1} = 2^-23, b_{k-1} = 1: the
 * exact 2+2^-22 survives while position k-1 is in the first block; past it
 * the first block truncates 2+2^-23 to 2. */
static void test_block_boundary(void)
{
    for (int block = 1; block <= 8; block *= 2) {
        struct gv_mma_model m = tc(block, 3, GV_MMA_RZ);
        for (int pos = 1; pos < 12; pos++) {
            double a[12] = {1}, b[12] = {1};
            a[pos] = P2(-23);
            b[pos] = 1;
            double want = pos < block ? 2 + P2(-22) : 2;
            T_CHECK(gv_mma_dot_acc(&m, 1 + P2(-23), a, b, 12) == want);
        }
    }
}

/* Exact alignment over more than 100 bits (the wide sum): cancellation
 * leaves 2^-30 of 2^100 - 2^100 + 2^-30, and a term 2^-130 below a tie still
 * decides the rounding (sticky); with 0 extra bits both are truncated away. */
static void test_exact_wide(void)
{
    struct gv_mma_model m;
    gv_mma_model_plain(&m, GV_F32, GV_F32, GV_F32);
    m.block = 4;
    m.prod_round = 0;
    double a[3] = {P2(100), -P2(100), P2(-30)}, b[3] = {1, 1, 1};
    T_CHECK(gv_mma_dot(&m, a, b, 3) == P2(-30));
    double a2[2] = {P2(-24), P2(-65)}, b2[2] = {1, P2(-65)};
    T_CHECK(gv_mma_dot_acc(&m, 1, a2, b2, 2) == 1 + P2(-23));
    T_CHECK(gv_mma_dot_acc(&m, -1, a2, b2, 2) == -1 + P2(-24));
    m.extra_bits = 0;
    T_CHECK(gv_mma_dot(&m, a, b, 3) == 0);
    T_CHECK(gv_mma_dot_acc(&m, 1, a2, b2, 2) == 1);
}

/* Inputs: TF32 truncation vs rounding, subnormals flushed, products rounded. */
static void test_inputs_and_products(void)
{
    struct gv_mma_model m;
    gv_mma_model_plain(&m, GV_F32, GV_TF32, GV_F32);
    double a[1] = {1 + P2(-11) + P2(-12)}, one[1] = {1};
    T_CHECK(gv_mma_dot(&m, a, one, 1) == 1 + P2(-10));
    m.in_round = GV_MMA_RZ;
    T_CHECK(gv_mma_dot(&m, a, one, 1) == 1);
    gv_mma_model_plain(&m, GV_F16, GV_F32, GV_F16);
    double s[1] = {P2(-24)}, big[1] = {P2(10)}, half[1] = {P2(-15)};
    T_CHECK(gv_mma_dot(&m, s, big, 1) == P2(-14));
    T_CHECK(gv_mma_dot(&m, half, one, 1) == P2(-15));
    m.in_flush = 1;
    T_CHECK(gv_mma_dot(&m, s, big, 1) == 0);
    m.in_flush = 0;
    m.out_flush = 1;
    T_CHECK(gv_mma_dot(&m, half, one, 1) == 0);
    /* x*x - 1 with x = 1+2^-12: exact in an FMA, 2^-11 when x*x is rounded */
    gv_mma_model_plain(&m, GV_F32, GV_F32, GV_F32);
    double x[1] = {1 + P2(-12)};
    T_CHECK(gv_mma_dot_acc(&m, -1, x, x, 1) == P2(-11));
    m.prod_round = 0;
    T_CHECK(gv_mma_dot_acc(&m, -1, x, x, 1) == P2(-11) + P2(-24));
    /* infinities and NaN pass through; overflow of the accumulator */
    double inf[2] = {INFINITY, 1}, ones[2] = {1, 1}, nan[2] = {NAN, 1}, hu[2] = {P2(127), P2(127)};
    T_CHECK(isinf(gv_mma_dot(&m, inf, ones, 2)));
    T_CHECK(isnan(gv_mma_dot(&m, nan, ones, 2)));
    T_CHECK(isinf(gv_mma_dot(&m, hu, hu, 2)));
    m.acc_round = GV_MMA_RZ;
    T_CHECK(gv_mma_dot(&m, hu, ones, 2) == FLT_MAX);
}

/* ---------- against the CPU backend ---------- */

static uint64_t rng = 88172645463325252ull;

static double rnd_val(int wide)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    double u = (double)(rng >> 11) / 9007199254740992.0;
    int e = wide ? (int)((rng >> 3) % 40) - 30 : (int)((rng >> 3) % 5) - 2;
    double v = ldexp(1 + u, e);
    return (rng & 1) ? -v : v;
}

/* Runs the CPU backend (spec) and the model on the same random case; returns
 * the number of output elements whose bits differ. */
static long cpu_vs_model(const char *spec, const struct gv_mma_model *m, enum gv_dtype in,
                         enum gv_dtype compute, enum gv_dtype out, long M, long N, long K,
                         int wide)
{
    struct gv_case c = {.id = "test.mma", .op = GV_OP_GEMM, .in_dtype = in,
                        .compute_dtype = compute, .out_dtype = out, .batch = 2, .m = M,
                        .n = N, .k = K};
    size_t na = (size_t)(2 * M * K), nb = (size_t)(2 * K * N), nc = (size_t)(2 * M * N);
    struct gv_buffer bin[2] = {{in, na, calloc(na, 4)}, {in, nb, calloc(nb, 4)}};
    struct gv_buffer o1 = {out, nc, calloc(nc, 4)}, o2 = {out, nc, calloc(nc, 4)};
    for (size_t i = 0; i < na; i++)
        gv_fp_store(bin[0].data, in, i, rnd_val(wide));
    for (size_t i = 0; i < nb; i++)
        gv_fp_store(bin[1].data, in, i, rnd_val(wide));
    struct gv_device *d = NULL;
    struct gv_err err = {0};
    long diff = -1;
    if (!gv_backend_cpu.open(spec, &d, &err) &&
        !gv_backend_cpu.run(d, &c, bin, 2, &o1, NULL, &err) &&
        !gv_mma_gemm(m, &bin[0], &bin[1], &o2, 2, M, N, K, 3, &err)) {
        diff = 0;
        size_t esz = gv_dtype_size(out);
        for (size_t i = 0; i < nc; i++)
            diff += memcmp((char *)o1.data + i * esz, (char *)o2.data + i * esz, esz) != 0;
    } else {
        fprintf(stderr, "cpu_vs_model %s: %s\n", spec, err.msg);
    }
    if (d)
        gv_backend_cpu.close(d);
    free(bin[0].data);
    free(bin[1].data);
    free(o1.data);
    free(o2.data);
    return diff;
}

static void test_plain_equals_cpu(void)
{
    static const struct {
        enum gv_dtype in, compute, out;
    } precs[] = {
        {GV_F32, GV_F32, GV_F32}, {GV_F32, GV_TF32, GV_F32}, {GV_F16, GV_F32, GV_F16},
        {GV_F16, GV_F32, GV_F32}, {GV_BF16, GV_F32, GV_BF16}, {GV_F16, GV_F16, GV_F16},
    };
    for (size_t i = 0; i < sizeof precs / sizeof precs[0]; i++)
        for (int wide = 0; wide <= 1; wide++) {
            struct gv_mma_model m;
            gv_mma_model_plain(&m, precs[i].in, precs[i].compute, precs[i].out);
            long d = cpu_vs_model("threads=2", &m, precs[i].in, precs[i].compute, precs[i].out,
                                  13, 11, 77, wide);
            if (d)
                fprintf(stderr, "  %s->%s->%s wide=%d: %ld outputs differ\n",
                        gv_dtype_name(precs[i].in), gv_dtype_name(precs[i].compute),
                        gv_dtype_name(precs[i].out), wide, d);
            T_EQ_INT(d, 0);
        }
}

/* fp16 accumulation rounds once: 1 + (2^-11 + 2^-25) (the product
 * 145*2^-18 * 113*2^-7) is 1+2^-10 to nearest; a float sum first gives
 * 1+2^-11, a tie that goes to 1 (double rounding). */
static void test_fp16_acc_rounds_once(void)
{
    double a[2] = {1, 145 * P2(-18)}, b[2] = {1, 113 * P2(-7)};
    struct gv_mma_model m;
    gv_mma_model_plain(&m, GV_F16, GV_F16, GV_F16);
    T_CHECK(gv_mma_dot(&m, a, b, 2) == 1 + P2(-10));
    struct gv_case c = {.id = "test.acc16", .op = GV_OP_GEMM, .in_dtype = GV_F16,
                        .compute_dtype = GV_F16, .out_dtype = GV_F16, .batch = 1, .m = 1,
                        .n = 1, .k = 2};
    uint16_t ab[2], bb[2], o = 0;
    for (int i = 0; i < 2; i++) {
        ab[i] = (uint16_t)gv_fp_encode(a[i], GV_F16, GV_RNE);
        bb[i] = (uint16_t)gv_fp_encode(b[i], GV_F16, GV_RNE);
    }
    struct gv_buffer in[2] = {{GV_F16, 2, ab}, {GV_F16, 2, bb}}, out = {GV_F16, 1, &o};
    struct gv_device *d = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_backend_cpu.open("threads=1", &d, &err), GV_OK);
    T_EQ_INT(gv_backend_cpu.run(d, &c, in, 2, &out, NULL, &err), GV_OK);
    T_CHECK(gv_fp_decode(o, GV_F16) == 1 + P2(-10));
    gv_backend_cpu.close(d);
}

/* The CPU backend's emulations are special cases of the model. */
static void test_emulations_equal_cpu(void)
{
    struct gv_mma_model m;
    gv_mma_model_plain(&m, GV_F32, GV_F32, GV_F32);
    m.acc_round = GV_MMA_RZ;
    T_EQ_INT(cpu_vs_model("emulate=trunc", &m, GV_F32, GV_F32, GV_F32, 9, 10, 65, 0), 0);
    gv_mma_model_plain(&m, GV_F32, GV_F32, GV_F32);
    m.in_frac_bits = 10;
    m.in_round = GV_MMA_RZ;
    T_EQ_INT(cpu_vs_model("emulate=tf32rz", &m, GV_F32, GV_F32, GV_F32, 9, 10, 65, 0), 0);
    gv_mma_model_plain(&m, GV_F16, GV_F32, GV_F16);
    m.in_flush = m.out_flush = 1;
    T_EQ_INT(cpu_vs_model("emulate=ftz", &m, GV_F16, GV_F32, GV_F16, 9, 10, 65, 1), 0);
    /* and a real block FMA is not the CPU */
    gv_mma_model_plain(&m, GV_F32, GV_F32, GV_F32);
    m.block = 4;
    m.extra_bits = 0;
    m.prod_round = 0;
    m.acc_round = GV_MMA_RZ;
    T_CHECK(cpu_vs_model("threads=1", &m, GV_F32, GV_F32, GV_F32, 9, 10, 65, 0) > 0);
}

/* One element of the GEMM equals gv_mma_dot on its row and column. */
static void test_gemm_equals_dot(void)
{
    struct gv_mma_model m = tc(8, 1, GV_MMA_RZ);
    long M = 3, N = 4, K = 37;
    struct gv_buffer a = {GV_F16, (size_t)(M * K), calloc((size_t)(M * K), 2)};
    struct gv_buffer b = {GV_F16, (size_t)(K * N), calloc((size_t)(K * N), 2)};
    struct gv_buffer c = {GV_F32, (size_t)(M * N), calloc((size_t)(M * N), 4)};
    for (size_t i = 0; i < a.count; i++)
        gv_fp_store(a.data, GV_F16, i, rnd_val(1));
    for (size_t i = 0; i < b.count; i++)
        gv_fp_store(b.data, GV_F16, i, rnd_val(1));
    struct gv_err err = {0};
    T_EQ_INT(gv_mma_gemm(&m, &a, &b, &c, 1, M, N, K, 2, &err), GV_OK);
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            double ra[64], cb[64];
            for (long k = 0; k < K; k++) {
                ra[k] = gv_fp_load(a.data, GV_F16, (size_t)(i * K + k));
                cb[k] = gv_fp_load(b.data, GV_F16, (size_t)(k * N + j));
            }
            T_CHECK(gv_mma_dot(&m, ra, cb, (int)K) == ((float *)c.data)[i * N + j]);
        }
    T_EQ_INT(gv_mma_gemm(&m, &a, &b, &c, 2, M, N, K, 2, &err), GV_E_USAGE);
    free(a.data);
    free(b.data);
    free(c.data);
}

int main(void)
{
    T_RUN(test_check);
    T_RUN(test_d1_extra_bit);
    T_RUN(test_hpec_extra_bits);
    T_RUN(test_b3_small_terms);
    T_RUN(test_c1_c2_truncation);
    T_RUN(test_c3_fp16_acc);
    T_RUN(test_d2_normalization);
    T_RUN(test_block_boundary);
    T_RUN(test_exact_wide);
    T_RUN(test_inputs_and_products);
    T_RUN(test_plain_equals_cpu);
    T_RUN(test_fp16_acc_rounds_once);
    T_RUN(test_emulations_equal_cpu);
    T_RUN(test_gemm_equals_dot);
    fprintf(stderr, "%d checks, %d failed\n", t_checks, t_failed);
    return t_failed != 0;
}
