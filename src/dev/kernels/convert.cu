// Conversions between fp32 and the 16- and 8-bit storage formats with the same
// semantics as src/num/fp.c: round to nearest even, subnormals kept, fp16 and
// e5m2 overflow to inf, e4m3fn (no inf) saturates to +-448 and maps inf to NaN,
// NaN stays NaN (quiet, sign kept).

// fp32 -> a small IEEE-like format with E exponent and M fraction bits.
// fn: 1 for e4m3fn (only the all-ones pattern is NaN, no inf).
__device__ gv_u32 gv_encode_small(float f, int E, int M, int fn)
{
    gv_u32 u = GV_BITS(f);
    gv_u32 sign = (u >> 31) << (E + M);
    gv_u32 a = u & 0x7fffffffu;
    gv_u32 expall = ((1u << E) - 1u) << M;
    if (a > 0x7f800000u) // NaN
        return sign | (fn ? (expall | ((1u << M) - 1u)) : (expall | (1u << (M - 1))));
    if (a == 0x7f800000u) // inf
        return sign | (fn ? (expall | ((1u << M) - 1u)) : expall);
    int bias = (1 << (E - 1)) - 1;
    int emin = 1 - bias;
    int e = (a >> 23) ? (int)(a >> 23) - 127 : -126;
    gv_u32 mant = (a & 0x7fffffu) | ((a >> 23) ? 0x800000u : 0u);
    int shift = 23 - M;
    if (e < emin)
        shift += emin - e;
    if (shift > 24)
        return sign; // below half the smallest subnormal: +-0
    gv_u32 q = mant >> shift;
    gv_u32 rem = mant & ((1u << shift) - 1u);
    gv_u32 half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    gv_u32 bits = (e < emin) ? q : (((gv_u32)(e - emin)) << M) + q;
    if (fn) {
        gv_u32 maxfin = expall | ((1u << M) - 2u); // 0x7e = 448 for e4m3fn
        if (bits > maxfin)
            bits = maxfin;
    } else if (bits >= expall) {
        bits = expall; // overflow to inf
    }
    return sign | bits;
}

__device__ float gv_decode_small(gv_u32 b, int E, int M, int fn)
{
    gv_u32 sign = (b >> (E + M)) & 1u;
    gv_u32 ef = (b >> M) & ((1u << E) - 1u);
    gv_u32 mf = b & ((1u << M) - 1u);
    int bias = (1 << (E - 1)) - 1;
    float v;
    if (fn && ef == (1u << E) - 1u && mf == (1u << M) - 1u)
        v = GV_FLOAT(0x7fc00000u);
    else if (!fn && ef == (1u << E) - 1u)
        v = mf ? GV_FLOAT(0x7fc00000u) : GV_FLOAT(0x7f800000u);
    else if (ef == 0)
        v = ldexpf((float)mf, 1 - bias - M);
    else
        v = ldexpf((float)(mf | (1u << M)), (int)ef - bias - M);
    return sign ? -v : v;
}

__device__ gv_u32 gv_f32_to_bf16(float f)
{
    gv_u32 u = GV_BITS(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (u >> 16) | 0x40u; // quiet NaN, sign kept
    u += 0x7fffu + ((u >> 16) & 1u);
    return u >> 16;
}

// fmt: 3 = f16, 4 = bf16, 5 = e4m3fn, 6 = e5m2 (enum gv_dtype values)
__device__ float gv_decode(gv_u32 b, int fmt)
{
    switch (fmt) {
    case 3: return gv_decode_small(b, 5, 10, 0);
    case 4: return GV_FLOAT(b << 16);
    case 5: return gv_decode_small(b, 4, 3, 1);
    default: return gv_decode_small(b, 5, 2, 0);
    }
}

__device__ gv_u32 gv_encode(float f, int fmt)
{
    switch (fmt) {
    case 3: return gv_encode_small(f, 5, 10, 0);
    case 4: return gv_f32_to_bf16(f);
    case 5: return gv_encode_small(f, 4, 3, 1);
    default: return gv_encode_small(f, 5, 2, 0);
    }
}

GV_KERNEL gv_cvt_u16_to_f32(const gv_u16 *x, float *y, gv_i64 n, int fmt)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        y[i] = gv_decode(x[i], fmt);
}

GV_KERNEL gv_cvt_u8_to_f32(const gv_u8 *x, float *y, gv_i64 n, int fmt)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        y[i] = gv_decode(x[i], fmt);
}

GV_KERNEL gv_cvt_f32_to_u16(const float *x, gv_u16 *y, gv_i64 n, int fmt)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        y[i] = (gv_u16)gv_encode(x[i], fmt);
}

GV_KERNEL gv_cvt_f32_to_u8(const float *x, gv_u8 *y, gv_i64 n, int fmt)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        y[i] = (gv_u8)gv_encode(x[i], fmt);
}

/* Byte matrices packed for an fp8 GEMM: a batch of rows x cols (row-major) into
 * rows of ldd bytes, zeros after the values; transposed (cols rows of ldd, the
 * rows of src along each) when transpose is set. */
GV_KERNEL gv_pack_u8(const gv_u8 *src, gv_u8 *dst, gv_i64 batch, gv_i64 rows, gv_i64 cols,
                     gv_i64 ldd, int transpose)
{
    gv_i64 outer = transpose ? cols : rows, lim = transpose ? rows : cols;
    gv_i64 n = batch * outer * ldd;
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride()) {
        gv_i64 j = i % ldd, o = (i / ldd) % outer, b = i / (ldd * outer);
        gv_i64 s = transpose ? j * cols + o : o * cols + j;
        dst[i] = j < lim ? src[b * rows * cols + s] : (gv_u8)0;
    }
}
