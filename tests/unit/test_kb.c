/* Knowledge-base queries. Expected values are read off rocm-facts.md by hand
 * (section noted at each check), not produced by the code. */
#include <string.h>

#include "kb/gpu_peaks.h"
#include "kb/kb.h"
#include "t.h"

static void versions(void)
{
    T_CHECK(kb_vercmp("6.10", "6.9") > 0);
    T_CHECK(kb_vercmp("6.0", "6.0.0") == 0);
    T_CHECK(kb_vercmp("2.3.0+rocm6.0", "2.3.0") == 0);
    T_CHECK(kb_vercmp("5.7.1", "6.0") < 0);
    T_CHECK(kb_vercmp_n("6.0.2", "6.0", 2) == 0);
    T_CHECK(kb_vercmp_n("6.1.2", "6.0", 2) > 0);
    T_EQ_INT(kb_major("7.14.60850"), 7);
    T_EQ_INT(kb_major("abc"), -1);
    char buf[32];
    T_EQ_STR(kb_major_minor("6.0.2-66", buf, sizeof buf), "6.0");
    T_EQ_STR(kb_local_label("2.3.0+rocm6.0"), "rocm6.0");
    T_CHECK(kb_local_label("2.3.0") == NULL);
    T_EQ_STR(kb_public_version("2.8.0+rocm6.4", buf, sizeof buf), "2.8.0");
}

static void package_versions(void)
{
    char buf[32];
    /* §5: ROCm int = MAJOR*10000 + MINOR*100 + PATCH */
    T_EQ_STR(kb_release_from_pkgver("6.0.0.60000-91~22.04", buf, sizeof buf), "6.0.0");
    T_EQ_STR(kb_release_from_pkgver("5.7.31921.50700-63~22.04", buf, sizeof buf), "5.7.0");
    T_EQ_STR(kb_release_from_pkgver("1:6.3.6.60200-1697589.22.04", buf, sizeof buf), "6.2.0");
    T_EQ_STR(kb_release_from_pkgver("4.2.0.60200-66~24.04", buf, sizeof buf), "6.2.0");
    /* amdgpu 30.x driver numbering (§5; encoding inferred) */
    T_EQ_STR(kb_release_from_pkgver("1:6.16.6.30100000-2212064.22.04", buf, sizeof buf),
             "30.10.0");
    /* a Debian version carries no ROCm integer */
    T_CHECK(kb_release_from_pkgver("5.7.1-3", buf, sizeof buf) == NULL);
    T_CHECK(kb_release_from_pkgver("", buf, sizeof buf) == NULL);
}

static void torch_matrix(void)
{
    /* §1 */
    const struct kb_torch_line *t = kb_torch_line("2.3.0+rocm6.0");
    T_CHECK(t != NULL);
    T_EQ_STR(kb_torch_variant(t, "6.0"), "6.0");
    T_EQ_STR(kb_torch_variant(t, "5.7"), "5.7");
    T_CHECK(kb_torch_variant(t, "6.1") == NULL);
    T_EQ_STR(t->torchvision, "0.18");
    T_EQ_STR(kb_torch_for_rocm("6.0")->torch, "2.4");
    T_EQ_STR(kb_torch_for_rocm("5.7")->torch, "2.3");
    T_EQ_STR(kb_torch_for_rocm("6.2")->torch, "2.7"); /* 2.7: rocm6.2.4, rocm6.3 */
    T_EQ_STR(kb_torch_variant(kb_torch_line("2.6.0"), "6.2"), "6.2.4");
    T_EQ_STR(kb_torch_for_rocm("6.3")->torch, "2.9");
    T_CHECK(kb_torch_for_rocm("4.2") == NULL);
}

static void wheel_archs(void)
{
    /* §2a: gfx942 only in the rocm6.0 build of 2.3 */
    T_CHECK(!kb_arch_in_list(kb_wheel_arch("2.3.0", "5.7")->archs, "gfx942"));
    T_CHECK(kb_arch_in_list(kb_wheel_arch("2.3.0", "6.0")->archs, "gfx942"));
    T_CHECK(kb_arch_in_list(kb_wheel_arch("2.2.1", "5.7")->archs, "gfx1100"));
    T_CHECK(!kb_arch_in_list(kb_wheel_arch("2.5.1", "6.2")->archs, "gfx1101"));
    T_CHECK(kb_arch_in_list(kb_wheel_arch("2.6.0", "6.2.4")->archs, "gfx1101"));
    T_CHECK(!kb_arch_in_list(kb_wheel_arch("2.9.0", "6.4")->archs, "gfx1151"));
    T_CHECK(kb_arch_in_list(kb_wheel_arch("2.10.0", "7.0")->archs, "gfx1151"));
    T_CHECK(!kb_arch_in_list(kb_wheel_arch("2.12.0", "7.2")->archs, "gfx1103"));
    T_CHECK(kb_wheel_arch("3.0", "8.0") == NULL);
    T_EQ_STR(kb_first_torch_with_arch("gfx1151"), "2.10");
    T_EQ_STR(kb_first_torch_with_arch("gfx1201"), "2.7");
    T_EQ_STR(kb_first_torch_with_arch("gfx942"), "2.3");
    T_CHECK(kb_first_torch_with_arch("gfx1031") == NULL);
    T_CHECK(kb_arch_in_list("gfx90a;gfx942", "gfx90") == 0);
    T_CHECK(kb_arch_in_list("gfx90a, gfx942", "gfx942") == 1);
}

