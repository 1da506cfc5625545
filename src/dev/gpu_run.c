/* One case on a GPU: upload the inputs as stored, convert them to fp32 on the
 * device, compute (vendor BLAS / convolution library or gpuvet's kernels),
 * convert the result to the output format on the device, download. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/gpu.h"
#include "num/op.h"

#define BLOCK 256u
#define MAX_BUFS 12

double gv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double gv_gpu_case_timeout(void)
{
    const char *v = getenv("GPUVET_CASE_TIMEOUT");
    if (v && *v) {
        char *end;
        double t = strtod(v, &end);
        if (*end == '\0' && t > 0 && t < 1e6)
            return t;
    }
    return 60.0;
}

/* Device buffers of one run, released together. */
struct bufs {
    const struct gv_gpu_ops *ops;
    void *ctx;
    gv_dptr p[MAX_BUFS];
    int n;
};

static int buf_alloc(struct bufs *b, size_t bytes, gv_dptr *p, struct gv_err *err)
{
    if (b->n >= MAX_BUFS)
        return gv_err_set(err, GV_E_NOMEM, "too many device buffers");
    int rc = b->ops->alloc(b->ctx, bytes ? bytes : 4, p, err);
    if (rc == GV_OK)
        b->p[b->n++] = *p;
    return rc;
}

static void bufs_release(struct bufs *b)
{
    for (int i = 0; i < b->n; i++)
        b->ops->release(b->ctx, b->p[i]);
    b->n = 0;
}

static unsigned grid_for(size_t n)
{
    size_t g = (n + BLOCK - 1) / BLOCK;
    if (g > 65535u * 4)
        g = 65535u * 4;
    return g ? (unsigned)g : 1u;
}

static int storage_ok(enum gv_dtype t)
{
    return t == GV_F32 || t == GV_F16 || t == GV_BF16 || t == GV_F8E4M3 || t == GV_F8E5M2;
}

/* Element counts of the inputs and the output (the op table, num/op.h); -1
 * for an op gpuvet's kernels do not compute or an empty or invalid shape. */
static int counts(const struct gv_case *c, size_t cnt[GV_OP_MAX_IN], size_t *outn)
{
    const struct gv_op_desc *o = gv_op_desc(c->op);
    if (!o || (o->flags & GV_OPF_TORCH_ONLY))
        return -1;
    gv_case_inputs(c, cnt);
    *outn = gv_case_out_count(c);
    return *outn ? 0 : -1;
}

int gv_gpu_supports(const struct gv_gpu_ops *ops, int blas, const struct gv_case *c,
                    struct gv_err *why)
{
    size_t cnt[GV_OP_MAX_IN] = {0}, outn = 0;
    if (counts(c, cnt, &outn) != 0)
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: operation or shape not supported on GPU",
                          c->id ? c->id : "?");
    if (c->op == GV_OP_GEMM) {
        if (c->in_dtype == GV_F64)
            return blas && c->out_dtype == GV_F64 && c->compute_dtype == GV_F64
                       ? GV_OK
                       : gv_err_set(why, GV_E_UNSUPPORTED, "fp64 GEMM needs the vendor BLAS");
        if (!storage_ok(c->in_dtype) || !storage_ok(c->out_dtype))
            return gv_err_set(why, GV_E_UNSUPPORTED, "GEMM %s -> %s not supported",
                              gv_dtype_name(c->in_dtype), gv_dtype_name(c->out_dtype));
        if (!blas && c->compute_dtype != GV_F32)
            return gv_err_set(why, GV_E_UNSUPPORTED,
                              "%s accumulation needs the vendor BLAS (the fallback kernel "
                              "accumulates in fp32)", gv_dtype_name(c->compute_dtype));
        return GV_OK;
    }
    if ((c->op == GV_OP_SUM || c->op == GV_OP_MEAN) && c->in_dtype == GV_F64 &&
        c->out_dtype == GV_F64)
        return GV_OK; /* gv_reduce_f64 */
    if (!storage_ok(c->in_dtype) || !storage_ok(c->out_dtype))
        return gv_err_set(why, GV_E_UNSUPPORTED,
                          "%s: gpuvet's kernels take f32/f16/bf16/f8 storage, not %s -> %s",
                          gv_op_name(c->op), gv_dtype_name(c->in_dtype),
                          gv_dtype_name(c->out_dtype));
    if (c->op != GV_OP_CONVERT && c->compute_dtype == GV_F64)
        return gv_err_set(why, GV_E_UNSUPPORTED, "%s: gpuvet's kernels compute in fp32, not fp64",
                          gv_op_name(c->op));
    if (c->op == GV_OP_SDPA && (size_t)c->seq * 4 > ops->max_shmem)
        return gv_err_set(why, GV_E_UNSUPPORTED,
                          "sdpa: sequence %lld needs %lld bytes of shared memory, the device "
                          "allows %u", (long long)c->seq, (long long)c->seq * 4, ops->max_shmem);
    if (c->op == GV_OP_UNARY && (c->unary <= GV_UN_NONE || c->unary >= GV_UN_COUNT))
        return gv_err_set(why, GV_E_UNSUPPORTED, "unary function %d", (int)c->unary);
    return GV_OK;
}

