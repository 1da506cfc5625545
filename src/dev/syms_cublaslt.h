/* cuBLASLt subset (libcublasLt.so.N): only its version is used (gpuvet's GEMM goes
 * through cuBLAS, which itself dispatches to cuBLASLt kernels). */
#ifndef GV_DEV_SYMS_CUBLASLT_H
#define GV_DEV_SYMS_CUBLASLT_H

#include <stddef.h>

#define GV_SYMS_CUBLASLT(X) X(REQ, cublasLtGetVersion, size_t, (void), "cublasLtGetVersion")

#endif
