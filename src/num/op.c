/* The op descriptor table (see op.h). A row's shapes are checked against
 * what the fp64 reference and the CPU backend read and write by
 * tests/unit/test_optable.c. */
#include "num/op.h"

#include <string.h>

#define SHAPE(...) {{__VA_ARGS__}}
#define SCALAR {{GV_DIM_END}}

static const struct gv_op_desc table[GV_OP_COUNT] = {
    [GV_OP_GEMM] = {"gemm", 2,
                    {{"A", SHAPE(GV_DIM_BATCH, GV_DIM_M, GV_DIM_K), GV_IN_DRAWN},
                     {"B", SHAPE(GV_DIM_BATCH, GV_DIM_K, GV_DIM_N), GV_IN_OPERAND2}},
                    1, {SHAPE(GV_DIM_BATCH, GV_DIM_M, GV_DIM_N)}, 0},
    [GV_OP_CONV2D] = {"conv2d", 2,
                      {{"x", SHAPE(GV_DIM_N, GV_DIM_C, GV_DIM_H, GV_DIM_W), GV_IN_DRAWN},
                       {"w", SHAPE(GV_DIM_K, GV_DIM_C, GV_DIM_R, GV_DIM_S), GV_IN_OPERAND2}},
                      1, {SHAPE(GV_DIM_N, GV_DIM_K, GV_DIM_P, GV_DIM_Q)}, 0},
    [GV_OP_SOFTMAX] = {"softmax", 1, {{"x", SHAPE(GV_DIM_ROWS, GV_DIM_LEN), GV_IN_DRAWN}},
                       1, {SHAPE(GV_DIM_ROWS, GV_DIM_LEN)}, 0},
    [GV_OP_LAYERNORM] = {"layernorm", 3,
                         {{"x", SHAPE(GV_DIM_ROWS, GV_DIM_LEN), GV_IN_DRAWN},
                          {"gamma", SHAPE(GV_DIM_LEN), GV_IN_GAMMA},
                          {"beta", SHAPE(GV_DIM_LEN), GV_IN_BETA}},
                         1, {SHAPE(GV_DIM_ROWS, GV_DIM_LEN)}, 0},
    [GV_OP_RMSNORM] = {"rmsnorm", 2,
                       {{"x", SHAPE(GV_DIM_ROWS, GV_DIM_LEN), GV_IN_DRAWN},
                        {"gamma", SHAPE(GV_DIM_LEN), GV_IN_GAMMA}},
                       1, {SHAPE(GV_DIM_ROWS, GV_DIM_LEN)}, 0},
    [GV_OP_SDPA] = {"sdpa", 3,
                    {{"Q", SHAPE(GV_DIM_BH, GV_DIM_SEQ, GV_DIM_D), GV_IN_DRAWN},
                     {"K", SHAPE(GV_DIM_BH, GV_DIM_SEQ, GV_DIM_D), GV_IN_DRAWN},
                     {"V", SHAPE(GV_DIM_BH, GV_DIM_SEQ, GV_DIM_D), GV_IN_DRAWN}},
                    1, {SHAPE(GV_DIM_BH, GV_DIM_SEQ, GV_DIM_D)}, 0},
    [GV_OP_SUM] = {"sum", 1, {{"x", SHAPE(GV_DIM_ROWS, GV_DIM_LEN), GV_IN_DRAWN}},
                   1, {SHAPE(GV_DIM_ROWS)}, 0},
    [GV_OP_MEAN] = {"mean", 1, {{"x", SHAPE(GV_DIM_ROWS, GV_DIM_LEN), GV_IN_DRAWN}},
                    1, {SHAPE(GV_DIM_ROWS)}, 0},
    [GV_OP_UNARY] = {"unary", 1, {{"x", SHAPE(GV_DIM_LEN), GV_IN_DRAWN}},
                     1, {SHAPE(GV_DIM_LEN)}, 0},
    [GV_OP_CONVERT] = {"convert", 1, {{"x", SHAPE(GV_DIM_LEN), GV_IN_DRAWN}},
                       1, {SHAPE(GV_DIM_LEN)}, 0},
    /* x[B][D], W1[H][D+1] and W2[O][H+1] (bias as the last column), target
     * t[B][O]; out: loss, y[B][O], dW1[H][D], db1[H], dW2[O][H], db2[O] */
    [GV_OP_MLP] = {"mlp", 4,
                   {{"x", SHAPE(GV_DIM_M, GV_DIM_K), GV_IN_DRAWN},
                    {"W1", SHAPE(GV_DIM_N, GV_DIM_K1), GV_IN_WEIGHT},
                    {"W2", SHAPE(GV_DIM_D, GV_DIM_N1), GV_IN_WEIGHT},
                    {"t", SHAPE(GV_DIM_M, GV_DIM_D), GV_IN_NORMAL}},
                   6,
                   {SCALAR, SHAPE(GV_DIM_M, GV_DIM_D), SHAPE(GV_DIM_N, GV_DIM_K),
                    SHAPE(GV_DIM_N), SHAPE(GV_DIM_D, GV_DIM_N), SHAPE(GV_DIM_D)},
                   GV_OPF_TORCH_ONLY},
};

