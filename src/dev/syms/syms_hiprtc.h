/* hipRTC subset: libhiprtc.so.N (ROCm >= 6) or inside libamdhip64.so.5 (ROCm 5.x).
 * hiprtcResult values from hiprtc.h as documented in the HIP API reference:
 * HIPRTC_SUCCESS = 0, HIPRTC_ERROR_COMPILATION = 6 (same numbering as NVRTC). */
#ifndef GV_DEV_SYMS_HIPRTC_H
#define GV_DEV_SYMS_HIPRTC_H

#include <stddef.h>

typedef int hiprtcResult;
typedef struct _hiprtcProgram *hiprtcProgram;
#define HIPRTC_SUCCESS 0

#define GV_SYMS_HIPRTC(X)                                                                    \
    X(REQ, hiprtcVersion, hiprtcResult, (int *, int *), "hiprtcVersion")                     \
    X(REQ, hiprtcGetErrorString, const char *, (hiprtcResult), "hiprtcGetErrorString")       \
    X(REQ, hiprtcCreateProgram, hiprtcResult,                                                \
      (hiprtcProgram *, const char *, const char *, int, const char **, const char **),      \
      "hiprtcCreateProgram")                                                                 \
    X(REQ, hiprtcDestroyProgram, hiprtcResult, (hiprtcProgram *), "hiprtcDestroyProgram")    \
    X(REQ, hiprtcCompileProgram, hiprtcResult, (hiprtcProgram, int, const char **),          \
      "hiprtcCompileProgram")                                                                \
    X(REQ, hiprtcGetProgramLogSize, hiprtcResult, (hiprtcProgram, size_t *),                 \
      "hiprtcGetProgramLogSize")                                                             \
    X(REQ, hiprtcGetProgramLog, hiprtcResult, (hiprtcProgram, char *), "hiprtcGetProgramLog") \
    X(REQ, hiprtcGetCodeSize, hiprtcResult, (hiprtcProgram, size_t *), "hiprtcGetCodeSize")  \
    X(REQ, hiprtcGetCode, hiprtcResult, (hiprtcProgram, char *), "hiprtcGetCode")

#endif
