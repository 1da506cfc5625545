/* Result files: writer and validating reader (docs/results-schema.md). */
#include "check/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"

static const char *const verdict_names[] = {"pass", "fail", "error", "skipped"};

int gv_verdict_from_name(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (name && !strcmp(name, verdict_names[i]))
            return i;
    return -1;
}

/* ---------- writer ---------- */

/* JSON has no inf/NaN: those are written as the strings "inf", "-inf", "nan". */
static json_t *num(double x)
{
    if (isnan(x))
        return json_string("nan");
    if (isinf(x))
        return json_string(x > 0 ? "inf" : "-inf");
    return json_real(x);
}

static json_t *shape_json(const struct gv_case *c)
{
    json_t *s = json_object();
#define F(name, v) json_object_set_new(s, name, json_integer((json_int_t)(v)))
    switch (c->op) {
    case GV_OP_GEMM:
        F("batch", c->batch > 0 ? c->batch : 1);
        F("m", c->m);
        F("n", c->n);
        F("k", c->k);
        break;
    case GV_OP_CONV2D:
        F("n", c->n);
        F("c", c->c);
        F("h", c->h);
        F("w", c->w);
        F("k", c->k);
        F("r", c->r);
        F("s", c->s);
        F("stride", c->stride);
        F("pad", c->pad);
        break;
    case GV_OP_MLP: /* batch rows, inputs, hidden, outputs */
        F("m", c->m);
        F("k", c->k);
        F("n", c->n);
        F("d", c->d);
        break;
    case GV_OP_SDPA:
        F("bh", c->bh);
        F("seq", c->seq);
        F("d", c->d);
        json_object_set_new(s, "causal", json_boolean(c->causal));
        break;
    case GV_OP_UNARY:
    case GV_OP_CONVERT:
        F("len", c->len);
        break;
    default:
        F("rows", c->rows);
        F("len", c->len);
        if (c->eps > 0)
            json_object_set_new(s, "eps", json_real(c->eps));
        break;
    }
#undef F
    return s;
}

static json_t *metrics_json(const struct gv_metrics *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer((json_int_t)m->count));
    json_object_set_new(o, "max_abs", num(m->max_abs));
    json_object_set_new(o, "max_rel", num(m->max_rel));
    json_object_set_new(o, "normwise", num(m->normwise));
    json_object_set_new(o, "err_over_bound", num(m->err_over_bound));
    json_object_set_new(o, "effective_bits", num(m->eff_bits));
    json_object_set_new(o, "mean_signed_error", num(m->mean_signed));
    json_object_set_new(o, "mean_error_toward_zero", num(m->mean_toward_zero));
    json_object_set_new(o, "mean_abs_error", num(m->mean_abs));
    json_t *h = json_array();
    for (int i = 0; i < GV_ULP_BUCKETS; i++)
        json_array_append_new(h, json_integer((json_int_t)m->ulp_hist[i]));
    json_object_set_new(o, "ulp_histogram", h);
    json_object_set_new(o, "nan_count", json_integer((json_int_t)m->nan_count));
    json_object_set_new(o, "inf_count", json_integer((json_int_t)m->inf_count));
    json_object_set_new(o, "ref_nonfinite", json_integer((json_int_t)m->ref_nonfinite));
    return o;
}

size_t gv_case_signatures(const struct gv_case_result *r, const struct kb_numsig **out,
                          size_t max, double *expected)
{
    *expected = 0;
    if (r->verdict != GV_FAIL || !r->measured)
        return 0;
    const struct gv_case *c = &r->entry->c;
    const char *compute = gv_dtype_name(c->compute_dtype), *outd = gv_dtype_name(c->out_dtype);
    *expected = kb_numsig_expected_bits(compute, outd);
    const struct gv_metrics *m = &r->m;
    struct kb_numsig_case k = {c->id, gv_op_name(c->op), gv_dtype_name(c->in_dtype), compute, outd,
                               *expected, m->eff_bits, m->mean_signed,
                               isfinite(m->mean_abs) && isfinite(m->mean_toward_zero),
                               m->mean_toward_zero, m->mean_abs,
                               m->nan_count > 0 || m->inf_count > 0};
    return kb_numsig_match(&k, out, max);
}

