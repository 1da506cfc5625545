/* Classes of impl strings and the loader variables (impl_class.h).
 *
 * Sources of the naming rules:
 *  [C] CUTLASS's kernel names, NVIDIA/cutlass/python/cutlass_library/gemm_operation.py
 *      (procedural_name, core_name): "cutlass_{opcode class}_{extended name}_..."
 *      where the opcode class is "simt", "tensorop" or "wmma_tensorop", and the
 *      extended name is the accumulator letter (s = fp32, h = fp16) with the
 *      MMA instruction shape ("s1688gemm": fp32 accumulation, 16x8x8) and the
 *      input type when it differs ("_tf32", "_bf16", "_e4m3"); cuBLAS ships such
 *      kernels as "cutlass_80_tensorop_s1688gemm_...".
 *  [P] PTX ISA, mma.sync shapes: m16n8k8 takes .tf32 (sm_80) and .f16 (sm_75);
 *      m16n8k16 takes .f16/.bf16 (sm_80). So a 1688 fp32-accumulating kernel
 *      without an fp16/bf16 input type is TF32.
 *  [X] cuBLAS's own kernel names as profilers show them (not documented by
 *      NVIDIA: TensorRT-LLM issue #1541): "{arch}_sgemm_..." for SIMT fp32
 *      ("ampere_sgemm_128x64_nn"), "sm80_xmma_gemm_{AB storage}{AB math}_
 *      {accumulator}..." where the math type says the tensor-op kind
 *      ("f32f32_tf32f32": TF32; "f16f16_f16f32": fp16; "f32f32_f32f32": FFMA,
 *      no tensor op), "ampere_s1688gemm_..." (cutlass issue #2286 for the
 *      shape fields).
 *  [T] Tensile/TensileLite kernel names (rocBLAS, hipBLASLt): "Cijk_Ailk_Bljk_
 *      {types}_MT{macro tile}_MI{matrix instruction}_..."; a kernel with a
 *      MatrixInstruction runs MFMA (matrix cores), one without runs on the
 *      vector ALUs (Tensile docs, "Kernel parameters": MatrixInstruction).
 *      Types: "HHS"/"HSS" fp16 in, fp32 compute; "BBS"/"BSS" bf16.
 *  [N] docs/facts/numerics-methods.md §5: PyTorch allow_tf32 on ROCm ->
 *      hipBLASLt HIPBLAS_COMPUTE_32F_FAST_TF32 -> CDNA3 v_mfma_f32_*_xf32; cuBLAS
 *      BF16x9 fp32 emulation (CUBLAS_COMPUTE_32F_EMULATED_16BFX9, S12).
 *  [G] gpuvet's own impl strings (src/dev/gpu_run.c: "kernel gv_...") and the
 *      library calls of its backends (src/dev/cuda/cuda.c, hip/hip.c, lt.c).
 * Loader variables: ld.so(8) (LD_LIBRARY_PATH: directories searched first,
 * separated by ':' or ';'; LD_PRELOAD: shared objects loaded before all others,
 * separated by ':' or spaces); ROCm docs, "ROCm environment variables"
 * (ROCM_PATH: where the ROCm stack the process uses is installed). */
#include "kb/impl_class.h"

#include <ctype.h>
#include <string.h>

enum {
    C_GPUVET,
    C_BF16X9,
    C_FP8,
    C_HALF,
    C_TF32,
    C_MFMA,
    C_VALU,
    C_SIMT,
    C_CALL,
    C_OTHER,
    C_N
};

static const struct kb_impl_class classes[C_N] = {
    [C_GPUVET] = {"gpuvet-kernel", "gpuvet kernel", "[G] src/dev/gpu_run.c"},
    [C_BF16X9] = {"bf16x9-emulation", "fp32 emulated with BF16 tensor ops (BF16x9)",
                  "[N] docs/facts/numerics-methods.md §5 (S12)"},
    [C_FP8] = {"fp8-tensor-op", "FP8 tensor-op kernel", "[C] CUTLASS type names e4m3/e5m2"},
    [C_HALF] = {"half-tensor-op", "fp16/bf16 tensor-op kernel",
                "[C] CUTLASS names, [X] xmma math types, [T] Tensile types"},
    [C_TF32] = {"tf32-tensor-op", "TF32 tensor-op kernel",
                "[C] CUTLASS _tf32, [P] m16n8k8, [X] xmma tf32 math, [N] xf32"},
    [C_MFMA] = {"mfma", "MFMA matrix-core kernel", "[T] Tensile MatrixInstruction (MI)"},
    [C_VALU] = {"tensile-valu", "Tensile kernel without matrix instructions",
                "[T] Tensile kernel name without MI"},
    [C_SIMT] = {"simt-fp32", "SIMT fp32 kernel", "[X] {arch}_sgemm, xmma f32 math, [C] simt"},
    [C_CALL] = {"library-call", "library call (kernel not recorded)",
                "[G] the backends' impl strings"},
    [C_OTHER] = {"other", "other", "no rule matched"},
};

/* Every substring (lower case) must occur, one ending in '#' followed by a
 * digit; the first rule that holds wins, so the more specific rules come first. */
