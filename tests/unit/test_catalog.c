/* The case catalog: stable readable ids, nested suites, the coverage the
 * suite promises, and input generation that never changes. */
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>

#include "num/catalog.h"
#include "num/ref.h"
#include "check/runner.h"
#include "t.h"

static size_t n_all;
static const struct gv_catalog_entry *all;

static int count_if(int (*pred)(const struct gv_catalog_entry *), enum gv_suite max)
{
    int n = 0;
    for (size_t i = 0; i < n_all; i++)
        n += all[i].suite <= max && pred(&all[i]);
    return n;
}

static void test_ids(void)
{
    T_CHECK(n_all > 60 && n_all < 256);
    for (size_t i = 0; i < n_all; i++) {
        const struct gv_catalog_entry *e = &all[i];
        T_CHECK(e->c.id == e->id);
        for (size_t j = 0; j < i; j++)
            T_CHECK(strcmp(all[j].id, e->id) != 0);
        /* grammar: lower-case, dots between parts, distribution and seed last */
        for (const char *p = e->id; *p; p++)
            T_CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' ||
                    *p == '-');
        char tail[64];
        snprintf(tail, sizeof tail, ".%s.s%u", gv_dist_name(e->c.dist), e->c.seed);
        size_t lt = strlen(tail), li = strlen(e->id);
        T_CHECK(li > lt && strcmp(e->id + li - lt, tail) == 0);
        T_CHECK(strstr(e->id, e->prec) != NULL && strstr(e->id, e->shape) != NULL);
        T_CHECK(gv_catalog_find(e->id) == e);
    }
    T_CHECK(gv_catalog_find("gemm.f32.512x512x512.normal.s1") != NULL);
    T_CHECK(gv_catalog_find("gemm.f16acc32.64x64x8192.uniform.s1") != NULL);
    T_CHECK(gv_catalog_find("no.such.case") == NULL);
}

static void test_gemm_ids_match_fields(void)
{
    const struct gv_catalog_entry *e = gv_catalog_find("gemm.f16acc32.64x64x8192.uniform.s1");
    T_CHECK(e && e->c.op == GV_OP_GEMM && e->c.m == 64 && e->c.n == 64 && e->c.k == 8192);
    T_CHECK(e && e->c.in_dtype == GV_F16 && e->c.compute_dtype == GV_F32 &&
            e->c.out_dtype == GV_F16 && e->c.dist == GV_DIST_UNIFORM);
    e = gv_catalog_find("gemm.tf32.256x256x256.normal.s1");
    T_CHECK(e && e->c.in_dtype == GV_F32 && e->c.compute_dtype == GV_TF32);
    e = gv_catalog_find("gemm.f16acc16.64x64x256.uniform.s1");
    T_CHECK(e && e->c.compute_dtype == GV_F16);
    e = gv_catalog_find("gemm.f32.8x128x128x128.normal.s1");
    T_CHECK(e && e->c.batch == 8 && e->c.m == 128);
    e = gv_catalog_find("sdpa.f32.4x128x64.causal.normal.s1");
    T_CHECK(e && e->c.causal == 1 && e->c.bh == 4 && e->c.seq == 128 && e->c.d == 64);
    e = gv_catalog_find("convert.f32-e4m3.65536.normal.s1");
    T_CHECK(e && e->c.out_dtype == GV_F8E4M3);
    e = gv_catalog_find("conv2d.f32.2x3x33x33-k8x3x3-s2p1.normal.s1");
    T_CHECK(e && e->c.c == 3 && e->c.h == 33 && e->c.k == 8 && e->c.stride == 2 && e->c.pad == 1);
}

static void test_suites_nested(void)
{
    static const struct gv_catalog_entry *a[256], *b[256], *c[256];
    size_t nq = gv_catalog_select(GV_SUITE_QUICK, GV_TARGET_KERNEL, NULL, a, 256);
    size_t ns = gv_catalog_select(GV_SUITE_STANDARD, GV_TARGET_KERNEL, NULL, b, 256);
    size_t nf = gv_catalog_select(GV_SUITE_FULL, GV_TARGET_KERNEL, NULL, c, 256);
    size_t kernel = 0;
    for (size_t i = 0; i < n_all; i++)
        kernel += (all[i].targets & GV_TARGET_KERNEL) != 0;
    T_CHECK(nq >= 30 && nq < ns && ns < nf && nf == kernel && kernel < n_all);
    for (size_t i = 0; i < nq; i++) {
        int found = 0;
        for (size_t j = 0; j < ns; j++)
            found |= a[i] == b[j];
        T_CHECK(found);
    }
    T_EQ_INT(gv_suite_from_name("standard"), GV_SUITE_STANDARD);
    T_EQ_INT(gv_suite_from_name("huge"), -1);
    /* globs, several separated by commas */
    size_t n = gv_catalog_select(GV_SUITE_FULL, GV_TARGET_KERNEL, "softmax.*,sdpa.*", a, 256);
    T_CHECK(n > 4);
    for (size_t i = 0; i < n; i++)
        T_CHECK(a[i]->c.op == GV_OP_SOFTMAX || a[i]->c.op == GV_OP_SDPA);
    T_EQ_INT(gv_catalog_select(GV_SUITE_FULL, GV_TARGET_KERNEL, "gemm.f32.512x512x512.normal.s1", a, 256), 1);
    T_EQ_INT(gv_catalog_select(GV_SUITE_FULL, GV_TARGET_KERNEL, "zzz*", a, 256), 0);
}

