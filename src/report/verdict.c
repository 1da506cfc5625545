/* The verdict of a gpuvet document in words (verdict.h): per schema, the exit
 * status its command gives and the sentence it ends with. */
#include "report/verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/html.h"

#define LIST_MAX 3 /* names listed in a why before "and N more" */

static long long num(const json_t *o, const char *key)
{
    double v = 0;
    return gv_jnum(o, key, &v) ? (long long)v : 0;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = gv_jstr(o, key);
    return s ? s : "?";
}

static void add(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *out, size_t n, const char *fmt, ...)
{
    size_t len = strlen(out);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + len, n - len, fmt, ap);
    va_end(ap);
}

static const char *plural(long long k) { return k == 1 ? "" : "s"; }

/* "WHAT: a, b, c and N more" of the field key of the array's elements that pick() keeps. */
static void list(char *out, size_t n, const char *what, const json_t *arr, const char *key,
                 int (*pick)(const json_t *))
{
    size_t i, shown = 0, all = 0;
    const json_t *e;
    json_array_foreach(arr, i, e) {
        if (pick && !pick(e))
            continue;
        if (all++ >= LIST_MAX)
            continue;
        if (shown++)
            add(out, n, ", %s", str(e, key));
        else
            add(out, n, "%s%s%s", out[0] ? "; " : "", what, str(e, key));
    }
    if (all > shown)
        add(out, n, " and %zu more", all - shown);
}

static int flagged(const json_t *e) { return json_is_true(json_object_get(e, "flagged")); }
static int failed(const json_t *e) { return !strcmp(str(e, "verdict"), "fail"); }
static int is_error(const json_t *e) { return !strcmp(str(e, "severity"), "error"); }

/* check: "N cases: P passed, F failed, E errors, S skipped" (cmd_check.c); 1 unless all pass */
static void results(const json_t *d, struct gv_doc_verdict *v)
{
    const json_t *s = gv_jobj(d, "summary");
    long long n = num(s, "cases"), pass = num(s, "pass");
    v->status = pass < n;
    snprintf(v->head, sizeof v->head, "%lld cases: %lld passed, %lld failed, %lld errors, %lld skipped", n,
             pass, num(s, "fail"), num(s, "error"), num(s, "skipped"));
    list(v->why, sizeof v->why, "failed: ", gv_jarr(d, "cases"), "id", failed);
    if (json_is_true(json_object_get(gv_jobj(gv_jobj(d, "device"), "description"), "testing_aid")))
        add(v->why, sizeof v->why, "%sa testing aid: this run emulated GPU behaviours", v->why[0] ? "; " : "");
}

/* compare of two check results: its flag, the counts of each change (compare_out.c) */
static void compare(const json_t *d, struct gv_doc_verdict *v)
{
    v->status = json_is_true(json_object_get(d, "flagged"));
    snprintf(v->head, sizeof v->head, "%s", v->status ? "a case degraded or newly fails" : "no case degraded");
    list(v->why, sizeof v->why, "flagged: ", gv_jarr(d, "cases"), "id", flagged);
    const json_t *s = gv_jobj(d, "summary");
    const char *k;
    const json_t *x;
    int first = 1;
    json_object_foreach((json_t *)s, k, x) {
        double c;
        if (!gv_jnumv(x, &c) || c == 0)
            continue;
        add(v->why, sizeof v->why, "%s%lld %s", first ? (v->why[0] ? "; " : "") : ", ", (long long)c, k);
        first = 0;
    }
}

/* compare of two bench documents */
static void bench_compare(const json_t *d, struct gv_doc_verdict *v)
{
    const json_t *s = gv_jobj(d, "summary");
    v->status = json_is_true(json_object_get(d, "flagged"));
    snprintf(v->head, sizeof v->head, "%s",
             v->status ? "a benchmark regressed or newly fails" : "no benchmark regressed");
    add(v->why, sizeof v->why, "%lld regressed, %lld newly failing, %lld improved, %lld within noise",
        num(s, "regressed"), num(s, "newly_failing"), num(s, "improved"), num(s, "within_noise"));
}

/* bench: 1 when a benchmark failed, erred or timed out (cmd_bench.c) */
static void bench(const json_t *d, struct gv_doc_verdict *v)
{
    long long ok = 0, bad = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(gv_jarr(d, "results"), i, r) {
        const char *st = str(r, "status");
        ok += !strcmp(st, "ok");
        bad += !strcmp(st, "failed") || !strcmp(st, "error") || !strcmp(st, "timeout");
    }
    v->status = bad > 0;
    snprintf(v->head, sizeof v->head, "%lld benchmark%s ran, %lld failed, erred or timed out", ok,
             plural(ok), bad);
}