/* Raw input (dtype t, n elements at src) -> fp32 device buffer *f. */
static int to_f32(struct bufs *b, enum gv_dtype t, gv_dptr src, size_t n, gv_dptr *f,
                  struct gv_err *err)
{
    if (t == GV_F32) {
        *f = src;
        return GV_OK;
    }
    int rc = buf_alloc(b, n * 4, f, err);
    if (rc)
        return rc;
    long long nn = (long long)n;
    int fmt = (int)t;
    void *args[] = {&src, f, &nn, &fmt};
    const char *k = gv_dtype_size(t) == 2 ? "gv_cvt_u16_to_f32" : "gv_cvt_u8_to_f32";
    return b->ops->launch(b->ctx, k, grid_for(n), BLOCK, 0, args, err);
}

/* fp32 device buffer -> dtype t; *res is the buffer holding the result. */
static int from_f32(struct bufs *b, enum gv_dtype t, gv_dptr src, size_t n, gv_dptr *res,
                    struct gv_err *err)
{
    if (t == GV_F32) {
        *res = src;
        return GV_OK;
    }
    int rc = buf_alloc(b, n * gv_dtype_size(t), res, err);
    if (rc)
        return rc;
    long long nn = (long long)n;
    int fmt = (int)t;
    void *args[] = {&src, res, &nn, &fmt};
    const char *k = gv_dtype_size(t) == 2 ? "gv_cvt_f32_to_u16" : "gv_cvt_f32_to_u8";
    return b->ops->launch(b->ctx, k, grid_for(n), BLOCK, 0, args, err);
}

enum gv_dtype gv_gpu_gemm_out_dtype(const struct gv_case *c)
{
    return c->in_dtype == GV_F64 ? GV_F64 : c->compute_dtype == GV_F16 ? GV_F16 : GV_F32;
}

/* fp8 through ops->gemm_tn: A padded to k16 (a multiple of 16) columns, B
 * transposed into n rows of k16, zeros after the values (exact in any sum). */
