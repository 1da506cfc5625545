/* The Lt GEMM path shared by cuBLASLt and hipBLASLt (see lt.h). */
#include "dev/lt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/vendor.h"
#include "num/catalog.h"

#define LT_FILL(lt, api, P)                                                                  \
    do {                                                                                     \
        (lt)->create = (api)->P##Create;                                                     \
        (lt)->destroy = (api)->P##Destroy;                                                   \
        (lt)->desc_create = (api)->P##MatmulDescCreate;                                      \
        (lt)->desc_destroy = (api)->P##MatmulDescDestroy;                                    \
        (lt)->desc_set = (api)->P##MatmulDescSetAttribute;                                   \
        (lt)->desc_get = (api)->P##MatmulDescGetAttribute;                                   \
        (lt)->layout_create = (api)->P##MatrixLayoutCreate;                                  \
        (lt)->layout_destroy = (api)->P##MatrixLayoutDestroy;                                \
        (lt)->layout_set = (api)->P##MatrixLayoutSetAttribute;                               \
        (lt)->layout_get = (api)->P##MatrixLayoutGetAttribute;                               \
        (lt)->pref_create = (api)->P##MatmulPreferenceCreate;                                \
        (lt)->pref_destroy = (api)->P##MatmulPreferenceDestroy;                              \
        (lt)->pref_set = (api)->P##MatmulPreferenceSetAttribute;                             \
        (lt)->pref_get = (api)->P##MatmulPreferenceGetAttribute;                             \
        (lt)->heuristic = (api)->P##MatmulAlgoGetHeuristic;                                  \
        (lt)->matmul = (api)->P##Matmul;                                                     \
    } while (0)

void gv_lt_from_cublaslt(struct gv_lt *lt, const struct gv_api_cublaslt *api)
{
    memset(lt, 0, sizeof *lt);
    lt->name = "cuBLASLt";
    lt->prefix = "cublasLt";
    lt->classic = "cuBLAS";
    lt->k = (struct gv_lt_consts){
        .op_n = CUBLAS_OP_N,
        .op_t = CUBLAS_OP_T,
        .desc_transa = CUBLASLT_MATMUL_DESC_TRANSA,
        .desc_transb = CUBLASLT_MATMUL_DESC_TRANSB,
        .layout_type = CUBLASLT_MATRIX_LAYOUT_TYPE,
        .layout_rows = CUBLASLT_MATRIX_LAYOUT_ROWS,
        .layout_cols = CUBLASLT_MATRIX_LAYOUT_COLS,
        .layout_ld = CUBLASLT_MATRIX_LAYOUT_LD,
        .layout_batch_count = CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
        .layout_batch_stride = CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
        .pref_max_workspace = CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
        .r32f = CUDA_R_32F, .r64f = CUDA_R_64F, .r16f = CUDA_R_16F, .r16bf = CUDA_R_16BF,
        .c16f = CUBLAS_COMPUTE_16F, .c32f = CUBLAS_COMPUTE_32F, .c64f = CUBLAS_COMPUTE_64F,
        .c32f_fast_tf32 = CUBLAS_COMPUTE_32F_FAST_TF32,
        .result_size = GV_CUBLASLT_RESULT_SIZE,
        .result_ws_offset = GV_CUBLASLT_RESULT_WS_OFFSET,
        .result_state_offset = GV_CUBLASLT_RESULT_STATE_OFFSET,
        .r8f_e4m3 = CUDA_R_8F_E4M3,
        .r8f_e5m2 = CUDA_R_8F_E5M2,
        .desc_a_scale_ptr = CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
        .desc_b_scale_ptr = CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
    };
    LT_FILL(lt, api, cublasLt);
    lt->status_name = api->cublasLtGetStatusName;
}

void gv_lt_from_hipblaslt(struct gv_lt *lt, const struct gv_api_hipblaslt *api)
{
    memset(lt, 0, sizeof *lt);
    lt->name = "hipBLASLt";
    lt->prefix = "hipblasLt";
    lt->classic = "rocBLAS";
    lt->k = (struct gv_lt_consts){
        .op_n = HIPBLAS_OP_N,
        .op_t = HIPBLAS_OP_T,
        .desc_transa = HIPBLASLT_MATMUL_DESC_TRANSA,
        .desc_transb = HIPBLASLT_MATMUL_DESC_TRANSB,
        .layout_type = HIPBLASLT_MATRIX_LAYOUT_TYPE,
        .layout_rows = HIPBLASLT_MATRIX_LAYOUT_ROWS,
        .layout_cols = HIPBLASLT_MATRIX_LAYOUT_COLS,
        .layout_ld = HIPBLASLT_MATRIX_LAYOUT_LD,
        .layout_batch_count = HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
        .layout_batch_stride = HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
        .pref_max_workspace = HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
        .r32f = HIP_R_32F, .r64f = HIP_R_64F, .r16f = HIP_R_16F, .r16bf = HIP_R_16BF,
        .c16f = HIPBLAS_COMPUTE_16F, .c32f = HIPBLAS_COMPUTE_32F, .c64f = HIPBLAS_COMPUTE_64F,
        .c32f_fast_tf32 = HIPBLAS_COMPUTE_32F_FAST_TF32,
        .result_size = GV_HIPBLASLT_RESULT_SIZE,
        .result_ws_offset = GV_HIPBLASLT_RESULT_WS_OFFSET,
        .result_state_offset = GV_HIPBLASLT_RESULT_STATE_OFFSET,
    };
    LT_FILL(lt, api, hipblasLt);
}

