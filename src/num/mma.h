/* A bit-accurate model of one GEMM output element as a matrix unit computes
 * it with block fused multiply-adds (docs/facts/numerics-methods.md §1-§2a, §3: Fasi et
 * al. 2021, Khattak & Mikaitis HPEC 2025, Blanchard et al. 2020, MMA-Sim):
 *
 *   1. each input is flushed (input subnormals) and reduced to in_frac_bits;
 *   2. K is cut into consecutive blocks of `block` products; the accumulator
 *      (0 at first) joins each block in one block FMA;
 *   3. in a block every product is exact (or rounded to the accumulator first
 *      when prod_round), every term, the accumulator included, is aligned to
 *      the largest exponent among them keeping acc_frac_bits + extra_bits
 *      bits below that leading bit (a product's: its own, or with
 *      align_nominal the sum of its inputs' exponents; lower bits truncated
 *      toward zero; extra_bits -1: exact alignment, the exact sum rounded once);
 *   4. the block's sum is rounded to acc_frac_bits with acc_round in the
 *      accumulator's exponent range (subnormals kept or flushed);
 *   5. the final accumulator is rounded to the output format with out_round.
 *
 * Integer arithmetic on an exponent grid (no long double), so the results are
 * the same on every machine. Chunks (step 2 per chunk, the chunk sums then
 * added in order) are the "chunks of C, combined sequentially" the probe's
 * order trees show, and split-K slices; a K tile puts the partial tile's
 * products first (a kernel that handles it in its first iteration). Which
 * structure a library uses at a K is fitted from random GEMMs (gv_mma_fit).
 * Not modelled: other trees across blocks. */
#ifndef GV_NUM_MMA_H
#define GV_NUM_MMA_H

#include "base/err.h"
#include "num/types.h"

enum gv_mma_round {
    GV_MMA_RNE = 0, /* nearest, ties to even */
    GV_MMA_RNA,     /* nearest, ties away from zero */
    GV_MMA_RZ,      /* toward zero */
    GV_MMA_DOWN,    /* toward -inf */
    GV_MMA_UP,      /* toward +inf */
};

struct gv_mma_model {
    enum gv_dtype in;   /* input storage format: F32, TF32, F16, BF16, F8E4M3, F8E5M2 */
    int in_frac_bits;   /* fraction bits an input keeps; -1: the format's own */
    enum gv_mma_round in_round;
    int in_flush;       /* subnormal inputs flushed to zero */
    int block;          /* products joined with the accumulator in one block FMA (>= 1) */
    int chunk;          /* 0: one chain of blocks over K; else K cut into chunks of this
                         * many products, each summed from zero in blocks, the chunk sums
                         * then added one after the other (a block of one term each) */
    enum gv_mma_round chunk_round; /* the rounding of that addition */
    int chunk_promote;  /* that addition at the accumulator format's full width, not
                         * acc_frac_bits: partial sums of a narrower accumulator promoted
                         * into a whole fp32 one (Hopper fp8) */
    int tile;           /* 0, or the kernel's K tile: in each chunk (or the whole K) the first
                         * (length mod tile) products are summed alone first, the whole
                         * tiles after them (blocks restart at each) */
    int extra_bits;     /* alignment bits beyond acc_frac_bits; -1: exact alignment */
    int align_nominal;  /* products aligned by their exponent sum (the inputs' leading
                         * bits added), not their own leading bit, which can be one above:
                         * the grid then keeps one more bit of such a block */
    int prod_round;     /* products rounded to the accumulator (acc_round) before joining */
    enum gv_dtype acc;  /* F32 or F16: the accumulator's exponent range */
    int acc_frac_bits;  /* 1 .. the acc format's own (23 fp32, 10 fp16) */
    enum gv_mma_round acc_round;
    int acc_flush;      /* subnormal block results flushed to zero */
    enum gv_dtype out;  /* F32, F16, BF16 */
    enum gv_mma_round out_round;
    int out_flush;      /* subnormal outputs flushed to zero */
};

/* The CPU backend's plain arithmetic for (in, compute, out): inputs as stored
 * (TF32 compute: 10 fraction bits, RNE), one product at a time, products
 * rounded to the fp32 accumulator (exact ones added to an fp16 accumulator,
 * compute F16), every addition rounded to nearest-even, the output rounded
 * to nearest-even. */
