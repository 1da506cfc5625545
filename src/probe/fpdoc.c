/* Reading fingerprint documents (schema gpuvet.probe v1) and the
 * differences between two of them, in words (probe.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "probe/probe.h"

void gv_fp_free(struct gv_fingerprint *fp)
{
    for (size_t i = 0; i < fp->n; i++)
        free(fp->e[i].props);
    free(fp->e);
    memset(fp, 0, sizeof *fp);
}

static int str_at(const json_t *o, const char *key, char *out, size_t n, const char *what,
                  const char *where, struct gv_err *err)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: \"%s\" is missing or not a string", what,
                          where, key);
    snprintf(out, n, "%s", json_string_value(v));
    return GV_OK;
}

/* "runs" and "differing" of a repeated property (absent in older documents). */
static int runs_at(const json_t *v, struct gv_fp_prop *pp, const char *what, const char *where,
                   struct gv_err *err)
{
    const json_t *r = json_object_get(v, "runs"), *d = json_object_get(v, "differing");
    pp->runs = pp->differing = -1;
    if (!r && !d)
        return GV_OK;
    if (!json_is_integer(r) || !json_is_integer(d))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: \"runs\" and \"differing\" must both be "
                          "integers", what, where);
    json_int_t n = json_integer_value(r), k = json_integer_value(d);
    if (n < 2 || n > 100000 || k < 0 || k > n - 1)
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: %lld of %lld runs differing is impossible",
                          what, where, (long long)k, (long long)n);
    pp->runs = (int)n;
    pp->differing = (int)k;
    return GV_OK;
}

static int entry_from(const json_t *p, const char *route, const char *what, size_t ri, size_t pi,
                      struct gv_fp_entry *e, struct gv_err *err)
{
    char where[96];
    snprintf(where, sizeof where, "routes[%zu].precisions[%zu]", ri, pi);
    memset(e, 0, sizeof *e);
    snprintf(e->route, sizeof e->route, "%s", route);
    if (!json_is_object(p))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s is not an object", what, where);
    int rc = str_at(p, "op", e->op, sizeof e->op, what, where, err);
    if (!rc)
        rc = str_at(p, "precision", e->precision, sizeof e->precision, what, where, err);
    if (!rc)
        rc = str_at(p, "status", e->status, sizeof e->status, what, where, err);
    if (rc)
        return rc;
    const json_t *props = json_object_get(p, "properties");
    if (!json_is_object(props))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: \"properties\" is missing or not an object",
                          what, where);
    size_t np = json_object_size(props);
    e->props = calloc(np ? np : 1, sizeof *e->props);
    if (!e->props)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)props, k, v) {
        char w2[160];
        snprintf(w2, sizeof w2, "%s.properties.%.40s", where, k);
        if (!json_is_object(v))
            return gv_err_set(err, GV_E_FORMAT, "%s: %s is not an object", what, w2);
        struct gv_fp_prop *pp = &e->props[e->nprops];
        snprintf(pp->name, sizeof pp->name, "%s", k);
        if ((rc = str_at(v, "value", pp->value, sizeof pp->value, what, w2, err)) ||
            (rc = runs_at(v, pp, what, w2, err)))
            return rc;
        const json_t *ob = json_object_get(v, "observations");
        if (ob && !json_is_array(ob))
            return gv_err_set(err, GV_E_FORMAT, "%s: %s: \"observations\" is not an array", what,
                              w2);
        e->nprops++;
    }
    return GV_OK;
}

int gv_fp_from_json(const json_t *doc, const char *what, struct gv_fingerprint *fp,
                    struct gv_err *err)
{
    memset(fp, 0, sizeof *fp);
    int rc = gv_json_check_schema(doc, GV_PROBE_SCHEMA, GV_PROBE_SCHEMA_VERSION, what, err);
    if (rc)
        return rc;
    const json_t *spec = json_object_get(doc, "device_spec");
    if (json_is_string(spec))
        snprintf(fp->device, sizeof fp->device, "%s", json_string_value(spec));
    const json_t *routes = json_object_get(doc, "routes");
    if (!json_is_array(routes))
        return gv_err_set(err, GV_E_FORMAT, "%s: \"routes\" is missing or not an array", what);
    size_t total = 0, i, j;
    json_t *r, *p;
    json_array_foreach(routes, i, r) {
        const json_t *ps = json_object_get(r, "precisions");
        if (!json_is_object(r) || !json_is_array(ps))
            return gv_err_set(err, GV_E_FORMAT,
                              "%s: routes[%zu] is not an object with a \"precisions\" array",
                              what, i);
        total += json_array_size(ps);
    }
    fp->e = calloc(total ? total : 1, sizeof *fp->e);
    if (!fp->e)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    json_array_foreach(routes, i, r) {
        char name[32], where[32];
        snprintf(where, sizeof where, "routes[%zu]", i);
        if ((rc = str_at(r, "route", name, sizeof name, what, where, err)))
            break;
        json_array_foreach(json_object_get(r, "precisions"), j, p) {
            rc = entry_from(p, name, what, i, j, &fp->e[fp->n], err);
            fp->n++; /* counted even on failure, so that free releases its props */
            if (rc)
                break;
        }
        if (rc)
            break;
    }
    if (rc)
        gv_fp_free(fp);
    return rc;
}