static int is_outside(const json_t *e)
{
    const char *st = str(e, "status");
    return !strcmp(st, "beyond_rounding") || !strcmp(st, "beyond_noise");
}

/* torch bisect: its culprits and call changes (cmd_torch.c) */
static void bisect(const json_t *d, struct gv_doc_verdict *v)
{
    size_t nc = json_array_size(gv_jarr(d, "culprits")), ncall = json_array_size(gv_jarr(d, "call_changes"));
    v->status = json_is_true(json_object_get(d, "flagged"));
    if (gv_jstr(d, "cannot_judge")) { /* the referee failed its canary: nothing judged */
        v->status = 1;
        snprintf(v->head, sizeof v->head, "cannot judge (the command exits 3)");
        snprintf(v->why, sizeof v->why, "%s", gv_jstr(d, "cannot_judge"));
        return;
    }
    if (!nc && !ncall) {
        snprintf(v->head, sizeof v->head, "no op is less accurate here, and no call changed");
    } else {
        if (nc)
            add(v->head, sizeof v->head, "%zu op%s less accurate here than in A, on the same inputs", nc,
                plural((long long)nc));
        if (ncall)
            add(v->head, sizeof v->head, "%s%zu call%s changed above ATen", nc ? "; " : "", ncall,
                plural((long long)ncall));
    }
    size_t i;
    const json_t *e;
    json_array_foreach(gv_jarr(d, "culprits"), i, e) if (i < LIST_MAX)
        add(v->why, sizeof v->why, "%sculprit: op %lld %s", v->why[0] ? "; " : "", num(e, "op"), str(e, "name"));
    json_array_foreach(gv_jarr(d, "call_changes"), i, e) if (i < LIST_MAX)
        add(v->why, sizeof v->why, "%scall change: op %lld %s", v->why[0] ? "; " : "", num(e, "op_a"),
            str(e, "name"));
    if (gv_jstr(d, "outputs_status")) {
        double u = 0;
        gv_jnum(d, "outputs_units", &u);
        add(v->why, sizeof v->why, "%smodel outputs here against A: %s (%.3g units)", v->why[0] ? "; " : "",
            gv_jstr(d, "outputs_status"), u);
    }
}

/* compare of two captures (capture_out.c) */
static void capture_compare(const json_t *d, struct gv_doc_verdict *v)
{
    const json_t *s = gv_jobj(d, "summary");
    size_t ob = json_array_size(gv_jarr(d, "only_before")), oa = json_array_size(gv_jarr(d, "only_after"));
    v->status = json_is_true(json_object_get(d, "flagged"));
    long long beyond = num(s, "beyond_noise");
    int outs = !strcmp(gv_jstr(s, "outputs_status") ? gv_jstr(s, "outputs_status") : "", "beyond_rounding") ||
               !strcmp(gv_jstr(s, "outputs_status") ? gv_jstr(s, "outputs_status") : "", "beyond_noise");
    if (!v->status)
        snprintf(v->head, sizeof v->head, "the two captures agree within rounding");
    if (outs)
        add(v->head, sizeof v->head, "the model's outputs differ beyond rounding");
    if (beyond)
        add(v->head, sizeof v->head, "%s%lld op%s differ beyond rounding", v->head[0] ? "; " : "", beyond,
            plural(beyond));
    if (ob || oa)
        add(v->head, sizeof v->head, "%sthe graph changed: %zu ops only before, %zu only after",
            v->head[0] ? "; " : "", ob, oa);
    const json_t *f = gv_jobj(s, "first_beyond_noise");
    if (f)
        add(v->why, sizeof v->why, "first op beyond rounding: op %lld %s", num(f, "op"), str(f, "name"));
    list(v->why, sizeof v->why, "outputs beyond rounding: ", gv_jarr(d, "outputs"), "name", is_outside);
    double u = 0;
    if (gv_jstr(s, "outputs_status") && gv_jnum(s, "outputs_units", &u))
        add(v->why, sizeof v->why, "%smodel outputs: %s (%.3g units)", v->why[0] ? "; " : "",
            gv_jstr(s, "outputs_status"), u);
}

const char *gv_fleet_class_words(const char *cls)
{
    if (!cls)
        return "?";
    if (!strcmp(cls, "could_not_run"))
        return "could not run";
    if (!strcmp(cls, "stack_drift"))
        return "stack drift";
    if (!strcmp(cls, "numerics_outlier"))
        return "numerics outlier";
    return cls;
}

