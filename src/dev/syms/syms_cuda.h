/* CUDA driver API subset (libcuda.so.1). Types and values from the CUDA driver
 * API reference (docs.nvidia.com/cuda/cuda-driver-api, "Data types used by CUDA
 * driver", enum CUresult and CUdevice_attribute); versioned exports (_v2) as
 * cuda.h maps them since CUDA 3.2/4.0 (#define cuMemAlloc cuMemAlloc_v2). */
#ifndef GV_DEV_SYMS_CUDA_H
#define GV_DEV_SYMS_CUDA_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct { unsigned char bytes[16]; } CUuuid; /* cuda.h: struct CUuuid_st { char bytes[16]; } */

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_STUB_LIBRARY = 34, /* "the CUDA driver is a stub library" (CUDA >= 11.1) */
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_LAUNCH_FAILED = 719,
};
/* CUdevice_attribute values */
enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};
#define CU_STREAM_NON_BLOCKING 0x1
/* cuda.h: CUevent_flags CU_EVENT_DEFAULT = 0; cuMemHostAlloc flags
 * CU_MEMHOSTALLOC_PORTABLE 0x01, CU_MEMHOSTALLOC_DEVICEMAP 0x02; CUresult
 * CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704 */
#define CU_EVENT_DEFAULT 0x0
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

