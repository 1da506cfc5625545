/* RCCL subset (librccl.so.1): ROCm's NCCL, which exports NCCL's C API under
 * NCCL's names (ncclAllReduce, ...) with hipStream_t for the stream. Checked
 * against RCCL's public header (ROCm/rccl src/nccl.h.in): the same types and
 * values as syms_nccl.h (ncclSuccess = 0, ncclSum = 0, ncclFloat32 = 7,
 * 128-byte ncclUniqueId) and the same signatures for every call in
 * GV_SYMS_NCCL_API; ncclGetLastError and ncclInProgress came with RCCL's
 * NCCL 2.13+ base (optional here, as for NCCL). Its all-to-all is its own
 * ncclAllToAll (capital T), of the shape of NCCL 2.28's ncclAlltoAll; it fills
 * the same field. ncclGetVersion's code follows NCCL_VERSION as in syms_nccl.h.
 * The list fills struct gv_api_nccl (vendor.h), so that src/dev/coll.c drives
 * either library with one code path. */
#ifndef GV_DEV_SYMS_RCCL_H
#define GV_DEV_SYMS_RCCL_H

#include "dev/syms/syms_nccl.h"

#define GV_SYMS_RCCL(X)                                                                      \
    GV_SYMS_NCCL_API(X)                                                                      \
    X(OPT, ncclAlltoAll, ncclResult_t,                                                       \
      (const void *, void *, size_t, ncclDataType_t, ncclComm_t, void *), "ncclAllToAll")

#endif
