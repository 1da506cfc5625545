/* The case catalog (see catalog.h for the id grammar and input rules).
 * Append new cases anywhere, but never change what an existing id means. */
#include "num/catalog.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/globs.h"

#define MAX_CASES 256

static struct gv_catalog_entry cases[MAX_CASES];
static size_t n_cases;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *suite_names[] = {"quick", "standard", "full"};

static struct gv_catalog_entry *add(enum gv_suite s, const char *prec)
{
    if (n_cases >= MAX_CASES)
        return NULL; /* caught by test_catalog: the count is checked */
    struct gv_catalog_entry *e = &cases[n_cases++];
    memset(e, 0, sizeof *e);
    e->suite = s;
    e->targets = GV_TARGET_ALL;
    snprintf(e->prec, sizeof e->prec, "%s", prec);
    e->c.seed = 1;
    return e;
}

/* Joins op.prec.shape[.variant].dist.sSEED into e->id. */
static void finish(struct gv_catalog_entry *e, const char *op, const char *variant)
{
    char id[sizeof e->id];
    snprintf(id, sizeof id, "%s.%s.%s%s%s.%s.s%u", op, e->prec, e->shape, variant ? "." : "",
             variant ? variant : "", gv_dist_name(e->c.dist), e->c.seed);
    memcpy(e->id, id, sizeof id);
    e->c.id = e->id;
}

/* GEMM precisions: storage, compute, output. */
struct gemm_prec {
    const char *name;
    enum gv_dtype in, compute, out;
};
static const struct gemm_prec gemm_precs[] = {
    {"f64", GV_F64, GV_F64, GV_F64},        {"f32", GV_F32, GV_F32, GV_F32},
    {"tf32", GV_F32, GV_TF32, GV_F32},      {"f16acc32", GV_F16, GV_F32, GV_F16},
    {"f16acc16", GV_F16, GV_F16, GV_F16},   {"bf16acc32", GV_BF16, GV_F32, GV_BF16},
    /* torch.matmul under PyTorch's default flags, which let the library reduce
     * split-K partial sums in the output format: only accumulation in that
     * format is promised */
    {"f16", GV_F16, GV_F16, GV_F16},        {"bf16", GV_BF16, GV_BF16, GV_BF16},
};

static struct gv_catalog_entry *gemm_as(enum gv_suite s, const char *op, enum gv_call call,
                                         const char *prec, long long batch, long long m,
                                         long long n, long long k, enum gv_dist d)
{
    const struct gemm_prec *p = NULL;
    for (size_t i = 0; i < sizeof gemm_precs / sizeof gemm_precs[0]; i++)
        if (!strcmp(gemm_precs[i].name, prec))
            p = &gemm_precs[i];
    struct gv_catalog_entry *e = p ? add(s, prec) : NULL;
    if (!e)
        return NULL;
    e->c.op = GV_OP_GEMM;
    e->c.call = call;
    e->c.in_dtype = p->in;
    e->c.compute_dtype = p->compute;
    e->c.out_dtype = p->out;
    e->c.dist = d;
    e->c.batch = batch;
    e->c.m = m;
    e->c.n = n;
    e->c.k = k;
    if (batch > 1)
        snprintf(e->shape, sizeof e->shape, "%lldx%lldx%lldx%lld", batch, m, n, k);
    else
        snprintf(e->shape, sizeof e->shape, "%lldx%lldx%lld", m, n, k);
    finish(e, op, NULL);
    if (!strcmp(prec, "f16acc16")) /* PyTorch can ask for fp16 accumulation only from cuBLAS/hipBLAS */
        e->targets &= ~(unsigned)GV_TARGET_TORCH_CPU;
    return e;
}

static void gemm(enum gv_suite s, const char *prec, long long batch, long long m, long long n,
                 long long k, enum gv_dist d)
{
    gemm_as(s, "gemm", GV_CALL_DEFAULT, prec, batch, m, n, k, d);
}

static enum gv_dtype compute_of(enum gv_dtype t) { return t == GV_F64 ? GV_F64 : GV_F32; }

/* conv2d with storage t and the given compute format, named prec ("f32",
 * "tf32": fp32 tensors, TF32 allowed inside, PyTorch's default for fp32
 * convolutions on NVIDIA GPUs since Ampere, torch.backends.cudnn.allow_tf32). */
