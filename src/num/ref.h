/* fp64 references on the CPU, computed from the exact (already rounded)
 * inputs; multithreaded; GEMM-shaped work through the BLAS library's dgemm.
 * Also the a-priori error bound per output element for the case's declared
 * precision (numerics-methods.md section 6), and the scale for signed error. */
#ifndef GV_NUM_REF_H
#define GV_NUM_REF_H

#include <stddef.h>

#include "base/err.h"
#include "num/types.h"

/* Number of elements of the case's output, and of each input. */
size_t gv_case_out_count(const struct gv_case *c);
int gv_case_inputs(const struct gv_case *c, size_t counts[4]); /* returns nin */

/* ref[n], bound[n], scale[n] with n = gv_case_out_count(c). nthreads 0 = all cores. */
int gv_ref_compute(const struct gv_case *c, const struct gv_buffer *in, int nin, double *ref,
                   double *bound, double *scale, int nthreads, struct gv_err *err);

/* The same, through the on-disk cache keyed by the inputs' digest
 * ($XDG_CACHE_HOME/gpuvet/ref/<digest>): a miss computes and stores, a
 * corrupt entry is recomputed. *hit tells which. */
int gv_ref_cached(const struct gv_case *c, const struct gv_buffer *in, int nin,
                  const char *input_digest, double *ref, double *bound, double *scale,
                  int *hit, struct gv_err *err);

#endif