/* "signatures" of a failing case: what its error looks like, and against what. */
static json_t *signatures_json(const struct gv_case_result *r)
{
    const struct kb_numsig *sig[3];
    double expected;
    size_t n = gv_case_signatures(r, sig, 3, &expected);
    json_t *o = json_object(), *matches = json_array();
    json_object_set_new(o, "judged_against", json_string("the fp64 reference (this run alone)"));
    json_object_set_new(o, "expected_bits", json_real(expected));
    for (size_t i = 0; i < n; i++)
        json_array_append_new(matches, json_pack("{s:s, s:s, s:s}", "id", sig[i]->id, "text",
                                                 sig[i]->text, "source", sig[i]->source));
    json_object_set_new(o, "matches", matches);
    return o;
}

static json_t *case_json(const struct gv_case_result *r, int outputs_saved)
{
    const struct gv_case *c = &r->entry->c;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(c->id));
    json_object_set_new(o, "op", json_string(gv_op_name(c->op)));
    if (c->op == GV_OP_UNARY)
        json_object_set_new(o, "fn", json_string(gv_unary_name(c->unary)));
    json_object_set_new(o, "precision", json_string(r->entry->prec));
    if (c->call != GV_CALL_DEFAULT)
        json_object_set_new(o, "call", json_string(gv_call_name(c->call)));
    json_object_set_new(o, "in_dtype", json_string(gv_dtype_name(c->in_dtype)));
    json_object_set_new(o, "compute_dtype", json_string(gv_dtype_name(c->compute_dtype)));
    json_object_set_new(o, "out_dtype", json_string(gv_dtype_name(c->out_dtype)));
    json_object_set_new(o, "shape", shape_json(c));
    json_object_set_new(o, "dist", json_string(gv_dist_name(c->dist)));
    json_object_set_new(o, "seed", json_integer(c->seed));
    json_object_set_new(o, "suite", json_string(gv_suite_name(r->entry->suite)));
    json_object_set_new(o, "input_digest", json_string(r->input_digest));
    json_object_set_new(o, "output_digest", r->measured ? json_string(r->m.out_digest) : json_null());
    json_object_set_new(o, "verdict", json_string(verdict_names[r->verdict]));
    if (r->status)
        gv_json_set_str(o, "error", r->error);
    else
        json_object_set_new(o, "error", json_null());
    if (r->measured) {
        json_object_set_new(o, "metrics", metrics_json(&r->m));
        json_t *b = json_object();
        json_object_set_new(b, "max_abs", num(r->bound_max));
        json_object_set_new(b, "max_rel_to_scale", num(r->bound_rel));
        json_object_set_new(o, "bound", b);
        if (r->verdict == GV_FAIL)
            json_object_set_new(o, "signatures", signatures_json(r));
    } else {
        json_object_set_new(o, "metrics", json_null());
        json_object_set_new(o, "bound", json_null());
    }
    json_t *d = json_object();
    json_object_set_new(d, "checked", json_boolean(r->det_checked));
    json_object_set_new(d, "run_to_run_identical",
                        r->det_checked ? json_boolean(r->det_identical) : json_null());
    json_object_set_new(o, "determinism", d);
    json_t *t = json_object();
    json_object_set_new(t, "seconds", num(r->seconds));
    json_object_set_new(t, "reference_seconds", num(r->ref_seconds));
    json_object_set_new(t, "reference_cache_hit", json_boolean(r->ref_cache_hit));
    json_object_set_new(o, "timing", t);
    gv_json_set_str(o, "impl", r->impl);
    if (outputs_saved && r->measured)
        json_object_set_new(o, "output_tensor", json_string(c->id));
    return o;
}

