/* Error of a computed output against its fp64 reference, and the verdict. */
#ifndef GV_NUM_METRICS_H
#define GV_NUM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "num/types.h"

#define GV_ULP_BUCKETS 8 /* 0, 1, 2-3, 4-7, 8-15, 16-255, 256-65535, more/NaN */

struct gv_metrics {
    size_t count;
    double max_abs;          /* max |y - ref| over finite pairs */
    double max_rel;          /* max |y - ref| / |ref| over ref != 0 */
    double normwise;         /* ||y - ref||_2 / ||ref||_2 */
    double err_over_bound;   /* max_i |y_i - ref_i| / bound_i  (<= 1 passes); 0/0 = 0,
                                x/0 = inf, NaN/Inf in y where ref is finite = inf */
    double eff_bits;         /* -log2(normwise), in [0, precision of out] (fp16: 11,
                                fp32: 24); 0 when y has NaN/Inf where ref is finite */
    double mean_signed;      /* mean (y - ref) / scale_i over scale_i > 0: negative =
                                directed down */
    double mean_toward_zero; /* mean (|ref| - |y|) / scale_i (sign-aware): > 0 = outputs
                                pulled toward zero, the signature of truncation */
    double mean_abs;         /* mean |y - ref| / scale_i, the scale for the two above */
    uint64_t ulp_hist[GV_ULP_BUCKETS]; /* distance from y to ref rounded (RNE) to the
                                          output format, in its units: a correctly
                                          rounded output lands in bucket 0 */
    uint64_t nan_count, inf_count;      /* in y where ref is finite */
    uint64_t ref_nonfinite;             /* ref itself not finite (excluded) */
    char out_digest[65];     /* sha256 of the output bytes ("" when none given) */
    size_t worst_index;      /* element with the largest err/bound (added by num-core) */
};

/* bound[i] is the a-priori error bound for element i (absolute), from
 * gv_ref_compute; scale[i] is the magnitude used for signed error (|A||B| row
 * products for GEMM, |ref| elsewhere). Either may be NULL (then |ref| and
 * unit roundoff of out are used). */
void gv_metrics_compute(const double *y, const double *ref, const double *bound,
                        const double *scale, size_t n, enum gv_dtype out_dtype,
                        const void *out_bytes, size_t out_nbytes, struct gv_metrics *m);

enum gv_verdict { GV_PASS = 0, GV_FAIL = 1, GV_ERROR = 2, GV_SKIPPED = 3 };
const char *gv_verdict_name(enum gv_verdict v);

#endif