static const char *lt_status(const struct gv_lt *lt, int st)
{
    const char *s = lt->status_name ? lt->status_name(st) : NULL;
    if (s)
        return s;
    switch (st) { /* cublasStatus_t and hipblasStatus_t agree on these */
    case 0: return "SUCCESS";
    case 1: return "NOT_INITIALIZED";
    case 3: return "INVALID_VALUE";
    case 7: return "NOT_SUPPORTED";
    default: return "error";
    }
}

/* The types of one GEMM case for the Lt matmul. */
struct lt_types {
    int ab, cd, compute, scale;
    const char *compute_name;
};

static int lt_types_for(const struct gv_lt_consts *k, const struct gv_case *c, enum gv_dtype cdt,
                        struct lt_types *t)
{
    enum gv_dtype in = c->in_dtype;
    if (in == GV_F32 && c->compute_dtype == GV_F32 && cdt == GV_F32)
        *t = (struct lt_types){k->r32f, k->r32f, k->c32f, k->r32f, "COMPUTE_32F"};
    else if (in == GV_F32 && c->compute_dtype == GV_TF32 && cdt == GV_F32)
        *t = (struct lt_types){k->r32f, k->r32f, k->c32f_fast_tf32, k->r32f,
                               "COMPUTE_32F_FAST_TF32"};
    else if (in == GV_F64 && cdt == GV_F64)
        *t = (struct lt_types){k->r64f, k->r64f, k->c64f, k->r64f, "COMPUTE_64F"};
    else if ((in == GV_F16 || in == GV_BF16) && c->compute_dtype == GV_F32 && cdt == GV_F32)
        *t = (struct lt_types){in == GV_F16 ? k->r16f : k->r16bf, k->r32f, k->c32f, k->r32f,
                               "COMPUTE_32F"};
    else if (in == GV_F16 && c->compute_dtype == GV_F16 && cdt == GV_F16)
        *t = (struct lt_types){k->r16f, k->r16f, k->c16f, k->r16f, "COMPUTE_16F"};
    else
        return -1;
    return 0;
}

/* Descriptors of one matmul, destroyed together. */
struct lt_descs {
    void *op, *a, *b, *c, *pref;
};

static void lt_descs_free(const struct gv_lt *lt, struct lt_descs *d)
{
    if (d->pref)
        lt->pref_destroy(d->pref);
    if (d->c)
        lt->layout_destroy(d->c);
    if (d->b)
        lt->layout_destroy(d->b);
    if (d->a)
        lt->layout_destroy(d->a);
    if (d->op)
        lt->desc_destroy(d->op);
    memset(d, 0, sizeof *d);
}

/* A column-major rows x cols layout with bt strided batches. */
static int lt_layout(const struct gv_lt *lt, void **l, int type, long long rows, long long cols,
                     int bt, long long stride, const char **call)
{
    int32_t count = bt;
    int64_t off = stride;
    int st;
    *call = "MatrixLayoutCreate";
    if ((st = lt->layout_create(l, type, (uint64_t)rows, (uint64_t)cols, rows)) != 0)
        return st;
    *call = "MatrixLayoutSetAttribute(BATCH_COUNT)";
    if ((st = lt->layout_set(*l, lt->k.layout_batch_count, &count, sizeof count)) != 0)
        return st;
    *call = "MatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)";
    return lt->layout_set(*l, lt->k.layout_batch_stride, &off, sizeof off);
}

/* Row-major C = A.B is column-major C^T = B^T.A^T, as in the cuBLAS path: the
 * library's "A" is the case's b (n x k, ld n), its "B" the case's a. */
