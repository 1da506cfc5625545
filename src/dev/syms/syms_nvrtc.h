/* NVRTC subset (libnvrtc.so.N). nvrtcResult values from the NVRTC reference
 * (docs.nvidia.com/cuda/nvrtc, "nvrtcResult": NVRTC_SUCCESS = 0,
 * NVRTC_ERROR_COMPILATION = 6). */
#ifndef GV_DEV_SYMS_NVRTC_H
#define GV_DEV_SYMS_NVRTC_H

#include <stddef.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
#define NVRTC_SUCCESS 0
#define NVRTC_ERROR_COMPILATION 6

#define GV_SYMS_NVRTC(X)                                                                     \
    X(REQ, nvrtcVersion, nvrtcResult, (int *, int *), "nvrtcVersion")                        \
    X(REQ, nvrtcGetErrorString, const char *, (nvrtcResult), "nvrtcGetErrorString")          \
    X(REQ, nvrtcCreateProgram, nvrtcResult,                                                  \
      (nvrtcProgram *, const char *, const char *, int, const char *const *,                 \
       const char *const *),                                                                 \
      "nvrtcCreateProgram")                                                                  \
    X(REQ, nvrtcDestroyProgram, nvrtcResult, (nvrtcProgram *), "nvrtcDestroyProgram")        \
    X(REQ, nvrtcCompileProgram, nvrtcResult, (nvrtcProgram, int, const char *const *),       \
      "nvrtcCompileProgram")                                                                 \
    X(REQ, nvrtcGetProgramLogSize, nvrtcResult, (nvrtcProgram, size_t *),                    \
      "nvrtcGetProgramLogSize")                                                              \
    X(REQ, nvrtcGetProgramLog, nvrtcResult, (nvrtcProgram, char *), "nvrtcGetProgramLog")    \
    X(REQ, nvrtcGetPTXSize, nvrtcResult, (nvrtcProgram, size_t *), "nvrtcGetPTXSize")        \
    X(REQ, nvrtcGetPTX, nvrtcResult, (nvrtcProgram, char *), "nvrtcGetPTX")                  \
    X(OPT, nvrtcGetCUBINSize, nvrtcResult, (nvrtcProgram, size_t *), "nvrtcGetCUBINSize")    \
    X(OPT, nvrtcGetCUBIN, nvrtcResult, (nvrtcProgram, char *), "nvrtcGetCUBIN")

#endif
