/* The knowledge base tables. Sources are the sections and short names of
 * docs/facts/rocm-facts.md (TI, PV, RM, BLD, CM, CL600, ...); rows
 * the facts mark [inferred] or [unconfirmed] say so. Add a row when a release
 * appears; keep each table in release order. */
#include "kb/kb.h"

#include <stdio.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define TABLE(type, fn, arr)                                                                 \
    const struct type *fn(size_t *n)                                                         \
    {                                                                                        \
        *n = N(arr);                                                                         \
        return arr;                                                                          \
    }

/* docs/facts/rocm-facts.md §1 "PyTorch release -> ROCm wheel variants" (TI release list, PV, RM). */
static const struct kb_torch_line torch_lines[] = {
    {"1.12", {"5.0", "5.1.1"}, "5.0", "0.13", "§1 TI/PV"},
    {"1.13", {"5.1.1", "5.2"}, "5.2", "0.14", "§1 TI/PV"},
    {"2.0", {"5.3", "5.4.2"}, "5.4", "0.15", "§1 TI/RM"},
    {"2.1", {"5.5", "5.6"}, "5.6", "0.16", "§1 TI/RM"},
    {"2.2", {"5.6", "5.7"}, "5.7", "0.17", "§1 TI/PV (2.2.0 on PV lists only 5.6)"},
    {"2.3", {"5.7", "6.0"}, "6.0", "0.18", "§1 TI/PV"},
    {"2.4", {"6.0", "6.1"}, "6.1", "0.19", "§1 TI/RM"},
    {"2.5", {"6.1", "6.2"}, "6.2", "0.20", "§1 TI/PV"},
    {"2.6", {"6.1", "6.2.4"}, "6.2.4", "0.21", "§1 TI/PV"},
    {"2.7", {"6.2.4", "6.3"}, "6.3", "0.22", "§1 TI/RM"},
    {"2.8", {"6.3", "6.4"}, "6.4", "0.23", "§1 TI/RM"},
    {"2.9", {"6.3", "6.4"}, "6.4", "0.24", "§1 TI (PV lists only 6.4)"},
    {"2.10", {"7.0", "7.1"}, "7.1", "0.25", "§1 TI; dev-discuss 'Wheel variants for 2.10'"},
    {"2.11", {"7.1", "7.2"}, "7.2", NULL, "§1 TI/RM"},
    {"2.12", {"7.1", "7.2"}, "7.2", NULL, "§1 TI/RM"},
    {"2.13", {"7.1", "7.2"}, "7.2", NULL, "§1 TI/RM"},
};
TABLE(kb_torch_line, kb_torch_lines, torch_lines)

/* docs/facts/rocm-facts.md §2a "PYTORCH_ROCM_ARCH used for the official wheels" (BLD, pytorch
 * .ci/docker/manywheel/build.sh, huggingface/kernels archs.nix). */
#define ARCH_21 "gfx900;gfx906;gfx908;gfx90a;gfx1030;gfx1100"
#define ARCH_24 "gfx900;gfx906;gfx908;gfx90a;gfx942;gfx1030;gfx1100"
#define ARCH_27 "gfx900;gfx906;gfx908;gfx90a;gfx942;gfx1030;gfx1100;gfx1101;gfx1102;gfx1200;gfx1201"
#define ARCH_210                                                                             \
    "gfx900;gfx906;gfx908;gfx90a;gfx942;gfx950;gfx1030;gfx1100;gfx1101;gfx1102;gfx1150;"    \
    "gfx1151;gfx1200;gfx1201"
static const struct kb_wheel_arch wheel_archs[] = {
    {"1.12", "2.0", NULL, NULL, "gfx900;gfx906;gfx908;gfx90a;gfx1030", "§2a BLD c50e2102"},
    {"2.1", "2.2", NULL, NULL, ARCH_21, "§2a BLD 3237101a / c50e2102"},
    {"2.3", "2.3", NULL, "5.7", ARCH_21, "§2a BLD 918c21ae (gfx942 only for ROCm >= 6.0)"},
    {"2.3", "2.3", "6.0", NULL, ARCH_24, "§2a BLD 918c21ae; builder PR #1647"},
    {"2.4", "2.5", NULL, NULL, ARCH_24, "§2a pytorch manywheel/build.sh @1fca82d"},
    {"2.6", "2.6", NULL, NULL, ARCH_24 ";gfx1101", "§2a pytorch PR #141667 [inferred from dates]"},
    {"2.7", "2.7", NULL, NULL, ARCH_27, "§2a PRs #147761, #148562 [inferred from dates]"},
    {"2.8", "2.9", NULL, NULL, ARCH_27, "§2a huggingface/kernels archs.nix (build.sh@ba56102)"},
    {"2.10", "2.12", NULL, NULL, ARCH_210, "§2a archs.nix (release/2.10-2.12); PR #167299"},
};
TABLE(kb_wheel_arch, kb_wheel_archs, wheel_archs)

/* docs/facts/rocm-facts.md §2b "ROCm official (Linux) GPU support matrix" (CM, CL600). */
static const struct kb_rocm_support rocm_supports[] = {
    {"5.7", "gfx90a;gfx908;gfx906;gfx1030", "§2b rocm-5.7.0 gpu_os_support.md"},
    {"6.0", "gfx1100;gfx1030;gfx942;gfx90a;gfx908;gfx906", "§2b CM historical CSV; CL600"},
    {"6.1", "gfx1100;gfx1030;gfx942;gfx90a;gfx908", "§2b CM"},
    {"6.2", "gfx1100;gfx1030;gfx942;gfx90a;gfx908", "§2b CM"},
    {"6.3", "gfx1100;gfx1030;gfx942;gfx90a;gfx908", "§2b CM"},
    {"6.4", "gfx1201;gfx1200;gfx1101;gfx1100;gfx1030;gfx942;gfx90a;gfx908", "§2b CM 7.0.0"},
    {"7.0", "gfx950;gfx1201;gfx1200;gfx1101;gfx1100;gfx1030;gfx942;gfx90a;gfx908",
     "§2b CM 7.0.0"},
};
TABLE(kb_rocm_support, kb_rocm_supports, rocm_supports)

