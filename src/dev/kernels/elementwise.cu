// y = f(x) elementwise; fn is enum gv_unary (src/num/types.h).

// 1/(1+e^-x) overflows e^-x for x < -88 and returns 0 where the true value is
// a representable subnormal; e^x/(1+e^x) keeps it for negative x.
__device__ float gv_sigmoid(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}
__device__ float gv_unary_f(float x, int fn)
{
    switch (fn) {
    case 1: return expf(x);
    case 2: return logf(x);
    case 3: return tanhf(x);
    case 4: return erff(x);
    case 5: return x * 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    case 6: return x * gv_sigmoid(x);
    case 7: return gv_sigmoid(x);
    case 8: return 1.0f / sqrtf(x);
    default: return x;
    }
}

GV_KERNEL gv_unary_f32(const float *x, float *y, gv_i64 n, int fn)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        y[i] = gv_unary_f(x[i], fn);
}