static int lt_descs_make(const struct gv_lt *lt, const struct gv_case *c, const struct lt_types *t,
                         struct lt_descs *d, const char **call)
{
    long long m = c->n, n = c->m, k = c->k;
    int bt = (int)c->batch, st;
    int32_t opn = lt->k.op_n;
    uint64_t ws = lt->workspace_bytes;
    *call = "MatmulDescCreate";
    if ((st = lt->desc_create(&d->op, t->compute, t->scale)) != 0)
        return st;
    *call = "MatmulDescSetAttribute(TRANSA)";
    if ((st = lt->desc_set(d->op, lt->k.desc_transa, &opn, sizeof opn)) != 0)
        return st;
    *call = "MatmulDescSetAttribute(TRANSB)";
    if ((st = lt->desc_set(d->op, lt->k.desc_transb, &opn, sizeof opn)) != 0)
        return st;
    if ((st = lt_layout(lt, &d->a, t->ab, m, k, bt, m * k, call)) != 0 ||
        (st = lt_layout(lt, &d->b, t->ab, k, n, bt, k * n, call)) != 0 ||
        (st = lt_layout(lt, &d->c, t->cd, m, n, bt, m * n, call)) != 0)
        return st;
    *call = "MatmulPreferenceCreate";
    if ((st = lt->pref_create(&d->pref)) != 0)
        return st;
    *call = "MatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)";
    return lt->pref_set(d->pref, lt->k.pref_max_workspace, &ws, sizeof ws);
}

int gv_lt_gemm(struct gv_lt *lt, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
               enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    struct lt_types t;
    if (lt_types_for(&lt->k, c, cdt, &t) != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "no %s GEMM for %s inputs with %s compute",
                          lt->name, gv_dtype_name(c->in_dtype), gv_dtype_name(c->compute_dtype));
    struct lt_descs d = {0};
    const char *call = "";
    uint64_t result[16]; /* one heuristic result: 96 bytes (cuBLASLt), 56 (hipBLASLt) */
    int found = 0, rc = GV_OK;
    int st = lt_descs_make(lt, c, &t, &d, &call);
    if (st != 0) {
        rc = gv_err_set(err, GV_E_UNSUPPORTED, "%s%s (%s): %s (%d)", lt->prefix, call,
                        t.compute_name, lt_status(lt, st), st);
        goto out;
    }
    memset(result, 0, sizeof result);
    st = lt->heuristic(lt->handle, d.op, d.a, d.b, d.c, d.c, d.pref, 1, result, &found);
    int state = 0;
    size_t need = 0;
    memcpy(&state, (unsigned char *)result + lt->k.result_state_offset, sizeof state);
    memcpy(&need, (unsigned char *)result + lt->k.result_ws_offset, sizeof need);
    if (st != 0 || found < 1 || state != 0) {
        rc = gv_err_set(err, GV_E_UNSUPPORTED,
                        "%sMatmulAlgoGetHeuristic (%s, %s inputs): %s (%d), %d algorithm(s)",
                        lt->prefix, t.compute_name, gv_dtype_name(c->in_dtype),
                        lt_status(lt, st ? st : state), st ? st : state, found);
        goto out;
    }
    if (need > lt->workspace_bytes) {
        rc = gv_err_set(err, GV_E_UNSUPPORTED, "%s's algorithm wants %zu bytes of workspace, "
                        "%zu allowed", lt->name, need, lt->workspace_bytes);
        goto out;
    }
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    unsigned short one16 = 0x3c00, zero16 = 0;
    const void *alpha = &one32, *beta = &zero32;
    if (t.scale == lt->k.r64f)
        alpha = &one64, beta = &zero64;
    else if (t.scale == lt->k.r16f)
        alpha = &one16, beta = &zero16;
    void *o = (void *)(uintptr_t)out;
    st = lt->matmul(lt->handle, d.op, alpha, (const void *)(uintptr_t)b, d.a,
                    (const void *)(uintptr_t)a, d.b, beta, o, d.c, o, d.c, result,
                    (void *)(uintptr_t)lt->workspace, lt->workspace_bytes, lt->stream);
    if (st != 0) {
        rc = gv_err_set(err, GV_E_DEVICE, "%sMatmul (%s): %s (%d)", lt->prefix, t.compute_name,
                        lt_status(lt, st), st);
        goto out;
    }
    snprintf(impl, implsz, "%sMatmul %s (heuristic algorithm, workspace %zu of %zu bytes)",
             lt->prefix, t.compute_name, need, lt->workspace_bytes);
out:
    lt_descs_free(lt, &d);
    return rc;
}

/* ---- plans (gpuvet bench) ---- */

void gv_lt_plan_free(struct gv_lt *lt, struct gv_lt_plan *p)
{
    struct lt_descs d = {p->op, p->a, p->b, p->c, p->pref};
    lt_descs_free(lt, &d);
    p->op = p->a = p->b = p->c = p->pref = NULL;
}

