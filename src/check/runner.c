/* The suite runner (see runner.h). */
#include "check/runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/sha256.h"
#include "num/fp.h"
#include "num/ref.h"
#include "num/rng.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gv_inputs_free(struct gv_buffer in[4], int nin)
{
    for (int i = 0; i < nin && i < 4; i++) {
        free(in[i].data);
        in[i].data = NULL;
    }
}

int gv_make_inputs(const struct gv_case *c, struct gv_buffer in[4], int *nin, struct gv_err *err)
{
    size_t counts[4] = {0};
    int n = gv_case_inputs(c, counts);
    *nin = 0;
    if (n < 1 || n > 4)
        return gv_err_set(err, GV_E_USAGE, "%s: the case has no valid inputs", c->id);
    uint64_t key = gv_rng_key(c->id);
    size_t esz = gv_dtype_size(c->in_dtype);
    for (int i = 0; i < n; i++) {
        in[i].dtype = c->in_dtype;
        in[i].count = counts[i];
        in[i].data = malloc(counts[i] * esz + 1);
        if (!in[i].data) {
            gv_inputs_free(in, i);
            return gv_err_set(err, GV_E_NOMEM, "%s: out of memory for input %d (%zu elements)",
                              c->id, i, counts[i]);
        }
        struct gv_input_rule r;
        gv_catalog_input_rule(c, i, &r);
        if (r.scale == 1.0 && r.offset == 0.0) {
            gv_rng_fill(in[i].data, c->in_dtype, counts[i], r.dist, key, c->seed, (uint32_t)i);
            continue;
        }
        for (size_t j = 0; j < counts[i]; j++) {
            double v = gv_rng_draw(r.dist, c->in_dtype, key, c->seed, (uint32_t)i, j);
            gv_fp_store(in[i].data, c->in_dtype, j,
                        gv_fp_round(r.offset + r.scale * v, c->in_dtype, GV_RNE));
        }
    }
    *nin = n;
    return GV_OK;
}

void gv_input_digest(const struct gv_case *c, const struct gv_buffer *in, int nin, char out[65])
{
    char sem[1024];
    int k = snprintf(sem, sizeof sem,
                     "gpuvet.inputs.v1\nid=%s\nop=%s\nin=%s\ncompute=%s\nout=%s\nunary=%s\n"
                     "dist=%s\nseed=%u\nbatch=%lld m=%lld n=%lld k=%lld\n"
                     "c=%lld h=%lld w=%lld r=%lld s=%lld stride=%lld pad=%lld\n"
                     "rows=%lld len=%lld bh=%lld seq=%lld d=%lld causal=%d eps=%a\n",
                     c->id, gv_op_name(c->op), gv_dtype_name(c->in_dtype),
                     gv_dtype_name(c->compute_dtype), gv_dtype_name(c->out_dtype),
                     gv_unary_name(c->unary), gv_dist_name(c->dist), c->seed,
                     (long long)c->batch, (long long)c->m, (long long)c->n, (long long)c->k,
                     (long long)c->c, (long long)c->h, (long long)c->w, (long long)c->r,
                     (long long)c->s, (long long)c->stride, (long long)c->pad,
                     (long long)c->rows, (long long)c->len, (long long)c->bh,
                     (long long)c->seq, (long long)c->d, c->causal, c->eps);
    struct gv_sha256 s;
    gv_sha256_init(&s);
    gv_sha256_update(&s, sem, (size_t)k < sizeof sem ? (size_t)k : sizeof sem - 1);
    for (int i = 0; i < nin; i++) {
        struct gv_input_rule r;
        gv_catalog_input_rule(c, i, &r);
        char hdr[160];
        int h = snprintf(hdr, sizeof hdr, "input %d %s %zu %s %a %a\n", i,
                         gv_dtype_name(in[i].dtype), in[i].count, gv_dist_name(r.dist), r.scale,
                         r.offset);
        gv_sha256_update(&s, hdr, (size_t)h);
        gv_sha256_update(&s, in[i].data, in[i].count * gv_dtype_size(in[i].dtype));
    }
    uint8_t d[32];
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, out);
}

static void set_error(struct gv_case_result *r, int status, enum gv_verdict v,
                      const struct gv_err *e)
{
    r->status = status;
    r->verdict = v;
    snprintf(r->error, sizeof r->error, "%s", e->msg[0] ? e->msg : gv_status_name(status));
}

static int alloc_out(const struct gv_case *c, struct gv_buffer *out)
{
    out->dtype = c->out_dtype;
    out->count = gv_case_out_count(c);
    out->data = calloc(out->count ? out->count : 1, gv_dtype_size(c->out_dtype));
    return out->data ? GV_OK : GV_E_NOMEM;
}

