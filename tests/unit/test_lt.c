/* The BLAS choice for GEMM on a GPU (src/dev/lt.c): PyTorch's rule as
 * rocm-facts.md states it (TORCH_BLAS_PREFER_HIPBLASLT / _CUBLASLT and
 * getHipblasltPreferredArchs: gfx90a, gfx942; gfx1200/gfx1201 from ROCm 6.4;
 * gfx950 from 6.5), GPUVET_BLAS, the Lt workspace variables (KiB), and which
 * cases the Lt library takes in auto mode. */
#include <stdlib.h>

#include "dev/lt.h"
#include "t.h"

static void env_clear(void)
{
    unsetenv("TORCH_BLAS_PREFER_HIPBLASLT");
    unsetenv("TORCH_BLAS_PREFER_CUBLASLT");
    unsetenv("GPUVET_BLAS");
}

static int decide(enum gv_blas_mode m, const char *vendor, const char *arch, int runtime, int have,
                  char *why)
{
    return gv_blas_decide(m, vendor, arch, runtime, have, why, 256);
}

static void hip_auto_arches(void)
{
    char why[256];
    env_clear();
    const int r63 = 60342134, r64 = 60443484, r65 = 60500000, r57 = 50731921;
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx90a:sramecc+:xnack-", r57, 1, why), 1);
    T_CHECK(strncmp(why, "hipBLASLt", 9) == 0);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx942:sramecc+:xnack-", r64, 1, why), 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx942", r64, 0, why), 0); /* not loaded */
    T_CHECK(strstr(why, "rocBLAS") == why && strstr(why, "not loaded"));
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1100", r64, 1, why), 0);
    T_CHECK(strncmp(why, "rocBLAS", 7) == 0 && strstr(why, "gfx1100"));
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1030", r64, 1, why), 0);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1201", r63, 1, why), 0);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1201", r64, 1, why), 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1200", r64, 1, why), 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx950", r64, 1, why), 0);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx950", r65, 1, why), 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx9420", r64, 1, why), 0); /* whole name only */
}

