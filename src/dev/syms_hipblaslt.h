/* hipBLASLt subset (libhipblaslt.so.N, ROCm >= 6.0): located and reported; its
 * version needs a handle, so it is read only when a device is open. */
#ifndef GV_DEV_SYMS_HIPBLASLT_H
#define GV_DEV_SYMS_HIPBLASLT_H

typedef struct hipblasLtContext *hipblasLtHandle_t;

#define GV_SYMS_HIPBLASLT(X)                                                                 \
    X(REQ, hipblasLtCreate, int, (hipblasLtHandle_t *), "hipblasLtCreate")                   \
    X(REQ, hipblasLtDestroy, int, (hipblasLtHandle_t), "hipblasLtDestroy")                   \
    X(OPT, hipblasLtGetVersion, int, (hipblasLtHandle_t, int *), "hipblasLtGetVersion")

#endif