int gv_fp_parse(const char *data, size_t len, const char *what, struct gv_fingerprint *fp,
                struct gv_err *err)
{
    memset(fp, 0, sizeof *fp);
    json_error_t je;
    json_t *doc;
    int prc = gv_json_parse(data, len, what, &doc, &je, err);
    if (prc == GV_E_NOMEM)
        return prc;
    if (!doc)
        return gv_err_set(err, GV_E_FORMAT, "%s: not JSON: %s (line %d, column %d)", what, je.text,
                          je.line, je.column);
    int rc = gv_fp_from_json(doc, what, fp, err);
    json_decref(doc);
    return rc;
}

const char *gv_fp_value(const struct gv_fp_entry *e, const char *prop)
{
    for (size_t i = 0; i < e->nprops; i++)
        if (!strcmp(e->props[i].name, prop))
            return e->props[i].value;
    return NULL;
}

/* ---------- differences ---------- */

static const struct gv_fp_entry *find(const struct gv_fingerprint *f, const struct gv_fp_entry *x)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].route, x->route) && !strcmp(f->e[i].op, x->op) &&
            !strcmp(f->e[i].precision, x->precision))
            return &f->e[i];
    return NULL;
}

static const char *prec_words(const char *op, const char *prec)
{
    static const struct {
        const char *op, *prec, *words;
    } w[] = {
        {"gemm", "f64", "fp64 GEMM"},         {"gemm", "f32", "fp32 GEMM"},
        {"gemm", "tf32", "TF32 GEMM"},        {"gemm", "f16", "fp16 GEMM"},
        {"gemm", "f16.out16", "fp16 GEMM (fp16 output)"},
        {"gemm", "f16acc16", "fp16 GEMM with fp16 accumulation"},
        {"gemm", "bf16", "bf16 GEMM"},        {"gemm", "bf16.out16", "bf16 GEMM (bf16 output)"},
        {"gemm", "f8e4m3", "fp8 e4m3 GEMM"},  {"gemm", "f8e5m2", "fp8 e5m2 GEMM"},
        {"sum", "f32", "fp32 sum"},           {"sum", "f64", "fp64 sum"},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (!strcmp(w[i].op, op) && !strcmp(w[i].prec, prec))
            return w[i].words;
    return prec;
}

/* One property's change in words. */
static void change_words(const struct gv_fp_entry *e, const char *prop, const char *before,
                         const char *after, char *out, size_t n)
{
    char head[120];
    snprintf(head, sizeof head, "%s on %s", prec_words(e->op, e->precision), e->route);
    if (!strcmp(prop, "input_mantissa_bits")) {
        const char *r = gv_fp_value(e, "input_rounding");
        /* what the input format has become, when it is a known one */
        const char *as = !strcmp(e->precision, "f32") && !strcmp(after, "10") ? " (it now behaves as TF32)"
                         : !strncmp(e->precision, "f16", 3) && !strcmp(after, "7")
                             ? " (fp16 inputs now pass through bf16)"
                             : "";
        snprintf(out, n, "%s: inputs now %s to %s mantissa bits (was %s)%s", head,
                 r && !strcmp(r, "toward-zero") ? "truncated" : "rounded", after, before, as);
    } else if (!strcmp(prop, "input_rounding")) {
        snprintf(out, n, "%s: input conversion now rounds %s (was %s)", head, after, before);
    } else if (!strcmp(prop, "sum_mantissa_bits")) {
        snprintf(out, n, "%s: sums now keep %s mantissa bits (was %s)", head, after, before);
    } else if (!strcmp(prop, "sum_rounding")) {
        snprintf(out, n, "%s: sums now round %s (was %s)", head, after, before);
    } else if (!strcmp(prop, "combine_rounding")) {
        snprintf(out, n, "%s: a later block's sum now joins the total rounded %s (was %s)", head,
                 after, before);
    } else if (!strcmp(prop, "input_subnormals") || !strcmp(prop, "output_subnormals")) {
        snprintf(out, n, "%s: %s subnormals now %s (were %s)", head,
                 prop[0] == 'i' ? "input" : "output", after, before);
    } else if (!strncmp(prop, "order.k", 7)) {
        snprintf(out, n, "%s: accumulation order over K=%s now %s (was %s)", head, prop + 7,
                 after, before);
    } else if (!strncmp(prop, "model.k", 7)) {
        snprintf(out, n, "%s: the kernel at K=%s is now \"%s\" (was \"%s\")", head, prop + 7,
                 after, before);
    } else if (!strcmp(prop, "batch_invariant")) {
        snprintf(out, n, "%s: a row's bits now %s on the rows around it (was %s)", head,
                 !strcmp(after, "no") ? "depend" : "do not depend",
                 !strcmp(before, "no") ? "dependent" : "independent");
    } else {
        snprintf(out, n, "%s: %s now %s (was %s)", head, prop, after, before);
    }
}

/* Runs made and runs unlike the most common output, of one document's
 * "deterministic" (an older document says only yes/no over 3 runs: the least
 * evidence that value can stand for). */
static void det_counts(const struct gv_fp_entry *e, const char *value, int *n, int *k)
{
    for (size_t i = 0; i < e->nprops; i++)
        if (!strcmp(e->props[i].name, "deterministic") && e->props[i].runs > 1) {
            *n = e->props[i].runs;
            *k = e->props[i].differing;
            return;
        }
    *n = 3;
    *k = !strcmp(value, "no");
}

static double log_choose(int n, int k) { return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0); }

