// y = f(x) elementwise; fn is enum gv_unary (src/num/types.h).
__device__ float gv_unary_f(float x, int fn)
{
    switch (fn) {
    case 1: return expf(x);
    case 2: return logf(x);
    case 3: return tanhf(x);
    case 4: return erff(x);
    case 5: return x * 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    case 6: return x / (1.0f + expf(-x));
    case 7: return 1.0f / (1.0f + expf(-x));
    case 8: return 1.0f / sqrtf(x);
    default: return x;
    }
}

GV_KERNEL gv_unary_f32(const float *x, float *y, gv_i64 n, int fn)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        y[i] = gv_unary_f(x[i], fn);
}