static int gemm_fp8(struct bufs *b, const struct gv_case *c, const gv_dptr raw[], gv_dptr res,
                    enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    long long bt = c->batch, m = c->m, n = c->n, k = c->k, k16 = (c->k + 15) / 16 * 16;
    gv_dptr pa = raw[0], pb;
    int rc, no = 0, yes = 1;
    if (k16 != k) {
        if ((rc = buf_alloc(b, (size_t)(bt * m * k16), &pa, err)))
            return rc;
        void *args[] = {(void *)&raw[0], &pa, &bt, &m, &k, &k16, &no};
        if ((rc = b->ops->launch(b->ctx, "gv_pack_u8", grid_for((size_t)(bt * m * k16)), BLOCK,
                                 0, args, err)))
            return rc;
    }
    if ((rc = buf_alloc(b, (size_t)(bt * n * k16), &pb, err)))
        return rc;
    void *args[] = {(void *)&raw[1], &pb, &bt, &k, &n, &k16, &yes};
    if ((rc = b->ops->launch(b->ctx, "gv_pack_u8", grid_for((size_t)(bt * n * k16)), BLOCK, 0,
                             args, err)))
        return rc;
    struct gv_case padded = *c;
    padded.k = k16;
    rc = b->ops->gemm_tn(b->ctx, &padded, pa, pb, res, cdt, impl, implsz, err);
    if (!rc && k16 != k) {
        size_t l = strlen(impl);
        snprintf(impl + l, implsz - l, ", K %lld padded with zeros to %lld", k, k16);
    }
    return rc;
}

static int is_fp8(enum gv_dtype t)
{
    return t == GV_F8E4M3 || t == GV_F8E5M2;
}

static int run_gemm(struct bufs *b, const struct gv_case *c, const gv_dptr raw[], size_t outn,
                    gv_dptr *res, enum gv_dtype *resdt, char *impl, size_t implsz,
                    struct gv_err *err)
{
    enum gv_dtype cdt = gv_gpu_gemm_out_dtype(c);
    int rc = buf_alloc(b, outn * gv_dtype_size(cdt), res, err);
    if (rc)
        return rc;
    *resdt = cdt;
    struct gv_err e = {0};
    if (is_fp8(c->in_dtype) && b->ops->gemm_tn)
        rc = gemm_fp8(b, c, raw, *res, cdt, impl, implsz, &e);
    else
        rc = b->ops->gemm ? b->ops->gemm(b->ctx, c, raw[0], raw[1], *res, cdt, impl, implsz, &e)
                          : GV_E_UNSUPPORTED;
    if (rc != GV_E_UNSUPPORTED) {
        if (rc)
            *err = e;
        return rc;
    }
    if (cdt != GV_F32 || c->compute_dtype != GV_F32)
        return gv_err_set(err, GV_E_UNSUPPORTED, "GEMM %s with %s accumulation: %s",
                          gv_dtype_name(c->in_dtype), gv_dtype_name(c->compute_dtype), e.msg);
    gv_dptr fa, fb;
    if ((rc = to_f32(b, c->in_dtype, raw[0], gv_case_in_count(c, 0), &fa, err)) ||
        (rc = to_f32(b, c->in_dtype, raw[1], gv_case_in_count(c, 1), &fb, err)))
        return rc;
    long long bt = c->batch, m = c->m, n = c->n, k = c->k;
    void *args[] = {&fa, &fb, res, &bt, &m, &n, &k};
    snprintf(impl, implsz, "kernel gv_gemm_f32 (fp32 accumulation; vendor BLAS: %s)", e.msg);
    return b->ops->launch(b->ctx, "gv_gemm_f32", grid_for(outn), BLOCK, 0, args, err);
}

/* why: the reason an earlier conv_raw attempt declined ("" if none). */
static int run_conv(struct bufs *b, const struct gv_case *c, const gv_dptr f[], gv_dptr y,
                    size_t outn, const char *why, char *impl, size_t implsz, struct gv_err *err)
{
    struct gv_err e = {0};
    int rc = b->ops->conv ? b->ops->conv(b->ctx, c, f[0], f[1], y, impl, implsz, &e)
                          : GV_E_UNSUPPORTED;
    if (rc == GV_E_UNSUPPORTED && !e.msg[0] && why && *why)
        snprintf(e.msg, sizeof e.msg, "%s", why);
    if (rc != GV_E_UNSUPPORTED) {
        if (rc)
            *err = e;
        return rc;
    }
    long long N = c->n, C = c->c, H = c->h, W = c->w, K = c->k, R = c->r, S = c->s,
              st = c->stride, pad = c->pad;
    void *args[] = {(void *)&f[0], (void *)&f[1], &y, &N, &C, &H, &W, &K, &R, &S, &st, &pad};
    snprintf(impl, implsz, "kernel gv_conv2d_f32 (direct, fp32 accumulation%s%s)",
             e.msg[0] ? "; " : "", e.msg);
    return b->ops->launch(b->ctx, "gv_conv2d_f32", grid_for(outn), BLOCK, 0, args, err);
}

