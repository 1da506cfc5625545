// Naive scaled dot-product attention, fp32 accumulation. One block per
// (head, query row): scores S = q.K^T * scale into dynamic shared memory
// (seq floats), softmax over S (causal: keys after the query are masked),
// then O = P.V. Grid: bh * seq blocks of GV_BLOCK threads.
GV_KERNEL gv_sdpa_f32(const float *Q, const float *K, const float *V, float *O, gv_i64 bh,
                      gv_i64 seq, gv_i64 d, int causal, float scale)
{
    extern __shared__ float gv_dyn[];
    __shared__ float sh[GV_BLOCK];
    gv_i64 blk = blockIdx.x;
    if (blk >= bh * seq)
        return;
    gv_i64 h = blk / seq, qi = blk % seq;
    const float *q = Q + (h * seq + qi) * d;
    const float *k = K + h * seq * d;
    const float *v = V + h * seq * d;
    gv_i64 nk = causal ? qi + 1 : seq;
    float m = -GV_FLOAT(0x7f800000u);
    for (gv_i64 j = threadIdx.x; j < nk; j += GV_BLOCK) {
        float s = 0.0f;
        for (gv_i64 t = 0; t < d; t++)
            s += q[t] * k[j * d + t];
        s *= scale;
        gv_dyn[j] = s;
        m = fmaxf(m, s);
    }
    m = gv_block_max(m, sh);
    float acc = 0.0f;
    for (gv_i64 j = threadIdx.x; j < nk; j += GV_BLOCK) {
        float e = expf(gv_dyn[j] - m);
        gv_dyn[j] = e;
        acc += e;
    }
    float total = gv_block_sum(acc, sh);
    for (gv_i64 t = threadIdx.x; t < d; t += GV_BLOCK) {
        float o = 0.0f;
        for (gv_i64 j = 0; j < nk; j++)
            o += gv_dyn[j] * v[j * d + t];
        O[(h * seq + qi) * d + t] = o / total;
    }
}