/* Fisher's exact test, two-sided: the chance of a split of the differing runs
 * between the two documents at least as uneven as this one, were both the
 * same device with the same rate of run-to-run change. */
double gv_fp_det_p(int n1, int k1, int n2, int k2)
{
    int t = k1 + k2, lo = t - n2 > 0 ? t - n2 : 0, hi = t < n1 ? t : n1;
    double denom = log_choose(n1 + n2, t);
    double seen = exp(log_choose(n1, k1) + log_choose(n2, k2) - denom), p = 0;
    for (int x = lo; x <= hi; x++) {
        double q = exp(log_choose(n1, x) + log_choose(n2, t - x) - denom);
        if (q <= seen * (1 + 1e-9))
            p += q;
    }
    return p > 1 ? 1 : p;
}

/* A change of "deterministic" is one only when the runs say so beyond chance. */
static int det_changed(const struct gv_fp_entry *ea, const struct gv_fp_entry *eb, const char *x,
                       const char *y, int *na, int *ka, int *nb, int *kb)
{
    det_counts(ea, x, na, ka);
    det_counts(eb, y, nb, kb);
    return gv_fp_det_p(*na, *ka, *nb, *kb) < GV_FP_DET_ALPHA;
}

size_t gv_fp_diff(const struct gv_fingerprint *a, const struct gv_fingerprint *b,
                  struct gv_fp_change **out)
{
    *out = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < b->n; i++) {
        const struct gv_fp_entry *eb = &b->e[i], *ea = find(a, eb);
        if (!ea)
            continue;
        for (size_t k = 0; k < eb->nprops; k++) {
            const char *x = gv_fp_value(ea, eb->props[k].name), *y = eb->props[k].value;
            if (!x || !strcmp(x, y))
                continue;
            int na = 0, ka = 0, nb = 0, kb = 0;
            int det = !strcmp(eb->props[k].name, "deterministic");
            if (det && !det_changed(ea, eb, x, y, &na, &ka, &nb, &kb))
                continue;
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                struct gv_fp_change *m = realloc(*out, nc * sizeof *m);
                if (!m)
                    return n;
                *out = m;
                cap = nc;
            }
            struct gv_fp_change *c = &(*out)[n++];
            memset(c, 0, sizeof *c);
            snprintf(c->route, sizeof c->route, "%s", eb->route);
            snprintf(c->op, sizeof c->op, "%s", eb->op);
            snprintf(c->precision, sizeof c->precision, "%s", eb->precision);
            snprintf(c->prop, sizeof c->prop, "%s", eb->props[k].name);
            snprintf(c->before, sizeof c->before, "%s", x);
            snprintf(c->after, sizeof c->after, "%s", y);
            if (det)
                snprintf(c->text, sizeof c->text,
                         "%s on %s: run-to-run bits now %s (%d of %d runs unlike the most common "
                         "output; was %d of %d)", prec_words(eb->op, eb->precision), eb->route,
                         !strcmp(y, "no") ? "differ" : "identical", kb, nb, ka, na);
            else
                change_words(eb, c->prop, x, y, c->text, sizeof c->text);
        }
    }
    return n;
}