json_t *gv_results_build(const struct gv_results_meta *meta, const struct gv_case_result *r,
                         size_t n)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(GV_RESULTS_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_RESULTS_SCHEMA_VERSION));
    json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
    gv_json_set_utc_now(doc, "created");
    json_object_set_new(doc, "suite", json_string(meta->suite ? meta->suite : "quick"));
    json_object_set_new(doc, "only", meta->only ? json_string(meta->only) : json_null());
    json_t *dev = json_object();
    json_object_set_new(dev, "spec", meta->device_spec ? json_string(meta->device_spec)
                                                       : json_null());
    gv_json_set_str(dev, "note", meta->device_note);
    json_object_set(dev, "description", meta->device ? meta->device : json_object());
    json_object_set_new(doc, "device", dev);
    if (meta->outputs_file) {
        json_t *o = json_object();
        gv_json_set_str(o, "file", meta->outputs_file);
        json_object_set_new(o, "format", json_string("safetensors"));
        json_object_set_new(doc, "outputs", o);
    } else {
        json_object_set_new(doc, "outputs", json_null());
    }
    size_t count[4] = {0}, nondet = 0;
    for (size_t i = 0; i < n; i++) {
        count[r[i].verdict]++;
        nondet += r[i].det_checked && !r[i].det_identical;
    }
    json_t *s = json_object();
    json_object_set_new(s, "cases", json_integer((json_int_t)n));
    for (int v = 0; v < 4; v++)
        json_object_set_new(s, verdict_names[v], json_integer((json_int_t)count[v]));
    json_object_set_new(s, "nondeterministic", json_integer((json_int_t)nondet));
    json_object_set_new(doc, "summary", s);
    json_t *cases = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(cases, case_json(&r[i], meta->outputs_file != NULL));
    json_object_set_new(doc, "cases", cases);
    if (meta->probe) /* check --probe: the device's fingerprint (schema gpuvet.probe) */
        json_object_set(doc, "probe", meta->probe);
    if (meta->snapshot)
        json_object_set(doc, "snapshot", meta->snapshot);
    else
        json_object_set_new(doc, "snapshot", gv_section_missing(NULL, "not collected"));
    return doc;
}

/* ---------- reader ---------- */

struct ctx {
    const char *what;
    size_t index;
    const char *id;
    struct gv_err *err;
};

static int bad(const struct ctx *x, const char *field, const char *why)
{
    if (x->id)
        return gv_err_set(x->err, GV_E_FORMAT, "%s: case %zu (%s): field \"%s\" %s", x->what,
                          x->index, x->id, field, why);
    return gv_err_set(x->err, GV_E_FORMAT, "%s: case %zu: field \"%s\" %s", x->what, x->index,
                      field, why);
}

static int get_str(const struct ctx *x, const json_t *o, const char *key, char *out,
                   size_t outsz, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        out[0] = '\0';
        return required ? bad(x, key, "is missing") : GV_OK;
    }
    if (!json_is_string(v))
        return bad(x, key, "is not a string");
    if (json_string_length(v) >= outsz || strlen(json_string_value(v)) != json_string_length(v))
        return bad(x, key, "is too long or contains NUL");
    snprintf(out, outsz, "%s", json_string_value(v));
    return GV_OK;
}

static int get_num(const struct ctx *x, const json_t *o, const char *obj, const char *key,
                   double *out)
{
    char field[96];
    snprintf(field, sizeof field, "%s.%s", obj, key);
    json_t *v = json_object_get(o, key);
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return GV_OK;
    }
    const char *s = json_string_value(v);
    if (s && !strcmp(s, "inf"))
        *out = INFINITY;
    else if (s && !strcmp(s, "-inf"))
        *out = -INFINITY;
    else if (s && !strcmp(s, "nan"))
        *out = NAN;
    else
        return bad(x, field, v ? "is not a number" : "is missing");
    return GV_OK;
}

static int get_count(const struct ctx *x, const json_t *o, const char *obj, const char *key,
                     uint64_t *out)
{
    char field[96];
    snprintf(field, sizeof field, "%s.%s", obj, key);
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return bad(x, field, v ? "is not a non-negative integer" : "is missing");
    *out = (uint64_t)json_integer_value(v);
    return GV_OK;
}