/* Second run on the same inputs: are the output bytes identical? */
static void check_determinism(const struct gv_run_opts *o, const struct gv_case *c,
                              const struct gv_buffer *in, int nin, const struct gv_buffer *out1,
                              struct gv_case_result *r)
{
    struct gv_buffer out2;
    if (alloc_out(c, &out2))
        return;
    struct gv_run_info info = {0};
    struct gv_err e = {0};
    if (o->be->run(o->dev, c, in, nin, &out2, &info, &e) == GV_OK) {
        r->det_checked = 1;
        r->det_identical =
            memcmp(out1->data, out2.data, out1->count * gv_dtype_size(c->out_dtype)) == 0;
    }
    free(out2.data);
}

/* Reference, metrics and verdict for an output the backend produced. */
static int judge(const struct gv_case *c, const struct gv_buffer *in, int nin,
                 const struct gv_buffer *out, struct gv_case_result *r)
{
    size_t n = out->count;
    double *ref = malloc((n ? n : 1) * sizeof *ref), *bound = malloc((n ? n : 1) * sizeof *bound);
    double *scale = malloc((n ? n : 1) * sizeof *scale), *y = malloc((n ? n : 1) * sizeof *y);
    struct gv_err e = {0};
    int rc = GV_OK;
    if (!ref || !bound || !scale || !y) {
        rc = gv_err_set(&e, GV_E_NOMEM, "%s: out of memory for the reference", c->id);
        goto done;
    }
    double t0 = now_s();
    rc = gv_ref_cached(c, in, nin, r->input_digest, ref, bound, scale, &r->ref_cache_hit, &e);
    r->ref_seconds = now_s() - t0;
    if (rc)
        goto done;
    for (size_t i = 0; i < n; i++)
        y[i] = gv_fp_load(out->data, out->dtype, i);
    gv_metrics_compute(y, ref, bound, scale, n, out->dtype, out->data,
                       n * gv_dtype_size(out->dtype), &r->m);
    r->measured = 1;
    r->bound_max = 0.0;
    r->bound_rel = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(bound[i]))
            continue;
        if (bound[i] > r->bound_max)
            r->bound_max = bound[i];
        if (scale[i] > 0 && isfinite(scale[i]) && bound[i] / scale[i] > r->bound_rel)
            r->bound_rel = bound[i] / scale[i];
    }
    int bad = r->m.nan_count || r->m.inf_count || !(r->m.err_over_bound <= 1.0);
    r->verdict = bad ? GV_FAIL : GV_PASS;
done:
    if (rc)
        set_error(r, rc, GV_ERROR, &e);
    free(ref);
    free(bound);
    free(scale);
    free(y);
    return rc;
}

static void run_one(const struct gv_run_opts *o, const struct gv_catalog_entry *ent,
                    struct gv_case_result *r)
{
    const struct gv_case *c = &ent->c;
    memset(r, 0, sizeof *r);
    r->entry = ent;
    struct gv_buffer in[4] = {{0}};
    struct gv_buffer out = {0};
    int nin = 0;
    struct gv_err e = {0};
    int rc = gv_make_inputs(c, in, &nin, &e);
    if (rc) {
        set_error(r, rc, GV_ERROR, &e);
        return;
    }
    gv_input_digest(c, in, nin, r->input_digest);
    rc = o->be->supports(o->dev, c, &e);
    if (rc) {
        set_error(r, rc, GV_SKIPPED, &e);
        goto done;
    }
    if (alloc_out(c, &out)) {
        gv_err_set(&e, GV_E_NOMEM, "%s: out of memory for the output", c->id);
        set_error(r, GV_E_NOMEM, GV_ERROR, &e);
        goto done;
    }
    struct gv_run_info info = {0};
    rc = o->be->run(o->dev, c, in, nin, &out, &info, &e);
    r->seconds = info.seconds;
    snprintf(r->impl, sizeof r->impl, "%s", info.impl);
    if (rc) { /* some backends learn only by trying that a case cannot run (torch) */
        set_error(r, rc, rc == GV_E_UNSUPPORTED ? GV_SKIPPED : GV_ERROR, &e);
        goto done;
    }
    if (judge(c, in, nin, &out, r))
        goto done;
    if (o->determinism == GV_DET_ALL ||
        (o->determinism == GV_DET_QUICK && ent->suite == GV_SUITE_QUICK))
        check_determinism(o, c, in, nin, &out, r);
    if (o->keep_outputs) {
        r->output = out;
        out.data = NULL;
    }
done:
    free(out.data);
    gv_inputs_free(in, nin);
}

int gv_run_cases(const struct gv_catalog_entry *const *cases, size_t n,
                 const struct gv_run_opts *opts, struct gv_case_result *results,
                 struct gv_err *err)
{
    if (!opts || !opts->be || !opts->be->run)
        return gv_err_set(err, GV_E_USAGE, "runner: no backend");
    for (size_t i = 0; i < n; i++) {
        if (opts->progress)
            opts->progress(opts->progress_ud, i, n, cases[i], NULL);
        run_one(opts, cases[i], &results[i]);
        if (opts->progress)
            opts->progress(opts->progress_ud, i, n, cases[i], &results[i]);
    }
    return GV_OK;
}

void gv_run_results_free(struct gv_case_result *results, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(results[i].output.data);
        results[i].output.data = NULL;
    }
}
