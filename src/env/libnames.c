#include "env/libnames.h"

#include <string.h>

const struct gv_libname gv_libnames[] = {
    {"hip-runtime", "libamdhip64", "amd", GV_LIB_RUNTIME},
    {"hiprtc", "libhiprtc", "amd", GV_LIB_RUNTIME},
    {"comgr", "libamd_comgr", "amd", GV_LIB_RUNTIME},
    {"hsa-runtime", "libhsa-runtime64", "amd", GV_LIB_RUNTIME},
    {"hsakmt", "libhsakmt", "amd", GV_LIB_RUNTIME},
    {"rocblas", "librocblas", "amd", GV_LIB_MATH},
    {"hipblas", "libhipblas", "amd", GV_LIB_MATH},
    {"hipblaslt", "libhipblaslt", "amd", GV_LIB_MATH},
    {"miopen", "libMIOpen", "amd", GV_LIB_MATH},
    {"rocfft", "librocfft", "amd", GV_LIB_MATH},
    {"hipfft", "libhipfft", "amd", GV_LIB_MATH},
    {"rocrand", "librocrand", "amd", GV_LIB_MATH},
    {"hiprand", "libhiprand", "amd", GV_LIB_MATH},
    {"rocsolver", "librocsolver", "amd", GV_LIB_MATH},
    {"hipsolver", "libhipsolver", "amd", GV_LIB_MATH},
    {"rocsparse", "librocsparse", "amd", GV_LIB_MATH},
    {"hipsparse", "libhipsparse", "amd", GV_LIB_MATH},
    {"rccl", "librccl", "amd", GV_LIB_COMM},
    {"rocm-smi", "librocm_smi64", "amd", GV_LIB_TOOLS},
    {"amd-smi", "libamd_smi", "amd", GV_LIB_TOOLS},
    {"rocm-core", "librocm-core", "amd", GV_LIB_TOOLS},
    {"cuda-driver", "libcuda", "nvidia", GV_LIB_RUNTIME},
    {"cudart", "libcudart", "nvidia", GV_LIB_RUNTIME},
    {"nvrtc", "libnvrtc", "nvidia", GV_LIB_RUNTIME},
    {"cublas", "libcublas", "nvidia", GV_LIB_MATH},
    {"cublaslt", "libcublasLt", "nvidia", GV_LIB_MATH},
    {"cudnn", "libcudnn", "nvidia", GV_LIB_MATH},
    {"cufft", "libcufft", "nvidia", GV_LIB_MATH},
    {"nccl", "libnccl", "nvidia", GV_LIB_COMM},
    {"nvml", "libnvidia-ml", "nvidia", GV_LIB_TOOLS},
};
const size_t gv_libnames_count = sizeof gv_libnames / sizeof gv_libnames[0];

const struct gv_libname *gv_libname_for_file(const char *filename)
{
    for (size_t i = 0; i < gv_libnames_count; i++) {
        size_t n = strlen(gv_libnames[i].stem);
        if (strncmp(filename, gv_libnames[i].stem, n) == 0 && strncmp(filename + n, ".so", 3) == 0 &&
            (filename[n + 3] == '\0' || filename[n + 3] == '.'))
            return &gv_libnames[i];
    }
    return NULL;
}

const struct gv_libname *gv_libname_by_name(const char *name)
{
    for (size_t i = 0; i < gv_libnames_count; i++)
        if (strcmp(gv_libnames[i].name, name) == 0)
            return &gv_libnames[i];
    return NULL;
}
