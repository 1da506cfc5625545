/* The CPU backend: declared precision on hand-made inputs whose exact results
 * are known, each emulation's effect on the probes of numerics-methods.md,
 * agreement with naive fp64 loops written here, and thread-count invariance. */
#include <math.h>
#include <stdint.h>

#include "dev/backend.h"
#include "num/catalog.h"
#include "num/fp.h"
#include "num/ref.h"
#include "check/runner.h"
#include "t.h"

static struct gv_device *open_cpu(const char *spec)
{
    struct gv_device *d = NULL;
    struct gv_err err = {0};
    int rc = gv_backend_cpu.open(spec, &d, &err);
    if (rc)
        fprintf(stderr, "open %s: %s\n", spec, err.msg);
    return rc ? NULL : d;
}

static struct gv_case gemm_case(enum gv_dtype in, enum gv_dtype compute, enum gv_dtype out,
                                long m, long n, long k)
{
    struct gv_case c = {.id = "test.gemm", .op = GV_OP_GEMM, .in_dtype = in,
                        .compute_dtype = compute, .out_dtype = out, .batch = 1, .m = m, .n = n,
                        .k = k};
    return c;
}

/* Runs a 1 x 1 x K GEMM with A = a[], B = b[] (as doubles, stored in the
 * case's input format) and returns the output as a double. */
static double dot(const char *spec, struct gv_case c, const double *a, const double *b)
{
    struct gv_device *d = open_cpu(spec);
    if (!d)
        return NAN;
    size_t esz = gv_dtype_size(c.in_dtype);
    struct gv_buffer in[2] = {{c.in_dtype, (size_t)c.k, calloc((size_t)c.k, esz)},
                              {c.in_dtype, (size_t)c.k, calloc((size_t)c.k, esz)}};
    for (long i = 0; i < c.k; i++) {
        gv_fp_store(in[0].data, c.in_dtype, (size_t)i, a[i]);
        gv_fp_store(in[1].data, c.in_dtype, (size_t)i, b[i]);
    }
    uint64_t outbits = 0;
    struct gv_buffer out = {c.out_dtype, 1, &outbits};
    struct gv_run_info info;
    struct gv_err err = {0};
    int rc = gv_backend_cpu.run(d, &c, in, 2, &out, &info, &err);
    double y = rc ? NAN : gv_fp_load(out.data, c.out_dtype, 0);
    free(in[0].data);
    free(in[1].data);
    gv_backend_cpu.close(d);
    return y;
}

static void test_open_and_describe(void)
{
    struct gv_device *d = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_backend_cpu.open("emulate=bogus", &d, &err), GV_E_USAGE);
    T_CHECK(strstr(err.msg, "bogus") != NULL);
    T_EQ_INT(gv_backend_cpu.open("threads=0", &d, &err), GV_E_USAGE);
    T_EQ_INT(gv_backend_cpu.open("emulate=tf32+tf32rz", &d, &err), GV_E_USAGE);
    T_EQ_INT(gv_backend_cpu.open("color=blue", &d, &err), GV_E_USAGE);
    d = open_cpu("threads=3,emulate=tf32+ftz");
    T_CHECK(d != NULL);
    if (!d)
        return;
    json_t *j = gv_backend_cpu.describe(d);
    T_EQ_INT(json_integer_value(json_object_get(j, "threads")), 3);
    json_t *e = json_object_get(j, "emulate");
    T_EQ_INT(json_array_size(e), 2);
    T_EQ_STR(json_string_value(json_array_get(e, 0)), "tf32");
    T_EQ_STR(json_string_value(json_array_get(e, 1)), "ftz");
    T_CHECK(json_is_true(json_object_get(j, "testing_aid")));
    T_CHECK(json_string_value(json_object_get(j, "cpu_model")) != NULL);
    json_decref(j);
    gv_backend_cpu.close(d);
}

