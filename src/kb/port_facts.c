/* Facts for gpuvet port (port_facts.h), each with its source. */
#include <stdlib.h>
#include <string.h>

#include "kb/kb.h"
#include "kb/port_facts.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char gv_port_wave_source[] =
    "LLVM AMDGPUUsage, processor table (gfx9 targets: wavefrontsize64 only; gfx10, gfx11, "
    "gfx12: wave32 by default); clang's AMDGPU toolchain compiles HIP for wave64 only on "
    "targets without the wave32 feature or with -mwavefrontsize64 (reviews.llvm.org/D92628); "
    "HIP docs, understand/hardware_implementation.html (warpSize); GPU families: "
    "docs/facts/rocm-facts.md §2c";

int gv_port_wave_size(const char *target)
{
    if (!target)
        return 0;
    if (!strncmp(target, "sm_", 3) || !strncmp(target, "compute_", 8))
        return 32;
    if (strncmp(target, "gfx", 3) || !target[3])
        return 0;
    char base[32];
    size_t n = strcspn(target, ":");
    if (n >= sizeof base)
        return 0;
    memcpy(base, target, n);
    base[n] = 0;
    const struct kb_gpu *g = kb_gpu_by_gfx(base);
    if (g)
        return !strcmp(g->isa, "gfx9") || !strcmp(g->isa, "cdna") ? 64 : 32;
    /* a target the table lacks: gfx9xx (3 hex digits after gfx9) is GCN/CDNA,
     * gfx10xx to gfx12xx are RDNA */
    if (target[3] == '9' && n == 6)
        return 64;
    if (target[3] == '1' && n == 7 && target[4] >= '0' && target[4] <= '2')
        return 32;
    return 0;
}

#define HIPIFY_RT                                                                            \
    "HIPIFY docs, reference/tables/CUDA_Runtime_API_functions_supported_by_HIP"
#define HIPIFY_DRV "HIPIFY docs, reference/tables/CUDA_Driver_API_functions_supported_by_HIP"
#define HIPIFY_LIBS                                                                          \
    "HIPIFY docs, reference/supported_apis (CUDA libraries and their HIP/ROCm counterparts)"
#define CUTLASS_SRC                                                                          \
    "NVIDIA/cutlass README (NVIDIA GPUs only); ROCm/composable_kernel README"

/* Exact names first where a prefix would also match: gv_port_api_find takes
 * an exact entry over a prefix and the longest prefix over a shorter one. */
