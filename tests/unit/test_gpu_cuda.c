/* The CUDA backend on a real NVIDIA GPU (skipped, 77, where there is none):
 *  - conversions fp32 -> f16/bf16/e4m3/e5m2 and back, on edge values (ties,
 *    subnormals, overflow, inf, NaN), bit-identical to src/num/fp.c;
 *  - every kernel op and every GEMM path against an fp64 reference computed
 *    here, with the relative error printed;
 *  - a deliberately faulting kernel fails one case with a clear message and
 *    the next case still runs (in a new worker process, see worker.h);
 *  - a kernel that outlives GPUVET_CASE_TIMEOUT fails as a timeout and the
 *    next case still runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "dev/backend.h"
#include "num/fp.h"
#include "t.h"

extern const struct gv_backend gv_backend_cuda;
static const struct gv_backend *be = &gv_backend_cuda;
static struct gv_device *dev;

static uint32_t lcg = 12345;
static double rnd(void) /* deterministic N(0,1)-ish in [-3, 3) */
{
    double s = 0;
    for (int i = 0; i < 6; i++) {
        lcg = lcg * 1664525u + 1013904223u;
        s += (lcg >> 8) / 16777216.0;
    }
    return s - 3.0;
}

static struct gv_buffer buf(enum gv_dtype t, size_t n)
{
    struct gv_buffer b = {t, n, calloc(n ? n : 1, gv_dtype_size(t))};
    return b;
}

static void fill(struct gv_buffer *b, double scale, double offset)
{
    for (size_t i = 0; i < b->count; i++)
        gv_fp_store(b->data, b->dtype, i, gv_fp_round(offset + scale * rnd(), b->dtype, GV_RNE));
}

static char last_impl[sizeof ((struct gv_run_info *)0)->impl];

static int run_case(const struct gv_case *c, struct gv_buffer *in, int nin, struct gv_buffer *out,
                    struct gv_err *err)
{
    struct gv_run_info info = {0};
    struct gv_err why = {0};
    if (be->supports(dev, c, &why) != GV_OK) {
        fprintf(stderr, "  %s unsupported: %s\n", c->id, why.msg);
        return why.code;
    }
    int rc = be->run(dev, c, in, nin, out, &info, err);
    snprintf(last_impl, sizeof last_impl, "%s", info.impl);
    fprintf(stderr, "  %-28s rc=%d %.3f ms %s%s%s\n", c->id, rc, info.seconds * 1e3, info.impl,
            rc ? " : " : "", rc ? err->msg : "");
    return rc;
}

