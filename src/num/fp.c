/* Number formats by integer manipulation of the IEEE-754 binary64 encoding.
 *
 * Every conversion from double rounds exactly once, from the double's own
 * significand and exponent: nothing goes through float (a cast double->float
 * followed by float->half would round twice and get some ties wrong).
 *
 * Choices that are not dictated by IEEE-754:
 * - F8E4M3 (OCP e4m3fn) has no infinity. A finite value beyond the largest
 *   finite value (448) saturates to +-448 in both rounding modes, and +-inf
 *   becomes NaN (S.1111.111). This is the OCP specification's "saturating"
 *   conversion mode, which is what NVIDIA's __nv_cvt_*_to_fp8(.., __NV_SATFINITE)
 *   and the MI300 hardware conversions do; PyTorch's float8_e4m3fn casts do
 *   NOT saturate (they give NaN for out-of-range values). gpuvet's inputs
 *   never exceed 448, so this matters only for outputs.
 * - NaN stays NaN, keeps its sign and the top bits of its payload, and is
 *   made quiet (the top fraction bit is set), as IEEE-754 conversions do.
 * - F64 has no 32-bit encoding: gv_fp_encode(x, GV_F64, r) returns the fp32
 *   pattern of x (rounded with r); use memcpy for the double itself. */
#include "num/fp.h"

#include <math.h>
#include <string.h>

struct fmt {
    int ebits;   /* exponent field width */
    int fbits;   /* fraction field width */
    int bias;
    int fn;      /* 1: e4m3fn (no inf, only S.1111.111 is NaN, saturating) */
    int shift;   /* left shift of the pattern in its storage word (TF32: 13) */
};

static const struct fmt fmts[GV_DTYPE_COUNT] = {
    [GV_F64] = {8, 23, 127, 0, 0}, /* encode only: see the header comment */
    [GV_F32] = {8, 23, 127, 0, 0},
    [GV_TF32] = {8, 10, 127, 0, 13},
    [GV_F16] = {5, 10, 15, 0, 0},
    [GV_BF16] = {8, 7, 127, 0, 0},
    [GV_F8E4M3] = {4, 3, 7, 1, 0},
    [GV_F8E5M2] = {5, 2, 15, 0, 0},
};

static const struct fmt *fmt_of(enum gv_dtype t)
{
    return (unsigned)t < GV_DTYPE_COUNT ? &fmts[t] : &fmts[GV_F32];
}

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* 2^k for -1022 <= k <= 1023, exactly. */
static double pow2(int k) { return from_bits((uint64_t)(k + 1023) << 52); }

/* Largest finite encoding (without sign). */
static uint32_t max_finite_enc(const struct fmt *f)
{
    if (f->fn)
        return ((1u << f->ebits) - 1) << f->fbits | ((1u << f->fbits) - 2);
    return (((1u << f->ebits) - 2) << f->fbits) | ((1u << f->fbits) - 1);
}

static uint32_t nan_enc(const struct fmt *f, uint32_t sign, uint64_t dmant)
{
    uint32_t all = (1u << f->ebits) - 1;
    if (f->fn)
        return sign | all << f->fbits | ((1u << f->fbits) - 1);
    uint32_t frac = (uint32_t)(dmant >> (52 - f->fbits));
    frac |= 1u << (f->fbits - 1); /* quiet */
    return sign | all << f->fbits | frac;
}

static uint32_t inf_enc(const struct fmt *f, uint32_t sign)
{
    return sign | ((1u << f->ebits) - 1) << f->fbits;
}