static void gpus(void)
{
    /* §2c */
    T_EQ_STR(kb_gpu_by_gfx("gfx1100")->family, "RDNA3");
    T_EQ_INT(kb_gpu_by_gfx("gfx90a")->gfx_target_version, 90010);
    T_EQ_STR(kb_gpu_by_target_version(100302)->gfx, "gfx1032");
    T_CHECK(kb_gpu_by_gfx("gfx1103")->apu);
    char buf[16];
    kb_gfx_name(9, 0, 10, buf, sizeof buf);
    T_EQ_STR(buf, "gfx90a");
    kb_gfx_name(11, 0, 3, buf, sizeof buf);
    T_EQ_STR(buf, "gfx1103");
    /* §2b */
    T_CHECK(kb_arch_in_list(kb_rocm_support("6.0.2")->archs, "gfx942"));
    T_CHECK(!kb_arch_in_list(kb_rocm_support("5.7.1")->archs, "gfx942"));
    T_CHECK(!kb_arch_in_list(kb_rocm_support("6.3")->archs, "gfx1101"));
    T_CHECK(kb_arch_in_list(kb_rocm_support("6.4")->archs, "gfx1201"));
}

static void overrides(void)
{
    unsigned a, b, s;
    T_EQ_INT(kb_parse_override("10.3.0", &a, &b, &s), 0);
    T_EQ_INT(a, 10);
    T_EQ_INT(kb_parse_override("9.0.10", &a, &b, &s), 0);
    T_EQ_INT(s, 10);
    /* §3: sscanf("%u.%u.%u%c") with limits major <= 63, minor/stepping <= 255 */
    T_CHECK(kb_parse_override("10.3", &a, &b, &s) != 0);
    T_CHECK(kb_parse_override("10.3.0 ", &a, &b, &s) != 0);
    T_CHECK(kb_parse_override("gfx1030", &a, &b, &s) != 0);
    T_CHECK(kb_parse_override("64.0.0", &a, &b, &s) != 0);
    T_CHECK(kb_parse_override("11.0.256", &a, &b, &s) != 0);
    T_CHECK(kb_parse_override("-1.0.0", &a, &b, &s) != 0);
    T_CHECK(kb_parse_override("", &a, &b, &s) != 0);
    T_EQ_INT(kb_override("gfx1031", "gfx1030")->verdict, KB_OVERRIDE_SAFE);
    T_EQ_INT(kb_override("gfx1103", "gfx1100")->verdict, KB_OVERRIDE_UNSAFE);
    T_EQ_INT(kb_override("gfx1010", "gfx1030")->verdict, KB_OVERRIDE_UNSAFE);
    T_EQ_INT(kb_override("gfx1033", "gfx1030")->verdict, KB_OVERRIDE_RISKY);
    T_CHECK(kb_override("gfx90a", "gfx942") == NULL);
}

static void sonames_hip_kmd(void)
{
    /* §4b */
    T_EQ_STR(kb_soname_for(kb_soname("hip-runtime"), 5), "libamdhip64.so.5");
    T_EQ_STR(kb_soname_for(kb_soname("hipblas"), 6), "libhipblas.so.2");
    T_EQ_STR(kb_soname_for(kb_soname("rocblas"), 7), "librocblas.so.5");
    T_CHECK(kb_soname_for(kb_soname("rocblas"), 4) == NULL);
    /* §2b HIP versions */
    char buf[32];
    T_EQ_STR(kb_rocm_from_hip("5.7.31921-d1770ee1b", buf, sizeof buf), "5.7");
    T_EQ_STR(kb_rocm_from_hip("6.0.32831", buf, sizeof buf), "6.0.2");
    T_EQ_STR(kb_rocm_from_hip("6.2.41133-dd7f95766", buf, sizeof buf), "6.2.0");
    T_EQ_STR(kb_rocm_from_hip("6.4.43484", buf, sizeof buf), "6.4.3");
    T_EQ_STR(kb_rocm_from_hip("6.5.99999", buf, sizeof buf), "6.5"); /* fallback */
    T_CHECK(kb_rocm_from_hip("x", buf, sizeof buf) == NULL);
    /* §5 KMD window */
    T_CHECK(kb_kmd_supports(kb_kmd("6.1.0"), "5.7"));
    T_CHECK(kb_kmd_supports(kb_kmd("6.1"), "6.4"));
    T_CHECK(!kb_kmd_supports(kb_kmd("6.1"), "7.0"));
    T_CHECK(!kb_kmd_supports(kb_kmd("6.4"), "6.0"));
    T_CHECK(kb_kmd_supports(kb_kmd("30.10.1"), "7.0.2"));
    T_CHECK(!kb_kmd_supports(kb_kmd("30.10"), "7.1"));
    T_CHECK(kb_kmd_supports(kb_kmd("30.30.2"), "7.2"));
    T_CHECK(kb_kmd("4.0") == NULL);
}

