/* Facts for port scan --extensions (port_ext.h). */
#include "kb/port_ext.h"

#include <string.h>

const char kb_no_binary_message[] =
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!";
const char kb_no_binary_source[] =
    "docs/facts/rocm-facts.md §8: the HIP runtime's message (hip_code_object.cpp), ROCm/ROCm #2061";

/* LLVM AMDGPUUsage, "Generic Processors" (code object v6, LLVM 19 / ROCm 6.4):
 * each generic processor and the processors its code runs on. */
static const struct {
    const char *generic;
    const char *members[9];
} generics[] = {
    {"gfx9-generic", {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
    {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}},
    {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
    {"gfx10-3-generic",
     {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"}},
    {"gfx11-generic",
     {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
    {"gfx12-generic", {"gfx1200", "gfx1201"}},
};

/* Length of the processor part of a target id ("gfx90a" of "gfx90a:xnack-"). */
static size_t processor_len(const char *id)
{
    return strcspn(id, ":");
}

int kb_code_object_runs_on(const char *code, const char *gfx)
{
    size_t n = processor_len(code), g = processor_len(gfx);
    if (n == g && strncmp(code, gfx, n) == 0)
        return 1;
    for (size_t i = 0; i < sizeof generics / sizeof generics[0]; i++) {
        if (strlen(generics[i].generic) != n || strncmp(generics[i].generic, code, n) != 0)
            continue;
        for (size_t k = 0; k < 9 && generics[i].members[k]; k++)
            if (strlen(generics[i].members[k]) == g &&
                strncmp(generics[i].members[k], gfx, g) == 0)
                return 1;
    }
    return 0;
}

/* docs/facts/rocm-facts.md §4b (SONAMEs) and PyTorch's library names (libtorch_hip.so,
 * libc10_hip.so on ROCm; libtorch_cuda.so, libc10_cuda.so on CUDA). */
static const char *const gpu_libs[] = {"libamdhip64.so", "libcudart.so",  "libcuda.so",
                                       "libtorch_hip.so", "libc10_hip.so", "libtorch_cuda.so",
                                       "libc10_cuda.so",  "libhiprtc.so",  "libnvrtc.so"};

int kb_gpu_runtime_lib(const char *needed)
{
    for (size_t i = 0; i < sizeof gpu_libs / sizeof gpu_libs[0]; i++) {
        size_t n = strlen(gpu_libs[i]);
        if (strncmp(needed, gpu_libs[i], n) == 0 && (needed[n] == '\0' || needed[n] == '.'))
            return 1;
    }
    return 0;
}