static int plan_descs(struct gv_lt *lt, const struct gv_lt_plan_spec *s, struct gv_lt_plan *p,
                      const char **call)
{
    int32_t opt = lt->k.op_t, opn = lt->k.op_n;
    uint64_t ws = lt->workspace_bytes;
    int st;
    *call = "MatmulDescCreate";
    if ((st = lt->desc_create(&p->op, s->compute, s->scale)) != 0)
        return st;
    *call = "MatmulDescSetAttribute(TRANSA)";
    if ((st = lt->desc_set(p->op, lt->k.desc_transa, &opt, sizeof opt)) != 0)
        return st;
    *call = "MatmulDescSetAttribute(TRANSB)";
    if ((st = lt->desc_set(p->op, lt->k.desc_transb, &opn, sizeof opn)) != 0)
        return st;
    if (s->a_scale) {
        void *as = (void *)(uintptr_t)s->a_scale, *bs = (void *)(uintptr_t)s->b_scale;
        *call = "MatmulDescSetAttribute(A_SCALE_POINTER)";
        if ((st = lt->desc_set(p->op, lt->k.desc_a_scale_ptr, &as, sizeof as)) != 0)
            return st;
        *call = "MatmulDescSetAttribute(B_SCALE_POINTER)";
        if ((st = lt->desc_set(p->op, lt->k.desc_b_scale_ptr, &bs, sizeof bs)) != 0)
            return st;
    }
    if ((st = lt_layout(lt, &p->a, s->ab, s->k, s->m, 1, s->k * s->m, call)) != 0 ||
        (st = lt_layout(lt, &p->b, s->ab, s->k, s->n, 1, s->k * s->n, call)) != 0 ||
        (st = lt_layout(lt, &p->c, s->cd, s->m, s->n, 1, s->m * s->n, call)) != 0)
        return st;
    *call = "MatmulPreferenceCreate";
    if ((st = lt->pref_create(&p->pref)) != 0)
        return st;
    *call = "MatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)";
    return lt->pref_set(p->pref, lt->k.pref_max_workspace, &ws, sizeof ws);
}

int gv_lt_plan_make(struct gv_lt *lt, const struct gv_lt_plan_spec *s, struct gv_lt_plan *p,
                    struct gv_err *err)
{
    memset(p, 0, sizeof *p);
    p->scale = s->scale;
    if (s->a_scale && !lt->k.desc_a_scale_ptr)
        return gv_err_set(err, GV_E_UNSUPPORTED, "gpuvet declares no fp8 scale attributes for %s",
                          lt->name);
    const char *call = "";
    int st = plan_descs(lt, s, p, &call);
    if (st != 0) {
        gv_err_set(err, GV_E_UNSUPPORTED, "%s%s (%s): %s (%d)", lt->prefix, call,
                   s->compute_name, lt_status(lt, st), st);
        gv_lt_plan_free(lt, p);
        return GV_E_UNSUPPORTED;
    }
    int want = s->algos < 1 ? 1 : s->algos > GV_LT_PLAN_ALGOS ? GV_LT_PLAN_ALGOS : s->algos;
    unsigned char res[GV_LT_PLAN_ALGOS * sizeof p->algo[0]];
    int found = 0, state = 0;
    memset(res, 0, sizeof res);
    if (lt->k.result_size > sizeof p->algo[0]) {
        gv_lt_plan_free(lt, p);
        return gv_err_set(err, GV_E_UNSUPPORTED, "%s's heuristic results (%zu bytes) are larger "
                          "than gpuvet holds", lt->name, lt->k.result_size);
    }
    st = lt->heuristic(lt->handle, p->op, p->a, p->b, p->c, p->c, p->pref, want, res, &found);
    for (int i = 0; st == 0 && i < found && i < want; i++) {
        const unsigned char *r = res + (size_t)i * lt->k.result_size;
        size_t need = 0;
        memcpy(&state, r + lt->k.result_state_offset, sizeof state);
        memcpy(&need, r + lt->k.result_ws_offset, sizeof need);
        if (state != 0 || need > lt->workspace_bytes)
            continue;
        memcpy(p->algo[p->nalgo], r, lt->k.result_size);
        p->ws_need[p->nalgo++] = need;
    }
    if (st != 0 || p->nalgo < 1) {
        gv_err_set(err, GV_E_UNSUPPORTED, "%sMatmulAlgoGetHeuristic (%s): %s (%d), %d algorithm(s)",
                   lt->prefix, s->compute_name, lt_status(lt, st ? st : state), st ? st : state,
                   found);
        gv_lt_plan_free(lt, p);
        return GV_E_UNSUPPORTED;
    }
    snprintf(p->impl, sizeof p->impl, "%sMatmul %s (heuristic's first algorithm, workspace %zu of "
             "%zu bytes)", lt->prefix, s->compute_name, p->ws_need[0], lt->workspace_bytes);
    return GV_OK;
}