static int is_hex64(const char *s)
{
    if (strlen(s) != 64)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

static int read_metrics(const struct ctx *x, const json_t *m, struct gv_result_case *rc)
{
    if (!json_is_object(m))
        return bad(x, "metrics", "is missing or not an object (the case has a verdict)");
    int e = get_num(x, m, "metrics", "err_over_bound", &rc->err_over_bound);
    if (!e)
        e = get_num(x, m, "metrics", "effective_bits", &rc->eff_bits);
    if (!e)
        e = get_num(x, m, "metrics", "mean_signed_error", &rc->mean_signed);
    if (!e)
        e = get_num(x, m, "metrics", "max_abs", &rc->max_abs);
    if (!e)
        e = get_num(x, m, "metrics", "max_rel", &rc->max_rel);
    if (!e)
        e = get_num(x, m, "metrics", "normwise", &rc->normwise);
    if (!e)
        e = get_count(x, m, "metrics", "nan_count", &rc->nan_count);
    if (!e)
        e = get_count(x, m, "metrics", "inf_count", &rc->inf_count);
    if (!e)
        e = get_count(x, m, "metrics", "count", &rc->count);
    /* optional (gpuvet probe's error signatures): absent in older files */
    if (!e && json_object_get(m, "mean_error_toward_zero") && json_object_get(m, "mean_abs_error")) {
        e = get_num(x, m, "metrics", "mean_error_toward_zero", &rc->mean_toward_zero);
        if (!e)
            e = get_num(x, m, "metrics", "mean_abs_error", &rc->mean_abs);
        rc->has_bias = !e;
    }
    rc->has_metrics = !e;
    return e;
}

static int read_dtype(const struct ctx *x, const json_t *o, const char *key, char *out)
{
    int e = get_str(x, o, key, out, 8, 1);
    if (!e && gv_dtype_from_name(out) < 0)
        return bad(x, key, "is not a known number format");
    return e;
}

static int read_case(struct ctx *x, const json_t *o, struct gv_result_case *rc)
{
    if (!json_is_object(o))
        return gv_err_set(x->err, GV_E_FORMAT, "%s: case %zu is not an object", x->what,
                          x->index);
    memset(rc, 0, sizeof *rc);
    int e = get_str(x, o, "id", rc->id, sizeof rc->id, 1);
    if (e)
        return e;
    if (!rc->id[0])
        return bad(x, "id", "is empty");
    x->id = rc->id;
    char verdict[16];
    if ((e = get_str(x, o, "op", rc->op, sizeof rc->op, 1)) ||
        (e = read_dtype(x, o, "in_dtype", rc->in_dtype)) ||
        (e = read_dtype(x, o, "compute_dtype", rc->compute_dtype)) ||
        (e = read_dtype(x, o, "out_dtype", rc->out_dtype)) ||
        (e = get_str(x, o, "input_digest", rc->input_digest, sizeof rc->input_digest, 1)) ||
        (e = get_str(x, o, "output_digest", rc->output_digest, sizeof rc->output_digest, 0)) ||
        (e = get_str(x, o, "verdict", verdict, sizeof verdict, 1)) ||
        (e = get_str(x, o, "error", rc->error, sizeof rc->error, 0)) ||
        (e = get_str(x, o, "impl", rc->impl, sizeof rc->impl, 0)))
        return e;
    if (!is_hex64(rc->input_digest))
        return bad(x, "input_digest", "is not a sha256 hex digest");
    if (rc->output_digest[0] && !is_hex64(rc->output_digest))
        return bad(x, "output_digest", "is not a sha256 hex digest");
    int v = gv_verdict_from_name(verdict);
    if (v < 0)
        return bad(x, "verdict", "is not pass, fail, error or skipped");
    rc->verdict = (enum gv_verdict)v;
    if (v == GV_PASS || v == GV_FAIL) {
        if (!rc->output_digest[0])
            return bad(x, "output_digest", "is missing (the case has a verdict)");
        if ((e = read_metrics(x, json_object_get(o, "metrics"), rc)))
            return e;
    } else if (!rc->error[0]) {
        return bad(x, "error", "is missing (the case did not run)");
    }
    json_t *det = json_object_get(o, "determinism");
    if (json_is_object(det)) {
        rc->det_checked = json_is_true(json_object_get(det, "checked"));
        rc->det_identical = json_is_true(json_object_get(det, "run_to_run_identical"));
    }
    json_t *t = json_object_get(o, "timing");
    if (json_is_object(t) && json_is_number(json_object_get(t, "seconds")))
        rc->seconds = json_number_value(json_object_get(t, "seconds"));
    return GV_OK;
}

static int read_top(const char *what, json_t *doc, struct gv_results *res, struct gv_err *err)
{
    int e = gv_json_check_schema(doc, GV_RESULTS_SCHEMA, GV_RESULTS_SCHEMA_VERSION, what, err);
    if (e)
        return e;
    const char *suite = json_string_value(json_object_get(doc, "suite"));
    const char *created = json_string_value(json_object_get(doc, "created"));
    if (!suite || !created)
        return gv_err_set(err, GV_E_FORMAT, "%s: field \"%s\" is missing or not a string", what,
                          suite ? "created" : "suite");
    snprintf(res->suite, sizeof res->suite, "%s", suite);
    snprintf(res->created, sizeof res->created, "%s", created);
    json_t *dev = json_object_get(doc, "device");
    res->device = json_object_get(dev, "description");
    if (!json_is_object(res->device))
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: field \"device.description\" is missing or not an object", what);
    res->snapshot = json_object_get(doc, "snapshot");
    if (!json_is_object(res->snapshot))
        return gv_err_set(err, GV_E_FORMAT, "%s: field \"snapshot\" is missing or not an object",
                          what);
    json_t *outs = json_object_get(doc, "outputs");
    if (json_is_object(outs)) {
        const char *f = json_string_value(json_object_get(outs, "file"));
        if (!f || strlen(f) >= sizeof res->outputs_file)
            return gv_err_set(err, GV_E_FORMAT, "%s: field \"outputs.file\" is not a path", what);
        snprintf(res->outputs_file, sizeof res->outputs_file, "%s", f);
    } else if (outs && !json_is_null(outs)) {
        return gv_err_set(err, GV_E_FORMAT, "%s: field \"outputs\" is not an object or null",
                          what);
    }
    return GV_OK;
}