static void conv_prec(enum gv_suite s, const char *prec, enum gv_dtype t, enum gv_dtype compute,
                      long long n, long long c, long long h, long long w, long long k,
                      long long r, long long sz, long long stride, long long pad, enum gv_dist d)
{
    struct gv_catalog_entry *e = add(s, prec);
    if (!e)
        return;
    e->c.op = GV_OP_CONV2D;
    e->c.in_dtype = e->c.out_dtype = t;
    e->c.compute_dtype = compute;
    e->c.dist = d;
    e->c.batch = 1;
    e->c.n = n;
    e->c.c = c;
    e->c.h = h;
    e->c.w = w;
    e->c.k = k;
    e->c.r = r;
    e->c.s = sz;
    e->c.stride = stride;
    e->c.pad = pad;
    snprintf(e->shape, sizeof e->shape, "%lldx%lldx%lldx%lld-k%lldx%lldx%lld-s%lldp%lld", n, c, h,
             w, k, r, sz, stride, pad);
    finish(e, "conv2d", NULL);
}

static void conv(enum gv_suite s, enum gv_dtype t, long long n, long long c, long long h,
                 long long w, long long k, long long r, long long sz, long long stride,
                 long long pad, enum gv_dist d)
{
    conv_prec(s, gv_dtype_name(t), t, compute_of(t), n, c, h, w, k, r, sz, stride, pad, d);
}

/* softmax, layernorm, rmsnorm, sum, mean: rows x len. */
static void rows(enum gv_suite s, enum gv_op op, enum gv_dtype t, long long nrows,
                 long long len, enum gv_dist d)
{
    struct gv_catalog_entry *e = add(s, gv_dtype_name(t));
    if (!e)
        return;
    e->c.op = op;
    e->c.in_dtype = e->c.out_dtype = t;
    e->c.compute_dtype = compute_of(t);
    e->c.dist = d;
    e->c.rows = nrows;
    e->c.len = len;
    e->c.eps = op == GV_OP_LAYERNORM ? 1e-5 : op == GV_OP_RMSNORM ? 1e-6 : 0.0;
    snprintf(e->shape, sizeof e->shape, "%lldx%lld", nrows, len);
    finish(e, gv_op_name(op), NULL);
}

static struct gv_catalog_entry *sdpa_as(enum gv_suite s, enum gv_call call, enum gv_dtype t,
                                         long long bh, long long seq, long long dh, int causal,
                                         enum gv_dist d)
{
    struct gv_catalog_entry *e = add(s, gv_dtype_name(t));
    if (!e)
        return NULL;
    e->c.op = GV_OP_SDPA;
    e->c.call = call;
    e->c.in_dtype = e->c.out_dtype = t;
    e->c.compute_dtype = compute_of(t);
    e->c.dist = d;
    e->c.bh = bh;
    e->c.seq = seq;
    e->c.d = dh;
    e->c.causal = causal;
    snprintf(e->shape, sizeof e->shape, "%lldx%lldx%lld", bh, seq, dh);
    char variant[32];
    snprintf(variant, sizeof variant, "%s%s%s", causal ? "causal" : "full",
             call != GV_CALL_DEFAULT ? "-" : "", gv_call_name(call));
    finish(e, "sdpa", variant);
    return e;
}

static void sdpa(enum gv_suite s, enum gv_dtype t, long long bh, long long seq, long long dh,
                 int causal, enum gv_dist d)
{
    sdpa_as(s, GV_CALL_DEFAULT, t, bh, seq, dh, causal, d);
}

static void unary(enum gv_suite s, enum gv_unary fn, enum gv_dtype t, long long len,
                  enum gv_dist d)
{
    struct gv_catalog_entry *e = add(s, gv_dtype_name(t));
    if (!e)
        return;
    e->c.op = GV_OP_UNARY;
    e->c.unary = fn;
    e->c.in_dtype = e->c.out_dtype = t;
    e->c.compute_dtype = compute_of(t);
    e->c.dist = d;
    e->c.len = len;
    snprintf(e->shape, sizeof e->shape, "%lld", len);
    finish(e, gv_unary_name(fn), NULL);
}