int gv_lt_plan_run(struct gv_lt *lt, const struct gv_lt_plan *p, gv_dptr a, gv_dptr b, gv_dptr d,
                   struct gv_err *err)
{
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    unsigned short one16 = 0x3c00, zero16 = 0;
    const void *alpha = &one32, *beta = &zero32;
    if (p->scale == lt->k.r64f)
        alpha = &one64, beta = &zero64;
    else if (p->scale == lt->k.r16f)
        alpha = &one16, beta = &zero16;
    void *o = (void *)(uintptr_t)d;
    int st = lt->matmul(lt->handle, p->op, alpha, (const void *)(uintptr_t)a, p->a,
                        (const void *)(uintptr_t)b, p->b, beta, o, p->c, o, p->c, p->algo[p->pick],
                        (void *)(uintptr_t)lt->workspace, lt->workspace_bytes, lt->stream);
    if (st != 0)
        return gv_err_set(err, GV_E_DEVICE, "%sMatmul: %s (%d)", lt->prefix, lt_status(lt, st), st);
    return GV_OK;
}

int gv_lt_gemm_tn(struct gv_lt *lt, const struct gv_case *c, gv_dptr a, gv_dptr bt, gv_dptr out,
                  enum gv_dtype cdt, gv_dptr scales, char *impl, size_t implsz,
                  struct gv_err *err)
{
    int ab = c->in_dtype == GV_F8E4M3 ? lt->k.r8f_e4m3 : c->in_dtype == GV_F8E5M2 ? lt->k.r8f_e5m2 : 0;
    if (!ab || cdt != GV_F32 || c->compute_dtype != GV_F32)
        return gv_err_set(err, GV_E_UNSUPPORTED, "gpuvet declares no %s GEMM for %s inputs with "
                          "%s accumulation", lt->name, gv_dtype_name(c->in_dtype),
                          gv_dtype_name(c->compute_dtype));
    /* column-major D (n x m) = op(Bt)(n x k) . A^T (k x m): row-major C = A.B */
    struct gv_lt_plan_spec s = {ab, lt->k.r32f, lt->k.c32f, lt->k.r32f, "COMPUTE_32F",
                                c->n, c->m, c->k, scales, scales + 256, 1};
    struct gv_lt_plan p;
    int rc = gv_lt_plan_make(lt, &s, &p, err);
    for (long long i = 0; !rc && i < c->batch; i++)
        rc = gv_lt_plan_run(lt, &p, bt + (gv_dptr)(i * c->n * c->k), a + (gv_dptr)(i * c->m * c->k),
                            out + (gv_dptr)(i * c->m * c->n * 4), err);
    if (!rc)
        snprintf(impl, implsz, "%s, %s operands, B transposed on the device (TN), scales 1.0",
                 p.impl, gv_dtype_name(c->in_dtype));
    gv_lt_plan_free(lt, &p);
    return rc;
}

/* Builds and frees the descriptors gv_lt_gemm would use for c: 0, or the
 * library's status with the call in why. */
static int case_descriptors(const struct gv_lt *lt, const struct gv_case *c, enum gv_dtype cdt,
                            char *why, size_t whysz)
{
    struct lt_types t;
    if (lt_types_for(&lt->k, c, cdt, &t) != 0) {
        snprintf(why, whysz, "no %s types for %s inputs with %s compute", lt->name,
                 gv_dtype_name(c->in_dtype), gv_dtype_name(c->compute_dtype));
        return -1;
    }
    struct lt_descs d = {0};
    const char *call = "";
    int st = lt_descs_make(lt, c, &t, &d, &call);
    if (st != 0)
        snprintf(why, whysz, "%s%s (%s): %s (%d)", lt->prefix, call, t.compute_name,
                 lt_status(lt, st), st);
    lt_descs_free(lt, &d);
    return st;
}

int gv_lt_or_classic(struct gv_lt *lt, int use_lt, enum gv_blas_mode mode, gv_gemm_fn classic,
                     void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
                     enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err)
{
    char declined[512] = "";
    if (mode == GV_BLAS_KERNEL)
        return gv_err_set(err, GV_E_UNSUPPORTED, "GPUVET_BLAS=kernel");
    if (use_lt && gv_lt_takes(mode, c)) {
        int rc = gv_lt_gemm(lt, c, a, b, out, cdt, impl, implsz, err);
        if (rc != GV_E_UNSUPPORTED || mode == GV_BLAS_LT)
            return rc;
        snprintf(declined, sizeof declined, "%s", err->msg);
        gv_err_clear(err);
    }
    int rc = classic(ctx, c, a, b, out, cdt, impl, implsz, err);
    if (rc == GV_OK && declined[0]) {
        size_t used = strlen(impl);
        snprintf(impl + used, implsz - used, " (%s declined: %s)", lt->name, declined);
    }
    return rc;
}