/* ---- conversions ---- */
static void conversions(void)
{
    static const float edge[] = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65520.0f, 65519.99f, 1e6f,
                                 -1e6f, 448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 1e-8f,
                                 5.96e-8f, 2.98e-8f, 2.99e-8f, 1e-40f, 0.333333f, 1.00048828125f,
                                 1.0009765625f, 1.00146484375f, 3.0517578e-05f, 6.1035156e-05f,
                                 1.953125e-3f, 9.765625e-4f, 0.0009765625f * 1.5f};
    size_t ne = sizeof edge / sizeof edge[0], n = 4096;
    struct gv_buffer x = buf(GV_F32, n);
    float *xf = x.data;
    for (size_t i = 0; i < n; i++)
        xf[i] = i < ne ? edge[i] : (float)(rnd() * ldexp(1.0, (int)(i % 40) - 20));
    uint32_t inf = 0x7f800000u, nan = 0x7fc00001u, ninf = 0xff800000u;
    memcpy(&xf[ne], &inf, 4), memcpy(&xf[ne + 1], &nan, 4), memcpy(&xf[ne + 2], &ninf, 4);
    enum gv_dtype to[] = {GV_F16, GV_BF16, GV_F8E4M3, GV_F8E5M2};
    for (int t = 0; t < 4; t++) {
        struct gv_case c = {.id = "convert.edge", .op = GV_OP_CONVERT, .in_dtype = GV_F32,
                            .compute_dtype = to[t], .out_dtype = to[t], .len = (int64_t)n};
        struct gv_buffer out = buf(to[t], n);
        struct gv_err err = {0};
        T_EQ_INT(run_case(&c, &x, 1, &out, &err), GV_OK);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t want = gv_fp_encode(xf[i], to[t], GV_RNE);
            uint32_t got = gv_dtype_size(to[t]) == 2 ? ((uint16_t *)out.data)[i]
                                                     : ((uint8_t *)out.data)[i];
            if (got != want && bad++ < 5)
                fprintf(stderr, "  %s: x=%a gpu=0x%x fp.c=0x%x\n", gv_dtype_name(to[t]),
                        (double)xf[i], got, want);
        }
        fprintf(stderr, "  f32 -> %s: %zu of %zu differ from fp.c\n", gv_dtype_name(to[t]), bad, n);
        T_EQ_INT(bad, 0);
        /* and back: every pattern of the small format decodes exactly */
        size_t np = gv_dtype_size(to[t]) == 2 ? 65536 : 256;
        struct gv_buffer pat = buf(to[t], np), back = buf(GV_F32, np);
        for (size_t i = 0; i < np; i++) {
            if (np == 256)
                ((uint8_t *)pat.data)[i] = (uint8_t)i;
            else
                ((uint16_t *)pat.data)[i] = (uint16_t)i;
        }
        struct gv_case u = {.id = "decode.all", .op = GV_OP_CONVERT, .in_dtype = to[t],
                            .compute_dtype = GV_F32, .out_dtype = GV_F32, .len = (int64_t)np};
        T_EQ_INT(run_case(&u, &pat, 1, &back, &err), GV_OK);
        size_t badd = 0;
        for (size_t i = 0; i < np; i++) {
            double want = gv_fp_decode((uint32_t)i, to[t]);
            double got = ((float *)back.data)[i];
            if (!(got == want || (isnan(got) && isnan(want))) && badd++ < 5)
                fprintf(stderr, "  %s 0x%zx: gpu %g fp.c %g\n", gv_dtype_name(to[t]), i, got, want);
        }
        T_EQ_INT(badd, 0);
        free(pat.data), free(back.data), free(out.data);
    }
    free(x.data);
}

/* ---- GEMM paths against an fp64 reference ---- */
static double gemm_err(const struct gv_case *c, struct gv_buffer *in, struct gv_buffer *out)
{
    double num = 0, den = 0;
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                double s = 0;
                for (int64_t k = 0; k < c->k; k++)
                    s += gv_fp_load(in[0].data, in[0].dtype, (size_t)((b * c->m + i) * c->k + k)) *
                         gv_fp_load(in[1].data, in[1].dtype, (size_t)((b * c->k + k) * c->n + j));
                double g = gv_fp_load(out->data, out->dtype, (size_t)((b * c->m + i) * c->n + j));
                num += (g - s) * (g - s), den += s * s;
            }
    return sqrt(num / den);
}

static double gemm_k(const char *id, enum gv_dtype in, enum gv_dtype comp, enum gv_dtype outd,
                   double tol, int64_t k)
{
    struct gv_case c = {.id = id, .op = GV_OP_GEMM, .in_dtype = in, .compute_dtype = comp,
                        .out_dtype = outd, .batch = 2, .m = 96, .n = 80, .k = k};
    struct gv_buffer x[2] = {buf(in, (size_t)(2 * 96 * k)), buf(in, (size_t)(2 * k * 80))};
    fill(&x[0], 1, 0), fill(&x[1], 1, 0);
    struct gv_buffer out = buf(outd, 2 * 96 * 80);
    struct gv_err err = {0};
    int rc = run_case(&c, x, 2, &out, &err);
    T_EQ_INT(rc, GV_OK);
    double e = INFINITY;
    if (!rc) {
        e = gemm_err(&c, x, &out);
        fprintf(stderr, "  %s normwise relative error %.3g (bound used %.3g)\n", id, e, tol);
        T_CHECK(e < tol);
    }
    free(x[0].data), free(x[1].data), free(out.data);
    return e;
}

static void gemm_one(const char *id, enum gv_dtype in, enum gv_dtype comp, enum gv_dtype outd,
                     double tol)
{
    (void)gemm_k(id, in, comp, outd, tol, 512);
}

