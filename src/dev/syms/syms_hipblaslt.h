/* hipBLASLt subset (libhipblaslt.so.0 in ROCm 6.x, .so.1 in 7.x): the matmul API
 * of gpuvet's Lt GEMM path (src/dev/lt.c); the entries have cuBLASLt's shape
 * (GV_SYMS_LT_COMMON in syms_cublaslt.h). Values from hipblaslt.h 7.1.1 and
 * hipblas-common.h 7.1.0 (Debian libhipblaslt-dev, libhipblas-common-dev):
 * hipblasLtMatmulDescAttributes_t TRANSA = 0, TRANSB = 1 (int32_t);
 * hipblasLtMatrixLayoutAttribute_t BATCH_COUNT = 0 (int32_t), STRIDED_BATCH_OFFSET
 * = 1 (int64_t), TYPE = 2, ORDER = 3, ROWS = 4, COLS = 5, LD = 6;
 * hipblasLtMatmulPreferenceAttributes_t MAX_WORKSPACE_BYTES = 1 (uint64_t);
 * hipblasOperation_t HIPBLAS_OP_N = 111, HIPBLAS_OP_T = 112; hipblasComputeType_t
 * 16F = 0, 32F = 2, 32F_FAST_TF32 = 6, 64F = 7; hipDataType (library_types.h)
 * HIP_R_32F = 0, HIP_R_64F = 1, HIP_R_16F = 2, HIP_R_16BF = 14; hipblasStatus_t
 * SUCCESS = 0, INVALID_VALUE = 3, NOT_SUPPORTED = 7.
 * hipblasLtMatmulHeuristicResult_t is {hipblasLtMatmulAlgo_t algo (uint8_t
 * data[16]; size_t max_workspace_bytes); size_t workspaceSize; hipblasStatus_t
 * state; float wavesCount; int reserved[4]}: 56 bytes, workspaceSize at 24,
 * state at 32. hipblasLtGetVersion needs a handle; hipblasLtCreate without a GPU
 * ends the process (hipBLASLt 7.1.1 prints "no ROCm-capable device is detected"
 * and exits 1), so the backend creates the handle only after a device was found. */
#ifndef GV_DEV_SYMS_HIPBLASLT_H
#define GV_DEV_SYMS_HIPBLASLT_H

#include "dev/syms/syms_cublaslt.h"

enum {
    HIPBLASLT_MATMUL_DESC_TRANSA = 0,
    HIPBLASLT_MATMUL_DESC_TRANSB = 1,
    HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 0,
    HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 1,
    HIPBLASLT_MATRIX_LAYOUT_TYPE = 2,
    HIPBLASLT_MATRIX_LAYOUT_ROWS = 4,
    HIPBLASLT_MATRIX_LAYOUT_COLS = 5,
    HIPBLASLT_MATRIX_LAYOUT_LD = 6,
    HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
};
enum { HIPBLAS_OP_N = 111, HIPBLAS_OP_T = 112 };
enum {
    HIPBLAS_COMPUTE_16F = 0,
    HIPBLAS_COMPUTE_32F = 2,
    HIPBLAS_COMPUTE_32F_FAST_TF32 = 6,
    HIPBLAS_COMPUTE_64F = 7,
};
enum { HIP_R_32F = 0, HIP_R_64F = 1, HIP_R_16F = 2, HIP_R_16BF = 14 };
#define GV_HIPBLASLT_RESULT_SIZE 56
#define GV_HIPBLASLT_RESULT_WS_OFFSET 24
#define GV_HIPBLASLT_RESULT_STATE_OFFSET 32

#define GV_SYMS_HIPBLASLT(X)                                                                 \
    X(OPT, hipblasLtGetVersion, int, (void *, int *), "hipblasLtGetVersion")                 \
    GV_SYMS_LT_COMMON(X, hipblasLt)

#endif
