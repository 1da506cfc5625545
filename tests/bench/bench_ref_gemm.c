/* Benchmark: throughput of the fp64 reference GEMM (gv_ref_compute: exact
 * loads, C = AB, S = |A||B|, R^2 = A^2 B^2 and the per-element bound) against
 * OpenBLAS's own cblas_dgemm on the same sizes. Not part of CTest.
 * Usage: bench_ref_gemm [sizes...]   (default 512 1024 2048)
 * OPENBLAS_NUM_THREADS=1 shows what the BLAS threading buys. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "num/fp.h"
#include "num/ref.h"
#include "num/rng.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench(int n)
{
    size_t nn = (size_t)n * (size_t)n;
    float *a = malloc(nn * 4), *b = malloc(nn * 4);
    double *da = malloc(nn * 8), *db = malloc(nn * 8), *dc = malloc(nn * 8);
    double *ref = malloc(nn * 8), *bound = malloc(nn * 8), *scale = malloc(nn * 8);
    if (!a || !b || !da || !db || !dc || !ref || !bound || !scale) {
        fprintf(stderr, "out of memory at %d\n", n);
        return 1;
    }
    uint64_t key = gv_rng_key("bench.gemm");
    gv_rng_fill(a, GV_F32, nn, GV_DIST_NORMAL, key, 1, 0);
    gv_rng_fill(b, GV_F32, nn, GV_DIST_NORMAL, key, 1, 1);
    for (size_t i = 0; i < nn; i++) {
        da[i] = a[i];
        db[i] = b[i];
    }
    double flop = 2.0 * n * n * (double)n;
    int reps = n <= 512 ? 5 : n <= 1024 ? 3 : 1;
    double t_blas = 1e30, t_ref = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, da, n, db, n, 0.0,
                    dc, n);
        double t1 = now();
        t_blas = t1 - t0 < t_blas ? t1 - t0 : t_blas;
    }
    struct gv_case c = {.id = "bench.gemm", .op = GV_OP_GEMM, .in_dtype = GV_F32,
                        .compute_dtype = GV_F32, .out_dtype = GV_F32, .batch = 1, .m = n, .n = n,
                        .k = n};
    struct gv_buffer in[2] = {{GV_F32, nn, a}, {GV_F32, nn, b}};
    struct gv_err err;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (gv_ref_compute(&c, in, 2, ref, bound, scale, 0, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        double t1 = now();
        t_ref = t1 - t0 < t_ref ? t1 - t0 : t_ref;
    }
    int same = 1;
    for (size_t i = 0; i < nn; i++)
        same &= ref[i] == dc[i];
    printf("%5d^3  dgemm %7.2f GFLOP/s (%.3f s)  reference %7.2f GFLOP/s (%.3f s)  "
           "fraction %.2f  ref==dgemm %s\n",
           n, flop / t_blas * 1e-9, t_blas, flop / t_ref * 1e-9, t_ref, t_blas / t_ref,
           same ? "yes" : "NO");
    free(a);
    free(b);
    free(da);
    free(db);
    free(dc);
    free(ref);
    free(bound);
    free(scale);
    return 0;
}

int main(int argc, char **argv)
{
    printf("OpenBLAS threads: %d\n", openblas_get_num_threads());
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= bench(atoi(argv[i]));
    } else {
        rc |= bench(512);
        rc |= bench(1024);
        rc |= bench(2048);
    }
    return rc;
}