/* docs/facts/rocm-facts.md §2c "Product -> LLVM target -> GFXIP" (gpu-arch-specs.rst, AMDGPUUsage). */
static const struct kb_gpu gpus[] = {
    {"gfx900", "GCN5", "gfx9", 0, 90000, "MI25, Vega 56/64", "§2c"},
    {"gfx902", "GCN5 APU", "gfx9", 1, 90002, "Raven Vega iGPU", "§2c"},
    {"gfx90c", "GCN5 APU", "gfx9", 1, 90012, "Renoir/Cezanne Vega iGPU", "§2c"},
    {"gfx906", "GCN5.1", "gfx9", 0, 90006, "MI50, MI60, Radeon VII, Radeon Pro VII", "§2c"},
    {"gfx908", "CDNA1", "cdna", 0, 90008, "MI100", "§2c"},
    {"gfx90a", "CDNA2", "cdna", 0, 90010, "MI210, MI250, MI250X", "§2c"},
    {"gfx942", "CDNA3", "cdna", 0, 90402, "MI300X, MI300A, MI325X", "§2c"},
    {"gfx950", "CDNA4", "cdna", 0, 90500, "MI350X, MI355X", "§2c"},
    {"gfx1010", "RDNA1", "rdna1", 0, 100100, "RX 5700 (XT), Pro 5600M", "§2c"},
    {"gfx1011", "RDNA1", "rdna1", 0, 100101, "Pro V520", "§2c"},
    {"gfx1012", "RDNA1", "rdna1", 0, 100102, "RX 5500 (XT), Pro W5500", "§2c"},
    {"gfx1030", "RDNA2", "rdna2", 0, 100300,
     "RX 6800, 6800 XT, 6900 XT, 6950 XT, PRO W6800, PRO V620", "§2c"},
    {"gfx1031", "RDNA2", "rdna2", 0, 100301, "RX 6700 XT, 6700, 6750 XT", "§2c"},
    {"gfx1032", "RDNA2", "rdna2", 0, 100302, "RX 6600, 6600 XT, 6650 XT, PRO W6600", "§2c"},
    {"gfx1033", "RDNA2 APU", "rdna2", 1, 100303, "Van Gogh (Steam Deck)", "§2c"},
    {"gfx1034", "RDNA2", "rdna2", 0, 100304, "RX 6500 XT / 6400 [unconfirmed]", "§2c"},
    {"gfx1035", "RDNA2 APU", "rdna2", 1, 100305, "Rembrandt 680M/660M [unconfirmed]", "§2c"},
    {"gfx1036", "RDNA2 APU", "rdna2", 1, 100306, "Raphael iGPU (Ryzen 7000) [unconfirmed]",
     "§2c"},
    {"gfx1100", "RDNA3", "rdna3", 0, 110000,
     "RX 7900 XTX, 7900 XT, 7900 GRE, PRO W7900, W7800", "§2c"},
    {"gfx1101", "RDNA3", "rdna3", 0, 110001, "RX 7800 XT, 7700 XT, 7700, PRO W7700, PRO V710",
     "§2c"},
    {"gfx1102", "RDNA3", "rdna3", 0, 110002, "RX 7600, 7600 XT", "§2c"},
    {"gfx1103", "RDNA3 APU", "rdna3", 1, 110003, "Phoenix / Hawk Point 780M / 760M / 740M",
     "§2c"},
    {"gfx1150", "RDNA3.5 APU", "rdna3.5", 1, 110500, "Radeon 890M (Strix Point)", "§2c"},
    {"gfx1151", "RDNA3.5 APU", "rdna3.5", 1, 110501, "Radeon 8060S (Strix Halo)", "§2c"},
    {"gfx1152", "RDNA3.5 APU", "rdna3.5", 1, 110502, "Radeon 860M (Krackan)", "§2c"},
    {"gfx1200", "RDNA4", "rdna4", 0, 120000, "RX 9060, RX 9060 XT", "§2c"},
    {"gfx1201", "RDNA4", "rdna4", 0, 120001, "RX 9070, 9070 XT, 9070 GRE, Radeon AI PRO R9700",
     "§2c"},
};
TABLE(kb_gpu, kb_gpus, gpus)

