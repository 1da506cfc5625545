/* model.kN: the kernel structure the route uses at inner dimension N, found by
 * running two random GEMMs on the route and trying the models of a small
 * family around the precision's measured properties on the CPU
 * (num/mma.h gv_mma_fit), the first that reproduces every output bit for
 * bit. The targeted probes (props.c) measure the arithmetic; libraries pick
 * another kernel for another K (a partial K tile handled first, split-K
 * slices added at the end), which only a GEMM of that K shows. docs/probe.md,
 * "Kernel structure per K". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/cpu/fpmodel.h"
#include "num/fp.h"
#include "num/mma.h"
#include "num/rng.h"
#include "probe/exec.h"

/* The default grid. 2^n - 1 shows every tile's partial part. */
static const int grid_ks[] = {1,  2,  3,   4,   7,   8,   15,  16,   31,   32,  63,
                              64, 127, 128, 255, 256, 511, 512, 1024, 2048, 4096};

static int desc(const void *a, const void *b)
{
    return *(const int *)b - *(const int *)a;
}

int gv_probe_fit_parse(const char *s, struct gv_probe_fit_ks *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    if (!s) {
        for (size_t i = 0; i < sizeof grid_ks / sizeof grid_ks[0]; i++)
            out->k[out->n++] = grid_ks[i];
    } else if (strcmp(s, "none")) {
        for (const char *p = s;;) {
            char *end;
            long v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : 0;
            if (v < 1 || v > 65536 || (*end && *end != ','))
                return gv_err_set(err, GV_E_USAGE, "--fit-k %s: not \"none\" or a list of "
                                  "K from 1 to 65536 (\"16,255,4096\")", s);
            int dup = 0;
            for (int i = 0; i < out->n; i++)
                dup |= out->k[i] == v;
            if (!dup && out->n == GV_PROBE_FIT_MAX)
                return gv_err_set(err, GV_E_USAGE, "--fit-k %s: more than %d K", s,
                                  GV_PROBE_FIT_MAX);
            if (!dup)
                out->k[out->n++] = (int)v;
            if (!*end)
                break;
            p = end + 1;
        }
    }
    /* largest first: a tile seen at a larger K is kept where a smaller K
     * cannot tell (gv_mma_fit's tile_hint) */
    qsort(out->k, (size_t)out->n, sizeof out->k[0], desc);
    return GV_OK;
}

/* sign * (1 + u) * 2^e, e uniform in [-r, r): a range the format's products
 * and sums of 4096 of them keep finite. */
static int wide_range(enum gv_dtype t)
{
    switch (t) {
    case GV_F8E4M3: return 2;
    case GV_F8E5M2:
    case GV_F16: return 4;
    default: return 8;
    }
}

static void fill(struct gv_buffer *b, int wide, uint64_t key, uint32_t stream)
{
    if (!wide) {
        gv_rng_fill(b->data, b->dtype, b->count, GV_DIST_NORMAL, key, 1, stream);
        return;
    }
    int r = wide_range(b->dtype);
    for (size_t i = 0; i < b->count; i++) {
        double u = gv_rng_uniform(key, 2, stream, 2 * i);
        double v = gv_rng_uniform(key, 2, stream, 2 * i + 1);
        int e = (int)floor(v * 2 * r) - r;
        double x = (u < 0.5 ? -1 : 1) * ldexp(1.0 + fabs(2 * u - 1), e);
        gv_fp_store(b->data, b->dtype, i, gv_fp_round(x, b->dtype, GV_RNE));
    }
}

struct run {
    struct gv_case c;
    struct gv_buffer in[2], out;
};

/* The two GEMMs of one K on the route: normal, then wide inputs. */
static int run_pair(struct px *x, int k, struct run r[2], struct gv_err *err)
{
    memset(r, 0, 2 * sizeof *r);
    int rc = GV_OK;
    for (int w = 0; w < 2 && !rc; w++) {
        px_case(x, PX_DIM, PX_DIM, k, &r[w].c);
        if (px_alloc(&r[w].c, r[w].in, &r[w].out))
            return gv_err_set(err, GV_E_NOMEM, "probe: out of memory");
        uint64_t key = gv_rng_key(x->p->name) ^ (uint64_t)k;
        fill(&r[w].in[0], w, key, 0);
        fill(&r[w].in[1], w, key, 1);
        rc = px_raw(x, &r[w].c, r[w].in, &r[w].out, err);
    }
    return rc;
}

