/* Which CUDA targets run on which GPU (src/kb/cuda_compat.c), case by case from
 * NVIDIA's compatibility rules (CUDA C++ Programming Guide, "Binary
 * Compatibility" / "PTX Compatibility"; arch- and family-specific targets of
 * CUDA 12.9+): a cubin runs on the same major with an equal or higher minor,
 * an "a" cubin on its exact arch only, an "f" cubin within its family, PTX on
 * any equal or newer GPU (an "a" PTX on its arch only). The targets of
 * torch 2.11.0+cu130 are the ones gpuvet read from libtorch_cuda.so on the
 * H200 machine (identical to cuobjdump's list). */
#include "kb/cuda_compat.h"
#include "t.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static enum gv_cuda_cover cover(const char *const *t, size_t n, int maj, int min, char *how)
{
    return gv_cuda_targets_cover(t, n, maj, min, how, 256);
}

static void rules(void)
{
    char how[256];
    static const char *const ampere[] = {"sm_80", "sm_86", "sm_90"};
    T_EQ_INT(cover(ampere, N(ampere), 8, 9, how), GV_CUDA_SASS); /* 8.9 runs 8.0 and 8.6 cubins */
    T_EQ_STR(how, "sm_80, sm_86");
    T_EQ_INT(cover(ampere, N(ampere), 8, 0, how), GV_CUDA_SASS);
    T_EQ_STR(how, "sm_80");
    T_EQ_INT(cover(ampere, N(ampere), 12, 0, how), GV_CUDA_NONE); /* no forward across majors */
    T_EQ_INT(cover(ampere, N(ampere), 7, 5, how), GV_CUDA_NONE);  /* nor backward */
    static const char *const cu126[] = {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86",
                                        "sm_90", "compute_90"};
    T_EQ_INT(cover(cu126, N(cu126), 12, 0, how), GV_CUDA_PTX); /* Blackwell: PTX JIT only */
    T_EQ_STR(how, "compute_90");
    static const char *const hopper_a[] = {"sm_90a"};
    T_EQ_INT(cover(hopper_a, N(hopper_a), 9, 0, how), GV_CUDA_SASS);
    T_EQ_INT(cover(hopper_a, N(hopper_a), 9, 1, how), GV_CUDA_NONE); /* exact arch only */
    static const char *const fam[] = {"sm_100f"};
    T_EQ_INT(cover(fam, N(fam), 10, 3, how), GV_CUDA_SASS);
    T_EQ_INT(cover(fam, N(fam), 12, 0, how), GV_CUDA_NONE);
    static const char *const ptx_a[] = {"compute_100a"};
    T_EQ_INT(cover(ptx_a, N(ptx_a), 10, 3, how), GV_CUDA_NONE);
    T_EQ_INT(cover(ptx_a, N(ptx_a), 10, 0, how), GV_CUDA_PTX);
    static const char *const odd[] = {"gfx90a", "sm_", "sm_9x", "compute_", NULL};
    T_EQ_INT(cover(odd, N(odd), 9, 0, how), GV_CUDA_NONE); /* not CUDA targets: ignored */
    T_CHECK(strstr(how, "9.0") != NULL);
}

static void torch_on_machines(void)
{
    char how[256];
    static const char *const cu130[] = {"sm_100", "sm_100a", "sm_103a", "sm_120", "sm_120a",
                                        "sm_121a", "sm_75", "sm_80", "sm_86", "sm_89",
                                        "sm_90", "sm_90a"};
    T_EQ_INT(cover(cu130, N(cu130), 9, 0, how), GV_CUDA_SASS); /* H200 */
    T_EQ_STR(how, "sm_90, sm_90a");
    T_EQ_INT(cover(cu130, N(cu130), 10, 3, how), GV_CUDA_SASS); /* B300: sm_100, sm_103a */
    T_EQ_STR(how, "sm_100, sm_103a");
    T_EQ_INT(cover(cu130, N(cu130), 12, 1, how), GV_CUDA_SASS); /* DGX Spark GB10 */
    T_EQ_INT(cover(cu130, N(cu130), 7, 0, how), GV_CUDA_NONE);  /* V100: dropped in cu130 */
}

static void from_snapshot(void)
{
    json_t *snap = json_loads(
        "{\"python\": {\"environments\": ["
        " {\"prefix\": \"/opt/torch/.venv\", \"torch\": {\"version\": \"2.11.0+cu130\","
        "  \"gpu_targets\": {\"collected\": true, \"targets\": [\"sm_80\", \"sm_90\"]}}},"
        " {\"prefix\": \"/opt/old\", \"torch\": {\"version\": \"2.1.0+cu118\","
        "  \"gpu_targets\": {\"collected\": true, \"targets\": [\"sm_70\", \"sm_80\", \"compute_80\"]}}},"
        " {\"prefix\": \"/opt/rocm-torch\", \"torch\": {\"version\": \"2.3.0+rocm6.0\","
        "  \"gpu_targets\": {\"collected\": true, \"targets\": [\"gfx90a\"]}}},"
        " {\"prefix\": \"/opt/cpu\", \"torch\": {\"version\": \"2.3.0+cpu\","
        "  \"gpu_targets\": {\"collected\": false}}},"
        " {\"prefix\": \"/usr\"} ]}}", 0, NULL);
    T_CHECK(snap != NULL);
    json_t *a = gv_cuda_framework_compat(snap, "9.0");
    T_EQ_INT(json_array_size(a), 2); /* ROCm, CPU and torch-less environments are left out */
    T_EQ_STR(json_string_value(json_object_get(json_array_get(a, 0), "cover")), "sass");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(a, 1), "cover")), "ptx");
    T_CHECK(strstr(json_string_value(json_object_get(json_array_get(a, 1), "message")),
                   "JIT") != NULL);
    json_decref(a);
    a = gv_cuda_framework_compat(snap, "12.0");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(a, 0), "cover")), "none");
    T_CHECK(strstr(json_string_value(json_object_get(json_array_get(a, 0), "message")),
                   "no kernel image is available") != NULL);
    json_decref(a);
    a = gv_cuda_framework_compat(snap, "bogus");
    T_EQ_INT(json_array_size(a), 0);
    json_decref(a);
    a = gv_cuda_framework_compat(NULL, "9.0");
    T_EQ_INT(json_array_size(a), 0);
    json_decref(a);
    json_decref(snap);
}

int main(void)
{
    T_RUN(rules);
    T_RUN(torch_on_machines);
    T_RUN(from_snapshot);
    return t_done();
}
