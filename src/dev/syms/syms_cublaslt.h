/* cuBLASLt subset (libcublasLt.so.N): the matmul API gpuvet's Lt GEMM path uses
 * (src/dev/lt.c), with the same parameter types as struct gv_lt so the entries
 * can be handed over as they are. Handles and descriptors are opaque pointers;
 * enums are passed as int. Values from cublasLt.h (CUDA 13.0 toolkit):
 * cublasLtMatmulDescAttributes_t COMPUTE_TYPE = 0, SCALE_TYPE = 1, TRANSA = 3,
 * TRANSB = 4 (int32_t); cublasLtMatrixLayoutAttribute_t TYPE = 0, ORDER = 1,
 * ROWS = 2, COLS = 3, LD = 4, BATCH_COUNT = 5 (int32_t), STRIDED_BATCH_OFFSET = 6
 * (int64_t); cublasLtMatmulPreferenceAttributes_t MAX_WORKSPACE_BYTES = 1
 * (uint64_t). cublasLtMatmulHeuristicResult_t is {cublasLtMatmulAlgo_t algo
 * (uint64_t data[8]); size_t workspaceSize; cublasStatus_t state; float
 * wavesCount; int reserved[4]}: 96 bytes, workspaceSize at 64, state at 72.
 * The three GetAttribute entries are optional: only the descriptor probe
 * (gv_lt_probe) reads attributes back. cublasLtGetVersion: major*10000 + minor*100 + patch. Compute and data types
 * are cuBLAS's (syms_cublas.h). */
#ifndef GV_DEV_SYMS_CUBLASLT_H
#define GV_DEV_SYMS_CUBLASLT_H

#include <stddef.h>
#include <stdint.h>

enum {
    CUBLASLT_MATMUL_DESC_TRANSA = 3,
    CUBLASLT_MATMUL_DESC_TRANSB = 4,
    CUBLASLT_MATRIX_LAYOUT_TYPE = 0,
    CUBLASLT_MATRIX_LAYOUT_ROWS = 2,
    CUBLASLT_MATRIX_LAYOUT_COLS = 3,
    CUBLASLT_MATRIX_LAYOUT_LD = 4,
    CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
    CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
    /* cublasLtMatmulDescAttributes_t (cublasLt.h): device pointers to the fp8
     * operands' float scales */
    CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17,
    CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18,
};
#define GV_CUBLASLT_RESULT_SIZE 96
#define GV_CUBLASLT_RESULT_WS_OFFSET 64
#define GV_CUBLASLT_RESULT_STATE_OFFSET 72

#define GV_SYMS_LT_COMMON(X, P)                                                               \
    X(REQ, P##Create, int, (void **), #P "Create")                                           \
    X(REQ, P##Destroy, int, (void *), #P "Destroy")                                          \
    X(REQ, P##MatmulDescCreate, int, (void **, int, int), #P "MatmulDescCreate")             \
    X(REQ, P##MatmulDescDestroy, int, (void *), #P "MatmulDescDestroy")                      \
    X(REQ, P##MatmulDescSetAttribute, int, (void *, int, const void *, size_t),              \
      #P "MatmulDescSetAttribute")                                                           \
    X(OPT, P##MatmulDescGetAttribute, int, (void *, int, void *, size_t, size_t *),          \
      #P "MatmulDescGetAttribute")                                                           \
    X(REQ, P##MatrixLayoutCreate, int, (void **, int, uint64_t, uint64_t, int64_t),          \
      #P "MatrixLayoutCreate")                                                               \
    X(REQ, P##MatrixLayoutDestroy, int, (void *), #P "MatrixLayoutDestroy")                  \
    X(REQ, P##MatrixLayoutSetAttribute, int, (void *, int, const void *, size_t),            \
      #P "MatrixLayoutSetAttribute")                                                         \
    X(OPT, P##MatrixLayoutGetAttribute, int, (void *, int, void *, size_t, size_t *),        \
      #P "MatrixLayoutGetAttribute")                                                         \
    X(REQ, P##MatmulPreferenceCreate, int, (void **), #P "MatmulPreferenceCreate")           \
    X(REQ, P##MatmulPreferenceDestroy, int, (void *), #P "MatmulPreferenceDestroy")          \
    X(REQ, P##MatmulPreferenceSetAttribute, int, (void *, int, const void *, size_t),        \
      #P "MatmulPreferenceSetAttribute")                                                     \
    X(OPT, P##MatmulPreferenceGetAttribute, int, (void *, int, void *, size_t, size_t *),    \
      #P "MatmulPreferenceGetAttribute")                                                     \
    X(REQ, P##MatmulAlgoGetHeuristic, int,                                                   \
      (void *, void *, void *, void *, void *, void *, void *, int, void *, int *),          \
      #P "MatmulAlgoGetHeuristic")                                                           \
    X(REQ, P##Matmul, int,                                                                   \
      (void *, void *, const void *, const void *, void *, const void *, void *,             \
       const void *, const void *, void *, void *, void *, const void *, void *, size_t,     \
       void *),                                                                              \
      #P "Matmul")

#define GV_SYMS_CUBLASLT(X)                                                                  \
    X(REQ, cublasLtGetVersion, size_t, (void), "cublasLtGetVersion")                         \
    X(OPT, cublasLtGetStatusName, const char *, (int), "cublasLtGetStatusName")              \
    GV_SYMS_LT_COMMON(X, cublasLt)

#endif
