/* Benchmark: ELF reading and device-code scanning of big host libraries.
 * Usage: bench_offload FILE...   prints the median of 5 runs per step.
 * Built and run by tests/bench/offload_scan.sh; not part of CTest. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "env/elf.h"
#include "env/offload.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* step 0: gv_elf_read_file; 1: full scan; 2: quick scan. */
static double run(const char *path, int step, size_t *targets)
{
    double t[5];
    for (int i = 0; i < 5; i++) {
        struct gv_err err = {0};
        double t0 = now();
        int rc;
        if (step == 0) {
            struct gv_elf_info e;
            rc = gv_elf_read_file(path, &e, &err);
            if (!rc) {
                *targets = e.n_sections;
                gv_elf_free(&e);
            }
        } else {
            struct gv_offload_targets o;
            rc = gv_offload_scan_file_ex(path, step == 2 ? GV_OFFLOAD_QUICK : 0, &o, NULL, &err);
            if (!rc) {
                *targets = o.n_targets;
                gv_offload_free(&o);
            }
        }
        if (rc) {
            fprintf(stderr, "%s: %s\n", path, err.msg);
            return -1;
        }
        t[i] = now() - t0;
    }
    qsort(t, 5, sizeof t[0], cmp);
    return t[2];
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"elf headers", "offload scan (full)",
                                        "offload scan (quick)"};
    for (int a = 1; a < argc; a++) {
        printf("%s\n", argv[a]);
        for (int step = 0; step < 3; step++) {
            size_t n = 0;
            double s = run(argv[a], step, &n);
            if (s < 0)
                return 1;
            printf("  %-22s %9.2f ms  (%zu %s)\n", names[step], s * 1e3, n,
                   step ? "targets" : "sections");
        }
    }
    return 0;
}