/* fp8 through cuBLASLt (the operands packed: B transposed, K padded to 16) on
 * fp8 GPUs; e5m2 x e5m2, which cuBLASLt does not offer on the H200, either
 * there or in the kernel with the reason. Products of fp8 values are exact in
 * fp32; the H200's fp8 tensor cores keep 13 bits of the partial sums,
 * truncated (gpuvet probe, docs/probe.md): an error near 2^-13 there, 1e-6 in
 * the kernel. */
static void gemm_fp8(void)
{
    json_t *d = be->describe(dev);
    const char *cc = json_string_value(json_object_get(d, "compute_capability"));
    int fp8 = cc && (atof(cc) >= 8.9);
    json_decref(d);
    double tol = fp8 ? 1e-3 : 1e-6;
    (void)gemm_k("gemm.e4m3.k200", GV_F8E4M3, GV_F32, GV_F32, tol, 200);
    if (fp8)
        T_CHECK(strstr(last_impl, "cublasLtMatmul") && strstr(last_impl, "padded with zeros"));
    else
        T_CHECK(strstr(last_impl, "kernel gv_gemm_f32") && strstr(last_impl, "8.9"));
    (void)gemm_k("gemm.e4m3.k512", GV_F8E4M3, GV_F32, GV_F32, tol, 512);
    if (fp8)
        T_CHECK(strstr(last_impl, "cublasLtMatmul") && !strstr(last_impl, "padded"));
    double e = gemm_k("gemm.e5m2.k512", GV_F8E5M2, GV_F32, GV_F32, 1e-3, 512);
    if (strstr(last_impl, "kernel gv_gemm_f32 ("))
        T_CHECK(e < 1e-6);
    else
        T_CHECK(strstr(last_impl, "cublasLtMatmul"));
}

static void gemms(void)
{
    gemm_one("gemm.f64", GV_F64, GV_F64, GV_F64, 1e-14);
    gemm_one("gemm.f32", GV_F32, GV_F32, GV_F32, 1e-6);
    gemm_one("gemm.tf32", GV_F32, GV_TF32, GV_F32, 3e-3);
    gemm_one("gemm.f16acc32", GV_F16, GV_F32, GV_F16, 2e-3);
    gemm_one("gemm.bf16acc32", GV_BF16, GV_F32, GV_BF16, 1e-2);
    gemm_one("gemm.f16acc16", GV_F16, GV_F16, GV_F16, 2e-2);
}

/* ---- kernel ops: softmax and sum against fp64 here; the full set runs in
 * tests/gpu/check_cuda.sh through gpuvet check ---- */
static void softmax_sum(void)
{
    struct gv_case c = {.id = "softmax.f32", .op = GV_OP_SOFTMAX, .in_dtype = GV_F32,
                        .compute_dtype = GV_F32, .out_dtype = GV_F32, .rows = 8, .len = 3000};
    struct gv_buffer x = buf(GV_F32, 8 * 3000), y = buf(GV_F32, 8 * 3000);
    fill(&x, 4, 0);
    struct gv_err err = {0};
    T_EQ_INT(run_case(&c, &x, 1, &y, &err), GV_OK);
    double worst = 0;
    for (int r = 0; r < 8; r++) {
        const float *p = (float *)x.data + r * 3000;
        double m = -INFINITY, s = 0;
        for (int i = 0; i < 3000; i++)
            m = fmax(m, p[i]);
        for (int i = 0; i < 3000; i++)
            s += exp(p[i] - m);
        for (int i = 0; i < 3000; i++) {
            double ref = exp(p[i] - m) / s, g = ((float *)y.data)[r * 3000 + i];
            worst = fmax(worst, fabs(g - ref) / ref);
        }
    }
    fprintf(stderr, "  softmax worst relative error %.3g\n", worst);
    T_CHECK(worst < 1e-5);
    struct gv_case s = {.id = "sum.f32", .op = GV_OP_SUM, .in_dtype = GV_F32,
                        .compute_dtype = GV_F32, .out_dtype = GV_F32, .rows = 8, .len = 3000};
    struct gv_buffer z = buf(GV_F32, 8), z2 = buf(GV_F32, 8);
    T_EQ_INT(run_case(&s, &x, 1, &z, &err), GV_OK);
    T_EQ_INT(run_case(&s, &x, 1, &z2, &err), GV_OK);
    T_CHECK(memcmp(z.data, z2.data, 32) == 0); /* fixed reduction order: same bits */
    free(x.data), free(y.data), free(z.data), free(z2.data);
}