#define PRED(name, expr)                                                                     \
    static int name(const struct gv_catalog_entry *e) { return (expr); }
PRED(is_gemm, e->c.op == GV_OP_GEMM)
PRED(large_k, e->c.op == GV_OP_GEMM && e->c.k >= 8192)
PRED(batched, e->c.op == GV_OP_GEMM && e->c.batch > 1)
PRED(odd, e->c.op == GV_OP_GEMM && (e->c.m % 2) && (e->c.n % 2) && (e->c.k % 2))
PRED(tall, e->c.op == GV_OP_GEMM && e->c.m >= 64 * e->c.n)
PRED(conv_s2p1_odd, e->c.op == GV_OP_CONV2D && e->c.stride == 2 && e->c.pad == 1 && (e->c.c % 2))
PRED(long_softmax, e->c.op == GV_OP_SOFTMAX && e->c.len >= 32768)
PRED(sdpa_causal, e->c.op == GV_OP_SDPA && e->c.causal)
PRED(sdpa_full, e->c.op == GV_OP_SDPA && !e->c.causal)
PRED(sdpa_128, e->c.op == GV_OP_SDPA && e->c.d == 128)
PRED(long_sum, (e->c.op == GV_OP_SUM || e->c.op == GV_OP_MEAN) && e->c.len >= 1000000)
PRED(subnormal, e->c.dist == GV_DIST_SUBNORMAL)
PRED(wide, e->c.dist == GV_DIST_WIDE)
PRED(cancel, e->c.dist == GV_DIST_CANCEL)

static int has_prec(const char *prec, enum gv_suite s)
{
    for (size_t i = 0; i < n_all; i++)
        if (all[i].suite <= s && all[i].c.op == GV_OP_GEMM && !strcmp(all[i].prec, prec))
            return 1;
    return 0;
}

static int has(enum gv_op op, enum gv_unary u, enum gv_dtype in, enum gv_dtype out)
{
    for (size_t i = 0; i < n_all; i++)
        if (all[i].c.op == op && all[i].c.unary == u && all[i].c.in_dtype == in &&
            all[i].c.out_dtype == out && all[i].suite <= GV_SUITE_STANDARD)
            return 1;
    return 0;
}

static void test_coverage(void)
{
    const char *precs[] = {"f64", "f32", "tf32", "f16acc32", "f16acc16", "bf16acc32"};
    for (int i = 0; i < 6; i++)
        T_CHECK(has_prec(precs[i], GV_SUITE_QUICK));
    T_CHECK(count_if(large_k, GV_SUITE_QUICK) >= 1);
    T_CHECK(count_if(large_k, GV_SUITE_STANDARD) >= 4);
    T_CHECK(count_if(batched, GV_SUITE_STANDARD) >= 2);
    T_CHECK(count_if(odd, GV_SUITE_QUICK) >= 1);
    T_CHECK(count_if(tall, GV_SUITE_STANDARD) >= 1);
    T_CHECK(count_if(conv_s2p1_odd, GV_SUITE_QUICK) >= 2);
    T_CHECK(count_if(long_softmax, GV_SUITE_QUICK) >= 1);
    T_CHECK(count_if(sdpa_causal, GV_SUITE_QUICK) >= 1 && count_if(sdpa_full, GV_SUITE_QUICK) >= 1);
    T_CHECK(count_if(sdpa_128, GV_SUITE_STANDARD) >= 2);
    T_CHECK(count_if(long_sum, GV_SUITE_QUICK) >= 2);
    T_CHECK(count_if(subnormal, GV_SUITE_QUICK) >= 3);
    T_CHECK(count_if(wide, GV_SUITE_STANDARD) >= 5 && count_if(cancel, GV_SUITE_STANDARD) >= 3);
    T_CHECK(count_if(is_gemm, GV_SUITE_STANDARD) >= 30);
    enum gv_dtype ct[3] = {GV_F32, GV_F16, GV_BF16};
    for (int i = 0; i < 3; i++) {
        T_CHECK(has(GV_OP_CONV2D, GV_UN_NONE, ct[i], ct[i]));
        T_CHECK(has(GV_OP_LAYERNORM, GV_UN_NONE, ct[i], ct[i]));
        T_CHECK(has(GV_OP_RMSNORM, GV_UN_NONE, ct[i], ct[i]));
        T_CHECK(has(GV_OP_SOFTMAX, GV_UN_NONE, ct[i], ct[i]));
        T_CHECK(has(GV_OP_SDPA, GV_UN_NONE, ct[i], ct[i]));
    }
    for (int u = GV_UN_EXP; u < GV_UN_COUNT; u++) {
        T_CHECK(has(GV_OP_UNARY, (enum gv_unary)u, GV_F32, GV_F32));
        T_CHECK(has(GV_OP_UNARY, (enum gv_unary)u, GV_F16, GV_F16) ||
                has(GV_OP_UNARY, (enum gv_unary)u, GV_BF16, GV_BF16));
    }
    enum gv_dtype conv[4] = {GV_F16, GV_BF16, GV_F8E4M3, GV_F8E5M2};
    for (int i = 0; i < 4; i++)
        T_CHECK(has(GV_OP_CONVERT, GV_UN_NONE, GV_F32, conv[i]));
}