/* ---- probe (host only) ---- */

static json_t *probe_layout(const struct gv_lt *lt)
{
    json_t *o = json_object();
    void *l = NULL;
    int st = lt->layout_create(&l, lt->k.r16f, 7, 5, 9);
    json_object_set_new(o, "create", json_integer(st));
    if (st != 0 || !l)
        return o;
    int32_t count = 3;
    int64_t stride = 123;
    json_object_set_new(o, "set_batch_count",
                        json_integer(lt->layout_set(l, lt->k.layout_batch_count, &count, 4)));
    json_object_set_new(o, "set_batch_stride",
                        json_integer(lt->layout_set(l, lt->k.layout_batch_stride, &stride, 8)));
    if (lt->layout_get) {
        size_t w = 0;
        int32_t c2 = 0;
        int64_t s2 = 0, ld = 0;
        uint64_t rows = 0, cols = 0;
        uint32_t type = 0;
        if (lt->layout_get(l, lt->k.layout_batch_count, &c2, 4, &w) == 0)
            json_object_set_new(o, "batch_count", json_integer(c2));
        if (lt->layout_get(l, lt->k.layout_batch_stride, &s2, 8, &w) == 0)
            json_object_set_new(o, "batch_stride", json_integer(s2));
        /* not every library reads these back (hipBLASLt 7.1 does not) */
        if (lt->layout_get(l, lt->k.layout_rows, &rows, 8, &w) == 0)
            json_object_set_new(o, "rows", json_integer((json_int_t)rows));
        if (lt->layout_get(l, lt->k.layout_cols, &cols, 8, &w) == 0)
            json_object_set_new(o, "cols", json_integer((json_int_t)cols));
        if (lt->layout_get(l, lt->k.layout_ld, &ld, 8, &w) == 0)
            json_object_set_new(o, "ld", json_integer(ld));
        if (lt->layout_get(l, lt->k.layout_type, &type, 4, &w) == 0)
            json_object_set_new(o, "type", json_integer(type));
    }
    lt->layout_destroy(l);
    return o;
}

static json_t *probe_desc(const struct gv_lt *lt)
{
    json_t *o = json_object();
    void *d = NULL;
    int st = lt->desc_create(&d, lt->k.c32f, lt->k.r32f);
    json_object_set_new(o, "create", json_integer(st));
    if (st != 0 || !d)
        return o;
    int32_t op = lt->k.op_t, back = -1;
    size_t w = 0;
    json_object_set_new(o, "set_transa",
                        json_integer(lt->desc_set(d, lt->k.desc_transa, &op, sizeof op)));
    if (lt->desc_get && lt->desc_get(d, lt->k.desc_transa, &back, sizeof back, &w) == 0)
        json_object_set_new(o, "transa", json_integer(back));
    back = -1;
    if (lt->desc_get && lt->desc_get(d, lt->k.desc_transb, &back, sizeof back, &w) == 0)
        json_object_set_new(o, "transb", json_integer(back)); /* the default: op_n */
    lt->desc_destroy(d);
    json_object_set_new(o, "op_n", json_integer(lt->k.op_n));
    json_object_set_new(o, "op_t", json_integer(lt->k.op_t));
    return o;
}

static json_t *probe_pref(const struct gv_lt *lt)
{
    json_t *o = json_object();
    void *p = NULL;
    int st = lt->pref_create(&p);
    json_object_set_new(o, "create", json_integer(st));
    if (st != 0 || !p)
        return o;
    uint64_t ws = 3 << 20, back = 0;
    size_t w = 0;
    json_object_set_new(o, "set_max_workspace",
                        json_integer(lt->pref_set(p, lt->k.pref_max_workspace, &ws, sizeof ws)));
    if (lt->pref_get && lt->pref_get(p, lt->k.pref_max_workspace, &back, sizeof back, &w) == 0)
        json_object_set_new(o, "max_workspace", json_integer((json_int_t)back));
    lt->pref_destroy(p);
    return o;
}

