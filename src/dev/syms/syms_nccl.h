/* NCCL subset (libnccl.so.2). Types and values from nccl.h (NVIDIA/nccl
 * src/nccl.h.in; checked against the nccl.h of NCCL 2.28.9 shipped with CUDA 13.0):
 *   ncclResult_t: ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2,
 *     ncclInternalError = 3, ncclInvalidArgument = 4, ncclInvalidUsage = 5,
 *     ncclRemoteError = 6, ncclInProgress = 7, ncclTimeout = 8 (2.28);
 *   ncclRedOp_t: ncclSum = 0;  ncclDataType_t: ncclFloat32 = 7;
 *   ncclUniqueId: 128 bytes (NCCL_UNIQUE_ID_BYTES);
 *   ncclGetVersion's code: NCCL_VERSION(X,Y,Z) = X*1000+Y*100+Z up to 2.8,
 *     X*10000+Y*100+Z from 2.9 on.
 * The stream arguments are cudaStream_t (the driver's CUstream: the runtime
 * and driver stream types are the same object). ncclAlltoAll is NCCL 2.28's;
 * older libraries lack it and all-to-all is grouped ncclSend/ncclRecv (as
 * nccl-tests does there).
 *
 * RCCL (syms_rccl.h) keeps this C API and its names: GV_SYMS_NCCL_API is the
 * part both libraries export alike, and both lists fill struct gv_api_nccl. */
#ifndef GV_DEV_SYMS_NCCL_H
#define GV_DEV_SYMS_NCCL_H

#include <stddef.h>

typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct ncclComm *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;

enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
};
enum { ncclSum = 0 };
enum { ncclFloat32 = 7 };

#define GV_SYMS_NCCL_API(X)                                                                  \
    X(REQ, ncclGetVersion, ncclResult_t, (int *), "ncclGetVersion")                          \
    X(REQ, ncclGetErrorString, const char *, (ncclResult_t), "ncclGetErrorString")           \
    X(OPT, ncclGetLastError, const char *, (ncclComm_t), "ncclGetLastError")                 \
    X(OPT, ncclGetUniqueId, ncclResult_t, (ncclUniqueId *), "ncclGetUniqueId")               \
    X(REQ, ncclCommInitAll, ncclResult_t, (ncclComm_t *, int, const int *), "ncclCommInitAll") \
    X(REQ, ncclCommDestroy, ncclResult_t, (ncclComm_t), "ncclCommDestroy")                   \
    X(REQ, ncclCommAbort, ncclResult_t, (ncclComm_t), "ncclCommAbort")                       \
    X(OPT, ncclCommCount, ncclResult_t, (ncclComm_t, int *), "ncclCommCount")                \
    X(OPT, ncclCommCuDevice, ncclResult_t, (ncclComm_t, int *), "ncclCommCuDevice")          \
    X(OPT, ncclCommUserRank, ncclResult_t, (ncclComm_t, int *), "ncclCommUserRank")          \
    X(REQ, ncclCommGetAsyncError, ncclResult_t, (ncclComm_t, ncclResult_t *),                \
      "ncclCommGetAsyncError")                                                               \
    X(REQ, ncclGroupStart, ncclResult_t, (void), "ncclGroupStart")                           \
    X(REQ, ncclGroupEnd, ncclResult_t, (void), "ncclGroupEnd")                               \
    X(REQ, ncclAllReduce, ncclResult_t,                                                      \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, void *),       \
      "ncclAllReduce")                                                                       \
    X(REQ, ncclAllGather, ncclResult_t,                                                      \
      (const void *, void *, size_t, ncclDataType_t, ncclComm_t, void *), "ncclAllGather")   \
    X(REQ, ncclReduceScatter, ncclResult_t,                                                  \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, void *),       \
      "ncclReduceScatter")                                                                   \
    X(REQ, ncclBroadcast, ncclResult_t,                                                      \
      (const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, void *), "ncclBroadcast") \
    X(REQ, ncclSend, ncclResult_t, (const void *, size_t, ncclDataType_t, int, ncclComm_t, void *), \
      "ncclSend")                                                                            \
    X(REQ, ncclRecv, ncclResult_t, (void *, size_t, ncclDataType_t, int, ncclComm_t, void *), \
      "ncclRecv")

#define GV_SYMS_NCCL(X)                                                                      \
    GV_SYMS_NCCL_API(X)                                                                      \
    X(OPT, ncclAlltoAll, ncclResult_t,                                                       \
      (const void *, void *, size_t, ncclDataType_t, ncclComm_t, void *), "ncclAlltoAll")

#endif
