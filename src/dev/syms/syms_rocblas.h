/* rocBLAS subset (librocblas.so.N). Values from rocblas-types.h as documented in
 * the rocBLAS API reference: rocblas_status_success = 0; rocblas_operation_none = 111,
 * rocblas_operation_transpose = 112; rocblas_datatype_f16_r = 150, f32_r = 151,
 * f64_r = 152, bf16_r = 168; rocblas_gemm_algo_standard = 0; rocblas_gemm_flags_none = 0.
 * rocblas_int is 32-bit (LP64 build), rocblas_stride is int64_t.
 * rocblas_gemm_ex (gpuvet bench, optional): (handle, transA, transB, m, n, k, alpha,
 * a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, d, d_type, ldd, compute_type,
 * algo, solution_index, flags), rocblas-functions.h. */
#ifndef GV_DEV_SYMS_ROCBLAS_H
#define GV_DEV_SYMS_ROCBLAS_H

#include <stddef.h>
#include <stdint.h>

typedef int rocblas_status;
typedef struct _rocblas_handle *rocblas_handle;
enum { rocblas_operation_none = 111, rocblas_operation_transpose = 112 };
enum {
    rocblas_datatype_f16_r = 150,
    rocblas_datatype_f32_r = 151,
    rocblas_datatype_f64_r = 152,
    rocblas_datatype_bf16_r = 168,
};

#define GV_SYMS_ROCBLAS(X)                                                                   \
    X(REQ, rocblas_get_version_string_size, rocblas_status, (size_t *),                      \
      "rocblas_get_version_string_size")                                                     \
    X(REQ, rocblas_get_version_string, rocblas_status, (char *, size_t),                     \
      "rocblas_get_version_string")                                                          \
    X(OPT, rocblas_status_to_string, const char *, (rocblas_status), "rocblas_status_to_string") \
    X(REQ, rocblas_create_handle, rocblas_status, (rocblas_handle *), "rocblas_create_handle") \
    X(REQ, rocblas_destroy_handle, rocblas_status, (rocblas_handle), "rocblas_destroy_handle") \
    X(REQ, rocblas_set_stream, rocblas_status, (rocblas_handle, void *), "rocblas_set_stream") \
    X(REQ, rocblas_gemm_strided_batched_ex, rocblas_status,                                  \
      (rocblas_handle, int, int, int, int, int, const void *, const void *, int, int,        \
       int64_t, const void *, int, int, int64_t, const void *, const void *, int, int,       \
       int64_t, void *, int, int, int64_t, int, int, int, int32_t, uint32_t),                \
      "rocblas_gemm_strided_batched_ex")                                                     \
    X(OPT, rocblas_gemm_ex, rocblas_status,                                                  \
      (rocblas_handle, int, int, int, int, int, const void *, const void *, int, int,        \
       const void *, int, int, const void *, const void *, int, int, void *, int, int, int,  \
       int, int32_t, uint32_t),                                                              \
      "rocblas_gemm_ex")

#endif
