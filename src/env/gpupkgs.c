/* The GPU-stack package names. A name matches an entry when it starts with
 * the entry and the next character is the end, '-', '.', '+' or a digit, so
 * "cuda" matches cuda-toolkit-12-4 but not cudatext, and "libcublas" matches
 * libcublas12 but not libcublaslt12 (listed separately). Sources: AMD's
 * repo.radeon.com package names (rocm-*, hip-*, amdgpu-dkms), Debian's ROCm
 * packages (libamdhip64-5, librocblas0, ...), NVIDIA's CUDA repository
 * (cuda-*, libcublas-12-*, nvidia-*) and Debian's nvidia-* packages. */
#include <ctype.h>
#include <string.h>

#include "env/pkgdb.h"

static const char *const gpu_prefixes[] = {
    /* AMD: ROCm meta and components */
    "rocm", "rocminfo", "rocm-smi", "rocprim", "rocthrust", "rocalution", "rocwmma",
    "roctracer", "rocprofiler", "rocdecode", "rocjpeg", "rocblas", "rocfft", "rocrand",
    "rocsolver", "rocsparse", "rccl", "miopen", "miopen-hip", "migraphx", "hip", "hipcc",
    "hipblas", "hipblaslt", "hipcub", "hipfft", "hipfort", "hipify", "hiprand", "hipsolver",
    "hipsparse", "hipsparselt", "hiptensor", "hsa", "hsakmt", "hsa-rocr", "comgr",
    "openmp-extras", "amd-smi", "amd-smi-lib", "amdgpu", "amdgpu-dkms", "amdgpu-install",
    /* AMD: Debian/Ubuntu library package names */
    "libamdhip64", "libhsa-runtime", "libhsakmt", "libamd-comgr", "libhiprtc", "libhipblas",
    "libhipblaslt", "libhipfft", "libhiprand", "libhipsolver", "libhipsparse", "librocblas",
    "librocfft", "librocrand", "librocsolver", "librocsparse", "librocm", "librocm-smi",
    "libmiopen", "librccl", "libdrm-amdgpu", "firmware-amd-graphics",
    /* NVIDIA */
    "nvidia", "cuda", "libcuda", "libcudart", "libcublas", "libcublaslt", "libcudnn",
    "libnccl", "libnvrtc", "libnvidia", "libcufft", "libcurand", "libcusolver", "libcusparse",
    "libnvjitlink", "libcupti", "libnvinfer", "libnvml", "firmware-nvidia",
    "datacenter-gpu-manager", "tensorrt",
};

static int boundary(char c)
{
    return c == '\0' || c == '-' || c == '.' || c == '+' || isdigit((unsigned char)c);
}

int gv_pkg_is_gpu(const char *name)
{
    for (size_t i = 0; i < sizeof gpu_prefixes / sizeof gpu_prefixes[0]; i++) {
        size_t n = strlen(gpu_prefixes[i]);
        if (strncmp(name, gpu_prefixes[i], n) == 0 && boundary(name[n]))
            return 1;
    }
    return 0;
}
