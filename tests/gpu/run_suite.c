/* The numerics suite through the real runner (gv_run_cases: inputs, fp64
 * references, verdicts) on one device, without the rest of the CLI: used to
 * prove the GPU backends where the gpuvet binary cannot be built (a device
 * machine without jansson's development files). Same verdicts as
 * `gpuvet check --device D --suite S --only P`.
 *   run_suite DEVICE SUITE [PATTERN]
 * Exit: 0 every case passed, 1 some did not, 77 no such device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/backend.h"
#include "num/catalog.h"
#include "check/runner.h"

extern const struct gv_backend gv_backend_cuda, gv_backend_hip;

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: run_suite DEVICE SUITE [PATTERN]\n");
        return 2;
    }
    /* the backend directly (not gv_device_open) so that this program links
     * without the CPU backend: only cuda:N and hip:N */
    const struct gv_backend *be = strncmp(argv[1], "hip", 3) == 0 ? &gv_backend_hip
                                                                    : &gv_backend_cuda;
    struct gv_device *dev = NULL;
    struct gv_err err = {0};
    const char *colon = strchr(argv[1], ':');
    if (be->open(colon ? colon + 1 : "0", &dev, &err) != GV_OK) {
        printf("skipped: no GPU (%s)\n", err.msg);
        return 77;
    }
    static const struct gv_catalog_entry *sel[4096];
    size_t n = gv_catalog_select((enum gv_suite)gv_suite_from_name(argv[2]), GV_TARGET_KERNEL,
                                 argc > 3 ? argv[3] : NULL, sel, 4096);
    struct gv_case_result *res = calloc(n ? n : 1, sizeof *res);
    struct gv_run_opts opts = {be, dev, GV_DET_QUICK, 0, NULL, NULL};
    if (gv_run_cases(sel, n, &opts, res, &err) != GV_OK) {
        printf("runner: %s\n", err.msg);
        return 3;
    }
    size_t pass = 0;
    for (size_t i = 0; i < n; i++) {
        const struct gv_case_result *r = &res[i];
        pass += r->verdict == GV_PASS;
        printf("%-46s %-7s err/bound %-9.3g normwise %-9.3g eff.bits %-5.1f %7.2f ms %s%s%s%s\n",
               r->entry->id, gv_verdict_name(r->verdict),
               r->measured ? r->m.err_over_bound : -1.0, r->measured ? r->m.normwise : -1.0,
               r->measured ? r->m.eff_bits : -1.0, r->seconds * 1e3, r->impl,
               r->det_checked ? (r->det_identical ? " [repeat: same bits]" : " [repeat: DIFFERENT]")
                              : "",
               r->error[0] ? " :: " : "", r->error);
    }
    printf("%zu cases: %zu passed, %zu not\n", n, pass, n - pass);
    gv_run_results_free(res, n);
    free(res);
    be->close(dev);
    return pass == n ? 0 : 1;
}