/* docs/facts/rocm-facts.md §4b "SONAMEs per ROCm major". */
static const struct kb_soname sonames[] = {
    {"hip-runtime", "libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so.7",
     "§4b clr hipamd/src/CMakeLists.txt"},
    {"hiprtc", "libhiprtc.so.5", "libhiprtc.so.6", "libhiprtc.so.7", "§4b TheRock _dist_info.py"},
    {"rocblas", "librocblas.so.3", "librocblas.so.4", "librocblas.so.5", "§4b rocBLAS CMake"},
    {"hipblas", "libhipblas.so.1", "libhipblas.so.2", "libhipblas.so.3", "§4b hipBLAS CMake"},
    {"hipblaslt", "libhipblaslt.so.0", "libhipblaslt.so.0", "libhipblaslt.so.1",
     "§4b ldd (ROCm #4208); TheRock"},
    {"miopen", "libMIOpen.so.1", "libMIOpen.so.1", "libMIOpen.so.1", "§4b ldd; TheRock"},
    {"rccl", "librccl.so.1", "librccl.so.1", "librccl.so.1", "§4b ldd"},
    {"hipsparse", "libhipsparse.so.0", "libhipsparse.so.1", "libhipsparse.so.4",
     "§4b hipSPARSE CMake; TheRock"},
    {"rocsparse", "librocsparse.so.0", "librocsparse.so.1", NULL,
     "§4b rocSPARSE CMake (7.x unconfirmed)"},
    {"hipsolver", "libhipsolver.so.0", "libhipsolver.so.0", "libhipsolver.so.1",
     "§4b ldd; TheRock"},
    {"rocsolver", "librocsolver.so.0", "librocsolver.so.0", NULL, "§4b (7.x conflicting)"},
    {"hipfft", "libhipfft.so.0", "libhipfft.so.0", "libhipfft.so.0", "§4b ldd; TheRock"},
    {"rocfft", "librocfft.so.0", "librocfft.so.0", NULL, "§4b ldd (7.x unconfirmed)"},
    {"hiprand", "libhiprand.so.1", "libhiprand.so.1", "libhiprand.so.1", "§4b ldd; TheRock"},
    {"rocrand", "librocrand.so.1", "librocrand.so.1", "librocrand.so.1", "§4b ldd; TheRock"},
    {"comgr", "libamd_comgr.so.2", "libamd_comgr.so.2", "libamd_comgr.so.3",
     "§4b ldd; rocm-7.1.1 metadata"},
    {"hsa-runtime", "libhsa-runtime64.so.1", "libhsa-runtime64.so.1", "libhsa-runtime64.so.1",
     "§4b ldd"},
    {"rocm-smi", NULL, "librocm_smi64.so.7", "librocm_smi64.so.7",
     "§4b rocm_smi_lib tags (5.7/6.0 unconfirmed; 6.x value is for 6.1+)"},
    {"roctx", "libroctx64.so.4", "libroctx64.so.4", "libroctx64.so.4", "§4b ldd"},
    {"roctracer", "libroctracer64.so.4", "libroctracer64.so.4", "libroctracer64.so.4",
     "§4b ldd"},
    {"rocprofiler-register", NULL, "librocprofiler-register.so.0",
     "librocprofiler-register.so.0", "§4b ldd (6.1+)"},
    {"rocm-core", "librocm-core.so.1", "librocm-core.so.1", "librocm-core.so.1", "§4b ldd"},
};
TABLE(kb_soname, kb_sonames, sonames)

/* docs/facts/rocm-facts.md §2b "HIP runtime version strings per ROCm". Prefix matched, most
 * specific first is not needed: build numbers are unique. */
static const struct kb_hip_version hip_versions[] = {
    {"5.7.31921", "5.7", "§2b (torch.version.hip in a torch+rocm5.7 report)"},
    {"6.0.32830", "6.0.0", "§2b CM (listed as 6.1.32830, a typo)"},
    {"6.0.32831", "6.0.2", "§2b CM"},
    {"6.1.40091", "6.1.0", "§2b CM"},
    {"6.1.40092", "6.1.1", "§2b CM"},
    {"6.1.40093", "6.1.2", "§2b CM"},
    {"6.2.41133", "6.2.0", "§2b CM (hipcc version 6.2.41133-dd7f95766)"},
    {"6.2.41134", "6.2", "§2b CM (6.2.1-6.2.4)"},
    {"6.3.42131", "6.3.0", "§2b CM"},
    {"6.3.42133", "6.3.1", "§2b CM"},
    {"6.3.42134", "6.3", "§2b CM (6.3.2 / 6.3.3)"},
    {"6.4.43484", "6.4.3", "§2b CM"},
    {"7.0.51830", "7.0.0", "§2b CM"},
    {"7.2.53211", "7.2", "§2b [single source]"},
    {"7.14.60850", "7.14", "§2b"},
};
TABLE(kb_hip_version, kb_hip_versions, hip_versions)

/* docs/facts/rocm-facts.md §5 "KMD <-> user space" (rocm-install-on-linux
 * user-kernel-space-compat-matrix, 2025-09-17; amdgpu-docs PR #97). */
static const struct kb_kmd kmds[] = {
    {"5.5", "5.3", "5.7", "§5 compat matrix"},
    {"5.6", "5.4", "6.0", "§5 compat matrix"},
    {"5.7", "5.5", "6.1", "§5 compat matrix"},
    {"6.0", "5.6", "6.2", "§5 compat matrix"},
    {"6.1", "5.7", "6.4", "§5 compat matrix"},
    {"6.2", "6.0", "7.0", "§5 compat matrix"},
    {"6.3", "6.1", "7.0", "§5 compat matrix"},
    {"6.4", "6.1", "7.0", "§5 compat matrix"},
    {"30.10", "6.2", "7.0", "§5 compat matrix"},
    {"30.30", "6.3", "7.2", "§5 amdgpu-docs PR #97 (30.30.2 / 30.30.3)"},
};
TABLE(kb_kmd, kb_kmds, kmds)

/* docs/facts/rocm-facts.md §6 "Environment variables that change numerics, kernel selection
 * or visibility"; the TOOLING rows are DCGM's list (docs/facts/anchor-tools.md §2.2). */