void gv_mma_model_plain(struct gv_mma_model *m, enum gv_dtype in, enum gv_dtype compute,
                        enum gv_dtype out);
/* GV_OK, or GV_E_USAGE naming the field that is out of range. */
int gv_mma_model_check(const struct gv_mma_model *m, struct gv_err *err);

/* "nearest-even", "nearest-away", "toward-zero", "down", "up". */
const char *gv_mma_round_name(enum gv_mma_round r);

/* One output element: sum over i < k of a[i]*b[i] (decoded input values),
 * starting from an accumulator of 0. The value returned is exact in float. */
float gv_mma_dot(const struct gv_mma_model *m, const double *a, const double *b, int k);
/* The same starting from accumulator value c (the "C" of the published test
 * vectors), first rounded to the accumulator. */
float gv_mma_dot_acc(const struct gv_mma_model *m, double c, const double *a, const double *b,
                     int k);

/* C = A.B for `batch` row-major matrices as the backends store cases:
 * A[batch][M][K], B[batch][K][N] in m->in storage, C[batch][M][N] in m->out
 * storage; rows shared among nthreads threads (every element is computed the
 * same way whatever the count). GV_E_USAGE when the buffers do not match the
 * model or the shape; GV_E_NOMEM. */
int gv_mma_gemm(const struct gv_mma_model *m, const struct gv_buffer *a,
                const struct gv_buffer *b, struct gv_buffer *c, long batch, long M, long N,
                long K, int nthreads, struct gv_err *err);

/* ---------- a kernel's structure ---------- */

/* The structure of m as the probe writes it (model.kN, docs/probe.md):
 * "block B, extra X" (X a count or "exact"), or "fp32 fma" (whole fp32
 * inputs, one fused multiply-add each, nearest-even); then ", exponent
 * aligned" (align_nominal, blocks of more than one), ", tile T", ", chunks C
 * ROUNDING" and ", promoted" where set. At most 128 characters. */
void gv_mma_structure_str(const struct gv_mma_model *m, char *buf, size_t n);
/* Applies such a text to m (the precision's model from its properties;
 * what it leaves unnamed of alignment, tile and chunks becomes none; it
 * starts with the datapath, "fp32 fma" only for fp32 inputs and a wider
 * output). 0, or -1 for a text that is not one, m unchanged. */
int gv_mma_structure_parse(const char *s, struct gv_mma_model *m);

/* ---------- fitting a kernel's structure ---------- */

/* One GEMM a device computed: A (M x K) and B (K x N) row-major in the
 * model's input storage, c the device's M x N output. */
struct gv_mma_fit_gemm {
    const struct gv_buffer *a, *b, *c;
    long M, N, K;
};

struct gv_mma_fit {
    int found;             /* m reproduces every output of every GEMM */
    struct gv_mma_model m; /* the first such model; else the one that went furthest */
    long tried;            /* models tried */
    long leading, outputs; /* outputs m reproduced before its first miss; of how many */
};

/* The simplest model of a small family around base that reproduces the ng
 * GEMMs (1..8, one K) bit for bit (512 outputs of each, every row and column
 * of a 64 x 64 output among them), tried in this order: the datapath (base
 * as it is; when extra_is_bound, base's extra_bits is only a lower bound:
 * each larger count to 24; the other product alignment; fp32 inputs kept
 * whole, with fused multiply-adds, when base reduces fp32 inputs), then
 * chunks (none; kernel chunks of 4 to 256 added with the accumulator's
 * rounding; split-K slices, K cut into 2 to 16 slices rounded up to a
 * multiple of 8 to 128, with that rounding, then with nearest-even; where
 * the accumulator is narrower than its format, each again promoted), then
 * the tile (none, 16 to 256), then the block
 * (base's, 1 to 32). hint (NULL: none), the model a larger K of the same
 * precision was fitted to, is tried first where a K cannot tell: its tile,
 * and its extra bits when base's are a bound. GV_OK with out->found 0 when
 * none does; GV_E_USAGE for mismatched buffers; GV_E_NOMEM. */
int gv_mma_fit(const struct gv_mma_model *base, int extra_is_bound,
               const struct gv_mma_model *hint, const struct gv_mma_fit_gemm *g, int ng,
               struct gv_mma_fit *out, struct gv_err *err);

#endif