static void convert(enum gv_suite s, enum gv_dtype from, enum gv_dtype to, long long len,
                    enum gv_dist d)
{
    char prec[16];
    snprintf(prec, sizeof prec, "%s-%s", gv_dtype_name(from),
             to == GV_F8E4M3 ? "e4m3" : to == GV_F8E5M2 ? "e5m2" : gv_dtype_name(to));
    struct gv_catalog_entry *e = add(s, prec);
    if (!e)
        return;
    e->c.op = GV_OP_CONVERT;
    e->c.in_dtype = from;
    e->c.compute_dtype = to;
    e->c.out_dtype = to;
    e->c.dist = d;
    e->c.len = len;
    snprintf(e->shape, sizeof e->shape, "%lld", len);
    finish(e, "convert", NULL);
}

#define Q GV_SUITE_QUICK
#define S GV_SUITE_STANDARD
#define F GV_SUITE_FULL

static void build_gemm(void)
{
    /* quick: one or two per precision, the large-K fp16 case, subnormals, odd sizes */
    gemm(Q, "f64", 1, 128, 128, 128, GV_DIST_NORMAL);
    gemm(Q, "f32", 1, 256, 256, 256, GV_DIST_NORMAL);
    gemm(Q, "f32", 1, 127, 253, 511, GV_DIST_UNIFORM);
    gemm(Q, "f32", 1, 64, 64, 1024, GV_DIST_POSITIVE);
    gemm(Q, "tf32", 1, 256, 256, 256, GV_DIST_NORMAL);
    gemm(Q, "f16acc32", 1, 128, 128, 128, GV_DIST_NORMAL);
    gemm(Q, "f16acc32", 1, 64, 64, 8192, GV_DIST_UNIFORM);
    gemm(Q, "f16acc32", 1, 64, 64, 256, GV_DIST_SUBNORMAL);
    gemm(Q, "f16acc16", 1, 64, 64, 256, GV_DIST_UNIFORM);
    gemm(Q, "bf16acc32", 1, 128, 128, 512, GV_DIST_NORMAL);
    gemm(Q, "bf16acc32", 1, 64, 64, 256, GV_DIST_SUBNORMAL);
    /* standard: the shapes that matter */
    gemm(S, "f64", 1, 256, 256, 256, GV_DIST_CANCEL);
    gemm(S, "f64", 1, 127, 253, 511, GV_DIST_WIDE);
    gemm(S, "f32", 1, 512, 512, 512, GV_DIST_NORMAL);
    gemm(S, "f32", 1, 1024, 1024, 1024, GV_DIST_NORMAL);
    gemm(S, "f32", 1, 64, 64, 8192, GV_DIST_NORMAL);
    gemm(S, "f32", 1, 4096, 32, 256, GV_DIST_NORMAL);   /* tall-skinny */
    gemm(S, "f32", 1, 32, 4096, 256, GV_DIST_UNIFORM);  /* short-wide */
    gemm(S, "f32", 8, 128, 128, 128, GV_DIST_NORMAL);   /* batched */
    gemm(S, "f32", 1, 256, 256, 256, GV_DIST_WIDE);
    gemm(S, "f32", 1, 256, 256, 256, GV_DIST_CANCEL);
    gemm(S, "f32", 1, 64, 64, 256, GV_DIST_SUBNORMAL);
    gemm(S, "tf32", 1, 64, 64, 8192, GV_DIST_UNIFORM);
    gemm(S, "tf32", 1, 127, 253, 511, GV_DIST_NORMAL);
    gemm(S, "f16acc32", 1, 512, 512, 512, GV_DIST_NORMAL);
    gemm(S, "f16acc32", 1, 127, 253, 511, GV_DIST_NORMAL);
    gemm(S, "f16acc32", 1, 16, 16, 65536, GV_DIST_UNIFORM);
    gemm(S, "f16acc32", 4, 128, 128, 256, GV_DIST_NORMAL);
    gemm(S, "f16acc32", 1, 4096, 32, 256, GV_DIST_NORMAL);
    gemm(S, "f16acc16", 1, 64, 64, 2048, GV_DIST_UNIFORM);
    gemm(S, "f16acc16", 1, 127, 253, 511, GV_DIST_NORMAL);
    gemm(S, "bf16acc32", 1, 512, 512, 512, GV_DIST_NORMAL);
    gemm(S, "bf16acc32", 1, 64, 64, 8192, GV_DIST_UNIFORM);
    gemm(S, "bf16acc32", 4, 128, 128, 256, GV_DIST_WIDE);
    gemm(S, "bf16acc32", 1, 127, 253, 511, GV_DIST_CANCEL);
    /* full: big ones */
    gemm(F, "f64", 1, 1024, 1024, 1024, GV_DIST_NORMAL);
    gemm(F, "f32", 1, 2048, 2048, 2048, GV_DIST_NORMAL);
    gemm(F, "f32", 1, 64, 64, 65536, GV_DIST_NORMAL);
    gemm(F, "tf32", 1, 1024, 1024, 1024, GV_DIST_NORMAL);
    gemm(F, "f16acc32", 1, 1024, 1024, 1024, GV_DIST_NORMAL);
    gemm(F, "f16acc32", 1, 64, 64, 16384, GV_DIST_NORMAL);
    gemm(F, "f16acc16", 1, 256, 256, 4096, GV_DIST_UNIFORM);
    gemm(F, "bf16acc32", 1, 1024, 1024, 1024, GV_DIST_NORMAL);
    gemm(F, "bf16acc32", 1, 16, 16, 65536, GV_DIST_NORMAL);
}