static const struct kb_env envs[] = {
    {"HSA_OVERRIDE_GFX_VERSION", KB_ENV_OVERRIDE,
     "makes the runtime treat every GPU as the given gfx target (§3)", "unset", NULL, "§3, §6"},
    {"HSA_OVERRIDE_GFX_VERSION_*", KB_ENV_OVERRIDE,
     "per-KFD-node form of the override, checked first", "unset", NULL, "§3 ROCR 84567b64"},
    {"TORCH_BLAS_PREFER_HIPBLASLT", KB_ENV_KERNELS,
     "1 selects hipBLASLt for GEMMs, 0 forces hipBLAS/rocBLAS: other kernels, other bits",
     "unset: hipBLASLt only if every visible GPU is in torch's preferred list", NULL,
     "§6 ATen Context.cpp"},
    {"TORCH_BLAS_PREFER_CUBLASLT", KB_ENV_KERNELS,
     "alias of TORCH_BLAS_PREFER_HIPBLASLT on ROCm; prefers cuBLASLt on CUDA", "unset", NULL,
     "§6 Context.cpp"},
    {"PYTORCH_TUNABLEOP_ENABLED", KB_ENV_KERNELS,
     "routes GEMMs through TunableOp, which benchmarks rocBLAS/hipBLASLt and picks the "
     "fastest: results can differ from the default and between runs that tune",
     "0", "0", "§6 tunable/README.md"},
    {"PYTORCH_TUNABLEOP_TUNING", KB_ENV_KERNELS, "1 tunes unknown shapes, 0 lookup only", "1",
     "1", "§6 tunable/README.md"},
    {"PYTORCH_TUNABLEOP_FILENAME", KB_ENV_KERNELS,
     "TunableOp results file: its solutions decide which kernels run", "tunableop_results.csv",
     NULL, "§6 tunable/README.md"},
    {"HIPBLASLT_WORKSPACE_SIZE", KB_ENV_KERNELS,
     "hipBLASLt workspace (KiB): the size decides which algorithms are eligible",
     "76 MiB on ROCm", NULL, "§6 CUDABlas.cpp"},
    {"CUBLASLT_WORKSPACE_SIZE", KB_ENV_KERNELS,
     "cuBLASLt/hipBLASLt workspace (KiB): the size decides which algorithms are eligible",
     "1024 KiB on CUDA, 76 MiB on ROCm", NULL, "§6 CUDABlas.cpp"},
    {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL", KB_ENV_KERNELS,
     "1 enables AOTriton flash/mem-efficient attention on experimental archs: other "
     "attention kernels",
     "0", "0", "§6 [semantics from usage]"},
    {"ROCBLAS_INTERNAL_FP16_ALT_IMPL", KB_ENV_NUMERICS,
     "MI200 (gfx90a): 1 uses the FP16->BF16 alternate GEMM in the forward pass too, 0 "
     "disables it in the backward pass (subnormal flushing changes)",
     "unset: alternate in backward only", NULL, "§6 PyTorch numerical_accuracy.rst"},
    {"ROCBLAS_INTERNAL_FP16_ALT_IMPL_RNZ", KB_ENV_NUMERICS,
     "round-near-zero variant of the FP16 alternate implementation", "unset", NULL,
     "§6 rocBLAS tensile_host.cpp"},
    {"MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL", KB_ENV_NUMERICS,
     "MI200: the same FP16 alternate-implementation switch for MIOpen convolutions",
     "unset: alternate in backward only", NULL, "§6 MIOpen MI200 MFMA specifics"},
    {"ROCBLAS_USE_HIPBLASLT", KB_ENV_KERNELS, "0 always Tensile, 1 prefer hipBLASLt",
     "unset = automatic", NULL, "§6 rocBLAS env-variables doc"},
    {"ROCBLAS_DEFAULT_ATOMICS_MODE", KB_ENV_NUMERICS,
     "atomics in rocBLAS GEMMs change the summation order (nondeterministic results)",
     "allowed [default per version unconfirmed]", NULL, "§4a, §6"},
    {"ROCBLAS_TENSILE_LIBPATH", KB_ENV_KERNELS,
     "overrides the Tensile kernel directory; a mismatch aborts with 'Cannot read "
     "TensileLibrary.dat'",
     "the library's own .../library", NULL, "§6"},
    {"HIPBLASLT_TENSILE_LIBPATH", KB_ENV_KERNELS, "overrides the hipBLASLt kernel directory",
     "the library's own .../library", NULL, "§6"},
    {"HIPBLASLT_TUNING_FILE", KB_ENV_KERNELS, "offline tuning results change kernel choice",
     "unset", NULL, "§6"},
    {"HIPBLASLT_TUNING_OVERRIDE_FILE", KB_ENV_KERNELS,
     "offline tuning overrides change kernel choice", "unset", NULL, "§6"},
    {"HIPBLASLT_OVERRIDE_COMPUTE_TYPE_XF32", KB_ENV_NUMERICS,
     "forces the TF32-like xf32 compute type on gfx942: fp32 GEMMs lose mantissa bits",
     "unset", "0", "§6 [semantics from a third-party list]"},
    {"HIPBLASLT_ALLOW_TF32", KB_ENV_NUMERICS,
     "lets PyTorch use TF32-like xf32 hipBLASLt GEMMs on ROCm: fp32 GEMMs lose mantissa bits",
     "unset", "0", "docs/doctor.md origin 10 [not in docs/facts/rocm-facts.md; semantics unverified]"},
    {"MIOPEN_FIND_MODE", KB_ENV_KERNELS,
     "how MIOpen chooses convolution solvers (1 normal find ... 5 dynamic hybrid)",
     "believed 5 (DYNAMIC_HYBRID) [unverified]", NULL, "§6 [values from memory]"},
    {"MIOPEN_FIND_ENFORCE", KB_ENV_KERNELS, "forces find/perf-db behaviour", "unset", NULL,
     "§6"},
    {"MIOPEN_DEBUG_CONV_*", KB_ENV_NUMERICS,
     "=0 disables a convolution solver family: another algorithm, other numerics", "enabled",
     "1", "§6"},
    {"HSA_XNACK", KB_ENV_KERNELS,
     "1 enables XNACK: code objects compiled xnack- (gfx90a/gfx942 wheels) no longer load",
     "unset", "0", "§6 ROCr flag.h"},
    {"AMD_GPU_FORCE_SINGLE_FP_DENORM", KB_ENV_NUMERICS,
     "forces FP32 denormals on (1) or off (0) in the OpenCL path", "-1 (don't force)", "-1",
     "§6"},
    {"NCCL_ALGO", KB_ENV_NUMERICS,
     "all-reduce algorithm (Ring/Tree...): another reduction order, other fp results",
     "chosen by NCCL/RCCL", NULL, "§6 RCCL/NCCL"},
    {"NCCL_PROTO", KB_ENV_NUMERICS, "all-reduce protocol (LL/LL128/Simple): reduction order",
     "chosen by NCCL/RCCL", NULL, "§6 RCCL/NCCL"},
    {"NVIDIA_TF32_OVERRIDE", KB_ENV_NUMERICS,
     "0 disables TF32 in cuBLAS/cuDNN globally (fp32 exact again, slower); 1 allows it",
     "unset: per-call math mode (torch allow_tf32 flags)", NULL, "§6 CUDA equivalents"},
    {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", KB_ENV_NUMERICS,
     "forces allow_tf32 for cuBLAS: fp32 matmuls run in TF32 (10-bit mantissa inputs)",
     "unset", "0", "§6 [older PyTorch docs; not re-verified]"},
    {"CUBLAS_WORKSPACE_CONFIG", KB_ENV_KERNELS,
     ":4096:8 or :16:8 is needed for deterministic cuBLAS with "
     "torch.use_deterministic_algorithms(True)",
     "unset", NULL, "§6 Context.cpp checkCuBLASConfigDeterministic"},
    {"AMD_SERIALIZE_KERNEL", KB_ENV_DEBUG,
     "serialises kernel launches (1 before, 2 after, 3 both): a debugging aid that slows "
     "everything",
     "0", "0", "§6 HIP env-variables"},
    {"AMD_SERIALIZE_COPY", KB_ENV_DEBUG, "serialises copies: a debugging aid", "0", "0", "§6"},
    {"HIP_LAUNCH_BLOCKING", KB_ENV_DEBUG, "1 = synchronous launches (ROCm >= 6.0): debugging",
     "0", "0", "§4a, §6"},
    {"CUDA_LAUNCH_BLOCKING", KB_ENV_DEBUG,
     "1 = synchronous launches: debugging, slows every launch", "0", "0", "§6 CUDA"},
    {"HSA_ENABLE_SDMA", KB_ENV_DEBUG,
     "0 copies with blit kernels instead of the SDMA engines (a workaround for hangs or "
     "corruption on some systems; slower copies)",
     "unset (ROCr decides)", "1", "§6 ROCr flag.h"},
    {"HSA_DISABLE_CACHE", KB_ENV_DEBUG, "disables the L2 cache", "0", "0", "§6"},
    {"HSA_CU_MASK", KB_ENV_DEBUG, "restricts the compute units used", "unset", NULL, "§6"},
    {"AMD_LOG_LEVEL", KB_ENV_DEBUG, "HIP runtime logging (4 decodes every packet)", "0", "0",
     "§6"},
    {"ROCBLAS_LAYER", KB_ENV_DEBUG, "rocBLAS trace/bench/profile logging", "unset", "0", "§6"},
    {"HIPBLASLT_LOG_LEVEL", KB_ENV_DEBUG, "hipBLASLt logging", "0", "0", "§6"},
    {"MIOPEN_CHECK_NUMERICS", KB_ENV_DEBUG, "checks every MIOpen output for NaN/Inf", "0", "0",
     "§6"},
    {"NCCL_P2P_DISABLE", KB_ENV_DEBUG,
     "1 disables GPU peer-to-peer transfers: collectives go through host memory (slow)",
     "0", "0", "§6; docs/seeds/seed-002.txt §4.4"},
    {"ROCR_VISIBLE_DEVICES", KB_ENV_VISIBILITY, "ROCr-level GPU filter, applied first", "unset",
     NULL, "§6"},
    {"HIP_VISIBLE_DEVICES", KB_ENV_VISIBILITY, "HIP-level GPU filter", "unset", NULL, "§6"},
    {"CUDA_VISIBLE_DEVICES", KB_ENV_VISIBILITY,
     "CUDA GPU filter; HIP honours it as an alias of HIP_VISIBLE_DEVICES", "unset", NULL,
     "§6"},
    {"GPU_DEVICE_ORDINAL", KB_ENV_VISIBILITY, "OpenCL/HIP device selection", "unset", NULL,
     "§6"},
    {"PYTORCH_ROCM_ARCH", KB_ENV_BUILD,
     "build-time only: gfx targets compiled into torch and extensions", "wheel list (§2a)",
     NULL, "§6"},
    {"CUDA_INJECTION64_PATH", KB_ENV_TOOLING, "injects a tool library into every CUDA process",
     "unset", NULL, "docs/facts/anchor-tools.md §2.2 (DCGM Software.cpp)"},
    {"CUDA_INJECTION32_PATH", KB_ENV_TOOLING, "injects a tool library (32-bit)", "unset", NULL,
     "docs/facts/anchor-tools.md §2.2"},
    {"CUDA_AUTO_BOOST", KB_ENV_TOOLING, "changes GPU clock boosting", "unset", NULL,
     "docs/facts/anchor-tools.md §2.2"},
    {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", KB_ENV_TOOLING,
     "GPU core dumps on exceptions (debugger mode)", "unset", "0", "docs/facts/anchor-tools.md §2.2"},
    {"CUDA_COREDUMP_FILE", KB_ENV_TOOLING, "GPU core dump file", "unset", NULL,
     "docs/facts/anchor-tools.md §2.2"},
    {"CUDA_DEVICE_WAITS_ON_EXCEPTION", KB_ENV_TOOLING,
     "kernels stop and wait for a debugger on exceptions", "unset", "0",
     "docs/facts/anchor-tools.md §2.2"},
    {"CUDA_PROFILE", KB_ENV_TOOLING, "legacy command-line profiler", "unset", "0",
     "docs/facts/anchor-tools.md §2.2"},
};
TABLE(kb_env, kb_envs, envs)

