/* The op descriptor table (num/op.c) against what really reads and writes
 * the buffers it sizes: every op has catalog cases whose inputs follow its
 * row, and on a small case of each op the fp64 reference and the CPU backend
 * read exactly the declared input elements and write exactly the declared
 * output elements. A row that declares too few elements makes them read or
 * write past the end (into NaN guards checked here); too many leaves the
 * last declared input element unread or output elements unwritten. */
#include <math.h>
#include <stdint.h>

#include "check/runner.h"
#include "dev/backend.h"
#include "num/catalog.h"
#include "num/fp.h"
#include "num/op.h"
#include "num/ref.h"
#include "t.h"

#define GUARD 64 /* NaN elements after every buffer */

static void test_rows(void)
{
    for (int op = 0; op < GV_OP_COUNT; op++) {
        const struct gv_op_desc *o = gv_op_desc((enum gv_op)op);
        T_CHECK(o && o->name && *o->name && !strcmp(gv_op_name((enum gv_op)op), o->name));
        if (!o)
            continue;
        T_CHECK(o->nin >= 1 && o->nin <= GV_OP_MAX_IN);
        T_CHECK(o->nout >= 1 && o->nout <= GV_OP_MAX_OUT);
        for (int i = 0; i < o->nin; i++)
            T_CHECK(o->in[i].name && o->in[i].shape.dim[0] != GV_DIM_END);
        for (int j = 0; j < op; j++)
            T_CHECK(strcmp(gv_op_desc((enum gv_op)j)->name, o->name) != 0);
    }
    T_CHECK(gv_op_desc(GV_OP_COUNT) == NULL);
    T_EQ_STR(gv_op_name(GV_OP_COUNT), "?");
}

/* Every op has catalog cases, and no case has an empty input or output. */
static void test_catalog_cases(void)
{
    size_t n;
    const struct gv_catalog_entry *all = gv_catalog(&n);
    int seen[GV_OP_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        const struct gv_case *c = &all[i].c;
        const struct gv_op_desc *o = gv_op_desc(c->op);
        T_CHECK(o != NULL);
        if (!o)
            continue;
        seen[c->op]++;
        size_t out = gv_case_out_count(c);
        long long dims[4], p = 1;
        int nd = gv_case_out_shape(c, dims);
        for (int k = 0; k < nd; k++)
            p *= dims[k];
        T_CHECK(out > 0 && (size_t)p == out);
        size_t counts[GV_OP_MAX_IN];
        T_CHECK(gv_case_inputs(c, counts) == o->nin);
        for (int k = 0; k < o->nin; k++)
            T_CHECK(counts[k] > 0 && counts[k] == gv_case_in_count(c, k));
    }
    for (int op = 0; op < GV_OP_COUNT; op++)
        T_CHECK(seen[op] > 0);
}

/* ---- reads and writes on a small case of each op ---- */

struct bufs {
    struct gv_buffer in[GV_OP_MAX_IN];
    int nin;
    size_t nout;
};

static void *nan_filled(enum gv_dtype t, size_t n)
{
    void *p = malloc(n * gv_dtype_size(t));
    for (size_t i = 0; p && i < n; i++)
        gv_fp_store(p, t, i, NAN);
    return p;
}

/* Inputs sized by the row, drawn as the catalog draws them, each followed by
 * NaN guards; the slots after the row's inputs hold only guards. */
static int bufs_make(const struct gv_case *c, struct bufs *b)
{
    struct gv_buffer gen[4];
    int ngen = 0;
    struct gv_err err = {0};
    if (gv_make_inputs(c, gen, &ngen, &err) != GV_OK)
        return -1;
    size_t esz = gv_dtype_size(c->in_dtype);
    b->nin = ngen;
    for (int i = 0; i < GV_OP_MAX_IN; i++) {
        size_t cnt = i < ngen ? gen[i].count : 0;
        b->in[i] = (struct gv_buffer){c->in_dtype, cnt, nan_filled(c->in_dtype, cnt + GUARD)};
        if (b->in[i].data && cnt)
            memcpy(b->in[i].data, gen[i].data, cnt * esz);
    }
    gv_inputs_free(gen, ngen);
    b->nout = gv_case_out_count(c);
    return 0;
}

static void bufs_free(struct bufs *b)
{
    for (int i = 0; i < GV_OP_MAX_IN; i++)
        free(b->in[i].data);
}

/* Computes c into y[0..nout + GUARD) (NaN before); returns 0 on success. */
typedef int (*oracle_fn)(const struct gv_case *c, struct bufs *b, double *y);