/* The short evidence of an odd node's headline class. */
static void brief(const json_t *odd, char *out, size_t n)
{
    const char *cls = str(odd, "class");
    const json_t *ev = gv_jobj(odd, "evidence");
    if (!strcmp(cls, "could_not_run")) {
        snprintf(out, n, "%.80s", str(ev, "reason"));
    } else if (!strcmp(cls, "stack_drift")) {
        const json_t *diff = gv_jarr(ev, "diff");
        const char *first = json_string_value(json_array_get(diff, 0));
        snprintf(out, n, "%.120s%s", first ? first : "?", json_array_size(diff) > 1 ? ", …" : "");
    } else if (!strcmp(cls, "numerics_outlier")) {
        const json_t *cases = gv_jarr(ev, "cases"), *c = json_array_get(cases, 0);
        const char *rep = gv_jstr(c, "repeats_differing");
        size_t more = json_array_size(cases) ? json_array_size(cases) - 1 : 0;
        snprintf(out, n, "%.80s", str(c, "id"));
        if (rep)
            add(out, n, ", %s repeats", rep);
        if (more)
            add(out, n, ", and %zu more case%s", more, more > 1 ? "s" : "");
    } else {
        const json_t *b = json_array_get(gv_jarr(ev, "bench"), 0);
        double val = 0, med = 0;
        gv_jnum(b, "value", &val);
        gv_jnum(b, "group_median", &med);
        snprintf(out, n, "%.60s %.4g %s, group median %.4g", str(b, "id"), val, str(b, "unit"), med);
    }
}

#define FLEET_HEADLINE_NODES 5

/* fleet compare: "N odd nodes of M: node class (evidence), ...; K ranks missing" */
static void fleet(const json_t *d, struct gv_doc_verdict *v)
{
    const json_t *s = gv_jobj(d, "summary");
    long long odd = num(s, "odd"), miss = num(s, "missing"), nodes = num(d, "ranks_expected");
    v->status = odd || miss;
    if (!v->status) {
        snprintf(v->head, sizeof v->head, "no odd node of %lld", nodes);
        snprintf(v->why, sizeof v->why, "every node agrees with its group");
        return;
    }
    snprintf(v->head, sizeof v->head, "%lld odd node%s of %lld", odd + miss, plural(odd + miss), nodes);
    long long shown = 0;
    size_t gi, i;
    const json_t *g, *o;
    json_array_foreach(gv_jarr(d, "groups"), gi, g)
        json_array_foreach(gv_jarr(g, "odd"), i, o) {
            if (shown++ >= FLEET_HEADLINE_NODES)
                continue;
            char ev[256];
            brief(o, ev, sizeof ev);
            add(v->why, sizeof v->why, "%s%s %s (%s)", shown == 1 ? "" : ", ", str(o, "node"),
                gv_fleet_class_words(str(o, "class")), ev);
        }
    if (odd > FLEET_HEADLINE_NODES)
        add(v->why, sizeof v->why, ", and %lld more", odd - FLEET_HEADLINE_NODES);
    if (miss)
        add(v->why, sizeof v->why, "%s%lld rank%s missing", odd ? "; " : "", miss, plural(miss));
}

/* history fleet: a record of comparisons (it exits 0), the latest's odd nodes said */
static void fleet_history(const json_t *d, struct gv_doc_verdict *v)
{
    const json_t *rounds = gv_jarr(d, "rounds"), *last = json_array_get(rounds, 0), *o;
    size_t n = json_array_size(rounds), odd = json_array_size(gv_jarr(last, "odd")), i;
    v->status = -1;
    snprintf(v->head, sizeof v->head, "%zu fleet comparison%s", n, plural((long long)n));
    if (!last)
        return;
    add(v->head, sizeof v->head, ", the latest (job %.60s) with %zu odd node%s", str(last, "job"), odd,
        plural((long long)odd));
    json_array_foreach(gv_jarr(last, "odd"), i, o) {
        if (i < FLEET_HEADLINE_NODES)
            add(v->why, sizeof v->why, "%s%s %s", i ? ", " : "", str(o, "node"),
                gv_fleet_class_words(str(o, "class")));
    }
    if (odd > FLEET_HEADLINE_NODES)
        add(v->why, sizeof v->why, ", and %zu more", odd - FLEET_HEADLINE_NODES);
}