/* The kernel ops on fp32 buffers f[] into y. */
static int run_kernel_op(struct bufs *b, const struct gv_case *c, const gv_dptr f[], gv_dptr y,
                         size_t outn, const char *why, char *impl, size_t implsz,
                         struct gv_err *err)
{
    long long rows = c->rows, len = c->len;
    float eps = (float)c->eps;
    const char *k = NULL;
    switch (c->op) {
    case GV_OP_SOFTMAX: {
        void *args[] = {(void *)&f[0], &y, &rows, &len};
        k = "gv_softmax_f32";
        snprintf(impl, implsz, "kernel %s", k);
        return b->ops->launch(b->ctx, k, (unsigned)rows, BLOCK, 0, args, err);
    }
    case GV_OP_LAYERNORM: {
        void *args[] = {(void *)&f[0], (void *)&f[1], (void *)&f[2], &y, &rows, &len, &eps};
        k = "gv_layernorm_f32";
        snprintf(impl, implsz, "kernel %s", k);
        return b->ops->launch(b->ctx, k, (unsigned)rows, BLOCK, 0, args, err);
    }
    case GV_OP_RMSNORM: {
        void *args[] = {(void *)&f[0], (void *)&f[1], &y, &rows, &len, &eps};
        k = "gv_rmsnorm_f32";
        snprintf(impl, implsz, "kernel %s", k);
        return b->ops->launch(b->ctx, k, (unsigned)rows, BLOCK, 0, args, err);
    }
    case GV_OP_SUM:
    case GV_OP_MEAN: {
        int mean = c->op == GV_OP_MEAN;
        void *args[] = {(void *)&f[0], &y, &rows, &len, &mean};
        k = "gv_reduce_f32";
        snprintf(impl, implsz, "kernel %s (%s, fixed tree order)", k, mean ? "mean" : "sum");
        return b->ops->launch(b->ctx, k, (unsigned)rows, BLOCK, 0, args, err);
    }
    case GV_OP_SDPA: {
        long long bh = c->bh, seq = c->seq, d = c->d;
        int causal = c->causal;
        float scale = (float)(1.0 / sqrt((double)c->d));
        void *args[] = {(void *)&f[0], (void *)&f[1], (void *)&f[2], &y, &bh, &seq, &d,
                        &causal, &scale};
        k = "gv_sdpa_f32";
        snprintf(impl, implsz, "kernel %s (naive, fp32 accumulation)", k);
        return b->ops->launch(b->ctx, k, (unsigned)(bh * seq), BLOCK, (unsigned)(seq * 4), args,
                              err);
    }
    case GV_OP_UNARY: {
        long long n = (long long)outn;
        int fn = (int)c->unary;
        void *args[] = {(void *)&f[0], &y, &n, &fn};
        k = "gv_unary_f32";
        snprintf(impl, implsz, "kernel %s (%s)", k, gv_unary_name(c->unary));
        return b->ops->launch(b->ctx, k, grid_for(outn), BLOCK, 0, args, err);
    }
    case GV_OP_CONV2D: return run_conv(b, c, f, y, outn, why, impl, implsz, err);
    default: return gv_err_set(err, GV_E_UNSUPPORTED, "operation %s", gv_op_name(c->op));
    }
}