static void build_conv(void)
{
    conv(Q, GV_F32, 2, 3, 33, 33, 8, 3, 3, 2, 1, GV_DIST_NORMAL);
    conv(Q, GV_F16, 1, 5, 32, 32, 7, 3, 3, 1, 1, GV_DIST_NORMAL);
    conv(Q, GV_BF16, 1, 5, 32, 32, 7, 3, 3, 2, 1, GV_DIST_UNIFORM);
    conv(Q, GV_F16, 1, 8, 16, 16, 8, 3, 3, 1, 1, GV_DIST_SUBNORMAL);
    conv(S, GV_F32, 4, 64, 28, 28, 64, 3, 3, 1, 1, GV_DIST_NORMAL);
    conv(S, GV_F32, 2, 3, 64, 64, 17, 7, 7, 2, 1, GV_DIST_UNIFORM);
    conv(S, GV_F32, 1, 31, 17, 19, 13, 1, 1, 1, 0, GV_DIST_WIDE);
    conv_prec(S, "tf32", GV_F32, GV_TF32, 4, 64, 28, 28, 64, 3, 3, 1, 1, GV_DIST_NORMAL);
    conv_prec(S, "tf32", GV_F32, GV_TF32, 2, 3, 64, 64, 17, 7, 7, 2, 1, GV_DIST_UNIFORM);
    conv(S, GV_F16, 4, 64, 28, 28, 64, 3, 3, 1, 1, GV_DIST_NORMAL);
    conv(S, GV_F16, 2, 3, 64, 64, 17, 7, 7, 2, 1, GV_DIST_UNIFORM);
    conv(S, GV_BF16, 4, 64, 28, 28, 64, 3, 3, 2, 1, GV_DIST_NORMAL);
    conv(S, GV_BF16, 1, 8, 16, 16, 8, 3, 3, 1, 1, GV_DIST_SUBNORMAL);
    conv(F, GV_F32, 8, 128, 56, 56, 128, 3, 3, 1, 1, GV_DIST_NORMAL);
    conv(F, GV_F16, 8, 128, 56, 56, 128, 3, 3, 1, 1, GV_DIST_NORMAL);
}