static void test_declared_precision(void)
{
    /* fp32: 1 + 1.5*2^-24 rounds to 1 + 2^-23 (nearest), exactly */
    double a2[2] = {1.0, 1.5 * 0x1p-24}, b2[2] = {1.0, 1.0};
    T_CHECK(dot("", gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 2), a2, b2) == 1.0 + 0x1p-23);
    /* round toward zero accumulation keeps 1.0 */
    T_CHECK(dot("emulate=trunc", gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 2), a2, b2) == 1.0);
    /* fp64 keeps it exactly */
    T_CHECK(dot("emulate=trunc", gemm_case(GV_F64, GV_F64, GV_F64, 1, 1, 2), a2, b2) ==
            1.0 + 1.5 * 0x1p-24);

    /* TF32 probe (P8): a = 1 + 2^-12 */
    double a1[1] = {1.0 + 0x1p-12}, b1[1] = {1.0};
    T_CHECK(dot("", gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 1), a1, b1) == 1.0 + 0x1p-12);
    T_CHECK(dot("", gemm_case(GV_F32, GV_TF32, GV_F32, 1, 1, 1), a1, b1) == 1.0);
    T_CHECK(dot("emulate=tf32", gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 1), a1, b1) == 1.0);
    /* RNE vs truncation: 1 + 3*2^-11 is a tie between 1+2^-10 (odd) and 1+2^-9 (even) */
    double a3[1] = {1.0 + 3 * 0x1p-11};
    T_CHECK(dot("emulate=tf32", gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 1), a3, b1) ==
            1.0 + 0x1p-9);
    T_CHECK(dot("emulate=tf32rz", gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 1), a3, b1) ==
            1.0 + 0x1p-10);

    /* bf16 inside fp16 GEMM: 1 + 2^-10 is an fp16 but not a bf16 */
    double ah[1] = {1.0 + 0x1p-10};
    T_CHECK(dot("", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, 1), ah, b1) == 1.0 + 0x1p-10);
    T_CHECK(dot("emulate=bf16gemm", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, 1), ah, b1) == 1.0);
    /* ... and does not touch fp16 accumulation GEMMs */
    T_CHECK(dot("emulate=bf16gemm", gemm_case(GV_F16, GV_F16, GV_F16, 1, 1, 1), ah, b1) ==
            1.0 + 0x1p-10);

    /* flush to zero (P6): 2^-24 * 2^10 = 2^-14 normally, 0 with ftz */
    double as[1] = {0x1p-24}, bs[1] = {0x1p10};
    T_CHECK(dot("", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, 1), as, bs) == 0x1p-14);
    T_CHECK(dot("emulate=ftz", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, 1), as, bs) == 0.0);
    /* output side: 2^-10 * 2^-10 = 2^-20 is an fp16 subnormal */
    double ao[1] = {0x1p-10};
    T_CHECK(dot("", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, 1), ao, ao) == 0x1p-20);
    T_CHECK(dot("emulate=ftz", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, 1), ao, ao) == 0.0);
    /* bf16 subnormal 2^-130 flushed, fp32 never */
    double ab[1] = {0x1p-130}, bb[1] = {0x1p10};
    T_CHECK(dot("", gemm_case(GV_BF16, GV_F32, GV_BF16, 1, 1, 1), ab, bb) == 0x1p-120);
    T_CHECK(dot("emulate=ftz", gemm_case(GV_BF16, GV_F32, GV_BF16, 1, 1, 1), ab, bb) == 0.0);
    T_CHECK(dot("emulate=ftz", gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 1), ab, bb) == 0x1p-120);
}

static void test_fp16_accumulation(void)
{
    /* 4096 ones: fp16 accumulation stalls at 2048, fp32 accumulation does not */
    enum { K = 4096 };
    static double ones[K];
    for (int i = 0; i < K; i++)
        ones[i] = 1.0;
    T_CHECK(dot("", gemm_case(GV_F16, GV_F16, GV_F16, 1, 1, K), ones, ones) == 2048.0);
    T_CHECK(dot("", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, K), ones, ones) == 4096.0);
    T_CHECK(dot("emulate=fp16acc", gemm_case(GV_F16, GV_F32, GV_F16, 1, 1, K), ones, ones) ==
            2048.0);
    /* bf16 GEMMs keep fp32 accumulation under fp16acc */
    T_CHECK(dot("emulate=fp16acc", gemm_case(GV_BF16, GV_F32, GV_BF16, 1, 1, K), ones, ones) ==
            4096.0);
}

/* ---------- agreement with naive fp64 loops (written independently here) ---------- */