/* docs/facts/rocm-facts.md §8 "Common errors -> cause". */
static const struct kb_error errors[] = {
    {"hipErrorNoBinaryForGpu",
     "the binary has no code object for this GPU's target ID (arch, or xnack/sramecc "
     "mismatch)",
     "install a wheel built for the arch, rebuild with --offload-arch / PYTORCH_ROCM_ARCH, or "
     "(risky) HSA_OVERRIDE_GFX_VERSION; gpuvet doctor checks which",
     "§8 ROCm #2061"},
    {"invalid device function",
     "a kernel launch found no kernel for the device: arch missing from torch/extension, "
     "wrong override, or a mismatched custom build",
     "match the wheel to the GPU's gfx target (gpuvet doctor rule gfx-not-in-wheel)",
     "§8 pytorch #164346, ROCm #4208, pytorch #132570"},
    {"TensileLibrary.dat",
     "rocBLAS has no Tensile kernels for this arch (gfx1031/1032 without override, gfx906 on "
     "ROCm >= 6.4, gfx900 on 7.x, gfx1103)",
     "use a wheel/ROCm that still ships the kernels (gfx906: rocm6.3 index), or the "
     "documented override for RDNA2",
     "§8 rocBLAS #1339, ROCm #4625, pytorch #179865"},
    {"is not member of \"render\" group",
     "the user cannot open /dev/kfd or /dev/dri/renderD*",
     "sudo usermod -a -G render,video $LOGNAME, then log in again; in containers "
     "--group-add render",
     "§8 rocm-install-on-linux prerequisites"},
    {"Unable to open /dev/kfd read-write: Permission denied",
     "the user cannot open /dev/kfd (groups)",
     "sudo usermod -a -G render,video $LOGNAME, then log in again", "§8"},
    {"Unable to open /dev/kfd read-write: No such file or directory",
     "the container lacks --device /dev/kfd, or amdgpu/KFD is not loaded",
     "docker run --device /dev/kfd --device /dev/dri --group-add render ..., or load amdgpu",
     "§8"},
    {"Unable to open /dev/kfd read-write: Invalid argument",
     "KFD rejected the device (amdxdna conflict on Strix Halo, eGPU hot-replug, unsupported "
     "kernel/driver combination)",
     "check dmesg for kfd messages; use a supported kernel/driver pair", "§8 ROCm #5379"},
    {"HSA_STATUS_ERROR_OUT_OF_RESOURCES", "driver/firmware or memory problem",
     "check dmesg; update amdgpu driver and firmware", "§8 ROCm #1318"},
    {"No HIP GPUs are available",
     "no access (groups), a CPU/CUDA wheel, every GPU masked by *_VISIBLE_DEVICES, or an "
     "LD_LIBRARY_PATH/LD_PRELOAD conflict",
     "run gpuvet doctor: rules gpu-access, torch-build, visible-devices, ld-preload", "§8"},
    {"PCI rejects atomics", "the platform lacks PCIe atomics, so ROCm cannot use the dGPU",
     "use a slot/platform with PCIe atomics (enable in firmware if offered)",
     "§8 ROCm/amdgpu #151"},
    {"Direct firmware load for amdgpu/",
     "linux-firmware too old for the GPU, or an amdgpu-dkms/firmware mismatch",
     "install matching linux-firmware or the amdgpu-dkms firmware", "§8 ROCm #912"},
    {"Fatal error during GPU init", "firmware too old or mismatched with the driver",
     "install matching linux-firmware or the amdgpu-dkms firmware", "§8"},
    {"cannot open shared object file",
     "binary built against another ROCm major (e.g. libhipblas.so.2 on ROCm 7), or a "
     "distro/TheRock SONAME mismatch",
     "install the build for the ROCm major in use, or the matching ROCm", "§8, §4b"},
    {"hipGetDevicePropertiesR0600",
     "code built against HIP 6 headers running with a HIP 5 runtime", "use matching HIP runtime",
     "§8 clr 6.0"},
    {"undefined symbol: _ZN3c10",
     "extension built for a different torch version or ABI (wrong +rocmX.Y pairing)",
     "install matching versions from the same index", "§8"},
    {"HSA_OVERRIDE_GFX_VERSION", "bad override format (must be major.minor.stepping)",
     "set it as M.m.s in decimal, e.g. 10.3.0, or unset it", "§8 topology.c"},
    {"Faulty UTCL2 client ID",
     "GPU page fault; after an override, an override across incompatible ISAs (gfx1103 -> "
     "11.0.0)",
     "unset HSA_OVERRIDE_GFX_VERSION and use a wheel with native kernels",
     "§8 rocm-libraries #6320"},
    {"Attempting to use hipBLASLt on an unsupported architecture",
     "TORCH_BLAS_PREFER_HIPBLASLT=1 on an arch hipBLASLt does not support",
     "unset TORCH_BLAS_PREFER_HIPBLASLT", "§8 Context.cpp"},
};
TABLE(kb_error, kb_errors, errors)

