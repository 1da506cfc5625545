// Row softmax, max-subtracted: y = exp(x - max) / sum exp(x - max).
GV_KERNEL gv_softmax_f32(const float *x, float *y, gv_i64 rows, gv_i64 len)
{
    __shared__ float sh[GV_BLOCK];
    gv_i64 row = blockIdx.x;
    if (row >= rows)
        return;
    const float *p = x + row * len;
    float *q = y + row * len;
    float m = -GV_FLOAT(0x7f800000u);
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        m = fmaxf(m, p[i]);
    m = gv_block_max(m, sh);
    float acc = 0.0f;
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        acc += expf(p[i] - m);
    float s = gv_block_sum(acc, sh);
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        q[i] = expf(p[i] - m) / s;
}