static void build_rows(void)
{
    rows(Q, GV_OP_SOFTMAX, GV_F32, 16, 32768, GV_DIST_NORMAL);
    rows(Q, GV_OP_SOFTMAX, GV_F16, 16, 4096, GV_DIST_NORMAL);
    rows(Q, GV_OP_LAYERNORM, GV_F32, 32, 4096, GV_DIST_NORMAL);
    rows(Q, GV_OP_RMSNORM, GV_BF16, 32, 4096, GV_DIST_NORMAL);
    rows(Q, GV_OP_SUM, GV_F32, 1, 1000000, GV_DIST_NORMAL);
    rows(Q, GV_OP_MEAN, GV_F32, 1, 1000000, GV_DIST_POSITIVE);
    rows(S, GV_OP_SOFTMAX, GV_F32, 64, 131072, GV_DIST_WIDE);
    rows(S, GV_OP_SOFTMAX, GV_BF16, 64, 32768, GV_DIST_NORMAL);
    rows(S, GV_OP_LAYERNORM, GV_F16, 64, 8192, GV_DIST_NORMAL);
    rows(S, GV_OP_LAYERNORM, GV_BF16, 64, 8192, GV_DIST_UNIFORM);
    rows(S, GV_OP_LAYERNORM, GV_F32, 64, 8192, GV_DIST_CANCEL);
    rows(S, GV_OP_RMSNORM, GV_F32, 64, 8192, GV_DIST_WIDE);
    rows(S, GV_OP_RMSNORM, GV_F16, 64, 8192, GV_DIST_NORMAL);
    rows(S, GV_OP_SUM, GV_F32, 1, 1000000, GV_DIST_CANCEL);
    rows(S, GV_OP_SUM, GV_F32, 1, 1000000, GV_DIST_POSITIVE);
    rows(S, GV_OP_SUM, GV_F16, 1, 1000000, GV_DIST_UNIFORM);
    rows(S, GV_OP_SUM, GV_BF16, 16, 65536, GV_DIST_NORMAL);
    rows(S, GV_OP_MEAN, GV_F32, 16, 1000000, GV_DIST_NORMAL);
    rows(S, GV_OP_MEAN, GV_F16, 1, 1000000, GV_DIST_POSITIVE);
    rows(S, GV_OP_MEAN, GV_BF16, 1, 1000000, GV_DIST_UNIFORM);
    rows(F, GV_OP_SUM, GV_F64, 1, 10000000, GV_DIST_CANCEL);
    rows(F, GV_OP_SOFTMAX, GV_F32, 16, 1048576, GV_DIST_NORMAL);
}

static void build_sdpa(void)
{
    sdpa(Q, GV_F32, 4, 128, 64, 1, GV_DIST_NORMAL);
    sdpa(Q, GV_F16, 4, 128, 64, 0, GV_DIST_NORMAL);
    sdpa(S, GV_F32, 8, 512, 64, 0, GV_DIST_NORMAL);
    sdpa(S, GV_F32, 8, 512, 128, 1, GV_DIST_NORMAL);
    sdpa(S, GV_F16, 8, 512, 128, 1, GV_DIST_NORMAL);
    sdpa(S, GV_BF16, 8, 512, 64, 0, GV_DIST_UNIFORM);
    sdpa(S, GV_BF16, 8, 256, 128, 1, GV_DIST_NORMAL);
    sdpa(F, GV_F32, 16, 2048, 128, 1, GV_DIST_NORMAL);
}

static void build_unary(void)
{
    const long long n = 65536;
    unary(Q, GV_UN_EXP, GV_F32, n, GV_DIST_NORMAL);
    unary(Q, GV_UN_LOG, GV_F32, n, GV_DIST_POSITIVE);
    unary(Q, GV_UN_TANH, GV_F32, n, GV_DIST_NORMAL);
    unary(Q, GV_UN_ERF, GV_F32, n, GV_DIST_NORMAL);
    unary(Q, GV_UN_GELU, GV_F32, n, GV_DIST_NORMAL);
    unary(Q, GV_UN_SILU, GV_F32, n, GV_DIST_NORMAL);
    unary(Q, GV_UN_SIGMOID, GV_F32, n, GV_DIST_NORMAL);
    unary(Q, GV_UN_RSQRT, GV_F32, n, GV_DIST_POSITIVE);
    unary(Q, GV_UN_GELU, GV_F16, n, GV_DIST_NORMAL);
    unary(Q, GV_UN_EXP, GV_BF16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_EXP, GV_F16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_TANH, GV_F32, n, GV_DIST_WIDE);
    unary(S, GV_UN_TANH, GV_F16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_TANH, GV_BF16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_ERF, GV_F16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_GELU, GV_BF16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_SILU, GV_F16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_SILU, GV_BF16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_SIGMOID, GV_F32, n, GV_DIST_WIDE);
    unary(S, GV_UN_SIGMOID, GV_F16, n, GV_DIST_NORMAL);
    unary(S, GV_UN_LOG, GV_F16, n, GV_DIST_POSITIVE);
    unary(S, GV_UN_LOG, GV_F32, n, GV_DIST_WIDE);
    unary(S, GV_UN_RSQRT, GV_F16, n, GV_DIST_POSITIVE);
    unary(S, GV_UN_RSQRT, GV_BF16, n, GV_DIST_POSITIVE);
    unary(S, GV_UN_EXP, GV_F32, n, GV_DIST_SUBNORMAL);
    unary(F, GV_UN_GELU, GV_F32, 1048576, GV_DIST_UNIFORM);
}

