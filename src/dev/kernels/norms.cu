// LayerNorm (two-pass: mean, then variance of x - mean; biased variance) and
// RMSNorm, one block per row, fp32 statistics.
GV_KERNEL gv_layernorm_f32(const float *x, const float *gamma, const float *beta, float *y,
                           gv_i64 rows, gv_i64 len, float eps)
{
    __shared__ float sh[GV_BLOCK];
    gv_i64 row = blockIdx.x;
    if (row >= rows)
        return;
    const float *p = x + row * len;
    float *q = y + row * len;
    float acc = 0.0f;
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        acc += p[i];
    float mean = gv_block_sum(acc, sh) / (float)len;
    float acc2 = 0.0f;
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK) {
        float d = p[i] - mean;
        acc2 += d * d;
    }
    float var = gv_block_sum(acc2, sh) / (float)len;
    float inv = 1.0f / sqrtf(var + eps);
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        q[i] = (p[i] - mean) * inv * gamma[i] + beta[i];
}

GV_KERNEL gv_rmsnorm_f32(const float *x, const float *gamma, float *y, gv_i64 rows, gv_i64 len,
                         float eps)
{
    __shared__ float sh[GV_BLOCK];
    gv_i64 row = blockIdx.x;
    if (row >= rows)
        return;
    const float *p = x + row * len;
    float *q = y + row * len;
    float acc = 0.0f;
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        acc += p[i] * p[i];
    float ms = gv_block_sum(acc, sh) / (float)len;
    float inv = 1.0f / sqrtf(ms + eps);
    for (gv_i64 i = threadIdx.x; i < len; i += GV_BLOCK)
        q[i] = p[i] * inv * gamma[i];
}
