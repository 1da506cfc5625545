/* The "Lt" GEMM path, written once for cuBLASLt and hipBLASLt. Both libraries
 * have one API shape (handle, matmul descriptor, matrix layouts, preference,
 * heuristic query, matmul); the enum values, the size of the heuristic result
 * and the names differ, and a backend states those in struct gv_lt. Which BLAS
 * a backend uses for GEMM follows PyTorch's choice (gv_blas_decide). */
#ifndef GV_DEV_LT_H
#define GV_DEV_LT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "dev/gpu.h"
#include "num/types.h"

/* Which BLAS library runs GEMM (gv_blas_mode, gv_blas_decide below). */
/* KERNEL: no vendor BLAS, gpuvet's own fp32 GEMM kernel (gpuvet probe's "kernel"
 * route); other accumulations are then unsupported. */
enum gv_blas_mode { GV_BLAS_AUTO, GV_BLAS_LT, GV_BLAS_CLASSIC, GV_BLAS_KERNEL };

struct gv_lt_consts {
    int op_n, op_t;
    int desc_transa, desc_transb;
    int layout_type, layout_rows, layout_cols, layout_ld; /* read back by the probe only */
    int layout_batch_count, layout_batch_stride;
    int pref_max_workspace;
    int r32f, r64f, r16f, r16bf;          /* data types */
    int c16f, c32f, c64f, c32f_fast_tf32; /* compute types */
    size_t result_size, result_ws_offset, result_state_offset;
    /* fp8 (gv_lt_plan only): the e4m3 data type and the scale-pointer
     * attributes; 0 when gpuvet does not declare them for this library */
    int r8f_e4m3, r8f_e5m2, desc_a_scale_ptr, desc_b_scale_ptr;
};

struct gv_lt {
    const char *name;   /* "cuBLASLt", "hipBLASLt": messages and impl */
    const char *prefix; /* "cublasLt": the entry names in messages */
    const char *classic; /* "cuBLAS", "rocBLAS": where GEMMs go when it cannot be used */
    struct gv_lt_consts k;
    int (*create)(void **);
    int (*destroy)(void *);
    int (*desc_create)(void **, int, int);
    int (*desc_destroy)(void *);
    int (*desc_set)(void *, int, const void *, size_t);
    int (*desc_get)(void *, int, void *, size_t, size_t *); /* may be NULL */
    int (*layout_create)(void **, int, uint64_t, uint64_t, int64_t);
    int (*layout_destroy)(void *);
    int (*layout_set)(void *, int, const void *, size_t);
    int (*layout_get)(void *, int, void *, size_t, size_t *); /* may be NULL */
    int (*pref_create)(void **);
    int (*pref_destroy)(void *);
    int (*pref_set)(void *, int, const void *, size_t);
    int (*pref_get)(void *, int, void *, size_t, size_t *); /* may be NULL */
    int (*heuristic)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *);
    int (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *,
                  const void *, const void *, void *, void *, void *, const void *, void *, size_t,
                  void *);
    const char *(*status_name)(int); /* may be NULL */
    /* set by the backend once a device is open */
    void *handle;
    void *stream;
    gv_dptr workspace;
    size_t workspace_bytes;
};

/* Fill a gv_lt from a loaded library's table (vendor.h). */
void gv_lt_from_cublaslt(struct gv_lt *lt, const struct gv_api_cublaslt *api);
void gv_lt_from_hipblaslt(struct gv_lt *lt, const struct gv_api_hipblaslt *api);

/* C = A.B of the case (row-major, strided batches) through the Lt matmul, the
 * same contract as gv_gpu_ops.gemm. GV_E_UNSUPPORTED with the reason when the
 * library declines the types (descriptor refused, no algorithm from the
 * heuristic); GV_E_DEVICE when the matmul itself fails. */
int gv_lt_gemm(struct gv_lt *lt, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
               enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err);

