/* Every embedded kernel compiles with the real NVRTC (no GPU needed) for sm_80
 * and sm_90, and the PTX defines every expected entry point. Skipped (77)
 * where no libnvrtc can be found. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/gpu.h"
#include "dev/kernel_sources.h"
#include "t.h"

static struct gv_api_nvrtc api;
static struct gv_vlib lib;

static void compile_for(const char *arch)
{
    struct gv_rtc_out out;
    struct gv_err err = {0};
    int rc = gv_nvrtc_compile(&api, arch, &out, &err);
    if (rc)
        fprintf(stderr, "%s: %s\nlog:\n%s\n", arch, err.msg, out.log ? out.log : "");
    T_EQ_INT(rc, GV_OK);
    T_CHECK(out.is_ptx);
    T_CHECK(out.size > 1000);
    T_CHECK(strstr(out.compiler, "nvrtc ") == out.compiler);
    char target[64];
    snprintf(target, sizeof target, ".target sm_%s", arch + strlen("compute_"));
    T_CHECK(out.code && strstr(out.code, target));
    for (int i = 0; i < gv_kernel_entry_count && out.code; i++) {
        char entry[128];
        snprintf(entry, sizeof entry, ".entry %s(", gv_kernel_entries[i]);
        if (!strstr(out.code, entry))
            fprintf(stderr, "%s: PTX lacks %s\n", arch, entry);
        T_CHECK(strstr(out.code, entry) != NULL);
    }
    gv_rtc_out_free(&out);
}

static void cubin_for_sm90(void)
{
    if (!api.nvrtcGetCUBIN)
        return;
    struct gv_rtc_out out;
    struct gv_err err = {0};
    T_EQ_INT(gv_nvrtc_compile(&api, "sm_90", &out, &err), GV_OK);
    T_CHECK(!out.is_ptx);
    /* a CUBIN is an ELF file */
    T_CHECK(out.size > 4 && memcmp(out.code, "\177ELF", 4) == 0);
    gv_rtc_out_free(&out);
}

static void compile_error_keeps_log(void)
{
    /* An architecture NVRTC does not know: the error names the option. */
    struct gv_rtc_out out;
    struct gv_err err = {0};
    int rc = gv_nvrtc_compile(&api, "compute_1", &out, &err);
    T_CHECK(rc != GV_OK);
    T_CHECK(strstr(err.msg, "--gpu-architecture=compute_1") != NULL);
    gv_rtc_out_free(&out);
}

static void every_file_is_embedded(void)
{
    T_CHECK(gv_kernel_sources_count >= 8);
    char *all = gv_kernels_joined();
    T_CHECK(all != NULL);
    for (int i = 0; i < gv_kernel_entry_count && all; i++)
        T_CHECK(strstr(all, gv_kernel_entries[i]) != NULL);
    free(all);
}

static void compile_sm80(void) { compile_for("compute_80"); }
static void compile_sm90(void) { compile_for("compute_90"); }

int main(void)
{
    struct gv_err err = {0};
    if (gv_vlib_open(GV_LIB_NVRTC, &lib, &api, &err) != GV_OK) {
        printf("skipped: libnvrtc not found (%s)\n", err.msg);
        return 77;
    }
    fprintf(stderr, "NVRTC: %s (%s)\n", lib.path, lib.how);
    T_RUN(every_file_is_embedded);
    T_RUN(compile_sm80);
    T_RUN(compile_sm90);
    T_RUN(cubin_for_sm90);
    T_RUN(compile_error_keeps_log);
    gv_vlib_close(&lib);
    return t_done();
}