/* The descriptor status for each type pair gv_lt_gemm can ask for. */
static json_t *probe_compute_types(const struct gv_lt *lt)
{
    static const struct { enum gv_dtype in, compute, out; const char *name; } pairs[] = {
        {GV_F32, GV_F32, GV_F32, "f32"},   {GV_F32, GV_TF32, GV_F32, "tf32"},
        {GV_F64, GV_F64, GV_F64, "f64"},   {GV_F16, GV_F32, GV_F32, "f16_acc32"},
        {GV_F16, GV_F16, GV_F16, "f16_acc16"},
    };
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        struct gv_case c = {.in_dtype = pairs[i].in, .compute_dtype = pairs[i].compute};
        struct lt_types t;
        void *d = NULL;
        if (lt_types_for(&lt->k, &c, pairs[i].out, &t) != 0)
            continue;
        int st = lt->desc_create(&d, t.compute, t.scale);
        json_object_set_new(o, pairs[i].name, json_integer(st));
        if (st == 0 && d)
            lt->desc_destroy(d);
    }
    return o;
}

static json_t *probe_catalog(const struct gv_lt *lt)
{
    json_t *o = json_object();
    size_t n = 0;
    const struct gv_catalog_entry *all = gv_catalog(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i].c.op != GV_OP_GEMM || !(all[i].targets & GV_TARGET_KERNEL))
            continue; /* PyTorch's own cases never reach the Lt path */
        char why[512] = "";
        int st = case_descriptors(lt, &all[i].c, gv_gpu_gemm_out_dtype(&all[i].c), why,
                                  sizeof why);
        json_object_set_new(o, all[i].id, st ? json_string(why) : json_true());
    }
    return o;
}

json_t *gv_lt_probe(const struct gv_lt *lt)
{
    json_t *o = json_object();
    json_object_set_new(o, "library", json_string(lt->name));
    json_object_set_new(o, "layout", probe_layout(lt));
    json_object_set_new(o, "matmul_desc", probe_desc(lt));
    json_object_set_new(o, "preference", probe_pref(lt));
    json_object_set_new(o, "compute_types", probe_compute_types(lt));
    json_object_set_new(o, "case_descriptors", probe_catalog(lt));
    return o;
}

/* ---- choice ---- */

size_t gv_lt_workspace_bytes(const char *env, size_t dflt)
{
    const char *v = env ? getenv(env) : NULL;
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long long kib = strtoull(v, &end, 10);
    if (*end || v[0] == '-' || kib > (1ull << 24)) /* at most 16 GiB */
        return dflt;
    return (size_t)kib * 1024;
}

int gv_blas_mode(enum gv_blas_mode *mode, struct gv_err *err)
{
    const char *v = getenv("GPUVET_BLAS");
    *mode = GV_BLAS_AUTO;
    if (!v || !*v || !strcmp(v, "auto"))
        return GV_OK;
    if (!strcmp(v, "lt"))
        *mode = GV_BLAS_LT;
    else if (!strcmp(v, "classic"))
        *mode = GV_BLAS_CLASSIC;
    else if (!strcmp(v, "kernel"))
        *mode = GV_BLAS_KERNEL;
    else
        return gv_err_set(err, GV_E_USAGE, "GPUVET_BLAS='%s': expected auto, lt, classic or kernel",
                          v);
    return GV_OK;
}

/* PyTorch's getHipblasltPreferredArchs (docs/facts/rocm-facts.md, TORCH_BLAS_PREFER_HIPBLASLT). */
static int hip_prefers_lt(const char *arch, int runtime)
{
    char base[16];
    size_t n = strcspn(arch, ":");
    if (n >= sizeof base)
        return 0;
    memcpy(base, arch, n);
    base[n] = '\0';
    int v = runtime / 100000; /* major*100 + minor */
    if (!strcmp(base, "gfx90a") || !strcmp(base, "gfx942"))
        return 1;
    if ((!strcmp(base, "gfx1200") || !strcmp(base, "gfx1201")) && v >= 604)
        return 1;
    return !strcmp(base, "gfx950") && v >= 605;
}

static const char *classic_name(const char *vendor)
{
    return strcmp(vendor, "hip") ? "cuBLAS" : "rocBLAS";
}