static void envs_errors(void)
{
    T_EQ_INT(kb_env("NVIDIA_TF32_OVERRIDE")->kind, KB_ENV_NUMERICS);
    T_EQ_INT(kb_env("MIOPEN_DEBUG_CONV_WINOGRAD")->kind, KB_ENV_NUMERICS);
    T_EQ_INT(kb_env("HSA_OVERRIDE_GFX_VERSION_2")->kind, KB_ENV_OVERRIDE);
    T_EQ_INT(kb_env("HSA_OVERRIDE_GFX_VERSION")->kind, KB_ENV_OVERRIDE);
    T_CHECK(kb_env("MIOPEN_DEBUG_CONV_") == NULL); /* a prefix alone is no variable */
    T_CHECK(kb_env("HOME") == NULL);
    T_CHECK(kb_env_is_quiet(kb_env("AMD_SERIALIZE_KERNEL"), "0"));
    T_CHECK(!kb_env_is_quiet(kb_env("AMD_SERIALIZE_KERNEL"), "3"));
    T_CHECK(!kb_env_is_quiet(kb_env("HSA_ENABLE_SDMA"), "0"));
    /* §8 */
    T_CHECK(strstr(kb_error_match("RuntimeError: HIP error: invalid device function")->meaning,
                   "no kernel") != NULL);
    T_EQ_STR(kb_error_match("hipErrorNoBinaryForGpu: Unable to find code object")->pattern,
             "hipErrorNoBinaryForGpu");
    T_CHECK(kb_error_match("all good") == NULL);
    /* §2a caveat */
    T_EQ_STR(kb_tensile_gap("gfx906", "6.4.1")->last_good_rocm, "6.3");
    T_CHECK(kb_tensile_gap("gfx906", "6.3") == NULL);
    T_CHECK(kb_tensile_gap("gfx900", "7.2") != NULL);
    T_EQ_STR(kb_cuda_driver("12.4")->min_driver, "525.60.13");
}

/* Every table row names a source; every wheel arch row is non-empty. */
static void tables_have_sources(void)
{
    size_t n;
    const struct kb_torch_line *t = kb_torch_lines(&n);
    for (size_t i = 0; i < n; i++)
        T_CHECK(t[i].source && *t[i].source && t[i].rocm[0]);
    const struct kb_env *e = kb_envs(&n);
    for (size_t i = 0; i < n; i++)
        T_CHECK(e[i].source && *e[i].source && e[i].effect && e[i].dflt);
    const struct kb_error *er = kb_errors(&n);
    for (size_t i = 0; i < n; i++)
        T_CHECK(er[i].source && er[i].fix);
    const struct kb_gpu *g = kb_gpus(&n);
    for (size_t i = 0; i < n; i++) {
        char name[16];
        unsigned v = g[i].gfx_target_version;
        kb_gfx_name(v / 10000, v / 100 % 100, v % 100, name, sizeof name);
        T_EQ_STR(name, g[i].gfx); /* the KFD encoding round-trips (§2c) */
    }
}

/* How much cache a benchmark's operands must outgrow: the reported L2, MI300X's
 * Infinity Cache above it, and on an unknown AMD device the largest known. */
static void cache_to_outgrow(void)
{
    const struct kb_gpu_peak *h200 = kb_gpu_peak_find("NVIDIA H200");
    const struct kb_gpu_peak *mi300 = kb_gpu_peak_find("AMD Instinct MI300X");
    T_CHECK(h200 && mi300);
    if (!h200 || !mi300)
        return;
    T_CHECK(kb_gpu_cache_bytes(h200, 52428800, 0) == 52428800);
    T_CHECK(kb_gpu_cache_bytes(NULL, 0, 0) == 64.0 * (1 << 20));
    T_CHECK(kb_gpu_cache_bytes(mi300, 4194304, 1) == 256e6);
    T_CHECK(kb_gpu_cache_bytes(NULL, 4194304, 1) == 256e6);
    T_CHECK(kb_gpu_cache_bytes(NULL, 300e6, 1) == 300e6);
}

int main(void)
{
    T_RUN(versions);
    T_RUN(package_versions);
    T_RUN(torch_matrix);
    T_RUN(wheel_archs);
    T_RUN(gpus);
    T_RUN(overrides);
    T_RUN(sonames_hip_kmd);
    T_RUN(envs_errors);
    T_RUN(tables_have_sources);
    T_RUN(cache_to_outgrow);
    return t_done();
}
