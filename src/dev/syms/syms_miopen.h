/* MIOpen subset (libMIOpen.so.1): the handle, 4-D tensor and convolution
 * descriptors and the "find, then run" forward convolution.
 *
 * Types, enum values and signatures follow MIOpen's public header
 * include/miopen/miopen.h (ROCm/MIOpen, a 3.x header: stored version at commit
 * 003eaf537b9b, where miopenInt8x4 = 4 is already marked "support discontinued"):
 *   miopenStatus_t: miopenStatusSuccess = 0, NotInitialized 1, InvalidValue 2, BadParm 3,
 *     AllocFailed 4, InternalError 5, NotImplemented 6, UnknownError 7, UnsupportedOp 8,
 *     GpuOperationsSkipped 9, VersionMismatch 10;
 *   miopenDataType_t: miopenHalf = 0, miopenFloat = 1, miopenInt32 = 2, miopenInt8 = 3,
 *     miopenBFloat16 = 5, miopenDouble = 6;
 *   miopenConvolutionMode_t: miopenConvolution = 0 ("Cross-Correlation convolution",
 *     the same operation as CUDNN_CROSS_CORRELATION and gpuvet's GV_OP_CONV2D);
 *   miopenConvFwdAlgorithm_t: GEMM = 0, Direct = 1, FFT = 2, Winograd = 3, ImplicitGEMM = 5;
 *   miopenConvAlgoPerf_t: { union { miopenConvFwdAlgorithm_t fwd_algo; ...bwd_weights_algo;
 *     ...bwd_data_algo; }; float time; size_t memory; } (the same layout in the MIOpen 2.x
 *     header: it has not changed since the first release).
 * Every enum is a C enum (int-sized); the union holds only enums, so it is an int.
 * The tensor tests (tests/cli/hip_fixture.sh) check the data type values against
 * the real libMIOpen at run time through miopenGetTensorNumBytes, and the
 * convolution descriptor against gpuvet's output shape through
 * miopenGetConvolutionForwardOutputDim.
 *
 * REQ: present in every MIOpen release that has the find/run convolution API
 * (1.x onwards). OPT: the error strings, stream set-up (one of the two is
 * needed and checked at handle creation), and the host-only queries used for
 * cross-checks. */
#ifndef GV_DEV_SYMS_MIOPEN_H
#define GV_DEV_SYMS_MIOPEN_H

#include <stdbool.h>
#include <stddef.h>

typedef int miopenStatus_t;
typedef struct miopenHandle *miopenHandle_t;
typedef struct miopenTensorDescriptor *miopenTensorDescriptor_t;
typedef struct miopenConvolutionDescriptor *miopenConvolutionDescriptor_t;
enum { miopenStatusSuccess = 0 };
enum { miopenHalf = 0, miopenFloat = 1, miopenInt32 = 2, miopenInt8 = 3, miopenBFloat16 = 5,
       miopenDouble = 6 };
enum { miopenConvolution = 0 };
enum {
    miopenConvolutionFwdAlgoGEMM = 0,
    miopenConvolutionFwdAlgoDirect = 1,
    miopenConvolutionFwdAlgoFFT = 2,
    miopenConvolutionFwdAlgoWinograd = 3,
    miopenConvolutionFwdAlgoImplicitGEMM = 5,
};
typedef struct {
    union {
        int fwd_algo;
        int bwd_weights_algo;
        int bwd_data_algo;
    };
    float time;
    size_t memory;
} miopenConvAlgoPerf_t;

#define GV_SYMS_MIOPEN(X)                                                                    \
    X(REQ, miopenGetVersion, miopenStatus_t, (size_t *, size_t *, size_t *),                 \
      "miopenGetVersion")                                                                    \
    X(OPT, miopenGetErrorString, const char *, (miopenStatus_t), "miopenGetErrorString")     \
    X(REQ, miopenCreate, miopenStatus_t, (miopenHandle_t *), "miopenCreate")                 \
    X(OPT, miopenCreateWithStream, miopenStatus_t, (miopenHandle_t *, void *),               \
      "miopenCreateWithStream")                                                              \
    X(REQ, miopenDestroy, miopenStatus_t, (miopenHandle_t), "miopenDestroy")                 \
    X(OPT, miopenSetStream, miopenStatus_t, (miopenHandle_t, void *), "miopenSetStream")     \
    X(REQ, miopenCreateTensorDescriptor, miopenStatus_t, (miopenTensorDescriptor_t *),       \
      "miopenCreateTensorDescriptor")                                                        \
    X(REQ, miopenSet4dTensorDescriptor, miopenStatus_t,                                      \
      (miopenTensorDescriptor_t, int, int, int, int, int), "miopenSet4dTensorDescriptor")    \
    X(REQ, miopenDestroyTensorDescriptor, miopenStatus_t, (miopenTensorDescriptor_t),        \
      "miopenDestroyTensorDescriptor")                                                       \
    X(OPT, miopenGetTensorNumBytes, miopenStatus_t, (miopenTensorDescriptor_t, size_t *),    \
      "miopenGetTensorNumBytes")                                                             \
    X(REQ, miopenCreateConvolutionDescriptor, miopenStatus_t,                                \
      (miopenConvolutionDescriptor_t *), "miopenCreateConvolutionDescriptor")                \
    X(REQ, miopenInitConvolutionDescriptor, miopenStatus_t,                                  \
      (miopenConvolutionDescriptor_t, int, int, int, int, int, int, int),                    \
      "miopenInitConvolutionDescriptor")                                                     \
    X(REQ, miopenDestroyConvolutionDescriptor, miopenStatus_t,                               \
      (miopenConvolutionDescriptor_t), "miopenDestroyConvolutionDescriptor")                 \
    X(OPT, miopenGetConvolutionForwardOutputDim, miopenStatus_t,                             \
      (miopenConvolutionDescriptor_t, miopenTensorDescriptor_t, miopenTensorDescriptor_t,    \
       int *, int *, int *, int *),                                                          \
      "miopenGetConvolutionForwardOutputDim")                                                \
    X(REQ, miopenConvolutionForwardGetWorkSpaceSize, miopenStatus_t,                         \
      (miopenHandle_t, miopenTensorDescriptor_t, miopenTensorDescriptor_t,                   \
       miopenConvolutionDescriptor_t, miopenTensorDescriptor_t, size_t *),                   \
      "miopenConvolutionForwardGetWorkSpaceSize")                                            \
    X(REQ, miopenFindConvolutionForwardAlgorithm, miopenStatus_t,                            \
      (miopenHandle_t, miopenTensorDescriptor_t, const void *, miopenTensorDescriptor_t,     \
       const void *, miopenConvolutionDescriptor_t, miopenTensorDescriptor_t, void *, int,   \
       int *, miopenConvAlgoPerf_t *, void *, size_t, bool),                                 \
      "miopenFindConvolutionForwardAlgorithm")                                               \
    X(REQ, miopenConvolutionForward, miopenStatus_t,                                         \
      (miopenHandle_t, const void *, miopenTensorDescriptor_t, const void *,                 \
       miopenTensorDescriptor_t, const void *, miopenConvolutionDescriptor_t, int,           \
       const void *, miopenTensorDescriptor_t, void *, void *, size_t),                      \
      "miopenConvolutionForward")

#endif