/* fp8 inputs (c->in_dtype e4m3 or e5m2, both operands alike): row-major C = A.B
 * into out (fp32, cdt F32) with B given transposed (bt: n x k per batch, the
 * layout fp8 matmuls take: op(A) = T), k a multiple of 16; scales: a device
 * buffer holding 1.0f at byte 0 and at byte 256 (the A and B scale pointers).
 * Batches run one matmul each. GV_E_UNSUPPORTED with the reason when gpuvet
 * declares no fp8 type for the library or the library declines. */
int gv_lt_gemm_tn(struct gv_lt *lt, const struct gv_case *c, gv_dptr a, gv_dptr bt, gv_dptr out,
                  enum gv_dtype cdt, gv_dptr scales, char *impl, size_t implsz,
                  struct gv_err *err);

/* A backend's cuBLAS / rocBLAS GEMM, with the contract of gv_gpu_ops.gemm. */
typedef int (*gv_gemm_fn)(void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
                          enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err);

/* The GEMM of a backend: through the Lt library when use_lt (chosen and
 * loaded) and it takes the case (gv_lt_takes), else through classic. In auto
 * mode a case the Lt library declines goes to classic, its reason appended to
 * impl ("(hipBLASLt declined: ...)"); with --blas lt the refusal stands. */
int gv_lt_or_classic(struct gv_lt *lt, int use_lt, enum gv_blas_mode mode, gv_gemm_fn classic,
                     void *ctx, const struct gv_case *c, gv_dptr a, gv_dptr b, gv_dptr out,
                     enum gv_dtype cdt, char *impl, size_t implsz, struct gv_err *err);

/* Host-only checks against the real library, no device needed: the attribute
 * ids gpuvet declares, set and read back (batch count, batch stride, TRANSA,
 * workspace limit; type/rows/cols/ld where the library can read them), the
 * status of each compute/scale type pair gv_lt_gemm asks for, and under
 * "case_descriptors" for every GEMM case of the catalog whether the library
 * accepts the descriptors gv_lt_gemm builds for it (true, or why not). */
json_t *gv_lt_probe(const struct gv_lt *lt);

/* Workspace for the Lt matmul, from ENV (KiB, as PyTorch reads
 * CUBLASLT_WORKSPACE_SIZE / HIPBLASLT_WORKSPACE_SIZE) or dflt bytes. */
size_t gv_lt_workspace_bytes(const char *env, size_t dflt);

/* One matmul set up once and run many times (gpuvet bench): column-major
 * D(m x n) = op(A)(m x k) . B(k x n), A stored k x m (transposed, ld k), B
 * k x n (ld k), D m x n (ld m): row-major C = X . W^T with A = W, B = X, the
 * layout of PyTorch's linear and the one fp8 needs. ab: the operands' type;
 * cd: the output's; fp8 operands get device scale pointers (1.0) when given. */
#define GV_LT_PLAN_ALGOS 8
struct gv_lt_plan {
    void *op, *a, *b, *c, *pref;
    uint64_t algo[GV_LT_PLAN_ALGOS][16]; /* the heuristic's results, its first first */
    size_t ws_need[GV_LT_PLAN_ALGOS];
    int nalgo;         /* usable results in algo (at least 1) */
    int pick;          /* the one gv_lt_plan_run uses (0 unless chosen otherwise) */
    int scale;         /* scale type: alpha and beta are of this type */
    char impl[200];
};
struct gv_lt_plan_spec {
    int ab, cd, compute, scale;
    const char *compute_name;
    long long m, n, k;
    gv_dptr a_scale, b_scale; /* fp8: device pointers to one float each; else 0 */
    int algos;                /* how many of the heuristic's results to keep (0: 1) */
};
int gv_lt_plan_make(struct gv_lt *lt, const struct gv_lt_plan_spec *s, struct gv_lt_plan *p,
                    struct gv_err *err);
