/* The fp64 reference and error bound of the autocast cases (GV_OP_MLP):
 *
 *   h = [x 1] W1e^T,  a = gelu(h),  y = [a 1] W2e^T,  loss = sum (y - t)^2 / N
 *   dy = 2 (y - t) / N,  dW2 = dy^T a,  db2 = dy^T 1,  da = dy W2,
 *   dh = da * gelu'(h),  dW1 = dh^T x,  db1 = dh^T 1             (N = B O)
 *
 * (W1e = [W1 b1], W2e = [W2 b2]); output [loss, y, dW1, db1, dW2, db2], flat,
 * in float32 (catalog.h).
 *
 * Under autocast every matrix product and GELU runs in the autocast format T
 * (unit roundoff u): fp32 operands are rounded to T, products accumulate in
 * fp32 (the case turns PyTorch's reduced-precision reduction off, as the
 * f16acc32 GEMM cases do) and results are stored in T. The bound is a
 * first-order propagation of those roundings (docs/numerics.md, "autocast"),
 * per output element of a length-k product C = A B with R = sqrt(sum (a b)^2):
 *   n_r u (|C| + LAMBDA R)              operands rounded to T (n_r of them)
 *   + LAMBDA sqrt(k) u32 max(R, |C|)    fp32 accumulation
 *   + u |C|                             the result stored in T
 *   + min(E_A |B| + |A| E_B, sqrt(E_A^2 B^2 + A^2 E_B^2))
 *                                       errors the operands carry (bounds already,
 *                                       so their root-sum-square takes no LAMBDA)
 * and for GELU 2u|a| + |gelu'(h)| E_h (backward: |da| |gelu''(h)| E_h more).
 * GradScaler multiplies by a power of two, which is exact; its scale only
 * moves fp16's subnormal floor, accounted for below. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "num/fp.h"
#include "num/ref.h"

#define LAMBDA 4.0
#define U32 0x1p-24
#define SCALER_INIT 65536.0 /* GradScaler's default init_scale */

struct mlp {
    double u;     /* unit roundoff of T */
    double floor; /* subnormal spacing of T in the units of the value */
};

/* A matrix operand of a product: values, absolute errors (NULL: exact), how
 * many rows/cols it has as stored, whether it is used transposed, and
 * whether autocast rounds it to T first (an fp32 tensor). */
struct opnd {
    const double *v, *e;
    int rows, cols, trans, rounded;
};

static double *vec(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

/* C[m][n] = op(A) op(B), k the inner dimension. */
static void mm(int m, int n, int k, const struct opnd *a, const double *av,
               const struct opnd *b, const double *bv, double *c)
{
    cblas_dgemm(CblasRowMajor, a->trans ? CblasTrans : CblasNoTrans,
                b->trans ? CblasTrans : CblasNoTrans, m, n, k, 1.0, av, a->cols, bv, b->cols,
                0.0, c, n);
}

static void sq(const double *x, double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] * x[i];
}

static void absv(const double *x, double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = fabs(x[i]);
}

/* C = op(A) op(B) with its error bound E (m x n), k the inner dimension;
 * out_t: the result is stored in T (else fp32). 0, or -1 out of memory. */
static int product(const struct mlp *p, int m, int n, int k, const struct opnd *a,
                   const struct opnd *b, int out_t, double *c, double *e)
{
    size_t na = (size_t)a->rows * a->cols, nb = (size_t)b->rows * b->cols, nc = (size_t)m * n;
    double *a2 = vec(na), *b2 = vec(nb), *t1 = vec(nc), *t2 = vec(nc), *w = vec(na > nb ? na : nb);
    if (!a2 || !b2 || !t1 || !t2 || !w) {
        free(a2), free(b2), free(t1), free(t2), free(w);
        return -1;
    }
    mm(m, n, k, a, a->v, b, b->v, c);
    sq(a->v, a2, na);
    sq(b->v, b2, nb);
    mm(m, n, k, a, a2, b, b2, t1); /* R^2 */
    int nr = a->rounded + b->rounded;
    for (size_t i = 0; i < nc; i++) {
        double R = sqrt(t1[i]), C = fabs(c[i]);
        e[i] = nr * p->u * (C + LAMBDA * R) + LAMBDA * sqrt((double)k) * U32 * (R > C ? R : C) +
               (out_t ? p->u : U32) * C + (double)(k + 2) * p->floor;
        t2[i] = 0; /* carried error, probabilistic form (squared) */
        t1[i] = 0; /* carried error, worst case */
    }
    double *det = vec(nc), *prob = vec(nc);
    if (!det || !prob) {
        free(a2), free(b2), free(t1), free(t2), free(w), free(det), free(prob);
        return -1;
    }
    /* E_A |B| and E_A^2 B^2, then |A| E_B and A^2 E_B^2 */
    for (int side = 0; side < 2; side++) {
        const struct opnd *err_of = side ? b : a;
        if (!err_of->e)
            continue;
        size_t ne = side ? nb : na;
        double *abs_other = side ? a2 : b2; /* reuse: |other| */
        absv(side ? a->v : b->v, abs_other, side ? na : nb);
        if (side)
            mm(m, n, k, a, abs_other, b, err_of->e, det);
        else
            mm(m, n, k, a, err_of->e, b, abs_other, det);
        sq(err_of->e, w, ne);
        sq(abs_other, abs_other, side ? na : nb);
        if (side)
            mm(m, n, k, a, abs_other, b, w, prob);
        else
            mm(m, n, k, a, w, b, abs_other, prob);
        for (size_t i = 0; i < nc; i++) {
            t1[i] += det[i];
            t2[i] += prob[i];
        }
    }
    for (size_t i = 0; i < nc; i++) { /* the carried errors are bounds already: no LAMBDA */
        double pr = sqrt(t2[i]);
        e[i] += pr < t1[i] ? pr : t1[i];
    }
    free(a2), free(b2), free(t1), free(t2), free(w), free(det), free(prob);
    return 0;
}

