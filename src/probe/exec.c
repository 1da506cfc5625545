/* Dot products with caller-chosen inputs through a backend's ordinary run()
 * (dev/backend.h): up to PX_DIM probes per GEMM, probe q in row q of A and
 * column q of B and read at C[q][q] (each output element is its own dot
 * product: the other elements, whatever they hold, do not take part). The
 * GEMM shape stays 64 x 64 x K for every probe of a route, a shape the
 * libraries send to tensor cores (docs/facts/numerics-methods.md §7). Sums use rows. */
#include "probe/exec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "num/fp.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void px_case(struct px *x, int rows, int cols, int k, struct gv_case *c)
{
    memset(c, 0, sizeof *c);
    snprintf(x->idbuf, sizeof x->idbuf, "probe.%s.%dx%dx%d", x->p->name, rows, cols, k);
    c->id = x->idbuf;
    c->in_dtype = x->p->in;
    c->compute_dtype = x->p->compute;
    c->out_dtype = x->p->out;
    c->call = x->call;
    c->batch = 1;
    if (!strcmp(x->p->op, "sum")) {
        c->op = GV_OP_SUM;
        c->rows = rows;
        c->len = k;
    } else {
        c->op = GV_OP_GEMM;
        c->m = rows;
        c->n = cols;
        c->k = k;
    }
}

static void note_impl(struct px *x, const char *impl)
{
    if (!impl[0])
        return;
    size_t i;
    json_t *v;
    json_array_foreach(x->impls, i, v)
        if (!strcmp(json_string_value(v), impl))
            return;
    json_array_append_new(x->impls, json_string(impl));
}

int px_raw(struct px *x, const struct gv_case *c, struct gv_buffer in[2], struct gv_buffer *out,
           struct gv_err *err)
{
    struct gv_run_info info = {0};
    double t0 = now_s();
    int nin = c->op == GV_OP_SUM ? 1 : 2;
    int rc = x->be->run(x->dev, c, in, nin, out, &info, err);
    x->seconds += now_s() - t0;
    x->calls++;
    if (!rc)
        note_impl(x, info.impl);
    return rc;
}

int px_alloc(const struct gv_case *c, struct gv_buffer in[2], struct gv_buffer *out)
{
    size_t na = c->op == GV_OP_SUM ? (size_t)(c->rows * c->len) : (size_t)(c->m * c->k);
    size_t nb = c->op == GV_OP_SUM ? 0 : (size_t)(c->k * c->n);
    size_t no = c->op == GV_OP_SUM ? (size_t)c->rows : (size_t)(c->m * c->n);
    memset(in, 0, 2 * sizeof *in);
    in[0] = (struct gv_buffer){c->in_dtype, na, calloc(na ? na : 1, gv_dtype_size(c->in_dtype))};
    in[1] = (struct gv_buffer){c->in_dtype, nb, calloc(nb ? nb : 1, gv_dtype_size(c->in_dtype))};
    *out = (struct gv_buffer){c->out_dtype, no, calloc(no ? no : 1, gv_dtype_size(c->out_dtype))};
    return in[0].data && in[1].data && out->data ? GV_OK : GV_E_NOMEM;
}

void px_free(struct gv_buffer in[2], struct gv_buffer *out)
{
    free(in[0].data);
    free(in[1].data);
    free(out->data);
    in[0].data = in[1].data = out->data = NULL;
}

int px_representable(double v, enum gv_dtype t)
{
    if (!isfinite(v))
        return 0;
    enum gv_dtype s = t == GV_TF32 ? GV_F32 : t;
    return gv_fp_round(v, s, GV_RNE) == v;
}

int px_dots(struct px *x, int k, int nq, const double *a, const double *b, double *r,
            struct gv_err *err)
{
    int sum = !strcmp(x->p->op, "sum");
    for (int q0 = 0; q0 < nq; q0 += PX_DIM) {
        int nb = nq - q0 < PX_DIM ? nq - q0 : PX_DIM;
        struct gv_case c;
        px_case(x, PX_DIM, PX_DIM, k, &c);
        struct gv_buffer in[2], out;
        if (px_alloc(&c, in, &out)) {
            px_free(in, &out);
            return gv_err_set(err, GV_E_NOMEM, "probe: out of memory");
        }
        for (int q = 0; q < nb; q++)
            for (int i = 0; i < k; i++) {
                double va = a[(size_t)(q0 + q) * (size_t)k + (size_t)i];
                double vb = sum ? 0 : b[(size_t)(q0 + q) * (size_t)k + (size_t)i];
                if (!px_representable(va, x->p->in) || (!sum && !px_representable(vb, x->p->in))) {
                    px_free(in, &out);
                    return gv_err_set(err, GV_E_USAGE, "probe input %a or %a is not a %s value",
                                      va, vb, gv_dtype_name(x->p->in));
                }
                /* row q of A (or of x); column q of B */
                gv_fp_store(in[0].data, x->p->in == GV_TF32 ? GV_F32 : x->p->in,
                            (size_t)q * (size_t)k + (size_t)i, va);
                if (!sum)
                    gv_fp_store(in[1].data, x->p->in, (size_t)i * PX_DIM + (size_t)q, vb);
            }
        int rc = px_raw(x, &c, in, &out, err);
        if (!rc)
            for (int q = 0; q < nb; q++)
                r[q0 + q] = gv_fp_load(out.data, x->p->out,
                                       sum ? (size_t)q : (size_t)q * PX_DIM + (size_t)q);
        px_free(in, &out);
        if (rc)
            return rc;
    }
    return GV_OK;
}

/* ---------- sparse probes ---------- */

void pb_init(struct pb *b, int k)
{
    memset(b, 0, sizeof *b);
    b->k = k;
}

int pb_add(struct pb *b, int nt, const struct term *t)
{
    if (b->n >= PB_MAX || nt > PB_TERMS)
        return -1;
    struct pq *q = &b->q[b->n];
    q->nt = nt;
    for (int i = 0; i < nt; i++)
        q->t[i] = t[i];
    return b->n++;
}

int pb_run(struct px *x, struct pb *b, struct gv_err *err)
{
    size_t cells = (size_t)b->n * (size_t)b->k;
    double *a = calloc(cells ? cells : 1, sizeof *a), *bb = calloc(cells ? cells : 1, sizeof *bb);
    if (!a || !bb) {
        free(a);
        free(bb);
        return gv_err_set(err, GV_E_NOMEM, "probe: out of memory");
    }
    for (int q = 0; q < b->n; q++)
        for (int i = 0; i < b->q[q].nt; i++) {
            const struct term *t = &b->q[q].t[i];
            a[(size_t)q * (size_t)b->k + (size_t)t->pos] = t->a;
            bb[(size_t)q * (size_t)b->k + (size_t)t->pos] = t->b;
        }
    int rc = px_dots(x, b->k, b->n, a, bb, b->r, err);
    free(a);
    free(bb);
    return rc;
}

json_t *px_prop(const char *value, const char *method)
{
    json_t *p = json_object();
    json_object_set_new(p, "value", json_string(value));
    json_object_set_new(p, "method", json_string(method));
    json_object_set_new(p, "observations", json_array());
    return p;
}

void px_obs(json_t *p, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    json_array_append_new(json_object_get(p, "observations"), json_string(line));
}