/* Enqueues the matmul on lt->stream with lt's workspace, by algorithm p->pick. */
int gv_lt_plan_run(struct gv_lt *lt, const struct gv_lt_plan *p, gv_dptr a, gv_dptr b, gv_dptr d,
                   struct gv_err *err);
void gv_lt_plan_free(struct gv_lt *lt, struct gv_lt_plan *p);

/* Which BLAS library runs GEMM. GPUVET_BLAS (set by `check --blas`): auto
 * (default), lt, classic; kernel (set by `gpuvet probe`) for none. */
int gv_blas_mode(enum gv_blas_mode *mode, struct gv_err *err);

/* The decision for one backend, with its reason in why. vendor: "cuda" or
 * "hip"; arch: "sm_90", "gfx942:sramecc+:xnack-"; runtime: HIP_VERSION (hip)
 * or 0. have_lt: the Lt library loaded. Returns 1 for the Lt library, 0 for
 * cuBLAS/rocBLAS. auto follows PyTorch (docs/facts/rocm-facts.md, TORCH_BLAS_PREFER_*):
 * on CUDA cuBLAS unless TORCH_BLAS_PREFER_CUBLASLT=1; on ROCm hipBLASLt when
 * TORCH_BLAS_PREFER_HIPBLASLT=1, rocBLAS when it is 0, and otherwise hipBLASLt
 * only on the arches PyTorch prefers it for (gfx90a, gfx942; gfx1200/gfx1201
 * from ROCm 6.4; gfx950 from 6.5). */
int gv_blas_decide(enum gv_blas_mode mode, const char *vendor, const char *arch, int runtime,
                   int have_lt, char *why, size_t whysz);

/* A backend's GEMM route: the mode, whether the Lt library is used, and the
 * reason shown as the device description's "gemm". */
struct gv_blas_choice {
    enum gv_blas_mode mode;
    int use_lt;
    char why[256];
};

/* GPUVET_BLAS and gv_blas_decide for a backend. GV_E_LIB naming lt_error when
 * lt is asked for and the library did not load. */
int gv_blas_choose(struct gv_blas_choice *b, const char *vendor, const char *arch, int runtime,
                   int have_lt, const char *lt_error, struct gv_err *err);

/* Device memory of a backend (gv_gpu_ops.alloc / .release). */
typedef int (*gv_alloc_fn)(void *ctx, size_t bytes, gv_dptr *p, struct gv_err *err);
typedef void (*gv_release_fn)(void *ctx, gv_dptr p);

/* When b->use_lt: the Lt handle on stream and its workspace (ws_env KiB, else
 * ws_default bytes), allocated with the backend's alloc. When that fails the
 * GEMMs go to the classic library: why (the backend's liberr) and b->why say
 * so, and with --blas lt it is an error (GV_E_LIB). */
int gv_lt_start(struct gv_lt *lt, struct gv_blas_choice *b, void *stream, gv_alloc_fn alloc,
                void *ctx, const char *ws_env, size_t ws_default, char *why, size_t whysz,
                struct gv_err *err);
/* The handle and workspace of gv_lt_start without a BLAS choice: for a GEMM only
 * the Lt library offers (fp8) when cuBLAS/rocBLAS runs the others. 0 (also when
 * already open), or -1 with the reason in why. */
int gv_lt_open(struct gv_lt *lt, void *stream, gv_alloc_fn alloc, void *ctx, const char *ws_env,
               size_t ws_default, char *why, size_t whysz);
/* Destroys the handle and releases the workspace (safe when not started). */
void gv_lt_stop(struct gv_lt *lt, gv_release_fn release, void *ctx);

/* In auto mode the Lt library takes only what PyTorch sends it: fp32 (incl.
 * TF32), and fp16/bf16 with fp32 accumulation; fp64 and fp16 accumulation go
 * to cuBLAS/rocBLAS. */
int gv_lt_takes(enum gv_blas_mode mode, const struct gv_case *c);

#endif
