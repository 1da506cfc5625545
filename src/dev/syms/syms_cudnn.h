/* cuDNN subset (libcudnn.so.N): the legacy convolution API, present in cuDNN 7-9.
 * Values from the cuDNN API reference: cudnnTensorFormat_t CUDNN_TENSOR_NCHW = 0;
 * cudnnDataType_t CUDNN_DATA_FLOAT = 0, CUDNN_DATA_DOUBLE = 1, CUDNN_DATA_HALF = 2,
 * CUDNN_DATA_BFLOAT16 = 9; cudnnConvolutionMode_t CUDNN_CROSS_CORRELATION = 1;
 * cudnnMathType_t CUDNN_DEFAULT_MATH = 0, CUDNN_FMA_MATH = 3 (no tensor cores, no TF32);
 * cudnnConvolutionFwdAlgo_t CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM = 0. */
#ifndef GV_DEV_SYMS_CUDNN_H
#define GV_DEV_SYMS_CUDNN_H

#include <stddef.h>

typedef int cudnnStatus_t;
typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
enum { CUDNN_TENSOR_NCHW = 0 };
enum { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_DOUBLE = 1 };
enum { CUDNN_CROSS_CORRELATION = 1 };
enum { CUDNN_DEFAULT_MATH = 0, CUDNN_FMA_MATH = 3 };
enum { CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM = 0 };
/* cudnnConvolutionFwdAlgoPerf_t (cudnn_cnn.h): {algo; status; float time; size_t
 * memory; determinism; mathType; int reserved[3]}: 48 bytes, algo at 0, status
 * at 4, memory at 16, mathType at 28. */
#define GV_CUDNN_PERF_SIZE 48
#define GV_CUDNN_PERF_STATUS 4
#define GV_CUDNN_PERF_MEMORY 16
#define GV_CUDNN_PERF_MATH 28

#define GV_SYMS_CUDNN(X)                                                                     \
    X(REQ, cudnnGetVersion, size_t, (void), "cudnnGetVersion")                               \
    X(REQ, cudnnGetErrorString, const char *, (cudnnStatus_t), "cudnnGetErrorString")        \
    X(REQ, cudnnCreate, cudnnStatus_t, (cudnnHandle_t *), "cudnnCreate")                     \
    X(REQ, cudnnDestroy, cudnnStatus_t, (cudnnHandle_t), "cudnnDestroy")                     \
    X(REQ, cudnnSetStream, cudnnStatus_t, (cudnnHandle_t, void *), "cudnnSetStream")         \
    X(REQ, cudnnCreateTensorDescriptor, cudnnStatus_t, (cudnnTensorDescriptor_t *),          \
      "cudnnCreateTensorDescriptor")                                                         \
    X(REQ, cudnnDestroyTensorDescriptor, cudnnStatus_t, (cudnnTensorDescriptor_t),           \
      "cudnnDestroyTensorDescriptor")                                                        \
    X(REQ, cudnnSetTensor4dDescriptor, cudnnStatus_t,                                        \
      (cudnnTensorDescriptor_t, int, int, int, int, int, int), "cudnnSetTensor4dDescriptor") \
    X(REQ, cudnnCreateFilterDescriptor, cudnnStatus_t, (cudnnFilterDescriptor_t *),          \
      "cudnnCreateFilterDescriptor")                                                         \
    X(REQ, cudnnDestroyFilterDescriptor, cudnnStatus_t, (cudnnFilterDescriptor_t),           \
      "cudnnDestroyFilterDescriptor")                                                        \
    X(REQ, cudnnSetFilter4dDescriptor, cudnnStatus_t,                                        \
      (cudnnFilterDescriptor_t, int, int, int, int, int, int), "cudnnSetFilter4dDescriptor") \
    X(REQ, cudnnCreateConvolutionDescriptor, cudnnStatus_t,                                  \
      (cudnnConvolutionDescriptor_t *), "cudnnCreateConvolutionDescriptor")                  \
    X(REQ, cudnnDestroyConvolutionDescriptor, cudnnStatus_t, (cudnnConvolutionDescriptor_t), \
      "cudnnDestroyConvolutionDescriptor")                                                   \
    X(REQ, cudnnSetConvolution2dDescriptor, cudnnStatus_t,                                   \
      (cudnnConvolutionDescriptor_t, int, int, int, int, int, int, int, int),                \
      "cudnnSetConvolution2dDescriptor")                                                     \
    X(REQ, cudnnSetConvolutionMathType, cudnnStatus_t, (cudnnConvolutionDescriptor_t, int),  \
      "cudnnSetConvolutionMathType")                                                         \
    X(REQ, cudnnGetConvolutionForwardWorkspaceSize, cudnnStatus_t,                           \
      (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,                      \
       cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, size_t *),                \
      "cudnnGetConvolutionForwardWorkspaceSize")                                             \
    X(OPT, cudnnGetConvolutionForwardAlgorithm_v7, cudnnStatus_t,                            \
      (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,                      \
       cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int *, void *),           \
      "cudnnGetConvolutionForwardAlgorithm_v7")                                              \
    X(REQ, cudnnConvolutionForward, cudnnStatus_t,                                           \
      (cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *,                   \
       cudnnFilterDescriptor_t, const void *, cudnnConvolutionDescriptor_t, int, void *,     \
       size_t, const void *, cudnnTensorDescriptor_t, void *),                               \
      "cudnnConvolutionForward")

#endif