static void build_convert(void)
{
    const long long n = 65536;
    convert(Q, GV_F32, GV_F16, n, GV_DIST_NORMAL);
    convert(Q, GV_F32, GV_BF16, n, GV_DIST_NORMAL);
    convert(Q, GV_F32, GV_F8E4M3, n, GV_DIST_NORMAL);
    convert(Q, GV_F32, GV_F8E5M2, n, GV_DIST_NORMAL);
    convert(S, GV_F32, GV_F16, n, GV_DIST_WIDE);
    convert(S, GV_F32, GV_F16, n, GV_DIST_SUBNORMAL);
    convert(S, GV_F32, GV_BF16, n, GV_DIST_WIDE);
    convert(S, GV_F32, GV_F8E4M3, n, GV_DIST_WIDE);
    convert(S, GV_F32, GV_F8E5M2, n, GV_DIST_WIDE);
    convert(S, GV_F32, GV_F8E4M3, n, GV_DIST_UNIFORM);
    convert(S, GV_F32, GV_F8E5M2, n, GV_DIST_UNIFORM);
}

/* ---------- PyTorch cases ---------- */

static void torch_only(struct gv_catalog_entry *e, unsigned targets)
{
    if (e)
        e->targets = targets;
}

static void linear(enum gv_suite s, const char *prec, long long m, long long n, long long k,
                   enum gv_dist d)
{
    torch_only(gemm_as(s, "linear", GV_CALL_LINEAR, prec, 1, m, n, k, d), GV_TARGET_TORCH);
}

static void matmul(enum gv_suite s, const char *prec, long long batch, long long m, long long n,
                   long long k, enum gv_dist d)
{
    torch_only(gemm_as(s, "matmul", GV_CALL_DEFAULTS, prec, batch, m, n, k, d), GV_TARGET_TORCH);
}

/* One case per attention backend: flash and math exist on the CPU too (flash
 * takes f16/bf16 there only from torch 2.2 on, and the others say why they
 * cannot run), memory-efficient and cuDNN attention only on a GPU; flash and
 * cuDNN take no fp32 inputs, so those combinations are not generated. */
static void sdpa_backends(enum gv_suite s, enum gv_dtype t, long long bh, long long seq,
                          long long dh, int causal, enum gv_dist d)
{
    static const enum gv_call calls[] = {GV_CALL_FLASH, GV_CALL_EFFICIENT, GV_CALL_MATH,
                                         GV_CALL_CUDNN};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        if (t == GV_F32 && (calls[i] == GV_CALL_FLASH || calls[i] == GV_CALL_CUDNN))
            continue;
        int gpu = calls[i] == GV_CALL_EFFICIENT || calls[i] == GV_CALL_CUDNN;
        torch_only(sdpa_as(s, calls[i], t, bh, seq, dh, causal, d),
                   gpu ? GV_TARGET_TORCH_GPU : GV_TARGET_TORCH);
    }
}

static void autocast(enum gv_suite s, enum gv_dtype t, long long b, long long d_in,
                     long long hidden, long long d_out, enum gv_dist d)
{
    struct gv_catalog_entry *e = add(s, gv_dtype_name(t));
    if (!e)
        return;
    e->c.op = GV_OP_MLP;
    e->c.in_dtype = GV_F32;
    e->c.compute_dtype = t;
    e->c.out_dtype = GV_F32;
    e->c.dist = d;
    e->c.m = b;
    e->c.k = d_in;
    e->c.n = hidden;
    e->c.d = d_out;
    snprintf(e->shape, sizeof e->shape, "%lldx%lldx%lldx%lld", b, d_in, hidden, d_out);
    finish(e, "autocast", NULL);
    e->targets = GV_TARGET_TORCH;
}