static void test_shapes_and_inputs(void)
{
    for (size_t i = 0; i < n_all; i++) {
        long long d[4];
        int nd = gv_case_out_shape(&all[i].c, d);
        long long p = 1;
        for (int k = 0; k < nd; k++)
            p *= d[k];
        T_CHECK(nd >= 1 && nd <= 4 && (size_t)p == gv_case_out_count(&all[i].c));
        size_t counts[4];
        int nin = gv_case_inputs(&all[i].c, counts);
        T_CHECK(nin >= 1 && nin <= (all[i].c.op == GV_OP_MLP ? 4 : 3));
    }
    /* norms: gamma around 1, beta small, both rounded to the input format */
    const struct gv_catalog_entry *e = gv_catalog_find("layernorm.f32.32x4096.normal.s1");
    struct gv_buffer in[4];
    int nin;
    struct gv_err err = {0};
    T_CHECK(e && gv_make_inputs(&e->c, in, &nin, &err) == GV_OK && nin == 3);
    if (e && nin == 3) {
        const float *g = in[1].data, *b = in[2].data;
        for (size_t i = 0; i < in[1].count; i++) {
            T_CHECK(g[i] >= 0.5f && g[i] <= 1.5f);
            T_CHECK(b[i] >= -0.5f && b[i] <= 0.5f);
        }
        gv_inputs_free(in, nin);
    }
    /* subnormal GEMM: A mostly subnormal fp16, B uniform (products stay tiny) */
    e = gv_catalog_find("gemm.f16acc32.64x64x256.subnormal.s1");
    T_CHECK(e && gv_make_inputs(&e->c, in, &nin, &err) == GV_OK && nin == 2);
    if (e && nin == 2) {
        size_t sub = 0, big = 0;
        const uint16_t *a = in[0].data, *b = in[1].data;
        for (size_t i = 0; i < in[0].count; i++)
            sub += (a[i] & 0x7c00) == 0 && (a[i] & 0x3ff) != 0;
        for (size_t i = 0; i < in[1].count; i++)
            big += (b[i] & 0x7c00) != 0;
        T_CHECK(sub > in[0].count / 2);
        T_CHECK(big > in[1].count / 2);
        gv_inputs_free(in, nin);
    }
}

/* The inputs behind an id never change: these digests were recorded when the
 * cases were introduced and must stay the same in every later version. */
static void test_inputs_are_stable(void)
{
    static const struct {
        const char *id, *digest;
    } golden[] = {
        {"gemm.f32.256x256x256.normal.s1",
         "0e92aafb7a67bfa3ef556c7cdaaaebf8adfd9d9d2b1dd44082708112371bcd2d"},
        {"softmax.f16.16x4096.normal.s1",
         "d1613369a1cafc92ddbb127241da019060d9e2991be264659cddfead0ea0da31"},
    };
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        const struct gv_catalog_entry *e = gv_catalog_find(golden[i].id);
        struct gv_buffer in[4];
        int nin;
        struct gv_err err = {0};
        T_CHECK(e && gv_make_inputs(&e->c, in, &nin, &err) == GV_OK);
        if (!e)
            continue;
        char d[65];
        gv_input_digest(&e->c, in, nin, d);
        T_EQ_STR(d, golden[i].digest);
        /* and the digest depends on every input byte */
        ((unsigned char *)in[nin - 1].data)[in[nin - 1].count - 1] ^= 1;
        char d2[65];
        gv_input_digest(&e->c, in, nin, d2);
        T_CHECK(strcmp(d, d2) != 0);
        gv_inputs_free(in, nin);
    }
}

