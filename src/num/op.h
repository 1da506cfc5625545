/* The op descriptor table: per operation, its name, its inputs (each one's
 * shape in the case's dimensions and how it is drawn) and its output's shape.
 * Every place that needs an op's shapes (the reference, the catalog's input
 * generation, the runner's buffers, the backends' checks) reads them here.
 *
 * Adding an operation: a value in enum gv_op (num/types.h), one row in
 * op.c, its fp64 reference (ref.c's table), and its kernels in the backends
 * that compute it (docs/check.md, "Adding an operation"). */
#ifndef GV_NUM_OP_H
#define GV_NUM_OP_H

#include <stddef.h>
#include <stdint.h>

#include "num/types.h"

/* One dimension of a shape, from the fields of struct gv_case. */
enum gv_dim {
    GV_DIM_END = 0, /* after the last dimension of a shape (no dimension: a scalar) */
    GV_DIM_BATCH,   /* batch, at least 1 */
    GV_DIM_M,
    GV_DIM_N,
    GV_DIM_K,
    GV_DIM_K1,      /* k + 1 (a weight with its bias column) */
    GV_DIM_N1,      /* n + 1 */
    GV_DIM_C,
    GV_DIM_H,
    GV_DIM_W,
    GV_DIM_R,
    GV_DIM_S,
    GV_DIM_P,       /* convolution output height (h + 2 pad - r) / stride + 1 */
    GV_DIM_Q,       /* convolution output width (w + 2 pad - s) / stride + 1 */
    GV_DIM_ROWS,
    GV_DIM_LEN,
    GV_DIM_BH,
    GV_DIM_SEQ,
    GV_DIM_D,
};

#define GV_OP_MAX_IN 4
#define GV_OP_MAX_OUT 6

/* Row-major dimensions, GV_DIM_END after the last. */
struct gv_shape {
    unsigned char dim[4];
};

/* How an input's values are drawn (gv_catalog_input_rule). */
enum gv_input_role {
    GV_IN_DRAWN = 0, /* from the case's distribution */
    GV_IN_OPERAND2,  /* the case's distribution, but UNIFORM when that is SUBNORMAL
                      * (GEMM B, convolution w: products stay in the output's range) */
    GV_IN_GAMMA,     /* 1 + 0.5 u, u from UNIFORM */
    GV_IN_BETA,      /* 0.5 u */
    GV_IN_WEIGHT,    /* NORMAL / sqrt(fan-in), the fan-in being the last dimension */
    GV_IN_NORMAL,    /* NORMAL */
};

struct gv_op_input {
    const char *name; /* "A", "gamma", ... (messages and docs) */
    struct gv_shape shape;
    enum gv_input_role role;
};

/* Flags of an operation. */
enum {
    GV_OPF_TORCH_ONLY = 1 << 0, /* only the torch device computes it (gpuvet's kernels do not) */
};

struct gv_op_desc {
    const char *name;  /* "gemm", ...: results files, messages */
    int nin;           /* inputs, in the order backends receive them */
    struct gv_op_input in[GV_OP_MAX_IN];
    /* The output: one shape, or (nout > 1) several tensors stored one after
     * the other as one flat vector. */
    int nout;
    struct gv_shape out[GV_OP_MAX_OUT];
    unsigned flags;    /* GV_OPF_* */
};

/* The row of op, or NULL for a value outside enum gv_op. */
const struct gv_op_desc *gv_op_desc(enum gv_op op);

/* The value of one dimension for case c (0 for GV_DIM_END or an invalid
 * convolution geometry). */
int64_t gv_dim_value(const struct gv_case *c, enum gv_dim d);

/* Number of elements of the case's output, and of each input: 0 when a
 * dimension is negative, a convolution's geometry is invalid, or the count
 * passes 2^40. */
size_t gv_case_out_count(const struct gv_case *c);
int gv_case_inputs(const struct gv_case *c, size_t counts[GV_OP_MAX_IN]); /* returns nin */
size_t gv_case_in_count(const struct gv_case *c, int i);

/* Output shape (row-major dims; one flat dimension when the output is
 * several tensors); returns the number of dims (1..4). */
int gv_case_out_shape(const struct gv_case *c, long long dims[4]);

#endif
