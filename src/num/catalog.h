/* The case catalog: every numerics case gpuvet knows, with a stable readable
 * id, the suite it belongs to, and the rule that generates its inputs.
 *
 * Id grammar: OP.PREC.SHAPE[.VARIANT].DIST.sSEED, e.g.
 *   gemm.f32.512x512x512.normal.s1          (M x N x K)
 *   gemm.f32.8x128x128x128.normal.s1        (BATCH x M x N x K)
 *   gemm.f16acc32.64x64x8192.uniform.s1     (fp16 storage, fp32 accumulation)
 *   conv2d.f16.1x5x32x32-k7x3x3-s2p1.normal.s1 (NxCxHxW - KxRxS - stride, pad)
 *   sdpa.f32.8x256x64.causal.normal.s1      (BH x SEQ x D)
 *   softmax.f32.64x32768.normal.s1          (ROWS x LEN)
 *   exp.f16.65536.normal.s1                 (unary: the function is the op part)
 *   convert.f32-e4m3.65536.normal.s1        (from - to)
 * PyTorch cases (the torch device only, see "Targets" below):
 *   linear.f32.256x256x256.normal.s1        torch.nn.functional.linear(A, B^T)
 *   matmul.f16.128x128x128.normal.s1        torch.matmul under PyTorch's default flags
 *   sdpa.f16.4x128x64.full-flash.normal.s1  one attention backend (flash, efficient,
 *                                           math, cudnn)
 *   autocast.f16.64x256x512x64.normal.s1    linear-GELU-linear-MSE forward and backward
 *                                           under autocast with GradScaler (B x D x H x O)
 * PREC tokens: f64, f32, tf32 (fp32 storage, TF32 inputs, fp32 accumulation),
 * f16acc32, f16acc16, bf16acc32 for GEMM; the storage format elsewhere
 * (compute is then fp32, fp64 for f64).
 *
 * The inputs behind an id never change: ids are never reused for other
 * inputs, and the generation rule below is part of the case's meaning.
 *
 * Inputs, their order (the order backends receive them) and shapes: the op
 * table (num/op.c). Input i is drawn with gv_rng_fill(stream = i, key =
 * gv_rng_key(id), seed) from the case's distribution, except where the
 * input's role in the table says otherwise (gv_catalog_input_rule):
 *   - norms: gamma = 1 + 0.5*u and beta = 0.5*u, u from UNIFORM;
 *   - GEMM/CONV2D with the SUBNORMAL distribution: the second operand (B, w)
 *     is UNIFORM, so products stay in the subnormal range of the output;
 *   - autocast (MLP): x[B][D] from the distribution; W1[H][D+1] and W2[O][H+1]
 *     (weights with the bias as the last column) NORMAL scaled by 1/sqrt(D+1)
 *     and 1/sqrt(H+1); the target t[B][O] NORMAL;
 * every value is rounded to the input format (RNE).
 *
 * Targets: a case is meant for some devices only. The shared cases run on
 * every backend; PyTorch cases only through --device torch:...; a few only
 * through PyTorch on a GPU (attention backends that exist only there), and
 * the fp16-accumulation GEMMs not through PyTorch on the CPU (PyTorch has no
 * way to ask for fp16 accumulation there). Selection leaves out what does not
 * apply to the device, so a perfect stack exits 0. */
#ifndef GV_NUM_CATALOG_H
#define GV_NUM_CATALOG_H

#include <stddef.h>

#include "num/op.h"
#include "num/types.h"

enum gv_suite { GV_SUITE_QUICK = 0, GV_SUITE_STANDARD = 1, GV_SUITE_FULL = 2 };

/* Where a case applies (a bit mask). */
enum gv_target {
    GV_TARGET_KERNEL = 1,    /* gpuvet's own backends: cpu, cuda, hip */
    GV_TARGET_TORCH_CPU = 2, /* --device torch:cpu */
    GV_TARGET_TORCH_GPU = 4, /* --device torch:cuda:N */
};
#define GV_TARGET_ALL (GV_TARGET_KERNEL | GV_TARGET_TORCH_CPU | GV_TARGET_TORCH_GPU)
#define GV_TARGET_TORCH (GV_TARGET_TORCH_CPU | GV_TARGET_TORCH_GPU)

struct gv_catalog_entry {
    struct gv_case c;     /* c.id points into id[] */
    enum gv_suite suite;  /* smallest suite that contains it (quick < standard < full) */
    unsigned targets;     /* enum gv_target bits */
    char id[96];
    char prec[16];        /* "f16acc32", "f32", ... */
    char shape[48];       /* "512x512x512", "1x5x32x32-k7x3x3-s2p1", ... */
};

/* All cases, in a fixed order. Never NULL. */
const struct gv_catalog_entry *gv_catalog(size_t *n);
/* "quick" | "standard" | "full" -> 0..2, -1 if unknown. */
int gv_suite_from_name(const char *name);
const char *gv_suite_name(enum gv_suite s);
/* The entry of an id, or NULL. */
const struct gv_catalog_entry *gv_catalog_find(const char *id);

/* Cases of suite s (and smaller suites) for one of the targets (enum
 * gv_target bits) whose id matches the glob pattern (fnmatch: * ? [..];
 * several patterns separated by commas; NULL = all). Returns the number
 * written to out (at most max). */
size_t gv_catalog_select(enum gv_suite s, unsigned targets, const char *pattern,
                         const struct gv_catalog_entry **out, size_t max);

/* How input i of case c is generated: value = offset + scale * draw(dist),
 * then rounded to c->in_dtype. */
struct gv_input_rule {
    enum gv_dist dist;
    double scale, offset;
};
void gv_catalog_input_rule(const struct gv_case *c, int i, struct gv_input_rule *r);

#endif
