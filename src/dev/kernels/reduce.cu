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

// fp64 storage and accumulation (sum.f64 cases), same fixed order.
GV_KERNEL gv_reduce_f64(const double *x, double *y, gv_i64 rows, gv_i64 len, int mean)
{
    __shared__ double sh[GV_BLOCK];
    gv_i64 row = blockIdx.x;
    if (row >= rows)
        return;
    const double *p = x + row * len;
    double acc = 0.0;
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        acc += p[i];
    unsigned t = threadIdx.x;
    sh[t] = acc;
    __syncthreads();
    for (unsigned s = GV_BLOCK / 2; s > 0; s >>= 1) {
        if (t < s)
            sh[t] = sh[t] + sh[t + s];
        __syncthreads();
    }
    if (t == 0)
        y[row] = mean ? sh[0] / (double)len : sh[0];
}