const struct gv_op_desc *gv_op_desc(enum gv_op op)
{
    return (unsigned)op < GV_OP_COUNT ? &table[op] : NULL;
}

const char *gv_op_name(enum gv_op op)
{
    return (unsigned)op < GV_OP_COUNT ? table[op].name : "?";
}

/* Convolution output size along one axis; 0 for an invalid geometry. */
static int64_t conv_out(int64_t in, int64_t filter, const struct gv_case *c)
{
    if (c->stride <= 0)
        return 0;
    int64_t v = in + 2 * c->pad - filter;
    return v < 0 ? 0 : v / c->stride + 1;
}

int64_t gv_dim_value(const struct gv_case *c, enum gv_dim d)
{
    switch (d) {
    case GV_DIM_BATCH: return c->batch > 0 ? c->batch : 1;
    case GV_DIM_M: return c->m;
    case GV_DIM_N: return c->n;
    case GV_DIM_K: return c->k;
    case GV_DIM_K1: return c->k + 1;
    case GV_DIM_N1: return c->n + 1;
    case GV_DIM_C: return c->c;
    case GV_DIM_H: return c->h;
    case GV_DIM_W: return c->w;
    case GV_DIM_R: return c->r;
    case GV_DIM_S: return c->s;
    case GV_DIM_P: return conv_out(c->h, c->r, c);
    case GV_DIM_Q: return conv_out(c->w, c->s, c);
    case GV_DIM_ROWS: return c->rows;
    case GV_DIM_LEN: return c->len;
    case GV_DIM_BH: return c->bh;
    case GV_DIM_SEQ: return c->seq;
    case GV_DIM_D: return c->d;
    default: return 0;
    }
}

static int ndims(const struct gv_shape *s)
{
    int n = 0;
    while (n < 4 && s->dim[n] != GV_DIM_END)
        n++;
    return n;
}

/* Elements of a shape: 0 if a dimension is negative or the product passes 2^40. */
static size_t shape_count(const struct gv_case *c, const struct gv_shape *s)
{
    uint64_t v = 1;
    for (int i = 0; i < ndims(s); i++) {
        int64_t f = gv_dim_value(c, (enum gv_dim)s->dim[i]);
        if (f < 0 || (f > 0 && v > (UINT64_C(1) << 40) / (uint64_t)f))
            return 0;
        v *= (uint64_t)f;
    }
    return (size_t)v;
}

size_t gv_case_out_count(const struct gv_case *c)
{
    const struct gv_op_desc *o = gv_op_desc(c->op);
    size_t total = 0;
    for (int i = 0; o && i < o->nout; i++) {
        size_t n = shape_count(c, &o->out[i]);
        if (n == 0)
            return 0;
        total += n;
    }
    return total;
}

size_t gv_case_in_count(const struct gv_case *c, int i)
{
    const struct gv_op_desc *o = gv_op_desc(c->op);
    return o && i >= 0 && i < o->nin ? shape_count(c, &o->in[i].shape) : 0;
}

int gv_case_inputs(const struct gv_case *c, size_t counts[GV_OP_MAX_IN])
{
    memset(counts, 0, GV_OP_MAX_IN * sizeof counts[0]);
    const struct gv_op_desc *o = gv_op_desc(c->op);
    for (int i = 0; o && i < o->nin; i++)
        counts[i] = shape_count(c, &o->in[i].shape);
    return o ? o->nin : 0;
}

int gv_case_out_shape(const struct gv_case *c, long long dims[4])
{
    const struct gv_op_desc *o = gv_op_desc(c->op);
    if (!o || o->nout != 1) {
        dims[0] = (long long)gv_case_out_count(c);
        return 1;
    }
    int n = ndims(&o->out[0]);
    for (int i = 0; i < n; i++)
        dims[i] = (long long)gv_dim_value(c, (enum gv_dim)o->out[0].dim[i]);
    if (n == 0)
        dims[n++] = 1;
    return n;
}