static void hip_torch_variables(void)
{
    char why[256];
    env_clear();
    setenv("TORCH_BLAS_PREFER_HIPBLASLT", "0", 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx942", 60443484, 1, why), 0);
    T_CHECK(strstr(why, "TORCH_BLAS_PREFER_HIPBLASLT=0") != NULL);
    setenv("TORCH_BLAS_PREFER_HIPBLASLT", "1", 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1100", 60443484, 1, why), 1);
    env_clear();
    setenv("TORCH_BLAS_PREFER_CUBLASLT", "1", 1); /* the alias works on ROCm too */
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1100", 60443484, 1, why), 1);
    T_CHECK(strstr(why, "TORCH_BLAS_PREFER_CUBLASLT=1") != NULL);
    setenv("TORCH_BLAS_PREFER_CUBLASLT", "yes", 1); /* not 0/1: the arch rule */
    T_EQ_INT(decide(GV_BLAS_AUTO, "hip", "gfx1100", 60443484, 1, why), 0);
    env_clear();
}

static void cuda_rules(void)
{
    char why[256];
    env_clear();
    T_EQ_INT(decide(GV_BLAS_AUTO, "cuda", "sm_90", 0, 1, why), 0);
    T_CHECK(strncmp(why, "cuBLAS (auto", 12) == 0);
    setenv("TORCH_BLAS_PREFER_CUBLASLT", "1", 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "cuda", "sm_90", 0, 1, why), 1);
    T_CHECK(strncmp(why, "cuBLASLt", 8) == 0);
    setenv("TORCH_BLAS_PREFER_HIPBLASLT", "1", 1); /* a ROCm-only name: ignored on CUDA */
    setenv("TORCH_BLAS_PREFER_CUBLASLT", "0", 1);
    T_EQ_INT(decide(GV_BLAS_AUTO, "cuda", "sm_90", 0, 1, why), 0);
    env_clear();
    T_EQ_INT(decide(GV_BLAS_LT, "cuda", "sm_80", 0, 1, why), 1);
    T_EQ_INT(decide(GV_BLAS_CLASSIC, "hip", "gfx942", 60443484, 1, why), 0);
    T_CHECK(strstr(why, "GPUVET_BLAS=classic") != NULL);
}

static void blas_mode_variable(void)
{
    enum gv_blas_mode m = GV_BLAS_LT;
    struct gv_err e = {0};
    env_clear();
    T_EQ_INT(gv_blas_mode(&m, &e), GV_OK);
    T_EQ_INT(m, GV_BLAS_AUTO);
    setenv("GPUVET_BLAS", "lt", 1);
    T_EQ_INT(gv_blas_mode(&m, &e), GV_OK);
    T_EQ_INT(m, GV_BLAS_LT);
    setenv("GPUVET_BLAS", "classic", 1);
    T_EQ_INT(gv_blas_mode(&m, &e), GV_OK);
    T_EQ_INT(m, GV_BLAS_CLASSIC);
    setenv("GPUVET_BLAS", "hipblaslt", 1);
    T_EQ_INT(gv_blas_mode(&m, &e), GV_E_USAGE);
    T_CHECK(strstr(e.msg, "GPUVET_BLAS='hipblaslt'") != NULL);
    env_clear();
}

static void choose(void)
{
    struct gv_blas_choice b;
    struct gv_err e = {0};
    env_clear();
    T_EQ_INT(gv_blas_choose(&b, "hip", "gfx942", 60443484, 1, "", &e), GV_OK);
    T_EQ_INT(b.use_lt, 1);
    T_EQ_INT(b.mode, GV_BLAS_AUTO);
    T_CHECK(strncmp(b.why, "hipBLASLt", 9) == 0);
    T_EQ_INT(gv_blas_choose(&b, "hip", "gfx942", 60443484, 0, "not found", &e), GV_OK);
    T_EQ_INT(b.use_lt, 0); /* auto without the library: rocBLAS, no error */
    setenv("GPUVET_BLAS", "lt", 1);
    T_EQ_INT(gv_blas_choose(&b, "cuda", "sm_90", 0, 0, "libcublasLt.so.13: not found", &e),
             GV_E_LIB);
    T_CHECK(strstr(e.msg, "cuBLASLt is not loaded: libcublasLt.so.13: not found") != NULL);
    setenv("GPUVET_BLAS", "fast", 1);
    T_EQ_INT(gv_blas_choose(&b, "cuda", "sm_90", 0, 1, "", &e), GV_E_USAGE);
    env_clear();
}

static void workspace_variable(void)
{
    unsetenv("GV_TEST_WS");
    T_EQ_INT(gv_lt_workspace_bytes("GV_TEST_WS", 1 << 20), 1 << 20);
    setenv("GV_TEST_WS", "77824", 1); /* PyTorch's ROCm default, in KiB */
    T_EQ_INT(gv_lt_workspace_bytes("GV_TEST_WS", 1 << 20), 76 << 20);
    setenv("GV_TEST_WS", "0", 1);
    T_EQ_INT(gv_lt_workspace_bytes("GV_TEST_WS", 1 << 20), 0);
    setenv("GV_TEST_WS", "12k", 1);
    T_EQ_INT(gv_lt_workspace_bytes("GV_TEST_WS", 5), 5);
    setenv("GV_TEST_WS", "-4", 1);
    T_EQ_INT(gv_lt_workspace_bytes("GV_TEST_WS", 5), 5);
    unsetenv("GV_TEST_WS");
}

static void what_lt_takes(void)
{
    struct gv_case f32 = {.in_dtype = GV_F32, .compute_dtype = GV_F32};
    struct gv_case tf32 = {.in_dtype = GV_F32, .compute_dtype = GV_TF32};
    struct gv_case bf16 = {.in_dtype = GV_BF16, .compute_dtype = GV_F32};
    struct gv_case f16acc = {.in_dtype = GV_F16, .compute_dtype = GV_F16};
    struct gv_case f64 = {.in_dtype = GV_F64, .compute_dtype = GV_F64};
    T_EQ_INT(gv_lt_takes(GV_BLAS_AUTO, &f32), 1);
    T_EQ_INT(gv_lt_takes(GV_BLAS_AUTO, &tf32), 1);
    T_EQ_INT(gv_lt_takes(GV_BLAS_AUTO, &bf16), 1);
    T_EQ_INT(gv_lt_takes(GV_BLAS_AUTO, &f16acc), 0);
    T_EQ_INT(gv_lt_takes(GV_BLAS_AUTO, &f64), 0);
    T_EQ_INT(gv_lt_takes(GV_BLAS_LT, &f64), 1);
    T_EQ_INT(gv_lt_takes(GV_BLAS_LT, &f16acc), 1);
}

int main(void)
{
    T_RUN(hip_auto_arches);
    T_RUN(hip_torch_variables);
    T_RUN(cuda_rules);
    T_RUN(blas_mode_variable);
    T_RUN(choose);
    T_RUN(workspace_variable);
    T_RUN(what_lt_takes);
    return t_done();
}