static const struct gv_port_api apis[] = {
    /* identifiers */
    {"cuTensorMapEncodeTiled", 0, 0, NULL,
     "a Hopper TMA descriptor; AMD GPUs have no tensor memory accelerator: load the tiles "
     "with ordinary global (buffer) loads into shared memory",
     HIPIFY_DRV " (cuTensorMap* listed without a HIP equivalent)"},
    {"cuTensorMap", 1, 0, NULL, "Hopper TMA descriptors have no HIP counterpart",
     HIPIFY_DRV " (cuTensorMap* listed without a HIP equivalent)"},
    {"nvml", 1, 0, NULL,
     "NVML exists only with the NVIDIA driver; use AMD SMI (amdsmi_*, amd-smi) or ROCm SMI "
     "(rsmi_*), which have another API",
     "ROCm docs, amdsmi (projects/amdsmi); docs/facts/anchor-tools.md §3"},
    {"cupti", 1, 0, NULL,
     "CUPTI has no HIP counterpart; rocprofiler-sdk is the nearest, with another API",
     HIPIFY_LIBS},
    {"cudnn", 1, 0, "miopen",
     "MIOpen is not a renamed cuDNN: descriptors, algorithm search (Find / immediate mode) "
     "and the supported layouts differ; hipify maps only part of the API",
     HIPIFY_LIBS " (cuDNN -> MIOpen, partially supported)"},
    {"cublasLt", 1, 0, "hipblasLt", NULL, HIPIFY_LIBS},
    {"cublas", 1, 0, "hipblas", NULL, HIPIFY_LIBS},
    {"cufft", 1, 0, "hipfft", NULL, HIPIFY_LIBS},
    {"curand", 1, 0, "hiprand", NULL, HIPIFY_LIBS},
    {"cusparse", 1, 0, "hipsparse", NULL, HIPIFY_LIBS},
    {"cusolver", 1, 0, "hipsolver", NULL, HIPIFY_LIBS},
    {"cutensor", 1, 0, "hiptensor", NULL, HIPIFY_LIBS},
    {"nvrtc", 1, 0, "hiprtc", NULL, HIPIFY_LIBS},
    {"nvtx", 1, 0, "roctx", NULL, HIPIFY_LIBS},
    {"cuda", 1, 0, "hip", NULL, HIPIFY_RT},
    /* headers */
    {"cutlass/", 1, 1, NULL,
     "CUTLASS targets NVIDIA GPUs only; the nearest on AMD GPUs is Composable Kernel, a "
     "different API",
     CUTLASS_SRC},
    {"cute/", 1, 1, NULL, "CuTe (part of CUTLASS) targets NVIDIA GPUs only", CUTLASS_SRC},
    {"cupti.h", 0, 1, NULL,
     "CUPTI has no HIP counterpart; rocprofiler-sdk is the nearest, with another API",
     HIPIFY_LIBS},
    {"nvml.h", 0, 1, NULL,
     "NVML exists only with the NVIDIA driver; use amd_smi/amdsmi.h (another API)",
     "ROCm docs, amdsmi (projects/amdsmi)"},
    {"cuda_pipeline.h", 0, 1, NULL,
     "cp.async pipelines (__pipeline_memcpy_async) have no HIP counterpart: copy to shared "
     "memory with ordinary loads and __syncthreads()",
     HIPIFY_RT " (device functions: __pipeline_* not supported)"},
    {"mma.h", 0, 1, "rocwmma/rocwmma.hpp",
     "nvcuda::wmma becomes rocWMMA: fragment shapes and layouts are per target, and a fragment "
     "is spread over 64 lanes on wave64 targets",
     "ROCm docs, projects/rocWMMA (API reference)"},
    {"cudnn.h", 0, 1, "miopen/miopen.h",
     "MIOpen is not a renamed cuDNN: descriptors, algorithm search (Find / immediate mode) and "
     "the supported layouts differ; hipify maps only part of the API",
     HIPIFY_LIBS " (cuDNN -> MIOpen, partially supported)"},
    {"cublas_v2.h", 0, 1, "hipblas/hipblas.h", NULL, HIPIFY_LIBS},
    {"cublasLt.h", 0, 1, "hipblaslt/hipblaslt.h", NULL, HIPIFY_LIBS},
    {"cufft.h", 0, 1, "hipfft/hipfft.h", NULL, HIPIFY_LIBS},
    {"curand_kernel.h", 0, 1, "hiprand/hiprand_kernel.h", NULL, HIPIFY_LIBS},
    {"curand.h", 0, 1, "hiprand/hiprand.h", NULL, HIPIFY_LIBS},
    {"cusparse.h", 0, 1, "hipsparse/hipsparse.h", NULL, HIPIFY_LIBS},
    {"cusolverDn.h", 0, 1, "hipsolver/hipsolver.h", NULL, HIPIFY_LIBS},
    {"nccl.h", 0, 1, "rccl/rccl.h", NULL, HIPIFY_LIBS}, /* RCCL keeps the nccl* names */
    {"cub/", 1, 1, "hipcub/hipcub.hpp", NULL, HIPIFY_LIBS},
    {"cuda_runtime.h", 0, 1, "hip/hip_runtime.h", NULL, HIPIFY_RT},
    {"cuda_fp16.h", 0, 1, "hip/hip_fp16.h", NULL, HIPIFY_RT},
    {"cuda_bf16.h", 0, 1, "hip/hip_bf16.h", NULL, HIPIFY_RT},
    {"cooperative_groups.h", 0, 1, "hip/hip_cooperative_groups.h", NULL, HIPIFY_RT},
    {"nvrtc.h", 0, 1, "hip/hiprtc.h", NULL, HIPIFY_LIBS},
    {"nvToolsExt.h", 0, 1, "roctracer/roctx.h", NULL, HIPIFY_LIBS},
};

const struct gv_port_api *gv_port_apis(size_t *n)
{
    *n = N(apis);
    return apis;
}

/* The header's file name when the entry names no folder ("mma.h" matches
 * <mma.h>, not <foo/mma.h>): the whole name must match. */
const struct gv_port_api *gv_port_api_find(const char *name, size_t n, int header)
{
    const struct gv_port_api *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < N(apis); i++) {
        const struct gv_port_api *a = &apis[i];
        if (a->header != header || a->cuda[0] != name[0])
            continue;
        size_t an = strlen(a->cuda);
        if (an > n || memcmp(a->cuda, name, an))
            continue;
        if (!a->prefix && an != n)
            continue;
        if (!a->prefix)
            return a;
        if (an > best_len)
            best = a, best_len = an;
    }
    return best;
}

#define HIP_WARP_DOC                                                                         \
    "HIP docs, how-to/hip_cpp_language_extensions.html#warp-cross-lane-functions"
#define HIP_SYNC_H "HIP include/hip/amd_detail/amd_warp_sync_functions.h (ROCm >= 6.2)"
#define MIOPEN_CONV                                                                          \
    "pytorch/pytorch aten/src/ATen/native/miopen/Conv_miopen.cpp @015f6f77 (findAlgorithm, "  \
    "raw_miopen_convolution_forward_out)"