static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double phi(double x) { return exp(-0.5 * x * x) / sqrt(2 * M_PI); }
static double gelu_d1(double x) { return 0.5 * (1 + erf(x / sqrt(2.0))) + x * phi(x); }
static double gelu_d2(double x) { return phi(x) * (2 - x * x); }

struct out {
    double *ref, *bound, *scale;
    size_t at;
};

/* Appends n values with their bounds; the float32 output adds its rounding. */
static void emit(struct out *o, const double *v, const double *e, size_t n)
{
    for (size_t i = 0; i < n; i++, o->at++) {
        o->ref[o->at] = v[i];
        o->bound[o->at] = e[i] + 1.5 * U32 * fabs(v[i]);
        o->scale[o->at] = fabs(v[i]) > e[i] ? fabs(v[i]) : e[i];
    }
}

static void load(const struct gv_buffer *b, double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = gv_fp_load(b->data, b->dtype, i);
}

/* [v 1]: rows x (cols + 1). */
static void augment(const double *v, int rows, int cols, double *out)
{
    for (int r = 0; r < rows; r++) {
        memcpy(out + (size_t)r * (cols + 1), v + (size_t)r * cols, (size_t)cols * sizeof *v);
        out[(size_t)r * (cols + 1) + cols] = 1.0;
    }
}

/* The weight part of [W b]: rows x cols. */
static void weights(const double *we, int rows, int cols, double *w)
{
    for (int r = 0; r < rows; r++)
        memcpy(w + (size_t)r * cols, we + (size_t)r * (cols + 1), (size_t)cols * sizeof *w);
}

#define NBUF 24