/* doctor: "N errors, M warnings, K info" (cmd_doctor.c); 1 on an error */
static void doctor(const json_t *d, struct gv_doc_verdict *v)
{
    const json_t *s = gv_jobj(d, "summary");
    long long e = num(s, "errors"), w = num(s, "warnings");
    v->status = e > 0;
    snprintf(v->head, sizeof v->head, "%lld error%s, %lld warning%s, %lld info", e, plural(e), w, plural(w),
             num(s, "info"));
    list(v->why, sizeof v->why, "errors: ", gv_jarr(d, "findings"), "title", is_error);
    if (!e && w)
        snprintf(v->why, sizeof v->why, "warnings only: doctor exits 1 on them with --strict");
}

/* diff: "no differences" or "N changes: K layer, ..." (diff_out.c) */
static void diff(const json_t *d, struct gv_doc_verdict *v)
{
    size_t n = json_array_size(gv_jarr(d, "changes"));
    v->status = n > 0;
    if (!n) {
        snprintf(v->head, sizeof v->head, "no differences");
        return;
    }
    snprintf(v->head, sizeof v->head, "%zu change%s", n, plural((long long)n));
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)gv_jobj(gv_jobj(d, "summary"), "by_layer"), k, x) {
        double c;
        if (gv_jnumv(x, &c) && c > 0)
            add(v->why, sizeof v->why, "%s%lld %s", v->why[0] ? ", " : "", (long long)c, k);
    }
}

/* verify: back at the baseline or not (cmd_verify.c) */
static void verify(const json_t *d, struct gv_doc_verdict *v)
{
    v->status = !json_is_true(json_object_get(d, "ok"));
    snprintf(v->head, sizeof v->head, "%s", v->status ? "not back at the baseline" : "back at the baseline");
    add(v->why, sizeof v->why, "stack %s",
        json_is_true(json_object_get(d, "stack_matches")) ? "matches the baseline" : "differs from the baseline");
    size_t nd = json_array_size(gv_jarr(d, "differences"));
    if (nd)
        add(v->why, sizeof v->why, " (%zu difference%s)", nd, plural((long long)nd));
    const json_t *nm = gv_jobj(d, "numerics");
    if (nm)
        add(v->why, sizeof v->why, "; numerics %s",
            json_is_true(json_object_get(nm, "degraded")) ? "degraded" : "not degraded");
}

static const struct {
    const char *schema, *kind;
    void (*fill)(const json_t *, struct gv_doc_verdict *);
    const char *record; /* a document that records, without a verdict: what it is */
} kinds[] = {
    {"gpuvet.compare", "bench", bench_compare, NULL},
    {"gpuvet.compare", NULL, compare, NULL},
    {"gpuvet.results", NULL, results, NULL},
    {"gpuvet.bench", NULL, bench, NULL},
    {"gpuvet.bisect", NULL, bisect, NULL},
    {"gpuvet.capture-compare", NULL, capture_compare, NULL},
    {"gpuvet.fleet", NULL, fleet, NULL},
    {"gpuvet.fleet-history", NULL, fleet_history, NULL},
    {"gpuvet.doctor", NULL, doctor, NULL},
    {"gpuvet.diff", NULL, diff, NULL},
    {"gpuvet.verify", NULL, verify, NULL},
    {"gpuvet.matrix", NULL, NULL, "a history of runs: each combination's passes and failures are in its row"},
    {"gpuvet.snapshot", NULL, NULL, "a snapshot records a stack; doctor and diff judge it"},
    {"gpuvet.capture", NULL, NULL, "a capture records a model's run; compare and torch bisect judge it"},
    {"gpuvet.probe", NULL, NULL, "a fingerprint records how the GEMM routes compute; compare uses it"},
};

void gv_verdict_of(const json_t *doc, struct gv_doc_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->status = -1;
    const char *schema = gv_jstr(doc, "schema"), *kind = gv_jstr(doc, "kind");
    if (!schema && json_is_object(gv_jobj(doc, "header"))) /* a .gvcap's index */
        schema = "gpuvet.capture";
    for (size_t i = 0; schema && i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(kinds[i].schema, schema) || (kinds[i].kind && (!kind || strcmp(kinds[i].kind, kind))))
            continue;
        if (kinds[i].fill) {
            kinds[i].fill(doc, v);
        } else {
            snprintf(v->head, sizeof v->head, "no verdict");
            snprintf(v->why, sizeof v->why, "%s", kinds[i].record);
        }
        return;
    }
    snprintf(v->head, sizeof v->head, "no verdict");
}
