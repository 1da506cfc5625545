/* HIP runtime subset (libamdhip64.so.N). hipError_t values from HIP's
 * hip_runtime_api.h as documented in the HIP API reference (rocm.docs.amd.com,
 * "hipError_t"): hipSuccess = 0, hipErrorOutOfMemory = 2, hipErrorNoDevice = 100
 * ("no ROCm-capable device is detected"), hipErrorNotReady = 600,
 * hipErrorIllegalAddress = 700, hipErrorLaunchFailure = 719.
 * hipGetDeviceProperties changed its struct in ROCm 6 (hipDeviceProp_tR0600,
 * exported as hipGetDevicePropertiesR0600; docs/facts/rocm-facts.md); gpuvet never reads
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
typedef struct ihipEvent_t *hipEvent_t;
typedef struct { char bytes[16]; } hipUUID; /* hip_runtime_api.h: hipUUID_t { char bytes[16]; } */

enum {
    hipSuccess = 0,
    hipErrorOutOfMemory = 2,
    hipErrorNoDevice = 100,
    hipErrorNotReady = 600,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchFailure = 719,
};
#define hipStreamNonBlocking 0x1
/* gpuvet bench (hip_bench.c), from the same header: hipErrorPeerAccessAlreadyEnabled
 * = 704; hipHostMalloc flags hipHostMallocDefault 0x0, hipHostMallocPortable 0x1;
 * hipDeviceAttribute_t (CUDA-compatible block, counted from
 * hipDeviceAttributeCudaCompatibleBegin = 0 in ROCm/HIP include/hip/hip_runtime_api.h):
 * hipDeviceAttributeL2CacheSize = 19, hipDeviceAttributeMultiprocessorCount = 63. */
#define hipErrorPeerAccessAlreadyEnabled 704
#define hipHostMallocPortable 0x1
enum { hipDeviceAttributeL2CacheSize = 19, hipDeviceAttributeMultiprocessorCount = 63 };

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
    /* the device's UUID (fleet's hardware.uuid; HIP 5.2 and later): optional */          \
    X(OPT, hipDeviceGetUuid, hipError_t, (hipUUID *, hipDevice_t), "hipDeviceGetUuid")       \
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
    X(REQ, hipStreamSynchronize, hipError_t, (hipStream_t), "hipStreamSynchronize")          \
    /* gpuvet bench (hip.c's timing primitives); optional, so that the numerics backend never  \
     * depends on them (hip_bench.c says which are needed when one is missing) */          \
    X(OPT, hipEventCreate, hipError_t, (hipEvent_t *), "hipEventCreate")                     \
    X(OPT, hipEventDestroy, hipError_t, (hipEvent_t), "hipEventDestroy")                     \
    X(OPT, hipEventRecord, hipError_t, (hipEvent_t, hipStream_t), "hipEventRecord")          \
    X(OPT, hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t),               \
      "hipEventElapsedTime")                                                                 \
    X(OPT, hipHostMalloc, hipError_t, (void **, size_t, unsigned), "hipHostMalloc",          \
      "hipHostAlloc")                                                                        \
    X(OPT, hipHostFree, hipError_t, (void *), "hipHostFree", "hipFreeHost")                  \
    X(OPT, hipMemcpyHtoDAsync, hipError_t, (hipDeviceptr_t, void *, size_t, hipStream_t),    \
      "hipMemcpyHtoDAsync")                                                                  \
    X(OPT, hipMemcpyDtoHAsync, hipError_t, (void *, hipDeviceptr_t, size_t, hipStream_t),    \
      "hipMemcpyDtoHAsync")                                                                  \
    X(OPT, hipMemcpyDtoDAsync, hipError_t,                                                   \
      (hipDeviceptr_t, hipDeviceptr_t, size_t, hipStream_t), "hipMemcpyDtoDAsync")           \
    X(OPT, hipMemsetD8Async, hipError_t, (hipDeviceptr_t, unsigned char, size_t, hipStream_t), \
      "hipMemsetD8Async")                                                                    \
    X(OPT, hipMemGetInfo, hipError_t, (size_t *, size_t *), "hipMemGetInfo")                 \
    X(OPT, hipDeviceGetAttribute, hipError_t, (int *, int, int), "hipDeviceGetAttribute")    \
    X(OPT, hipDeviceSynchronize, hipError_t, (void), "hipDeviceSynchronize")                 \
    X(OPT, hipDeviceCanAccessPeer, hipError_t, (int *, int, int), "hipDeviceCanAccessPeer")  \
    X(OPT, hipDeviceEnablePeerAccess, hipError_t, (int, unsigned),                           \
      "hipDeviceEnablePeerAccess")                                                           \
    X(OPT, hipMemcpyPeerAsync, hipError_t, (void *, int, const void *, int, size_t,          \
      hipStream_t), "hipMemcpyPeerAsync")                                                    \
    X(OPT, hipDeviceGetPCIBusId, hipError_t, (char *, int, int), "hipDeviceGetPCIBusId")

#endif
