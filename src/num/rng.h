/* Counter-based deterministic inputs: value = f(case key, seed, tensor, index),
 * identical bits on every machine, compiler and gpuvet version. Uses only
 * integer arithmetic and exactly-rounded double operations. */
#ifndef GV_NUM_RNG_H
#define GV_NUM_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "num/types.h"

/* The n-th output (n = 0, 1, ...) of SplitMix64 started from state: the
 * bijective mixer behind every draw. */
uint64_t gv_rng_splitmix64(uint64_t state, uint64_t n);
/* FNV-1a 64-bit hash of len bytes. */
uint64_t gv_rng_fnv1a64(const void *data, size_t len);
/* 64-bit key of a case id string (FNV-1a then mixed): stable forever. */
uint64_t gv_rng_key(const char *case_id);
/* Raw 64 random bits for (key, seed, stream, index): a Philox-like or
 * SplitMix-based bijective mix of the counter. */
uint64_t gv_rng_bits(uint64_t key, uint32_t seed, uint32_t stream, uint64_t index);
/* Uniform double in [0,1) with 53 random bits. */
double gv_rng_uniform(uint64_t key, uint32_t seed, uint32_t stream, uint64_t index);
/* Inverse of the standard normal CDF (Acklam's approximation, relative error
 * < 1.15e-9), from correctly rounded operations only; p outside (0,1) gives
 * -inf (0), +inf (1) or NaN. */
double gv_rng_normal_quantile(double p);
/* One draw of distribution d, for storage format t (d = SUBNORMAL uses the
 * subnormal range of t), as an exact double (not yet rounded to t). Normal
 * draws use an inverse-CDF or Box-Muller built only from correctly rounded
 * operations and gv_ functions, so results are bit-identical everywhere. */
double gv_rng_draw(enum gv_dist d, enum gv_dtype t, uint64_t key, uint32_t seed, uint32_t stream,
                   uint64_t index);
/* Fill buf (format t, n elements) with draws rounded RNE to t. */
void gv_rng_fill(void *buf, enum gv_dtype t, size_t n, enum gv_dist d, uint64_t key, uint32_t seed,
                 uint32_t stream);

#endif