/* The worker process reads the test switches (and GPUVET_CASE_TIMEOUT) when it
 * starts: reopen the device with GPUVET_TEST_FAULT=mode for the case id. */
static int reopen_injecting(const char *mode, const char *id)
{
    struct gv_err err = {0};
    be->close(dev);
    setenv("GPUVET_TEST_FAULT", mode, 1);
    setenv("GPUVET_TEST_FAULT_CASE", id, 1);
    int rc = be->open("0", &dev, &err);
    T_EQ_INT(rc, GV_OK);
    if (rc)
        dev = NULL;
    return rc;
}

static void fault_then_recover(void)
{
    struct gv_case c = {.id = "sum.fault", .op = GV_OP_SUM, .in_dtype = GV_F32,
                        .compute_dtype = GV_F32, .out_dtype = GV_F32, .rows = 2, .len = 100};
    struct gv_buffer x = buf(GV_F32, 200), y = buf(GV_F32, 2);
    fill(&x, 1, 0);
    struct gv_err err = {0};
    if (reopen_injecting("fault", "sum.fault") != GV_OK)
        return;
    int rc = run_case(&c, &x, 1, &y, &err);
    unsetenv("GPUVET_TEST_FAULT");
    T_EQ_INT(rc, GV_E_DEVICE);
    T_CHECK(strstr(err.msg, "sum.fault") && strstr(err.msg, "ILLEGAL_ADDRESS"));
    gv_err_clear(&err);
    c.id = "sum.after-fault";
    T_EQ_INT(run_case(&c, &x, 1, &y, &err), GV_OK);
    double s = 0;
    for (int i = 0; i < 100; i++)
        s += ((float *)x.data)[i];
    T_NEAR(((float *)y.data)[0], s, 1e-4);
    /* the faulted worker process was replaced by a new one */
    json_t *d = be->describe(dev);
    json_t *w = json_object_get(d, "worker");
    T_CHECK(json_integer_value(json_object_get(w, "restarts")) >= 1);
    const char *why = json_string_value(json_object_get(w, "last_restart_reason"));
    T_CHECK(why && strstr(why, "sum.fault"));
    json_decref(d);
    free(x.data), free(y.data);
}

static void timeout_then_recover(void)
{
    struct gv_case c = {.id = "sum.spin", .op = GV_OP_SUM, .in_dtype = GV_F32,
                        .compute_dtype = GV_F32, .out_dtype = GV_F32, .rows = 2, .len = 100};
    struct gv_buffer x = buf(GV_F32, 200), y = buf(GV_F32, 2);
    fill(&x, 1, 0);
    struct gv_err err = {0};
    setenv("GPUVET_CASE_TIMEOUT", "1", 1); /* read at open */
    if (reopen_injecting("spin", "sum.spin") != GV_OK)
        return;
    int rc = run_case(&c, &x, 1, &y, &err);
    unsetenv("GPUVET_TEST_FAULT");
    T_EQ_INT(rc, GV_E_TIMEOUT);
    T_CHECK(strstr(err.msg, "sum.spin") && strstr(err.msg, "GPUVET_CASE_TIMEOUT"));
    gv_err_clear(&err);
    c.id = "sum.after-timeout";
    T_EQ_INT(run_case(&c, &x, 1, &y, &err), GV_OK);
    free(x.data), free(y.data);
}

int main(void)
{
    struct gv_err err = {0};
    if (be->open("0", &dev, &err) != GV_OK) {
        printf("skipped: no GPU (%s)\n", err.msg);
        return 77;
    }
    json_t *d = be->describe(dev);
    char *s = gv_json_dumps(d, JSON_INDENT(1));
    fprintf(stderr, "%s\n", s ? s : "");
    free(s);
    json_decref(d);
    T_RUN(conversions);
    T_RUN(gemms);
    T_RUN(gemm_fp8);
    T_RUN(softmax_sum);
    T_RUN(fault_then_recover);
    if (dev)
        T_RUN(timeout_then_recover);
    if (dev)
        be->close(dev);
    return t_done();
}