int gv_ref_mlp(const struct gv_case *c, const struct gv_buffer *in, double *ref, double *bound,
               double *scale, struct gv_err *err)
{
    const int B = (int)c->m, D = (int)c->k, H = (int)c->n, O = (int)c->d;
    const size_t N = (size_t)B * O;
    struct mlp p = {gv_fp_unit_roundoff(c->compute_dtype), 0};
    p.floor = gv_fp_min_normal(c->compute_dtype) * 2 * p.u;
    double bwd_floor = c->compute_dtype == GV_F16 ? p.floor / SCALER_INIT : p.floor;
    size_t sz[NBUF] = {(size_t)B * D,       (size_t)B * (D + 1), (size_t)H * (D + 1),
                       (size_t)O * (H + 1), N,                   (size_t)B * H,
                       (size_t)B * H,       (size_t)B * H,       (size_t)B * H,
                       (size_t)B * (H + 1), (size_t)B * (H + 1), N,
                       N,                   N,                   N,
                       (size_t)O * H,       (size_t)B * H,       (size_t)B * H,
                       (size_t)B * H,       (size_t)B * H,       (size_t)H * D,
                       (size_t)H * D,       (size_t)O * H,       (size_t)B > (size_t)H ? B : H};
    double *m[NBUF];
    int ok = 1;
    for (int i = 0; i < NBUF; i++)
        ok &= (m[i] = vec(sz[i])) != NULL;
    double *x = m[0], *xa = m[1], *w1e = m[2], *w2e = m[3], *t = m[4], *h = m[5], *eh = m[6];
    double *a = m[7], *ea = m[8], *aa = m[9], *eaa = m[10], *y = m[11], *ey = m[12], *dy = m[13];
    double *edy = m[14], *w2 = m[15], *da = m[16], *eda = m[17], *dh = m[18], *edh = m[19];
    double *g = m[20], *eg = m[21], *g2 = m[22], *ones = m[23];
    struct out o = {ref, bound, scale, 0};
    if (!ok)
        goto oom;
    load(&in[0], x, sz[0]);
    load(&in[1], w1e, sz[2]);
    load(&in[2], w2e, sz[3]);
    load(&in[3], t, N);
    for (size_t i = 0; i < sz[23]; i++)
        ones[i] = 1.0;

    /* h = [x 1] W1e^T: both fp32, rounded to T */
    augment(x, B, D, xa);
    struct opnd Xa = {xa, NULL, B, D + 1, 0, 1}, W1e = {w1e, NULL, H, D + 1, 1, 1};
    if (product(&p, B, H, D + 1, &Xa, &W1e, 1, h, eh))
        goto oom;
    /* a = gelu(h) in T */
    for (size_t i = 0; i < (size_t)B * H; i++) {
        a[i] = gelu(h[i]);
        ea[i] = fabs(gelu_d1(h[i])) * eh[i] + 2 * p.u * fabs(a[i]) + p.floor;
    }
    /* y = [a 1] W2e^T: a already in T, W2e rounded */
    augment(a, B, H, aa);
    memset(eaa, 0, sz[10] * sizeof *eaa);
    for (int r = 0; r < B; r++)
        memcpy(eaa + (size_t)r * (H + 1), ea + (size_t)r * H, (size_t)H * sizeof *ea);
    struct opnd Aa = {aa, eaa, B, H + 1, 0, 0}, W2e = {w2e, NULL, O, H + 1, 1, 1};
    if (product(&p, B, O, H + 1, &Aa, &W2e, 1, y, ey))
        goto oom;
    /* loss in fp32 from y (T) and t; dy = 2 (y - t) / N, stored in T */
    double loss = 0, det = 0, prob = 0;
    for (size_t i = 0; i < N; i++) {
        double r = y[i] - t[i];
        loss += r * r;
        det += 2 * fabs(r) * ey[i];
        prob += 4 * r * r * ey[i] * ey[i];
        dy[i] = 2 * r / (double)N;
        edy[i] = 2 * ey[i] / (double)N + p.u * fabs(dy[i]) + bwd_floor;
    }
    loss /= (double)N;
    prob = sqrt(prob);
    double eloss = (prob < det ? prob : det) / (double)N + (LAMBDA * sqrt((double)N) + 1) * U32 * loss;
    emit(&o, &loss, &eloss, 1);
    emit(&o, y, ey, N);

    /* da = dy W2 (dy in T, W2 rounded), dh = da * gelu'(h) in T */
    weights(w2e, O, H, w2);
    struct opnd Dy = {dy, edy, B, O, 0, 0}, W2 = {w2, NULL, O, H, 0, 1};
    if (product(&p, B, H, O, &Dy, &W2, 1, da, eda))
        goto oom;
    for (size_t i = 0; i < (size_t)B * H; i++) {
        double d1 = gelu_d1(h[i]);
        dh[i] = da[i] * d1;
        edh[i] = eda[i] * fabs(d1) + fabs(da[i]) * fabs(gelu_d2(h[i])) * eh[i] +
                 2 * p.u * fabs(dh[i]) + bwd_floor;
    }
    /* dW1 = dh^T x (x rounded), db1 = dh^T 1 */
    struct opnd Dh = {dh, edh, B, H, 1, 0}, X = {x, NULL, B, D, 0, 1};
    struct opnd One = {ones, NULL, B, 1, 0, 0};
    if (product(&p, H, D, B, &Dh, &X, 1, g, eg))
        goto oom;
    emit(&o, g, eg, (size_t)H * D);
    if (product(&p, H, 1, B, &Dh, &One, 1, g, eg))
        goto oom;
    emit(&o, g, eg, (size_t)H);
    /* dW2 = dy^T a (a in T), db2 = dy^T 1 */
    struct opnd DyT = {dy, edy, B, O, 1, 0}, A = {a, ea, B, H, 0, 0};
    if (product(&p, O, H, B, &DyT, &A, 1, g2, eg))
        goto oom;
    emit(&o, g2, eg, (size_t)O * H);
    if (product(&p, O, 1, B, &DyT, &One, 1, g2, eg))
        goto oom;
    emit(&o, g2, eg, (size_t)O);
    for (int i = 0; i < NBUF; i++)
        free(m[i]);
    return GV_OK;
oom:
    for (int i = 0; i < NBUF; i++)
        free(m[i]);
    return gv_err_set(err, GV_E_NOMEM, "%s: out of memory for the reference", c->id);
}