static int check_inputs(const struct gv_case *c, const struct gv_buffer *in, int nin,
                        const size_t cnt[GV_OP_MAX_IN], const struct gv_buffer *out,
                        size_t outn, struct gv_err *err)
{
    int want = gv_op_desc(c->op)->nin;
    if (nin != want)
        return gv_err_set(err, GV_E_USAGE, "%s: %d inputs given, %s takes %d", c->id, nin,
                          gv_op_name(c->op), want);
    for (int i = 0; i < nin; i++) {
        /* gamma/beta of the norms may be stored as the input format too */
        if (in[i].count != cnt[i] || !in[i].data)
            return gv_err_set(err, GV_E_USAGE, "%s: input %d has %zu elements, expected %zu",
                              c->id, i, in[i].count, cnt[i]);
        if (in[i].dtype != c->in_dtype)
            return gv_err_set(err, GV_E_USAGE, "%s: input %d is %s, the case says %s", c->id, i,
                              gv_dtype_name(in[i].dtype), gv_dtype_name(c->in_dtype));
    }
    if (out->count != outn || out->dtype != c->out_dtype || !out->data)
        return gv_err_set(err, GV_E_USAGE, "%s: output buffer is %zu x %s, expected %zu x %s",
                          c->id, out->count, gv_dtype_name(out->dtype), outn,
                          gv_dtype_name(c->out_dtype));
    return GV_OK;
}

static int compute(struct bufs *b, const struct gv_case *c, const struct gv_buffer *in, int nin,
                   size_t outn, gv_dptr *res, enum gv_dtype *resdt, char *impl, size_t implsz,
                   struct gv_err *err)
{
    gv_dptr raw[GV_OP_MAX_IN] = {0}, f[GV_OP_MAX_IN] = {0};
    int rc;
    for (int i = 0; i < nin; i++) {
        size_t bytes = in[i].count * gv_dtype_size(in[i].dtype);
        if ((rc = buf_alloc(b, bytes, &raw[i], err)) ||
            (rc = b->ops->upload(b->ctx, raw[i], in[i].data, bytes, err)))
            return rc;
    }
    if (c->op == GV_OP_GEMM)
        return run_gemm(b, c, raw, outn, res, resdt, impl, implsz, err);
    if ((c->op == GV_OP_SUM || c->op == GV_OP_MEAN) && c->in_dtype == GV_F64) {
        long long rows = c->rows, len = c->len;
        int mean = c->op == GV_OP_MEAN;
        *resdt = GV_F64;
        if ((rc = buf_alloc(b, outn * 8, res, err)))
            return rc;
        void *args[] = {&raw[0], res, &rows, &len, &mean};
        snprintf(impl, implsz, "kernel gv_reduce_f64 (fixed tree order)");
        return b->ops->launch(b->ctx, "gv_reduce_f64", (unsigned)rows, BLOCK, 0, args, err);
    }
    char why[sizeof err->msg] = "";
    if (c->op == GV_OP_CONV2D && b->ops->conv_raw) {
        struct gv_err e = {0};
        if ((rc = buf_alloc(b, outn * gv_dtype_size(c->in_dtype), res, err)))
            return rc;
        rc = b->ops->conv_raw(b->ctx, c, raw[0], raw[1], *res, impl, implsz, &e);
        if (rc != GV_E_UNSUPPORTED) {
            if (rc)
                *err = e;
            *resdt = c->in_dtype;
            return rc;
        }
        snprintf(why, sizeof why, "%s", e.msg);
    }
    for (int i = 0; i < nin; i++)
        if ((rc = to_f32(b, in[i].dtype, raw[i], in[i].count, &f[i], err)))
            return rc;
    *resdt = GV_F32;
    if (c->op == GV_OP_CONVERT) {
        *res = f[0];
        snprintf(impl, implsz, "kernels gv_cvt (%s -> f32 -> %s, RNE)",
                 gv_dtype_name(c->in_dtype), gv_dtype_name(c->out_dtype));
        return GV_OK;
    }
    if ((rc = buf_alloc(b, outn * 4, res, err)))
        return rc;
    return run_kernel_op(b, c, f, *res, outn, why, impl, implsz, err);
}