/* docs/facts/rocm-facts.md §3 "HSA_OVERRIDE_GFX_VERSION: common values" and "Dangers". */
static const struct kb_override overrides[] = {
    {"gfx1031", "gfx1030", KB_OVERRIDE_SAFE, "RDNA2: same ISA as gfx1030 (gfx10-3-generic)",
     "§3 LLVM gfx10-3-generic; rocBLAS #1339"},
    {"gfx1032", "gfx1030", KB_OVERRIDE_SAFE, "RDNA2: same ISA as gfx1030", "§3"},
    {"gfx1034", "gfx1030", KB_OVERRIDE_SAFE, "RDNA2: same ISA as gfx1030", "§3"},
    {"gfx1035", "gfx1030", KB_OVERRIDE_SAFE, "RDNA2 APU: same ISA as gfx1030", "§3"},
    {"gfx1036", "gfx1030", KB_OVERRIDE_SAFE, "RDNA2 APU: same ISA as gfx1030", "§3"},
    {"gfx1033", "gfx1030", KB_OVERRIDE_RISKY,
     "Steam Deck: silently wrong results reported on rocm7.1/7.2 wheels",
     "§3 unsloth PR #8412 [single 3rd-party source]"},
    {"gfx1101", "gfx1100", KB_OVERRIDE_RISKY,
     "same VGPR count as gfx1100, but needed only before native wheels (torch < 2.6)",
     "§3 [inferred]"},
    {"gfx1102", "gfx1100", KB_OVERRIDE_RISKY,
     "gfx1100 code may use more VGPRs than gfx1102 has (needed only before torch 2.7)",
     "§3 [inferred from LLVM gfx11-generic]"},
    {"gfx1103", "gfx1100", KB_OVERRIDE_UNSAFE,
     "causes GPU page faults and hard hangs due to ISA differences",
     "§3 pytorch #179653, rocm-libraries #6320"},
    {"gfx1103", "gfx1102", KB_OVERRIDE_RISKY, "used by some; not an identical ISA", "§3"},
    {"gfx1150", "gfx1100", KB_OVERRIDE_RISKY,
     "RDNA3.5 pretending to be RDNA3: a workaround only before native wheels (torch < 2.10)",
     "§3 pytorch #164346"},
    {"gfx1151", "gfx1100", KB_OVERRIDE_RISKY,
     "RDNA3.5 pretending to be RDNA3: a workaround only before native wheels (torch < 2.10)",
     "§3 pytorch #164346"},
    {"gfx1010", "gfx1030", KB_OVERRIDE_UNSAFE,
     "RDNA1 is not RDNA2 (no dot instructions): crashes or invalid device function", "§3"},
    {"gfx1011", "gfx1030", KB_OVERRIDE_UNSAFE, "RDNA1 is not RDNA2", "§3"},
    {"gfx1012", "gfx1030", KB_OVERRIDE_UNSAFE, "RDNA1 is not RDNA2", "§3"},
    {"gfx90c", "gfx900", KB_OVERRIDE_RISKY,
     "Vega APU as gfx900: gfx900 kernels are dropped from newer rocBLAS", "§3, §2a"},
    {"gfx902", "gfx900", KB_OVERRIDE_RISKY,
     "Vega APU as gfx900: gfx900 kernels are dropped from newer rocBLAS", "§3, §2a"},
    {"gfx1200", "gfx1201", KB_OVERRIDE_SAFE, "gfx12-generic is identical to gfx1200/gfx1201",
     "§3 device-libs"},
    {"gfx1201", "gfx1200", KB_OVERRIDE_SAFE, "gfx12-generic is identical to gfx1200/gfx1201",
     "§3 device-libs"},
};
TABLE(kb_override, kb_overrides, overrides)