static double rel_err(const double *y, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (y[i] - ref[i]) * (y[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static double *run_case(const char *spec, const struct gv_case *c, struct gv_buffer *in, int *nin)
{
    struct gv_err err = {0};
    if (gv_make_inputs(c, in, nin, &err))
        return NULL;
    struct gv_device *d = open_cpu(spec);
    size_t n = gv_case_out_count(c);
    struct gv_buffer out = {c->out_dtype, n, calloc(n, gv_dtype_size(c->out_dtype))};
    struct gv_run_info info;
    double *y = NULL;
    if (d && gv_backend_cpu.run(d, c, in, *nin, &out, &info, &err) == GV_OK) {
        y = malloc(n * sizeof *y);
        for (size_t i = 0; i < n; i++)
            y[i] = gv_fp_load(out.data, c->out_dtype, i);
    } else {
        fprintf(stderr, "%s: %s\n", c->id, err.msg);
    }
    free(out.data);
    if (d)
        gv_backend_cpu.close(d);
    return y;
}

static double X(const struct gv_buffer *b, size_t i) { return gv_fp_load(b->data, b->dtype, i); }

static void test_conv_geometry(void)
{
    const struct gv_catalog_entry *e = gv_catalog_find("conv2d.f32.2x3x33x33-k8x3x3-s2p1.normal.s1");
    T_CHECK(e != NULL);
    if (!e)
        return;
    const struct gv_case *c = &e->c;
    struct gv_buffer in[4];
    int nin;
    double *y = run_case("", c, in, &nin);
    T_CHECK(y != NULL);
    if (!y)
        return;
    long P = (c->h + 2 * c->pad - c->r) / c->stride + 1, Q = (c->w + 2 * c->pad - c->s) / c->stride + 1;
    T_EQ_INT(P, 17);
    size_t n = gv_case_out_count(c);
    double *ref = calloc(n, sizeof *ref);
    for (long b = 0; b < c->n; b++)
        for (long k = 0; k < c->k; k++)
            for (long p = 0; p < P; p++)
                for (long q = 0; q < Q; q++) {
                    double s = 0;
                    for (long ch = 0; ch < c->c; ch++)
                        for (long r = 0; r < c->r; r++)
                            for (long t = 0; t < c->s; t++) {
                                long h = p * 2 + r - 1, w = q * 2 + t - 1;
                                if (h >= 0 && h < c->h && w >= 0 && w < c->w)
                                    s += X(&in[0], (size_t)(((b * c->c + ch) * c->h + h) * c->w + w)) *
                                         X(&in[1], (size_t)(((k * c->c + ch) * 3 + r) * 3 + t));
                            }
                    ref[((b * c->k + k) * P + p) * Q + q] = s;
                }
    T_CHECK(rel_err(y, ref, n) < 1e-6);
    free(ref);
    free(y);
    gv_inputs_free(in, nin);
}

static void test_sdpa_causal(void)
{
    const struct gv_catalog_entry *e = gv_catalog_find("sdpa.f32.4x128x64.causal.normal.s1");
    T_CHECK(e != NULL);
    if (!e)
        return;
    const struct gv_case *c = &e->c;
    struct gv_buffer in[4];
    int nin;
    double *y = run_case("", c, in, &nin);
    T_CHECK(y != NULL);
    if (!y)
        return;
    long S = c->seq, D = c->d;
    size_t n = gv_case_out_count(c);
    double *ref = calloc(n, sizeof *ref), *w = calloc((size_t)S, sizeof *w);
    for (long h = 0; h < c->bh; h++)
        for (long i = 0; i < S; i++) {
            double mx = -INFINITY, sum = 0;
            for (long t = 0; t <= i; t++) {
                double s = 0;
                for (long k = 0; k < D; k++)
                    s += X(&in[0], (size_t)((h * S + i) * D + k)) * X(&in[1], (size_t)((h * S + t) * D + k));
                w[t] = s / sqrt((double)D);
                mx = fmax(mx, w[t]);
            }
            for (long t = 0; t <= i; t++)
                sum += (w[t] = exp(w[t] - mx));
            for (long k = 0; k < D; k++) {
                double o = 0;
                for (long t = 0; t <= i; t++)
                    o += w[t] / sum * X(&in[2], (size_t)((h * S + t) * D + k));
                ref[(h * S + i) * D + k] = o;
            }
        }
    T_CHECK(rel_err(y, ref, n) < 1e-5);
    /* row 0 of a causal head attends only to itself: output = V[0] */
    T_NEAR(y[0], X(&in[2], 0), 1e-6);
    free(ref);
    free(w);
    free(y);
    gv_inputs_free(in, nin);
}

static void test_norms_and_softmax(void)
{
    const char *ids[] = {"layernorm.f32.32x4096.normal.s1", "rmsnorm.bf16.32x4096.normal.s1",
                         "softmax.f32.16x32768.normal.s1"};
    for (int t = 0; t < 3; t++) {
        const struct gv_catalog_entry *e = gv_catalog_find(ids[t]);
        T_CHECK(e != NULL);
        if (!e)
            continue;
        const struct gv_case *c = &e->c;
        struct gv_buffer in[4];
        int nin;
        double *y = run_case("", c, in, &nin);
        T_CHECK(y != NULL);
        if (!y)
            continue;
        size_t n = gv_case_out_count(c), L = (size_t)c->len;
        double *ref = malloc(n * sizeof *ref);
        for (size_t r = 0; r < (size_t)c->rows; r++) {
            double mean = 0, var = 0, mx = -INFINITY, sum = 0;
            for (size_t i = 0; i < L; i++)
                mean += X(&in[0], r * L + i), mx = fmax(mx, X(&in[0], r * L + i));
            mean = c->op == GV_OP_RMSNORM ? 0 : mean / (double)L;
            for (size_t i = 0; i < L; i++) {
                double d = X(&in[0], r * L + i) - mean;
                var += d * d;
                sum += exp(X(&in[0], r * L + i) - mx);
            }
            double inv = 1 / sqrt(var / (double)L + c->eps);
            for (size_t i = 0; i < L; i++) {
                double x = X(&in[0], r * L + i);
                if (c->op == GV_OP_SOFTMAX)
                    ref[r * L + i] = exp(x - mx) / sum;
                else
                    ref[r * L + i] = (x - mean) * inv * X(&in[1], i) +
                                     (c->op == GV_OP_LAYERNORM ? X(&in[2], i) : 0);
            }
        }
        double re = rel_err(y, ref, n);
        if (!(re < 4 * gv_fp_unit_roundoff(c->out_dtype)))
            fprintf(stderr, "%s: relative error %g\n", ids[t], re);
        T_CHECK(re < 4 * gv_fp_unit_roundoff(c->out_dtype));
        free(ref);
        free(y);
        gv_inputs_free(in, nin);
    }
}

static void test_threads_do_not_change_bits(void)
{
    const char *ids[] = {"gemm.f32.127x253x511.uniform.s1", "gemm.f16acc16.64x64x256.uniform.s1",
                         "sum.f32.1x1000000.normal.s1", "sdpa.f16.4x128x64.full.normal.s1"};
    for (int t = 0; t < 4; t++) {
        const struct gv_catalog_entry *e = gv_catalog_find(ids[t]);
        T_CHECK(e != NULL);
        if (!e)
            continue;
        struct gv_buffer in[4];
        int nin;
        double *y1 = run_case("threads=1", &e->c, in, &nin);
        gv_inputs_free(in, nin);
        double *y3 = run_case("threads=3", &e->c, in, &nin);
        gv_inputs_free(in, nin);
        T_CHECK(y1 && y3 && !memcmp(y1, y3, gv_case_out_count(&e->c) * sizeof(double)));
        free(y1);
        free(y3);
    }
}

static void test_unsupported(void)
{
    struct gv_device *d = open_cpu("");
    struct gv_case c = gemm_case(GV_F8E4M3, GV_F32, GV_F32, 1, 1, 1);
    struct gv_err err = {0};
    T_EQ_INT(gv_backend_cpu.supports(d, &c, &err), GV_E_UNSUPPORTED);
    T_CHECK(strstr(err.msg, "f8e4m3") != NULL);
    uint32_t o = 0;
    struct gv_buffer out = {GV_F16, 1, &o};
    c = gemm_case(GV_F32, GV_F32, GV_F32, 1, 1, 1);
    struct gv_run_info info;
    T_EQ_INT(gv_backend_cpu.run(d, &c, NULL, 0, &out, &info, &err), GV_E_USAGE);
    gv_backend_cpu.close(d);
}

int main(void)
{
    T_RUN(test_open_and_describe);
    T_RUN(test_declared_precision);
    T_RUN(test_fp16_accumulation);
    T_RUN(test_conv_geometry);
    T_RUN(test_sdpa_causal);
    T_RUN(test_norms_and_softmax);
    T_RUN(test_threads_do_not_change_bits);
    T_RUN(test_unsupported);
    return t_done();
}