static void build_torch(void)
{
    linear(Q, "f32", 256, 256, 256, GV_DIST_NORMAL);
    linear(Q, "tf32", 256, 256, 256, GV_DIST_NORMAL);
    linear(Q, "f16acc32", 128, 128, 128, GV_DIST_NORMAL);
    linear(Q, "bf16acc32", 128, 128, 512, GV_DIST_NORMAL);
    linear(S, "f32", 4096, 32, 256, GV_DIST_NORMAL);
    linear(S, "tf32", 127, 253, 511, GV_DIST_NORMAL);
    linear(S, "f16acc32", 512, 512, 512, GV_DIST_NORMAL);
    linear(S, "bf16acc32", 512, 512, 512, GV_DIST_NORMAL);
    matmul(Q, "f16", 1, 128, 128, 128, GV_DIST_NORMAL);
    matmul(Q, "bf16", 1, 128, 128, 512, GV_DIST_NORMAL);
    matmul(S, "f16", 1, 512, 512, 512, GV_DIST_NORMAL);
    matmul(S, "f16", 1, 64, 64, 8192, GV_DIST_UNIFORM);
    matmul(S, "f16", 4, 128, 128, 256, GV_DIST_NORMAL);
    matmul(S, "bf16", 1, 512, 512, 512, GV_DIST_NORMAL);
    matmul(S, "bf16", 1, 64, 64, 8192, GV_DIST_UNIFORM);
    sdpa_backends(Q, GV_F32, 4, 128, 64, 1, GV_DIST_NORMAL);
    sdpa_backends(Q, GV_F16, 4, 128, 64, 0, GV_DIST_NORMAL);
    sdpa_backends(S, GV_F16, 8, 512, 128, 1, GV_DIST_NORMAL);
    sdpa_backends(S, GV_BF16, 8, 512, 64, 0, GV_DIST_UNIFORM);
    sdpa_backends(S, GV_F32, 8, 512, 64, 0, GV_DIST_NORMAL);
    autocast(Q, GV_F16, 64, 256, 512, 64, GV_DIST_NORMAL);
    autocast(Q, GV_BF16, 64, 256, 512, 64, GV_DIST_NORMAL);
    autocast(S, GV_F16, 256, 1024, 2048, 256, GV_DIST_NORMAL);
    autocast(S, GV_BF16, 256, 1024, 2048, 256, GV_DIST_NORMAL);
}

static void build(void)
{
    build_gemm();
    build_conv();
    build_rows();
    build_sdpa();
    build_unary();
    build_convert();
    build_torch();
}

const struct gv_catalog_entry *gv_catalog(size_t *n)
{
    pthread_once(&once, build);
    *n = n_cases;
    return cases;
}

int gv_suite_from_name(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, suite_names[i]))
            return i;
    return -1;
}

const char *gv_suite_name(enum gv_suite s)
{
    return (unsigned)s < 3 ? suite_names[s] : "?";
}

const struct gv_catalog_entry *gv_catalog_find(const char *id)
{
    size_t n;
    const struct gv_catalog_entry *all = gv_catalog(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i].id, id))
            return &all[i];
    return NULL;
}


size_t gv_catalog_select(enum gv_suite s, unsigned targets, const char *pattern,
                         const struct gv_catalog_entry **out, size_t max)
{
    size_t n, k = 0;
    const struct gv_catalog_entry *all = gv_catalog(&n);
    for (size_t i = 0; i < n && k < max; i++)
        if (all[i].suite <= s && (all[i].targets & targets) && gv_globs_match(pattern, all[i].id))
            out[k++] = &all[i];
    return k;
}

void gv_catalog_input_rule(const struct gv_case *c, int i, struct gv_input_rule *r)
{
    const struct gv_op_desc *o = gv_op_desc(c->op);
    r->dist = c->dist;
    r->scale = 1.0;
    r->offset = 0.0;
    if (!o || i < 0 || i >= o->nin)
        return;
    const struct gv_op_input *in = &o->in[i];
    switch (in->role) {
    case GV_IN_GAMMA:
    case GV_IN_BETA:
        r->dist = GV_DIST_UNIFORM;
        r->scale = 0.5;
        r->offset = in->role == GV_IN_GAMMA ? 1.0 : 0.0;
        break;
    case GV_IN_OPERAND2:
        if (c->dist == GV_DIST_SUBNORMAL)
            r->dist = GV_DIST_UNIFORM;
        break;
    case GV_IN_WEIGHT: {
        int last = 0;
        while (last < 3 && in->shape.dim[last + 1] != GV_DIM_END)
            last++;
        r->dist = GV_DIST_NORMAL;
        r->scale = 1.0 / sqrt((double)gv_dim_value(c, (enum gv_dim)in->shape.dim[last]));
        break;
    }
    case GV_IN_NORMAL:
        r->dist = GV_DIST_NORMAL;
        break;
    default:
        break;
    }
}