/* The result (dtype resdt) -> the output format, downloaded. */
static int deliver(struct bufs *b, const struct gv_case *c, gv_dptr res, enum gv_dtype resdt,
                   struct gv_buffer *out, struct gv_err *err)
{
    gv_dptr fin = res;
    int rc;
    if (resdt != out->dtype) {
        gv_dptr f = res;
        if (resdt != GV_F32 && (rc = to_f32(b, resdt, res, out->count, &f, err)))
            return rc;
        if (!storage_ok(out->dtype))
            return gv_err_set(err, GV_E_UNSUPPORTED, "%s: output %s from %s", c->id,
                              gv_dtype_name(out->dtype), gv_dtype_name(resdt));
        if ((rc = from_f32(b, out->dtype, f, out->count, &fin, err)))
            return rc;
    }
    if ((rc = b->ops->finish(b->ctx, err)))
        return rc;
    return b->ops->download(b->ctx, out->data, fin, out->count * gv_dtype_size(out->dtype), err);
}

int gv_gpu_run(const struct gv_gpu_ops *ops, void *ctx, const struct gv_case *c,
               const struct gv_buffer *in, int nin, struct gv_buffer *out,
               struct gv_run_info *info, struct gv_err *err)
{
    size_t cnt[GV_OP_MAX_IN] = {0}, outn = 0;
    if (counts(c, cnt, &outn) != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s: not supported on GPU", c->id);
    int rc = check_inputs(c, in, nin, cnt, out, outn, err);
    if (rc)
        return rc;
    struct bufs b = {ops, ctx, {0}, 0};
    char impl[sizeof info->impl] = "";
    gv_dptr res = 0;
    enum gv_dtype resdt = GV_F32;
    double t0 = gv_now();
    rc = gv_gpu_test_hook(ops, ctx, c, err);
    if (!rc)
        rc = compute(&b, c, in, nin, outn, &res, &resdt, impl, sizeof impl, err);
    if (!rc)
        rc = deliver(&b, c, res, resdt, out, err);
    if (rc && rc != GV_E_TIMEOUT && rc != GV_E_DEVICE) {
        /* let queued work finish before its buffers are freed */
        struct gv_err ignore = {0};
        ops->finish(ctx, &ignore);
    }
    bufs_release(&b);
    if (info) {
        info->seconds = gv_now() - t0;
        snprintf(info->impl, sizeof info->impl, "%s", impl);
    }
    if (rc)
        gv_err_prefix(err, "%s", c->id);
    return rc;
}

int gv_gpu_test_hook(const struct gv_gpu_ops *ops, void *ctx, const struct gv_case *c,
                     struct gv_err *err)
{
    const char *mode = getenv("GPUVET_TEST_FAULT");
    if (!mode || !*mode)
        return GV_OK;
    const char *only = getenv("GPUVET_TEST_FAULT_CASE");
    if (only && *only && (!c->id || !strstr(c->id, only)))
        return GV_OK;
    gv_dptr p;
    if (strcmp(mode, "oom") == 0) { /* 1 PiB: more than any GPU has */
        int rc = ops->alloc(ctx, (size_t)1 << 50, &p, err);
        if (rc == GV_OK)
            ops->release(ctx, p);
        return rc;
    }
    int rc = ops->alloc(ctx, 4096, &p, err);
    if (rc)
        return rc;
    if (strcmp(mode, "spin") == 0) {
        long long ticks = 2000000000ll * 5; /* about 5 s at 2 GHz */
        void *args[] = {&p, &ticks};
        rc = ops->launch(ctx, "gv_test_spin", 1, 1, 0, args, err);
    } else {
        void *args[] = {&p};
        rc = ops->launch(ctx, "gv_test_fault", 1, 32, 0, args, err);
    }
    if (!rc)
        rc = ops->finish(ctx, err);
    if (rc != GV_E_DEVICE && rc != GV_E_TIMEOUT)
        ops->release(ctx, p);
    return rc;
}