static void free_pair(struct run r[2])
{
    for (int w = 0; w < 2; w++)
        px_free(r[w].in, &r[w].out);
}

static json_t *fit_one(struct px *x, const struct gv_mma_model *base, int bound, int k,
                       struct gv_mma_model *hint, int *have_hint, struct gv_err *err)
{
    char meth[400];
    snprintf(meth, sizeof meth,
             "two random GEMMs %dx%dx%d (normal and wide inputs) on the route; models around "
             "the measured properties tried on the CPU in order (chunks, tile, block): the "
             "first that reproduces 512 outputs of each (every row and column) bit for bit",
             PX_DIM, PX_DIM, k);
    json_t *pr = px_prop("undetermined", meth);
    struct run r[2];
    int rc = run_pair(x, k, r, err);
    struct gv_mma_fit f;
    if (!rc) {
        struct gv_mma_fit_gemm g[2];
        for (int w = 0; w < 2; w++)
            g[w] = (struct gv_mma_fit_gemm){&r[w].in[0], &r[w].in[1], &r[w].out, PX_DIM, PX_DIM,
                                            k};
        rc = gv_mma_fit(base, bound, *have_hint ? hint : NULL, g, 2, &f, err);
    }
    free_pair(r);
    if (rc == GV_E_NOMEM) {
        json_decref(pr);
        return NULL;
    }
    if (rc) { /* this K only: the other properties stand */
        px_obs(pr, "undetermined: %s", err->msg);
        memset(err, 0, sizeof *err);
        return pr;
    }
    char s[128];
    gv_mma_structure_str(&f.m, s, sizeof s);
    if (f.found) {
        json_object_set_new(pr, "value", json_string(s));
        px_obs(pr, "%ld of %ld outputs reproduced; %ld model%s tried", f.outputs, f.outputs,
            f.tried, f.tried == 1 ? "" : "s");
        *hint = f.m;
        *have_hint = 1;
    } else {
        px_obs(pr, "undetermined: none of %ld models reproduced every output; the closest (%s) "
            "reproduced %ld before its first miss, of %ld", f.tried, s, f.leading, f.outputs);
    }
    return pr;
}

int gv_probe_fit_base(const json_t *props, enum gv_dtype in, enum gv_dtype compute,
                      enum gv_dtype out, struct gv_mma_model *base, int *bound)
{
    struct gv_err e = {0};
    if (gv_mma_model_from_props(props, in, compute, out, base, NULL, 0, "probe", &e))
        return -1;
    const char *xb = json_string_value(json_object_get(json_object_get(props, "extra_bits"),
                                                       "value"));
    *bound = xb && !strncmp(xb, ">=", 2);
    const char *n = xb ? xb + (*bound ? 2 : 0) : NULL;
    /* one product per rounding for want of a block size (fused_terms
     * undetermined): the measured extra bits still hold for the blocks tried */
    if (base->block == 1 && n && n[0] >= '0' && n[0] <= '9')
        base->extra_bits = atoi(n);
    return 0;
}

int gv_probe_fit(struct px *x, json_t *props, const struct gv_probe_fit_ks *fit,
                 struct gv_err *err)
{
    const struct gv_probe_prec *p = x->p;
    struct gv_mma_model base;
    int bound, have_hint = 0;
    if (!fit->n || strcmp(p->op, "gemm") ||
        gv_probe_fit_base(props, p->in, p->compute, p->out, &base, &bound))
        return GV_OK; /* sums, and formats the model lacks: nothing to fit */
    struct gv_mma_model hint;
    for (int i = 0; i < fit->n; i++) {
        json_t *pr = fit_one(x, &base, bound, fit->k[i], &hint, &have_hint, err);
        if (!pr)
            return GV_E_NOMEM;
        char name[32];
        snprintf(name, sizeof name, "model.k%d", fit->k[i]);
        json_object_set_new(props, name, pr);
    }
    return GV_OK;
}
