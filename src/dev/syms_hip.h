/* HIP runtime subset (libamdhip64.so.N). hipError_t values from HIP's
 * hip_runtime_api.h as documented in the HIP API reference (rocm.docs.amd.com,
 * "hipError_t"): hipSuccess = 0, hipErrorOutOfMemory = 2, hipErrorNoDevice = 100
 * ("no ROCm-capable device is detected"), hipErrorNotReady = 600,
 * hipErrorIllegalAddress = 700, hipErrorLaunchFailure = 719.
 * hipGetDeviceProperties changed its struct in ROCm 6 (hipDeviceProp_tR0600,
 * exported as hipGetDevicePropertiesR0600; rocm-facts.md); gpuvet never reads
 * that struct by layout: it passes a large zeroed buffer and takes the
 * NUL-terminated "gfx..." string (gcnArchName) from it. */
#ifndef GV_DEV_SYMS_HIP_H
#define GV_DEV_SYMS_HIP_H

#include <stddef.h>

typedef int hipError_t;
typedef int hipDevice_t;
typedef void *hipDeviceptr_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;

enum {
    hipSuccess = 0,
    hipErrorOutOfMemory = 2,
    hipErrorNoDevice = 100,
    hipErrorNotReady = 600,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchFailure = 719,
};
#define hipStreamNonBlocking 0x1

#define GV_SYMS_HIP(X)                                                                       \
    X(REQ, hipInit, hipError_t, (unsigned), "hipInit")                                       \
    X(REQ, hipRuntimeGetVersion, hipError_t, (int *), "hipRuntimeGetVersion")                \
    X(REQ, hipDriverGetVersion, hipError_t, (int *), "hipDriverGetVersion")                  \
    X(REQ, hipGetErrorName, const char *, (hipError_t), "hipGetErrorName")                   \
    X(REQ, hipGetErrorString, const char *, (hipError_t), "hipGetErrorString")               \
    X(REQ, hipGetDeviceCount, hipError_t, (int *), "hipGetDeviceCount")                      \
    X(REQ, hipSetDevice, hipError_t, (int), "hipSetDevice")                                  \
    X(REQ, hipDeviceReset, hipError_t, (void), "hipDeviceReset")                             \
    X(REQ, hipDeviceGetName, hipError_t, (char *, int, hipDevice_t), "hipDeviceGetName")     \
    X(REQ, hipDeviceTotalMem, hipError_t, (size_t *, hipDevice_t), "hipDeviceTotalMem")      \
    X(REQ, hipGetDeviceProperties, hipError_t, (void *, int), "hipGetDevicePropertiesR0600", \
      "hipGetDeviceProperties")                                                              \
    X(REQ, hipMalloc, hipError_t, (void **, size_t), "hipMalloc")                            \
    X(REQ, hipFree, hipError_t, (void *), "hipFree")                                         \
    X(REQ, hipMemcpyHtoD, hipError_t, (hipDeviceptr_t, void *, size_t), "hipMemcpyHtoD")     \
    X(REQ, hipMemcpyDtoH, hipError_t, (void *, hipDeviceptr_t, size_t), "hipMemcpyDtoH")     \
    X(REQ, hipModuleLoadData, hipError_t, (hipModule_t *, const void *), "hipModuleLoadData") \
    X(REQ, hipModuleUnload, hipError_t, (hipModule_t), "hipModuleUnload")                    \
    X(REQ, hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *),   \
      "hipModuleGetFunction")                                                                \
    X(REQ, hipModuleLaunchKernel, hipError_t,                                                \
      (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,  \
       hipStream_t, void **, void **),                                                       \
      "hipModuleLaunchKernel")                                                               \
    X(REQ, hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned),                  \
      "hipStreamCreateWithFlags")                                                            \
    X(REQ, hipStreamDestroy, hipError_t, (hipStream_t), "hipStreamDestroy")                  \
    X(REQ, hipStreamQuery, hipError_t, (hipStream_t), "hipStreamQuery")                      \
    X(REQ, hipStreamSynchronize, hipError_t, (hipStream_t), "hipStreamSynchronize")

#endif