/* docs/facts/rocm-facts.md §2a caveat and §8: targets whose rocBLAS Tensile kernels were dropped. */
static const struct kb_tensile_gap tensile_gaps[] = {
    {"gfx906", "6.4", "6.3", "§2a ROCm #4625; unsloth PR #7354 (rocm6.3 last working)"},
    {"gfx900", "7.0", "6.4", "§2a pytorch #179865 (torch 2.12 + rocm7.2 on gfx900)"},
};
TABLE(kb_tensile_gap, kb_tensile_gaps, tensile_gaps)

/* NOT from docs/facts/rocm-facts.md: NVIDIA CUDA Toolkit Release Notes, "CUDA Toolkit and
 * Minimum Required Driver Version for CUDA Minor Version Compatibility"
 * (11.x, 12.x); the 13.x floor is from the 13.0 release notes [from memory]. */
static const struct kb_cuda_driver cuda_drivers[] = {
    {"11", "450.80.02", "NVIDIA CUDA Toolkit Release Notes, minor version compatibility"},
    {"12", "525.60.13", "NVIDIA CUDA Toolkit Release Notes, minor version compatibility"},
    {"13", "580.65.06", "NVIDIA CUDA 13.0 release notes [from memory]"},
};
TABLE(kb_cuda_driver, kb_cuda_drivers, cuda_drivers)

/* What a PyTorch process maps that decides its numerics: torch/lib of the
 * official CUDA and ROCm wheels (docs/facts/torch-bisect-anchors.md, "the framework binds
 * its own ROCm"; docs/facts/rocm-facts.md §2a), the nvidia-* wheels PyTorch depends on
 * (site-packages/nvidia/PKG/lib), and the CPU libraries Debian's python3-torch
 * links (libblas.so.3 through the BLAS alternative, oneDNN, SLEEF). */