/* Which cases each device gets (catalog.h, "Targets"). */
static void test_targets(void)
{
    static const struct gv_catalog_entry *k[256], *tc[256], *tg[256];
    size_t nk = gv_catalog_select(GV_SUITE_FULL, GV_TARGET_KERNEL, NULL, k, 256);
    size_t nc = gv_catalog_select(GV_SUITE_FULL, GV_TARGET_TORCH_CPU, NULL, tc, 256);
    size_t ng = gv_catalog_select(GV_SUITE_FULL, GV_TARGET_TORCH_GPU, NULL, tg, 256);
    T_CHECK(ng > nk && nc > nk - 8 && ng > nc);
    for (size_t i = 0; i < nk; i++) { /* gpuvet's backends never see PyTorch's calls */
        T_CHECK(k[i]->c.call == GV_CALL_DEFAULT && k[i]->c.op != GV_OP_MLP);
        T_CHECK(strncmp(k[i]->id, "linear.", 7) && strncmp(k[i]->id, "matmul.", 7) &&
                strncmp(k[i]->id, "autocast.", 9));
    }
    size_t shared = 0, acc16 = 0, gpu_only = 0;
    for (size_t i = 0; i < ng; i++) {
        const struct gv_catalog_entry *e = tg[i];
        shared += (e->targets & GV_TARGET_KERNEL) != 0;
        int on_cpu = (e->targets & GV_TARGET_TORCH_CPU) != 0;
        /* no way to ask PyTorch for fp16 accumulation, efficient or cuDNN attention on a CPU */
        if (!strcmp(e->prec, "f16acc16")) {
            acc16++;
            T_CHECK(!on_cpu);
        }
        if (e->c.call == GV_CALL_EFFICIENT || e->c.call == GV_CALL_CUDNN) {
            gpu_only++;
            T_CHECK(!on_cpu);
        }
        if (e->c.call == GV_CALL_FLASH || e->c.call == GV_CALL_MATH)
            T_CHECK(on_cpu && e->c.op == GV_OP_SDPA && strstr(e->id, gv_call_name(e->c.call)));
        /* flash and cuDNN attention take no fp32: such cases would always be skipped */
        if (e->c.call == GV_CALL_FLASH || e->c.call == GV_CALL_CUDNN)
            T_CHECK(e->c.in_dtype != GV_F32);
        if (e->c.op == GV_OP_MLP)
            T_CHECK(e->c.in_dtype == GV_F32 && e->c.out_dtype == GV_F32 &&
                    (e->c.compute_dtype == GV_F16 || e->c.compute_dtype == GV_BF16));
    }
    T_EQ_INT(shared, nk);
    T_CHECK(acc16 >= 3 && gpu_only >= 8);
    T_EQ_INT(nc, ng - acc16 - gpu_only);
    const struct gv_catalog_entry *e = gv_catalog_find("linear.f16acc32.128x128x128.normal.s1");
    T_CHECK(e && e->c.call == GV_CALL_LINEAR && e->c.compute_dtype == GV_F32);
    e = gv_catalog_find("matmul.f16.64x64x8192.uniform.s1");
    T_CHECK(e && e->c.call == GV_CALL_DEFAULTS && e->c.compute_dtype == GV_F16);
    e = gv_catalog_find("sdpa.f16.4x128x64.full-flash.normal.s1");
    T_CHECK(e && e->c.call == GV_CALL_FLASH && !e->c.causal);
    e = gv_catalog_find("autocast.bf16.64x256x512x64.normal.s1");
    T_CHECK(e && e->c.m == 64 && e->c.k == 256 && e->c.n == 512 && e->c.d == 64);
    /* autocast inputs: weights with the bias column, scaled to unit-variance activations */
    struct gv_buffer in[4];
    int nin = 0;
    struct gv_err err = {0};
    T_CHECK(e && gv_make_inputs(&e->c, in, &nin, &err) == GV_OK && nin == 4);
    if (nin == 4) {
        T_EQ_INT(in[1].count, 512 * 257);
        T_EQ_INT(in[2].count, 64 * 513);
        double s2 = 0;
        for (size_t i = 0; i < in[1].count; i++)
            s2 += (double)((const float *)in[1].data)[i] * ((const float *)in[1].data)[i];
        T_CHECK(fabs(s2 / (double)in[1].count * 257 - 1) < 0.05);
        gv_inputs_free(in, nin);
    }
}

int main(void)
{
    all = gv_catalog(&n_all);
    T_RUN(test_ids);
    T_RUN(test_gemm_ids_match_fields);
    T_RUN(test_suites_nested);
    T_RUN(test_coverage);
    T_RUN(test_shapes_and_inputs);
    T_RUN(test_targets);
    T_RUN(test_inputs_are_stable);
    return t_done();
}