#define GV_SYMS_CUDA(X)                                                                      \
    X(REQ, cuInit, CUresult, (unsigned), "cuInit")                                           \
    X(REQ, cuDriverGetVersion, CUresult, (int *), "cuDriverGetVersion")                      \
    X(REQ, cuGetErrorName, CUresult, (CUresult, const char **), "cuGetErrorName")            \
    X(REQ, cuGetErrorString, CUresult, (CUresult, const char **), "cuGetErrorString")        \
    X(REQ, cuDeviceGetCount, CUresult, (int *), "cuDeviceGetCount")                          \
    X(REQ, cuDeviceGet, CUresult, (CUdevice *, int), "cuDeviceGet")                          \
    X(REQ, cuDeviceGetName, CUresult, (char *, int, CUdevice), "cuDeviceGetName")            \
    X(REQ, cuDeviceGetAttribute, CUresult, (int *, int, CUdevice), "cuDeviceGetAttribute")   \
    X(REQ, cuDeviceTotalMem, CUresult, (size_t *, CUdevice), "cuDeviceTotalMem_v2")          \
    /* the device's UUID (fleet's hardware.uuid); _v2 since CUDA 11.4, the first   \
     * name before: optional, an older driver without it leaves uuid absent */        \
    X(OPT, cuDeviceGetUuid, CUresult, (CUuuid *, CUdevice), "cuDeviceGetUuid_v2",            \
      "cuDeviceGetUuid")                                                                     \
    X(REQ, cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice),                     \
      "cuDevicePrimaryCtxRetain")                                                            \
    X(REQ, cuDevicePrimaryCtxRelease, CUresult, (CUdevice), "cuDevicePrimaryCtxRelease_v2",  \
      "cuDevicePrimaryCtxRelease")                                                           \
    X(REQ, cuDevicePrimaryCtxReset, CUresult, (CUdevice), "cuDevicePrimaryCtxReset_v2",      \
      "cuDevicePrimaryCtxReset")                                                             \
    X(REQ, cuCtxSetCurrent, CUresult, (CUcontext), "cuCtxSetCurrent")                        \
    X(REQ, cuCtxSynchronize, CUresult, (void), "cuCtxSynchronize")                           \
    X(REQ, cuMemAlloc, CUresult, (CUdeviceptr *, size_t), "cuMemAlloc_v2")                   \
    X(REQ, cuMemFree, CUresult, (CUdeviceptr), "cuMemFree_v2")                               \
    X(REQ, cuMemGetInfo, CUresult, (size_t *, size_t *), "cuMemGetInfo_v2")                  \
    X(REQ, cuMemcpyHtoD, CUresult, (CUdeviceptr, const void *, size_t), "cuMemcpyHtoD_v2")   \
    X(REQ, cuMemcpyDtoH, CUresult, (void *, CUdeviceptr, size_t), "cuMemcpyDtoH_v2")         \
    X(REQ, cuModuleLoadData, CUresult, (CUmodule *, const void *), "cuModuleLoadData")       \
    X(REQ, cuModuleUnload, CUresult, (CUmodule), "cuModuleUnload")                           \
    X(REQ, cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *),           \
      "cuModuleGetFunction")                                                                 \
    X(REQ, cuFuncSetAttribute, CUresult, (CUfunction, int, int), "cuFuncSetAttribute")       \
    X(REQ, cuLaunchKernel, CUresult,                                                         \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,     \
       CUstream, void **, void **),                                                          \
      "cuLaunchKernel")                                                                      \
    X(REQ, cuStreamCreate, CUresult, (CUstream *, unsigned), "cuStreamCreate")               \
    X(REQ, cuStreamDestroy, CUresult, (CUstream), "cuStreamDestroy_v2")                      \
    X(REQ, cuStreamQuery, CUresult, (CUstream), "cuStreamQuery")                             \
    X(REQ, cuStreamSynchronize, CUresult, (CUstream), "cuStreamSynchronize")                \
    /* gpuvet bench (cuda.c's timing primitives, src/bench/coll.c); optional, so that the \
     * numerics backend never depends on them. cuEventElapsedTime_v2: CUDA 12.8+, \
     * same signature */                                                              \
    X(OPT, cuEventCreate, CUresult, (CUevent *, unsigned), "cuEventCreate")                  \
    X(OPT, cuEventDestroy, CUresult, (CUevent), "cuEventDestroy_v2", "cuEventDestroy")       \
    X(OPT, cuEventRecord, CUresult, (CUevent, CUstream), "cuEventRecord")                    \
    X(OPT, cuEventQuery, CUresult, (CUevent), "cuEventQuery")                                \
    X(OPT, cuEventSynchronize, CUresult, (CUevent), "cuEventSynchronize")                    \
    X(OPT, cuEventElapsedTime, CUresult, (float *, CUevent, CUevent),                       \
      "cuEventElapsedTime_v2", "cuEventElapsedTime")                                         \
    X(OPT, cuMemHostAlloc, CUresult, (void **, size_t, unsigned), "cuMemHostAlloc")          \
    X(OPT, cuMemFreeHost, CUresult, (void *), "cuMemFreeHost")                               \
    X(OPT, cuMemHostGetDevicePointer, CUresult, (CUdeviceptr *, void *, unsigned),          \
      "cuMemHostGetDevicePointer_v2")                                                        \
    X(OPT, cuMemcpyHtoDAsync, CUresult, (CUdeviceptr, const void *, size_t, CUstream),      \
      "cuMemcpyHtoDAsync_v2")                                                                \
    X(OPT, cuMemcpyDtoHAsync, CUresult, (void *, CUdeviceptr, size_t, CUstream),            \
      "cuMemcpyDtoHAsync_v2")                                                                \
    X(OPT, cuMemcpyDtoDAsync, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream),       \
      "cuMemcpyDtoDAsync_v2")                                                                \
    X(OPT, cuMemsetD8Async, CUresult, (CUdeviceptr, unsigned char, size_t, CUstream),       \
      "cuMemsetD8Async")                                                                     \
    X(OPT, cuMemsetD32, CUresult, (CUdeviceptr, unsigned, size_t), "cuMemsetD32_v2")         \
    X(OPT, cuMemsetD32Async, CUresult, (CUdeviceptr, unsigned, size_t, CUstream),            \
      "cuMemsetD32Async")                                                                    \
    X(OPT, cuDeviceCanAccessPeer, CUresult, (int *, CUdevice, CUdevice),                    \
      "cuDeviceCanAccessPeer")                                                               \
    X(OPT, cuCtxEnablePeerAccess, CUresult, (CUcontext, unsigned), "cuCtxEnablePeerAccess")  \
    X(OPT, cuMemcpyPeerAsync, CUresult,                                                      \
      (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream),                    \
      "cuMemcpyPeerAsync")                                                                   \
    X(OPT, cuDeviceGetPCIBusId, CUresult, (char *, int, CUdevice), "cuDeviceGetPCIBusId")

#endif
