/* kb/impl_class.h: the kind of computation an impl string names, and which
 * loader variable explains which library file. Inputs are kernel names as
 * profilers show them and gpuvet's own impl strings; the expected classes are
 * stated here from the naming rules (CUTLASS, cuBLAS, Tensile), not computed. */
#include "kb/impl_class.h"
#include "t.h"

static void test_classes(void)
{
    static const struct {
        const char *impl, *want;
    } t[] = {
        {"cublasSgemmStridedBatched CUBLAS_DEFAULT_MATH", "library-call"},
        {"cublasGemmStridedBatchedEx CUBLAS_COMPUTE_32F_FAST_TF32", "tf32-tensor-op"},
        {"cublasGemmStridedBatchedEx CUBLAS_COMPUTE_32F_EMULATED_16BFX9", "bf16x9-emulation"},
        {"cublasGemmStridedBatchedEx CUBLAS_COMPUTE_16F", "half-tensor-op"},
        {"aten::mm, kernels: ampere_sgemm_128x64_nn", "simt-fp32"},
        {"aten::mm, kernels: volta_sgemm_32x128_tn", "simt-fp32"},
        {"cutlass_80_simt_sgemm_128x128_8x4_nn_align1", "simt-fp32"},
        {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma",
         "simt-fp32"},
        {"aten::mm, kernels: sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_"
         "warpsize2x2x1_tensor16x8x8_kernel",
         "tf32-tensor-op"},
        {"cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", "tf32-tensor-op"},
        {"ampere_s1688gemm_128x128_32x3_nn", "tf32-tensor-op"},
        {"cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1", "half-tensor-op"},
        {"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
         "segment_k_off_kernel__5x_cublas",
         "half-tensor-op"},
        {"ampere_h16816gemm_256x128_ldg8_stages_32x3_nn", "half-tensor-op"},
        {"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128", "fp8-tensor-op"},
        {"Cijk_Ailk_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_1LDSB0_GRVW4", "mfma"},
        {"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_GRVW8", "half-tensor-op"},
        {"Cijk_Ailk_Bljk_SB_MT64x64x8_SE_K1_TT4_4_WG16_16_1", "tensile-valu"},
        {"hipblasLtMatmul HIPBLAS_COMPUTE_32F_FAST_TF32 (heuristic algorithm)", "tf32-tensor-op"},
        {"rocblas_gemm_strided_batched_ex compute=151", "library-call"},
        {"kernel gv_gemm_f32 (fp32 accumulation; vendor BLAS: cuBLAS not loaded)", "gpuvet-kernel"},
        {"kernels gv_cvt (f32 -> f32 -> e4m3, RNE)", "gpuvet-kernel"},
        {"torch.softmax, kernels: cunn_SoftMaxForward", "other"},
        {"", "other"},
        {NULL, "other"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const struct kb_impl_class *c = kb_impl_class_of(t[i].impl);
        T_CHECK(c && c->name && c->source);
        if (c && strcmp(c->id, t[i].want))
            fprintf(stderr, "  %s: %s, expected %s\n", t[i].impl ? t[i].impl : "(null)", c->id,
                    t[i].want);
        T_CHECK(c && !strcmp(c->id, t[i].want));
    }
}

static void test_loaders(void)
{
    T_CHECK(kb_loader_var("LD_LIBRARY_PATH") && kb_loader_var("LD_PRELOAD") &&
            kb_loader_var("ROCM_PATH"));
    T_CHECK(!kb_loader_var("PATH") && !kb_loader_var("NVIDIA_TF32_OVERRIDE") && !kb_loader_var(NULL));
    const char *lp = "LD_LIBRARY_PATH";
    T_CHECK(kb_loader_explains(lp, "/opt/a:/tmp/x/", "/tmp/x/libcublas.so.13"));
    T_CHECK(kb_loader_explains(lp, "/tmp/x", "/tmp/x/libcublas.so.13"));
    T_CHECK(!kb_loader_explains(lp, "/tmp/x", "/tmp/x/sub/libcublas.so.13")); /* not searched */
    T_CHECK(!kb_loader_explains(lp, "/tmp/x", "/tmp/xy/libcublas.so.13"));
    T_CHECK(!kb_loader_explains(lp, "", "/tmp/x/libcublas.so.13"));
    T_CHECK(!kb_loader_explains(lp, "::", "/libcublas.so.13"));
    T_CHECK(!kb_loader_explains(lp, "/tmp/x", "libcublas.so.13")); /* not a path */
    const char *pre = "LD_PRELOAD";
    T_CHECK(kb_loader_explains(pre, "/tmp/x/libcublas.so.13 libfoo.so", "/usr/lib/libfoo.so"));
    T_CHECK(kb_loader_explains(pre, "/tmp/x/libcublas.so.13:libfoo.so", "/tmp/x/libcublas.so.13"));
    T_CHECK(!kb_loader_explains(pre, "/tmp/x/libcublas.so.13", "/usr/lib/libcublas.so.13"));
    T_CHECK(kb_loader_explains("ROCM_PATH", "/opt/rocm-6.0/", "/opt/rocm-6.0/lib/librocblas.so.4"));
    T_CHECK(!kb_loader_explains("ROCM_PATH", "/opt/rocm-6.0", "/opt/rocm-6.0.2/lib/librocblas.so.4"));
    T_CHECK(!kb_loader_explains("PATH", "/tmp/x", "/tmp/x/libcublas.so.13"));
}

int main(void)
{
    T_RUN(test_classes);
    T_RUN(test_loaders);
    return t_done();
}