int gv_blas_decide(enum gv_blas_mode mode, const char *vendor, const char *arch, int runtime,
                   int have_lt, char *why, size_t whysz)
{
    int hip = !strcmp(vendor, "hip");
    const char *lt = hip ? "hipBLASLt" : "cuBLASLt", *classic = classic_name(vendor);
    const char *var = hip ? "TORCH_BLAS_PREFER_HIPBLASLT" : "TORCH_BLAS_PREFER_CUBLASLT";
    if (mode == GV_BLAS_CLASSIC) {
        snprintf(why, whysz, "%s (GPUVET_BLAS=classic)", classic);
        return 0;
    }
    if (mode == GV_BLAS_KERNEL) {
        snprintf(why, whysz, "gpuvet kernel gv_gemm_f32, no vendor BLAS (GPUVET_BLAS=kernel)");
        return 0;
    }
    if (mode == GV_BLAS_LT) {
        snprintf(why, whysz, "%s (GPUVET_BLAS=lt)", lt);
        return 1;
    }
    const char *pref = getenv(var);
    if (!pref && hip)
        pref = getenv("TORCH_BLAS_PREFER_CUBLASLT"), var = "TORCH_BLAS_PREFER_CUBLASLT";
    int want;
    char reason[160];
    if (pref && (!strcmp(pref, "1") || !strcmp(pref, "0"))) {
        want = pref[0] == '1';
        snprintf(reason, sizeof reason, "%s=%s", var, pref);
    } else if (hip) {
        want = hip_prefers_lt(arch, runtime);
        snprintf(reason, sizeof reason, "%s is %sone of the arches PyTorch prefers hipBLASLt on",
                 arch, want ? "" : "not ");
    } else {
        want = 0;
        snprintf(reason, sizeof reason, "PyTorch's default on CUDA");
    }
    if (want && !have_lt) {
        snprintf(why, whysz, "%s (auto: %s, but %s is not loaded)", classic, reason, lt);
        return 0;
    }
    if (want)
        snprintf(why, whysz, "%s for fp32/fp16/bf16, %s for fp64 and fp16 accumulation (auto: %s)",
                 lt, classic, reason);
    else
        snprintf(why, whysz, "%s (auto: %s)", classic, reason);
    return want;
}

int gv_blas_choose(struct gv_blas_choice *b, const char *vendor, const char *arch, int runtime,
                   int have_lt, const char *lt_error, struct gv_err *err)
{
    int rc = gv_blas_mode(&b->mode, err);
    if (rc)
        return rc;
    b->use_lt = gv_blas_decide(b->mode, vendor, arch, runtime, have_lt, b->why, sizeof b->why);
    if (b->mode == GV_BLAS_LT && !have_lt)
        return gv_err_set(err, GV_E_LIB, "GPUVET_BLAS=lt (--blas lt) but %s is not loaded: %s",
                          strcmp(vendor, "hip") ? "cuBLASLt" : "hipBLASLt", lt_error);
    return GV_OK;
}

int gv_lt_open(struct gv_lt *lt, void *stream, gv_alloc_fn alloc, void *ctx, const char *ws_env,
               size_t ws_default, char *why, size_t whysz)
{
    if (lt->handle)
        return 0;
    struct gv_err e = {0};
    lt->stream = stream;
    lt->workspace_bytes = gv_lt_workspace_bytes(ws_env, ws_default);
    int st = lt->create(&lt->handle);
    if (st != 0) {
        lt->handle = NULL;
        snprintf(why, whysz, "%sCreate: %s (%d)", lt->prefix, lt_status(lt, st), st);
        return -1;
    }
    if (lt->workspace_bytes && alloc(ctx, lt->workspace_bytes, &lt->workspace, &e)) {
        snprintf(why, whysz, "workspace: %s", e.msg);
        lt->destroy(lt->handle); /* a later call tries again, whole */
        lt->handle = NULL, lt->workspace = 0;
        return -1;
    }
    return 0;
}

int gv_lt_start(struct gv_lt *lt, struct gv_blas_choice *b, void *stream, gv_alloc_fn alloc,
                void *ctx, const char *ws_env, size_t ws_default, char *why, size_t whysz,
                struct gv_err *err)
{
    if (!b->use_lt)
        return GV_OK;
    if (gv_lt_open(lt, stream, alloc, ctx, ws_env, ws_default, why, whysz) == 0)
        return GV_OK;
    b->use_lt = 0;
    snprintf(b->why, sizeof b->why, "%s (%s unusable: %s)",
             lt->classic, lt->name, why);
    if (b->mode == GV_BLAS_LT)
        return gv_err_set(err, GV_E_LIB, "GPUVET_BLAS=lt (--blas lt) but %s is unusable: %s",
                          lt->name, why);
    return GV_OK;
}

void gv_lt_stop(struct gv_lt *lt, gv_release_fn release, void *ctx)
{
    if (lt->handle)
        lt->destroy(lt->handle);
    if (lt->workspace)
        release(ctx, lt->workspace);
    lt->handle = NULL, lt->workspace = 0;
}

int gv_lt_takes(enum gv_blas_mode mode, const struct gv_case *c)
{
    if (mode == GV_BLAS_LT)
        return 1;
    return c->in_dtype != GV_F64 && c->compute_dtype != GV_F16;
}
