/* The vocabulary shared by the numerics room (src/num) and the device room
 * (src/dev): number formats, operations and the description of one case.
 * Changing the meaning of an existing value breaks result-file compatibility. */
#ifndef GV_NUM_TYPES_H
#define GV_NUM_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Storage formats. Host encodings: F64 double, F32 float, F16/BF16 uint16_t
 * bit patterns, F8 uint8_t bit patterns. TF32 is not a storage format: it
 * only appears as a compute type (fp32 storage, inputs rounded to 10
 * fraction bits inside the multiply). */
enum gv_dtype {
    GV_F64 = 0,
    GV_F32,
    GV_TF32,
    GV_F16,
    GV_BF16,
    GV_F8E4M3, /* OCP e4m3fn: no inf, max 448, saturating conversion */
    GV_F8E5M2, /* OCP e5m2: IEEE-like, has inf */
    GV_DTYPE_COUNT
};

enum gv_op {
    GV_OP_GEMM = 0,   /* C[b][m][n] = sum_k A[b][m][k] * B[b][k][n], row-major */
    GV_OP_CONV2D,     /* NCHW input, KCRS filter, stride, pad, no dilation, output NKPQ */
    GV_OP_SOFTMAX,    /* over the last dimension: rows x len */
    GV_OP_LAYERNORM,  /* rows x len, gamma[len], beta[len], eps */
    GV_OP_RMSNORM,    /* rows x len, gamma[len], eps */
    GV_OP_SDPA,       /* Q[bh][s][d], K[bh][s][d], V[bh][s][d] -> O[bh][s][d], scale 1/sqrt(d) */
    GV_OP_SUM,        /* rows x len -> rows */
    GV_OP_MEAN,       /* rows x len -> rows */
    GV_OP_UNARY,      /* elementwise y = f(x), f in enum gv_unary */
    GV_OP_CONVERT,    /* x (in_dtype) -> out_dtype (one conversion) */
    GV_OP_MLP,        /* PyTorch only: linear-GELU-linear-MSE forward and backward under
                       * autocast (compute_dtype) with GradScaler; see catalog.h */
    GV_OP_COUNT
};

/* How a PyTorch case makes its call (the torch device; the other backends
 * only ever see GV_CALL_DEFAULT):
 *   DEFAULT   the operation's usual call, with the flags that would change the
 *             case's declared precision set to match it (allow_tf32, reduced-
 *             precision reduction, fp16 accumulation, cudnn.allow_tf32)
 *   LINEAR    torch.nn.functional.linear(A, B^T) instead of matmul
 *   DEFAULTS  torch.matmul under PyTorch's own default flags, as they are
 *   FLASH, EFFICIENT, MATH, CUDNN: scaled_dot_product_attention restricted to
 *             that one attention backend */
enum gv_call {
    GV_CALL_DEFAULT = 0,
    GV_CALL_LINEAR,
    GV_CALL_DEFAULTS,
    GV_CALL_FLASH,
    GV_CALL_EFFICIENT,
    GV_CALL_MATH,
    GV_CALL_CUDNN,
    GV_CALL_COUNT
};

enum gv_unary {
    GV_UN_NONE = 0,
    GV_UN_EXP,
    GV_UN_LOG,
    GV_UN_TANH,
    GV_UN_ERF,
    GV_UN_GELU,    /* x * 0.5 * (1 + erf(x / sqrt(2))) */
    GV_UN_SILU,    /* x * sigmoid(x) */
    GV_UN_SIGMOID,
    GV_UN_RSQRT,
    GV_UN_COUNT
};

/* Input distributions (docs/facts/numerics-methods.md). */
enum gv_dist {
    GV_DIST_NORMAL = 0,   /* N(0,1) */
    GV_DIST_UNIFORM,      /* U[-1,1) */
    GV_DIST_WIDE,         /* sign * 2^U[-20,20): wide dynamic range */
    GV_DIST_SUBNORMAL,    /* mostly subnormals of the input format */
    GV_DIST_CANCEL,       /* large terms of both signs that nearly cancel */
    GV_DIST_POSITIVE,     /* U[2^-6, 4): for log / rsqrt */
    GV_DIST_COUNT
};

/* One case. Identified by id, a stable readable name such as
 * "gemm.f16acc32.256x256x4096.normal.s1"; the inputs behind an id never change. */
struct gv_case {
    const char *id;
    enum gv_op op;
    enum gv_dtype in_dtype;      /* storage of inputs */
    enum gv_dtype compute_dtype; /* accumulation / compute precision (TF32 = tf32 inputs, fp32 accumulation) */
    enum gv_dtype out_dtype;     /* storage of the output */
    enum gv_unary unary;
    enum gv_dist dist;
    uint32_t seed;
    /* shape: meaning per op
     *   GEMM: batch, m, n, k          CONV2D: n, c, h, w, k, r, s, stride, pad
     *   SOFTMAX/NORMS/SUM/MEAN: rows, len   SDPA: bh, s, d, causal
     *   UNARY/CONVERT: len
     *   MLP: m = batch rows B, k = inputs D, n = hidden H, d = outputs O */
    int64_t batch, m, n, k;
    int64_t c, h, w, r, s, stride, pad;
    int64_t rows, len;
    int64_t bh, seq, d;
    int causal;
    double eps;                  /* norms */
    enum gv_call call;           /* PyTorch cases; GV_CALL_DEFAULT elsewhere */
};

/* A host buffer in a storage format (see enum gv_dtype for encodings). */
struct gv_buffer {
    enum gv_dtype dtype;
    size_t count; /* elements */
    void *data;   /* count * gv_dtype_size(dtype) bytes */
};

const char *gv_dtype_name(enum gv_dtype t);   /* "f64", "f32", "tf32", "f16", "bf16", "f8e4m3", "f8e5m2" */
int gv_dtype_from_name(const char *name);     /* -1 if unknown */
size_t gv_dtype_size(enum gv_dtype t);        /* bytes of one stored element (TF32: 4) */
const char *gv_op_name(enum gv_op op);         /* num/op.c: the op table's names */
const char *gv_unary_name(enum gv_unary u);
const char *gv_dist_name(enum gv_dist d);
const char *gv_call_name(enum gv_call c);     /* "", "linear", "defaults", "flash", ... */

#endif