static const struct gv_port_fact facts[] = {
    {"wave-lane-id",
     "a wavefront has 64 lanes on gfx9 targets (GCN, CDNA: MI100, MI200, MI300), so a lane id "
     "taken modulo 32 (& 31, % 32) names two lanes of one wavefront, and a warp id from / 32 "
     "or >> 5 splits each wavefront in two",
     gv_port_wave_source},
    {"wave-shared-32",
     "shared memory sized for 32 lanes (one slot per lane) or for blockDim / 32 warps is "
     "indexed with lane ids up to 63, or holds twice the warps that exist, on 64-lane "
     "wavefronts",
     gv_port_wave_source},
    {"wave-ballot-32bit",
     "__ballot, __ballot_sync and __activemask return a 64-bit mask (unsigned long long) in "
     "HIP, one bit per lane of a 64-lane wavefront; a 32-bit variable or __popc/__ffs keeps "
     "only lanes 0-31",
     HIP_WARP_DOC},
    {"sync-mask-32bit",
     "HIP's __shfl*_sync, __ballot_sync, __any_sync, __all_sync and __match*_sync "
     "static_assert that the mask is a 64-bit integer (\"The mask must be a 64-bit "
     "integer\"), for wave32 and wave64 targets alike: a 32-bit mask does not compile",
     HIP_SYNC_H},
    {"wave32-full-mask",
     "0xffffffff as a 64-bit mask names lanes 0-31 only; on a 64-lane wavefront lanes 32-63 "
     "are left out of the shuffle, vote or ballot",
     HIP_WARP_DOC "; " HIP_SYNC_H},
    {"shfl-width-32",
     "a width of 32 splits a 64-lane wavefront into two independent 32-lane segments: the "
     "shuffle never crosses lanes 31/32, so a reduction over the wavefront stops at half",
     HIP_WARP_DOC},
    {"wave32-loop",
     "a shuffle loop that starts at offset 16 (reduction) or stops below 32 (scan) covers "
     "32 lanes; on a 64-lane wavefront lanes 32-63 never meet lanes 0-31",
     gv_port_wave_source},
    {"wave-size-const",
     "warpSize is 64 on gfx9 targets (GCN, CDNA); a constant 32 used as the warp size makes "
     "every loop, mask and buffer derived from it cover half of each wavefront",
     gv_port_wave_source},
    {"inline-ptx",
     "PTX is NVIDIA's virtual instruction set; hipcc compiles device code for the AMDGPU "
     "instruction set and cannot assemble PTX in asm() statements",
     "HIP docs, how-to/hip_porting_guide.html (inline assembly)"},
    {"nanosleep",
     "HIP offers no __nanosleep [unconfirmed: absent from the HIPIFY device-function table]; "
     "the AMDGPU builtin __builtin_amdgcn_s_sleep(n) waits about 64 * n clock cycles",
     "LLVM AMDGPUUsage / clang BuiltinsAMDGPU.def (s_sleep); HIPIFY CUDA device functions "
     "table"},
    {"cuda-no-hip", "the CUDA API or library has no HIP counterpart (table in src/kb/port_facts.c)",
     HIPIFY_LIBS},
    {"cuda-lib-differs",
     "the CUDA library has a ROCm counterpart with another API, not a rename that hipify "
     "completes",
     HIPIFY_LIBS},
    {"py-device-string",
     "ROCm builds of PyTorch expose AMD GPUs under the device type \"cuda\" (torch.device("
     "\"cuda\"), .to(\"cuda\")); \"rocm\" is no device type and \"hip\" cannot hold tensors",
     "PyTorch docs, notes/hip.rst (HIP semantics: the torch.cuda interfaces are reused); "
     "docs/seeds/seed-002.txt §4.1"},
    {"py-version-cuda",
     "torch.version.cuda is None on ROCm builds; torch.version.hip holds the HIP version there",
     "PyTorch docs, notes/hip.rst (Checking for HIP); docs/facts/anchor-tools.md (collect_env: "
     "hip_compiled_version)"},
    {"py-nvidia-smi",
     "nvidia-smi and NVML (pynvml) come with the NVIDIA driver only; on ROCm machines they are "
     "absent or see no AMD GPU",
     "ROCm docs, amdsmi (amd-smi, amdsmi Python package); docs/facts/anchor-tools.md §3"},
    {"py-cudnn-benchmark",
     "on ROCm the flag reaches MIOpen, not cuDNN: benchmark=True runs MIOpen's exhaustive Find "
     "search (first call per shape, then cached); in immediate mode it is not used, MIOpen's "
     "heuristic solution is taken",
     MIOPEN_CONV},
    {"py-cudnn-deterministic",
     "on ROCm deterministic=True (with benchmark off) only asks MIOpen's Find for the default "
     "(GEMM) algorithm first; cuDNN's list of deterministic algorithms does not apply, so "
     "bitwise-repeatable convolutions are not promised the same way",
     MIOPEN_CONV},
    {"py-cudnn-tf32",
     "torch.backends.cudnn.allow_tf32 never reaches MIOpen: its convolution descriptor gets "
     "only benchmark and deterministic; TF32-like math on ROCm is hipBLASLt's XF32 for "
     "matmuls on gfx942, controlled by the torch.backends.cuda.matmul flags",
     MIOPEN_CONV "; docs/facts/numerics-methods.md §4b (S9, S10)"},
};

const struct gv_port_fact *gv_port_facts(size_t *n)
{
    *n = N(facts);
    return facts;
}

const struct gv_port_fact *gv_port_fact_find(const char *rule)
{
    for (size_t i = 0; i < N(facts); i++)
        if (!strcmp(facts[i].rule, rule))
            return &facts[i];
    return NULL;
}