static int by_reference(const struct gv_case *c, struct bufs *b, double *y)
{
    size_t n = b->nout + GUARD;
    double *bound = malloc(n * sizeof *bound), *scale = malloc(n * sizeof *scale);
    struct gv_err err = {0};
    int rc = gv_ref_compute(c, b->in, b->nin, y, bound, scale, 1, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", c->id, err.msg);
    free(bound);
    free(scale);
    return rc;
}

static int by_cpu(const struct gv_case *c, struct bufs *b, double *y)
{
    struct gv_device *d = NULL;
    struct gv_err err = {0};
    if (gv_backend_cpu.open("threads=1", &d, &err) != GV_OK)
        return -1;
    size_t n = b->nout + GUARD;
    struct gv_buffer out = {c->out_dtype, b->nout, nan_filled(c->out_dtype, n)};
    struct gv_run_info info = {0};
    int rc = gv_backend_cpu.run(d, c, b->in, b->nin, &out, &info, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", c->id, err.msg);
    for (size_t i = 0; i < n && out.data; i++)
        y[i] = gv_fp_load(out.data, c->out_dtype, i);
    free(out.data);
    gv_backend_cpu.close(d);
    return rc;
}

static size_t nan_count(const double *y, size_t lo, size_t hi)
{
    size_t k = 0;
    for (size_t i = lo; i < hi; i++)
        k += isnan(y[i]) != 0;
    return k;
}

/* The oracle writes every declared output element (finite: the inputs are)
 * and nothing after them; a NaN in the last declared element of any input
 * reaches the output, so that element is read. */
static void check_io(const char *who, const struct gv_case *c, oracle_fn run)
{
    struct bufs b;
    T_CHECK(bufs_make(c, &b) == 0 && b.nout > 0);
    double *y = malloc((b.nout + GUARD) * sizeof *y);
    for (size_t i = 0; i < b.nout + GUARD; i++)
        y[i] = NAN;
    int rc = run(c, &b, y);
    size_t unwritten = nan_count(y, 0, b.nout), guards = nan_count(y, b.nout, b.nout + GUARD);
    if (rc || unwritten || guards != GUARD)
        fprintf(stderr, "%s %s: rc %d, %zu of %zu outputs unwritten or NaN, %d guards hit\n",
                who, c->id, rc, unwritten, b.nout, GUARD - (int)guards);
    T_CHECK(rc == 0 && unwritten == 0 && guards == GUARD);
    for (int i = 0; i < b.nin && rc == 0; i++) {
        size_t last = b.in[i].count - 1;
        double keep = gv_fp_load(b.in[i].data, c->in_dtype, last);
        gv_fp_store(b.in[i].data, c->in_dtype, last, NAN);
        for (size_t k = 0; k < b.nout + GUARD; k++)
            y[k] = NAN;
        int rc2 = run(c, &b, y);
        size_t hit = nan_count(y, 0, b.nout);
        if (rc2 || hit == 0)
            fprintf(stderr, "%s %s: the last element of input %d (%s) is never read\n", who,
                    c->id, i, gv_op_desc(c->op)->in[i].name);
        T_CHECK(rc2 == 0 && hit > 0);
        gv_fp_store(b.in[i].data, c->in_dtype, last, keep);
    }
    free(y);
    bufs_free(&b);
}

/* The op's first catalog case, shrunk to small dimensions that all differ. */
static int small_case(enum gv_op op, unsigned targets, struct gv_case *c)
{
    size_t n;
    const struct gv_catalog_entry *all = gv_catalog(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i].c.op != op || !(all[i].targets & targets))
            continue;
        *c = all[i].c;
        c->batch = 2, c->m = 3, c->n = 5, c->k = 7, c->c = 2, c->h = 9, c->w = 11;
        c->r = 3, c->s = 2, c->stride = 2, c->pad = 1, c->rows = 3, c->len = 13;
        c->bh = 2, c->seq = 6, c->d = 4;
        return 1;
    }
    return 0;
}

static void test_reference_io(void)
{
    for (int op = 0; op < GV_OP_COUNT; op++) {
        struct gv_case c;
        if (small_case((enum gv_op)op, GV_TARGET_ALL, &c))
            check_io("reference", &c, by_reference);
    }
}

static void test_cpu_io(void)
{
    int tried = 0;
    for (int op = 0; op < GV_OP_COUNT; op++) {
        struct gv_case c;
        if (gv_op_desc((enum gv_op)op)->flags & GV_OPF_TORCH_ONLY)
            continue;
        T_CHECK(small_case((enum gv_op)op, GV_TARGET_KERNEL, &c));
        check_io("cpu", &c, by_cpu);
        tried++;
    }
    T_CHECK(tried >= GV_OP_COUNT - 1);
}

int main(void)
{
    T_RUN(test_rows);
    T_RUN(test_catalog_cases);
    T_RUN(test_reference_io);
    T_RUN(test_cpu_io);
    return t_done();
}
