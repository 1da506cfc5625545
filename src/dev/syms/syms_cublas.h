/* cuBLAS subset (libcublas.so.N). Values from the cuBLAS reference
 * (docs.nvidia.com/cuda/cublas): cublasOperation_t CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;
 * cublasMath_t CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_PEDANTIC_MATH = 2,
 * CUBLAS_TF32_TENSOR_OP_MATH = 3, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16;
 * cublasComputeType_t CUBLAS_COMPUTE_16F = 64, 32F = 68, 64F = 70, 32F_FAST_TF32 = 77;
 * cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT = -1; libraryPropertyType MAJOR_VERSION = 0,
 * MINOR_VERSION = 1, PATCH_LEVEL = 2; cudaDataType_t (library_types.h) CUDA_R_32F = 0,
 * CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14, CUDA_R_8F_E4M3 = 28, CUDA_R_8F_E5M2 = 29.
 * The _v2 names are what cublas_v2.h maps the plain names to. */
#ifndef GV_DEV_SYMS_CUBLAS_H
#define GV_DEV_SYMS_CUBLAS_H

typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum {
    CUBLAS_DEFAULT_MATH = 0,
    CUBLAS_PEDANTIC_MATH = 2,
    CUBLAS_TF32_TENSOR_OP_MATH = 3,
    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
};
enum {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_64F = 70,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
};
enum {
    CUDA_R_32F = 0,
    CUDA_R_64F = 1,
    CUDA_R_16F = 2,
    CUDA_R_16BF = 14,
    CUDA_R_8F_E4M3 = 28,
    CUDA_R_8F_E5M2 = 29,
};
#define CUBLAS_GEMM_DEFAULT (-1)

#define GV_SYMS_CUBLAS(X)                                                                    \
    X(REQ, cublasCreate, cublasStatus_t, (cublasHandle_t *), "cublasCreate_v2")              \
    X(REQ, cublasDestroy, cublasStatus_t, (cublasHandle_t), "cublasDestroy_v2")              \
    X(REQ, cublasGetProperty, cublasStatus_t, (int, int *), "cublasGetProperty")             \
    X(REQ, cublasSetStream, cublasStatus_t, (cublasHandle_t, void *), "cublasSetStream_v2")  \
    X(REQ, cublasSetMathMode, cublasStatus_t, (cublasHandle_t, int), "cublasSetMathMode")    \
    X(OPT, cublasGetStatusName, const char *, (cublasStatus_t), "cublasGetStatusName")       \
    X(REQ, cublasSgemmStridedBatched, cublasStatus_t,                                        \
      (cublasHandle_t, int, int, int, int, int, const float *, const float *, int,           \
       long long, const float *, int, long long, const float *, float *, int, long long,     \
       int),                                                                                 \
      "cublasSgemmStridedBatched")                                                           \
    X(REQ, cublasGemmStridedBatchedEx, cublasStatus_t,                                       \
      (cublasHandle_t, int, int, int, int, int, const void *, const void *, int, int,        \
       long long, const void *, int, int, long long, const void *, void *, int, int,         \
       long long, int, int, int),                                                            \
      "cublasGemmStridedBatchedEx")

#endif
