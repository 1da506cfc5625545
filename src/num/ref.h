/* fp64 references on the CPU, computed from the exact (already rounded)
 * inputs; multithreaded; GEMM-shaped work through the BLAS library's dgemm.
 * Also the a-priori error bound per output element for the case's declared
 * precision (docs/facts/numerics-methods.md §6), and the scale for signed error. */
#ifndef GV_NUM_REF_H
#define GV_NUM_REF_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "num/op.h" /* gv_case_out_count, gv_case_inputs */
#include "num/types.h"

/* ref[n], bound[n], scale[n] with n = gv_case_out_count(c). nthreads 0 = all cores. */
int gv_ref_compute(const struct gv_case *c, const struct gv_buffer *in, int nin, double *ref,
                   double *bound, double *scale, int nthreads, struct gv_err *err);

/* The autocast network (GV_OP_MLP), src/num/ref_mlp.c; called by gv_ref_compute. */
int gv_ref_mlp(const struct gv_case *c, const struct gv_buffer *in, double *ref, double *bound,
               double *scale, struct gv_err *err);

/* The same, through the on-disk cache keyed by the inputs' digest and the
 * case's semantics ($XDG_CACHE_HOME/gpuvet/ref/<key>.ref): a miss computes
 * and stores, a corrupt entry is recomputed. *hit tells which. input_digest
 * may be NULL (then it is computed from the inputs). A cache that cannot be
 * read or written is not an error: the reference is computed. */
int gv_ref_cached(const struct gv_case *c, const struct gv_buffer *in, int nin,
                  const char *input_digest, double *ref, double *bound, double *scale,
                  int *hit, struct gv_err *err);

/* Version of the bound model (docs/numerics.md); part of every cache key, so
 * changing the model invalidates cached references. */
#define GV_REF_MODEL_VERSION 2
/* Version of the cache file layout. */
#define GV_REFCACHE_VERSION 1
/* Size of the cache file header in bytes. */
#define GV_REFCACHE_HEADER 120

/* Cache key (64 hex digits + NUL): sha256 over the file and model versions,
 * op, formats, unary function, every shape field, eps, causal and the input
 * digest. The case id, distribution and seed are not in it: the inputs'
 * digest stands for them. */
void gv_refcache_key(const struct gv_case *c, const char *input_digest, char key[65]);
/* sha256 hex over the inputs' formats, counts and bytes. */
void gv_ref_input_digest(const struct gv_buffer *in, int nin, char out[65]);

/* Cache file: magic "GPUVETRF", u32 layout version, u32 model version, u64 n,
 * 64-byte hex key, 32-byte sha256 of the payload, then ref[n], bound[n],
 * scale[n] as doubles (host byte order: a cache is per machine).
 * gv_refcache_parse checks every field against the expected key and n and
 * copies the payload out; any mismatch or corruption gives GV_E_FORMAT. */
int gv_refcache_parse(const void *data, size_t len, const char key[65], size_t n, double *ref,
                      double *bound, double *scale, struct gv_err *err);
/* Builds a file image (free() it). */
int gv_refcache_encode(const char key[65], size_t n, const double *ref, const double *bound,
                       const double *scale, void **data, size_t *len, struct gv_err *err);

#endif
