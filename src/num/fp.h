/* Number formats: conversions between double and every storage format, with
 * round-to-nearest-even or round-toward-zero, subnormals, NaN/Inf and the
 * saturation each format defines. Bit-exact and platform-independent. */
#ifndef GV_NUM_FP_H
#define GV_NUM_FP_H

#include <stdint.h>

#include "num/types.h"

enum gv_round { GV_RNE = 0, GV_RTZ = 1 };

/* F64 has no 32-bit encoding: encode/decode with t = GV_F64 use the fp32
 * pattern; gv_fp_round(x, GV_F64, r) is the identity. */
/* Encode x in format t (F16/BF16 -> 16-bit pattern, F8 -> 8-bit pattern,
 * F32/TF32 -> 32-bit pattern of the float; TF32 keeps 10 fraction bits).
 * F8E4M3 saturates to +-448 and maps inf to NaN (OCP "fn" variant, saturating
 * mode as PyTorch's float8_e4m3fn casts do not: see fp.c); F8E5M2 overflows to inf. */
uint32_t gv_fp_encode(double x, enum gv_dtype t, enum gv_round r);
/* Exact value of an encoding. */
double gv_fp_decode(uint32_t bits, enum gv_dtype t);
/* decode(encode(x)): x rounded to format t. */
double gv_fp_round(double x, enum gv_dtype t, enum gv_round r);
/* float helpers used by hot loops */
float gv_round_f32_to_tf32(float x, enum gv_round r);
uint16_t gv_f32_to_f16(float x, enum gv_round r);
float gv_f16_to_f32(uint16_t h);
uint16_t gv_f32_to_bf16(float x, enum gv_round r);
float gv_bf16_to_f32(uint16_t h);

/* Read element i of a buffer of format t as double. */
double gv_fp_load(const void *data, enum gv_dtype t, size_t i);
/* Store x (already representable or to be rounded RNE) as element i. TF32
 * elements are fp32 words holding x rounded to 10 fraction bits. */
void gv_fp_store(void *data, enum gv_dtype t, size_t i, double x);

/* Unit roundoff u of the format (fp64 2^-53, fp32 2^-24, tf32 2^-11, fp16
 * 2^-11, bf16 2^-8, e4m3 2^-4, e5m2 2^-3). */
double gv_fp_unit_roundoff(enum gv_dtype t);
/* Smallest positive normal and largest finite value. */
double gv_fp_min_normal(enum gv_dtype t);
double gv_fp_max_finite(enum gv_dtype t);
/* Distance in units in the last place between two values of format t,
 * via sign-ordered bit patterns (NaN gives UINT64_MAX). */
uint64_t gv_fp_ulp_distance(double a, double b, enum gv_dtype t);

#endif
