// Fallback GEMM and direct convolution for what a vendor library cannot do:
// fp32 inputs (converted from any storage format), fp32 accumulation in
// index order, one thread per output element.
// C[b][m][n] = sum_k A[b][m][k] * B[b][k][n], row-major.
GV_KERNEL gv_gemm_f32(const float *A, const float *B, float *C, gv_i64 batch, gv_i64 m, gv_i64 n,
                      gv_i64 k)
{
    gv_i64 total = batch * m * n;
    for (gv_i64 i = gv_tid(); i < total; i += gv_stride()) {
        gv_i64 b = i / (m * n), r = (i / n) % m, c = i % n;
        const float *a = A + (b * m + r) * k;
        const float *bb = B + b * k * n + c;
        float acc = 0.0f;
        for (gv_i64 t = 0; t < k; t++)
            acc += a[t] * bb[t * n];
        C[i] = acc;
    }
}

// NCHW input x, KCRS filter w, output NKPQ; stride, zero padding, no dilation.
GV_KERNEL gv_conv2d_f32(const float *x, const float *w, float *y, gv_i64 N, gv_i64 C, gv_i64 H,
                        gv_i64 W, gv_i64 K, gv_i64 R, gv_i64 S, gv_i64 stride, gv_i64 pad)
{
    gv_i64 P = (H + 2 * pad - R) / stride + 1, Qo = (W + 2 * pad - S) / stride + 1;
    gv_i64 total = N * K * P * Qo;
    for (gv_i64 i = gv_tid(); i < total; i += gv_stride()) {
        gv_i64 q = i % Qo, p = (i / Qo) % P, kk = (i / (Qo * P)) % K, nn = i / (Qo * P * K);
        float acc = 0.0f;
        for (gv_i64 c = 0; c < C; c++)
            for (gv_i64 r = 0; r < R; r++) {
                gv_i64 hy = p * stride - pad + r;
                if (hy < 0 || hy >= H)
                    continue;
                for (gv_i64 s = 0; s < S; s++) {
                    gv_i64 wx = q * stride - pad + s;
                    if (wx < 0 || wx >= W)
                        continue;
                    acc += x[((nn * C + c) * H + hy) * W + wx] * w[((kk * C + c) * R + r) * S + s];
                }
            }
        y[i] = acc;
    }
}