int gv_results_parse(const char *data, size_t len, const char *what, struct gv_results *res,
                     struct gv_err *err)
{
    memset(res, 0, sizeof *res);
    if (len == 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: empty file", what);
    json_error_t je;
    json_t *doc;
    int prc = gv_json_parse(data, len, what, &doc, &je, err);
    if (prc == GV_E_NOMEM)
        return prc;
    if (!doc)
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: not valid JSON (line %d, column %d: %s); truncated or corrupt?",
                          what, je.line, je.column, je.text);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return gv_err_set(err, GV_E_FORMAT, "%s: not a JSON object", what);
    }
    res->doc = doc;
    int e = read_top(what, doc, res, err);
    json_t *cases = json_object_get(doc, "cases");
    if (!e && !json_is_array(cases))
        e = gv_err_set(err, GV_E_FORMAT, "%s: field \"cases\" is missing or not an array", what);
    if (!e) {
        res->n = json_array_size(cases);
        res->cases = calloc(res->n ? res->n : 1, sizeof *res->cases);
        if (!res->cases)
            e = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    }
    for (size_t i = 0; !e && i < res->n; i++) {
        struct ctx x = {what, i, NULL, err};
        e = read_case(&x, json_array_get(cases, i), &res->cases[i]);
        for (size_t j = 0; !e && j < i; j++)
            if (!strcmp(res->cases[j].id, res->cases[i].id))
                e = gv_err_set(err, GV_E_FORMAT, "%s: case %zu (%s) appears twice (also case %zu)",
                               what, i, res->cases[i].id, j);
    }
    if (e)
        gv_results_free(res);
    return e;
}

int gv_results_load(const char *path, struct gv_results *res, struct gv_err *err)
{
    char *data;
    size_t len;
    memset(res, 0, sizeof *res);
    int e = gv_read_file(path, (size_t)1 << 30, &data, &len, err);
    if (e)
        return e;
    e = gv_results_parse(data, len, path, res, err);
    free(data);
    return e;
}

void gv_results_free(struct gv_results *res)
{
    json_decref(res->doc);
    free(res->cases);
    memset(res, 0, sizeof *res);
}

const struct gv_result_case *gv_results_find(const struct gv_results *res, const char *id)
{
    for (size_t i = 0; i < res->n; i++)
        if (!strcmp(res->cases[i].id, id))
            return &res->cases[i];
    return NULL;
}
