// One block per row: y[row] = sum (or mean) of x[row][0..len).
GV_KERNEL gv_reduce_f32(const float *x, float *y, gv_i64 rows, gv_i64 len, int mean)
{
    __shared__ float sh[GV_BLOCK];
    gv_i64 row = blockIdx.x;
    if (row >= rows)
        return;
    const float *p = x + row * len;
    float acc = 0.0f;
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        acc += p[i];
    float s = gv_block_sum(acc, sh);
    if (threadIdx.x == 0)
        y[row] = mean ? s / (float)len : s;
}