static const struct {
    int cls;
    const char *all[2];
} rules[] = {
    {C_GPUVET, {"kernel gv_", NULL}},
    {C_GPUVET, {"kernels gv_", NULL}},
    {C_BF16X9, {"bf16x9", NULL}},
    {C_BF16X9, {"16bfx9", NULL}},
    {C_FP8, {"e4m3", NULL}},
    {C_FP8, {"e5m2", NULL}},
    {C_FP8, {"fp8", NULL}},
    {C_HALF, {"bf16", NULL}},
    {C_HALF, {"fp16", NULL}},
    {C_HALF, {"f16f16", NULL}},
    {C_HALF, {"h16816", NULL}},
    {C_HALF, {"s16816", NULL}},
    {C_HALF, {"h1688", NULL}},
    {C_HALF, {"884gemm", NULL}},
    {C_HALF, {"_hhs_", NULL}},
    {C_HALF, {"_hss_", NULL}},
    {C_HALF, {"_bbs_", NULL}},
    {C_HALF, {"_bss_", NULL}},
    {C_HALF, {"compute_16f", NULL}},
    {C_TF32, {"tf32", NULL}},
    {C_TF32, {"xf32", NULL}},
    {C_TF32, {"s1688gemm", NULL}},
    {C_MFMA, {"cijk_", "_mi#"}},
    {C_MFMA, {"mfma", NULL}},
    {C_VALU, {"cijk_", NULL}},
    {C_SIMT, {"_sgemm", NULL}},
    {C_SIMT, {"sgemm_", NULL}},
    {C_SIMT, {"_simt_", NULL}},
    {C_SIMT, {"xmma_gemm_f32f32_f32f32", NULL}},
    {C_CALL, {"cublas", NULL}},
    {C_CALL, {"rocblas", NULL}},
    {C_CALL, {"hipblaslt", NULL}},
    {C_CALL, {"cudnn", NULL}},
    {C_CALL, {"miopen", NULL}},
    {C_CALL, {"cblas_", NULL}},
};

static int holds(const char *s, const char *pat)
{
    size_t n = strlen(pat);
    if (!n || pat[n - 1] != '#')
        return strstr(s, pat) != NULL;
    for (const char *p = s; *p; p++)
        if (!strncmp(p, pat, n - 1) && isdigit((unsigned char)p[n - 1]))
            return 1;
    return 0;
}

const struct kb_impl_class *kb_impl_class_of(const char *impl)
{
    char l[1024];
    size_t i = 0;
    for (; impl && impl[i] && i + 1 < sizeof l; i++)
        l[i] = (char)tolower((unsigned char)impl[i]);
    l[i] = '\0';
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        int all = 1;
        for (int k = 0; k < 2 && rules[r].all[k]; k++)
            all &= holds(l, rules[r].all[k]);
        if (all)
            return &classes[rules[r].cls];
    }
    return &classes[C_OTHER];
}

/* ---------- loader variables ---------- */

enum loader { L_DIRS, L_FILES, L_PREFIX };

static const struct {
    const char *name;
    enum loader kind;
    const char *seps;
} loaders[] = {
    {"LD_LIBRARY_PATH", L_DIRS, ":;"},
    {"LD_PRELOAD", L_FILES, ": "},
    {"ROCM_PATH", L_PREFIX, ""},
};
#define N_LOADERS (sizeof loaders / sizeof loaders[0])

static int loader_index(const char *name)
{
    for (size_t i = 0; name && i < N_LOADERS; i++)
        if (!strcmp(name, loaders[i].name))
            return (int)i;
    return -1;
}

int kb_loader_var(const char *name)
{
    return loader_index(name) >= 0;
}

/* The length of s without trailing '/' (but "/" stays "/"). */
static size_t trimmed(const char *s, size_t n)
{
    while (n > 1 && s[n - 1] == '/')
        n--;
    return n;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Whether one entry of a loader variable (s, n bytes) explains path. */
static int entry_explains(enum loader kind, const char *s, size_t n, const char *path)
{
    if (!n)
        return 0;
    if (kind == L_FILES) {
        if (memchr(s, '/', n))
            return strlen(path) == n && !strncmp(path, s, n);
        return strlen(base_name(path)) == n && !strncmp(base_name(path), s, n);
    }
    n = trimmed(s, n);
    const char *slash = strrchr(path, '/');
    if (!slash || strncmp(path, s, n) != 0 || path[n] != '/')
        return 0;
    return kind == L_PREFIX || (size_t)(slash - path) == n;
}

int kb_loader_explains(const char *name, const char *value, const char *path)
{
    int i = loader_index(name);
    if (i < 0 || !value || !path || path[0] != '/')
        return 0;
    if (loaders[i].kind == L_PREFIX)
        return entry_explains(L_PREFIX, value, strlen(value), path);
    const char *s = value;
    while (*s) {
        size_t n = strcspn(s, loaders[i].seps);
        if (entry_explains(loaders[i].kind, s, n, path))
            return 1;
        s += n;
        if (*s)
            s++;
    }
    return 0;
}