/* Shift sig right by sh >= 1 with rounding; sig < 2^53. */
static uint64_t shift_round(uint64_t sig, int sh, enum gv_round r)
{
    if (sh > 60)
        return 0; /* sig < 2^53 is below half of 2^sh: both modes give 0 */
    uint64_t q = sig >> sh;
    if (r == GV_RTZ)
        return q;
    uint64_t rem = sig & ((UINT64_C(1) << sh) - 1);
    uint64_t half = UINT64_C(1) << (sh - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return q;
}

/* Encoding of x in format f, in the format's own bit width (no TF32 shift). */
static uint32_t encode_fmt(double x, const struct fmt *f, enum gv_round r)
{
    uint64_t u = dbits(x);
    uint32_t sign = (uint32_t)(u >> 63) << (f->ebits + f->fbits);
    int e = (int)((u >> 52) & 0x7ff);
    uint64_t mant = u & ((UINT64_C(1) << 52) - 1);

    if (e == 0x7ff) {
        if (mant)
            return nan_enc(f, sign, mant);
        return f->fn ? nan_enc(f, sign, 0) : inf_enc(f, sign);
    }
    if (e == 0 && mant == 0)
        return sign;

    /* |x| = sig * 2^exp2 with sig < 2^53 */
    uint64_t sig = e ? mant | (UINT64_C(1) << 52) : mant;
    int exp2 = e ? e - 1075 : -1074;
    int p = 63 - __builtin_clzll(sig) + exp2; /* floor(log2|x|) */
    int emin = 1 - f->bias;
    int emax = f->fn ? (1 << f->ebits) - 1 - f->bias : (1 << f->ebits) - 2 - f->bias;
    uint32_t maxf = max_finite_enc(f);

    if (p > emax) {
        if (f->fn || r == GV_RTZ)
            return sign | maxf;
        return inf_enc(f, sign);
    }
    int q = (p > emin ? p : emin) - f->fbits; /* quantum exponent of the result */
    uint64_t rs;
    if (exp2 >= q)
        rs = sig << (exp2 - q); /* exact: fits since p <= emax */
    else
        rs = shift_round(sig, q - exp2, r);
    /* Normal and subnormal in one formula: a carry out of the fraction moves
     * into the exponent field, which is the correct next binade. */
    uint64_t enc = ((uint64_t)(q + f->fbits + f->bias - 1) << f->fbits) + rs;
    if (rs == 0)
        return sign;
    if (enc > maxf) {
        if (f->fn || r == GV_RTZ)
            return sign | maxf;
        return inf_enc(f, sign);
    }
    return sign | (uint32_t)enc;
}

static double decode_fmt(uint32_t bits, const struct fmt *f)
{
    uint32_t fmask = (1u << f->fbits) - 1;
    uint32_t all = (1u << f->ebits) - 1;
    int neg = (bits >> (f->ebits + f->fbits)) & 1;
    uint32_t ef = (bits >> f->fbits) & all;
    uint32_t frac = bits & fmask;
    uint64_t s = (uint64_t)neg << 63;

    if (f->fn) {
        if (ef == all && frac == fmask)
            return from_bits(s | UINT64_C(0x7ff8000000000000));
    } else if (ef == all) {
        if (frac == 0)
            return from_bits(s | UINT64_C(0x7ff0000000000000));
        uint64_t m = (uint64_t)frac << (52 - f->fbits) | (UINT64_C(1) << 51);
        return from_bits(s | UINT64_C(0x7ff0000000000000) | m);
    }
    double v;
    if (ef == 0)
        v = (double)frac * pow2(1 - f->bias - f->fbits);
    else
        v = (double)(frac | (1u << f->fbits)) * pow2((int)ef - f->bias - f->fbits);
    return neg ? -v : v;
}

uint32_t gv_fp_encode(double x, enum gv_dtype t, enum gv_round r)
{
    const struct fmt *f = fmt_of(t);
    return encode_fmt(x, f, r) << f->shift;
}

double gv_fp_decode(uint32_t bits, enum gv_dtype t)
{
    const struct fmt *f = fmt_of(t);
    if (t == GV_F64) {
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    return decode_fmt(bits >> f->shift, f);
}

double gv_fp_round(double x, enum gv_dtype t, enum gv_round r)
{
    if (t == GV_F64)
        return x;
    const struct fmt *f = fmt_of(t);
    return decode_fmt(encode_fmt(x, f, r), f);
}

/* ---- float helpers for hot loops ---- */

static uint32_t fbits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Round the fp32 pattern u to keep the top (23 - drop) fraction bits. The
 * pattern is monotonic in magnitude for finite values, subnormals included,
 * so integer rounding of the pattern is rounding of the value; a carry into
 * the exponent is the next binade, and past the largest finite it is inf. */
static uint32_t round_f32_bits(uint32_t u, int drop, enum gv_round r)
{
    uint32_t mask = (1u << drop) - 1;
    if ((u & 0x7f800000u) == 0x7f800000u) {
        if (u & 0x007fffffu)
            return (u | 0x00400000u) & ~mask; /* quiet NaN stays NaN */
        return u;
    }
    if (r == GV_RNE)
        u += (mask >> 1) + ((u >> drop) & 1);
    return u & ~mask;
}

float gv_round_f32_to_tf32(float x, enum gv_round r)
{
    return float_of(round_f32_bits(fbits_of(x), 13, r));
}

uint16_t gv_f32_to_bf16(float x, enum gv_round r)
{
    return (uint16_t)(round_f32_bits(fbits_of(x), 16, r) >> 16);
}

float gv_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t gv_f32_to_f16(float x, enum gv_round r)
{
    return (uint16_t)encode_fmt((double)x, &fmts[GV_F16], r);
}

float gv_f16_to_f32(uint16_t h)
{
    return (float)decode_fmt(h, &fmts[GV_F16]); /* exact: every f16 is a float */
}

/* ---- buffers ---- */

double gv_fp_load(const void *data, enum gv_dtype t, size_t i)
{
    const unsigned char *p = data;
    switch (t) {
    case GV_F64: {
        double v;
        memcpy(&v, p + i * 8, 8);
        return v;
    }
    case GV_F32:
    case GV_TF32: {
        float v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case GV_F16:
    case GV_BF16: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        return decode_fmt(h, fmt_of(t));
    }
    case GV_F8E4M3:
    case GV_F8E5M2:
        return decode_fmt(p[i], fmt_of(t));
    default:
        return NAN;
    }
}

void gv_fp_store(void *data, enum gv_dtype t, size_t i, double x)
{
    unsigned char *p = data;
    switch (t) {
    case GV_F64:
        memcpy(p + i * 8, &x, 8);
        break;
    case GV_F32:
    case GV_TF32: {
        uint32_t u = gv_fp_encode(x, t, GV_RNE);
        memcpy(p + i * 4, &u, 4);
        break;
    }
    case GV_F16:
    case GV_BF16: {
        uint16_t h = (uint16_t)gv_fp_encode(x, t, GV_RNE);
        memcpy(p + i * 2, &h, 2);
        break;
    }
    case GV_F8E4M3:
    case GV_F8E5M2:
        p[i] = (unsigned char)gv_fp_encode(x, t, GV_RNE);
        break;
    default:
        break;
    }
}

/* ---- format constants ---- */

double gv_fp_unit_roundoff(enum gv_dtype t)
{
    if (t == GV_F64)
        return pow2(-53);
    return pow2(-(fmt_of(t)->fbits + 1));
}

double gv_fp_min_normal(enum gv_dtype t)
{
    if (t == GV_F64)
        return pow2(-1022);
    return pow2(1 - fmt_of(t)->bias);
}

double gv_fp_max_finite(enum gv_dtype t)
{
    if (t == GV_F64)
        return from_bits(UINT64_C(0x7fefffffffffffff));
    const struct fmt *f = fmt_of(t);
    return decode_fmt(max_finite_enc(f), f);
}

/* Sign-ordered integer of a value of format t: -(magnitude pattern) for
 * negatives, so adjacent values differ by 1 and +0 == -0. */
static int64_t ordered(double x, enum gv_dtype t)
{
    if (t == GV_F64) {
        uint64_t u = dbits(x);
        int64_t mag = (int64_t)(u & ~(UINT64_C(1) << 63));
        return (u >> 63) ? -mag : mag;
    }
    const struct fmt *f = fmt_of(t);
    uint32_t e = encode_fmt(x, f, GV_RNE);
    int w = f->ebits + f->fbits;
    int64_t mag = (int64_t)(e & ((1u << w) - 1));
    return ((e >> w) & 1) ? -mag : mag;
}

uint64_t gv_fp_ulp_distance(double a, double b, enum gv_dtype t)
{
    if (isnan(a) || isnan(b))
        return UINT64_MAX;
    if (t == GV_F8E4M3 && (isinf(a) || isinf(b)))
        return UINT64_MAX; /* no infinity in the format */
    int64_t oa = ordered(a, t), ob = ordered(b, t);
    return oa > ob ? (uint64_t)oa - (uint64_t)ob : (uint64_t)ob - (uint64_t)oa;
}