static const struct kb_framework_lib framework_libs[] = {
    {"libtorch", 1, "torch wheel torch/lib"},         {"libc10", 1, "torch wheel torch/lib"},
    {"libshm", 0, "torch wheel torch/lib"},           {"libcaffe2_nvrtc", 0, "torch wheel"},
    {"libcuda", 0, "NVIDIA driver"},                   {"libcudart", 0, "nvidia-cuda-runtime"},
    {"libcublas", 0, "nvidia-cublas"},                 {"libcublasLt", 0, "nvidia-cublas"},
    {"libcudnn", 1, "nvidia-cudnn (libcudnn_ops, _cnn, _adv, _graph, _engines_*)"},
    {"libcufft", 1, "nvidia-cufft"},                   {"libcurand", 0, "nvidia-curand"},
    {"libcusolver", 1, "nvidia-cusolver"},             {"libcusparse", 1, "nvidia-cusparse(lt)"},
    {"libcupti", 0, "nvidia-cuda-cupti"},              {"libnvrtc", 1, "nvidia-cuda-nvrtc"},
    {"libnvJitLink", 0, "nvidia-nvjitlink"},           {"libnccl", 0, "nvidia-nccl"},
    {"libnvshmem", 1, "nvidia-nvshmem"},               {"libcufile", 1, "nvidia-cufile"},
    {"libamdhip64", 0, "ROCm wheel torch/lib"},        {"libhiprtc", 1, "ROCm wheel torch/lib"},
    {"libamd_comgr", 0, "ROCm wheel torch/lib"},       {"libhsa-runtime64", 0, "ROCm wheel"},
    {"libhsakmt", 0, "ROCm wheel"},                    {"librocblas", 0, "ROCm wheel torch/lib"},
    {"libhipblas", 0, "ROCm wheel torch/lib"},         {"libhipblaslt", 0, "ROCm wheel torch/lib"},
    {"libMIOpen", 0, "ROCm wheel torch/lib"},          {"librocfft", 0, "ROCm wheel"},
    {"libhipfft", 0, "ROCm wheel"},                    {"librocrand", 0, "ROCm wheel"},
    {"libhiprand", 0, "ROCm wheel"},                   {"librocsolver", 0, "ROCm wheel"},
    {"libhipsolver", 0, "ROCm wheel"},                 {"librocsparse", 0, "ROCm wheel"},
    {"libhipsparse", 1, "ROCm wheel"},                 {"librccl", 0, "ROCm wheel torch/lib"},
    {"libroctracer64", 0, "ROCm wheel"},               {"libroctx64", 0, "ROCm wheel"},
    {"libaotriton", 1, "ROCm wheel (flash attention kernels)"},
    {"libblas", 0, "Debian python3-torch via the libblas.so.3 alternative"},
    {"libopenblas", 1, "OpenBLAS"},                    {"liblapack", 0, "LAPACK"},
    {"libmkl", 1, "Intel MKL"},                        {"libdnnl", 0, "oneDNN (Debian)"},
    {"libsleef", 0, "SLEEF vector math (Debian)"},
};
TABLE(kb_framework_lib, kb_framework_libs, framework_libs)

int kb_framework_lib_name(const char *filename, char *name, size_t n)
{
    if (n)
        name[0] = '\0';
    const char *so = strstr(filename, ".so");
    if (!so || (so[3] != '\0' && so[3] != '.'))
        return 0;
    size_t len = (size_t)(so - filename);
    for (size_t i = 0; i < N(framework_libs); i++) {
        size_t sl = strlen(framework_libs[i].stem);
        if (strncmp(filename, framework_libs[i].stem, sl) != 0 ||
            (len != sl && !framework_libs[i].prefix) || len < sl)
            continue;
        snprintf(name, n, "%.*s", (int)len, filename);
        return 1;
    }
    return 0;
}

/* torch.use_deterministic_algorithms (PyTorch documentation, "operations that
 * throw a RuntimeError when mode=True" / "use a deterministic implementation
 * when mode=True"): the forward operations whose CUDA kernels accumulate with
 * atomics, so their results can differ between runs. */
static const struct {
    const char *op, *why;
} nondet_ops[] = {
    {"index_add", "atomic accumulation on CUDA (index_add_)"},
    {"index_add_", "atomic accumulation on CUDA"},
    {"scatter_add", "atomic accumulation on CUDA (scatter_add_)"},
    {"scatter_add_", "atomic accumulation on CUDA"},
    {"scatter_reduce", "atomic accumulation on CUDA for sum/prod/mean"},
    {"index_put_", "atomic accumulation on CUDA when accumulate=True"},
    {"_index_put_impl_", "atomic accumulation on CUDA when accumulate=True"},
    {"put_", "atomic accumulation on CUDA when accumulate=True"},
    {"embedding_bag", "atomic accumulation on CUDA"},
    {"_embedding_bag", "atomic accumulation on CUDA"},
    {"histc", "atomic accumulation on CUDA"},
    {"bincount", "atomic accumulation on CUDA with weights"},
    {"kthvalue", "non-deterministic on CUDA"},
    {"median", "non-deterministic indices on CUDA (median with dim)"},
    {"nll_loss2d", "atomic accumulation on CUDA"},
    {"ctc_loss", "non-deterministic on CUDA"},
    {"cumsum", "non-deterministic on CUDA for floating inputs unless deterministic mode is on"},
};

const char *kb_nondeterministic_op(const char *aten_name)
{
    if (!aten_name)
        return NULL;
    const char *n = strncmp(aten_name, "aten.", 5) ? aten_name : aten_name + 5;
    size_t len = strcspn(n, ".");
    for (size_t i = 0; i < N(nondet_ops); i++)
        if (strlen(nondet_ops[i].op) == len && !strncmp(nondet_ops[i].op, n, len))
            return nondet_ops[i].why;
    return NULL;
}
