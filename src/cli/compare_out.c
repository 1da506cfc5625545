/* Two files compared, as 'gpuvet compare' (and ab) prints it: result files
 * case by case (with likely causes from their embedded snapshots), else two
 * captures (capture_out.c) or two bench documents (cmp_bench.c). */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "bench/bench.h"
#include "bench/compare.h"
#include "capture/gvcap.h"
#include "cli/cli.h"
#include "check/compare.h"
#include "store/junit.h"

/* Outputs file of a result file: the explicit one, else the recorded path,
 * else a file of that name beside the result file. "" when none. */
static void outputs_path(const char *given, const struct gv_results *r, const char *results_path,
                         char *out, size_t n)
{
    out[0] = '\0';
    if (given) {
        snprintf(out, n, "%s", given);
        return;
    }
    if (!r->outputs_file[0])
        return;
    if (gv_is_file(r->outputs_file)) {
        snprintf(out, n, "%s", r->outputs_file);
        return;
    }
    char a[GV_PATH_MAX], b[GV_PATH_MAX];
    snprintf(a, sizeof a, "%s", results_path);
    snprintf(b, sizeof b, "%s", r->outputs_file);
    char cand[2 * GV_PATH_MAX + 2];
    snprintf(cand, sizeof cand, "%s/%s", dirname(a), basename(b));
    if (gv_is_file(cand))
        snprintf(out, n, "%s", cand);
}

static int load_outputs(const struct cli_compare_opts *o, const struct gv_results *ra,
                        const struct gv_results *rb, struct gv_st_file *fa,
                        struct gv_st_file *fb, char *note, size_t notesz, struct gv_err *err)
{
    char pa[GV_PATH_MAX], pb[GV_PATH_MAX];
    outputs_path(o->oa, ra, o->a, pa, sizeof pa);
    outputs_path(o->ob, rb, o->b, pb, sizeof pb);
    if (!pa[0] || !pb[0]) {
        snprintf(note, notesz, "outputs were not saved for %s (check --save-outputs)",
                 !pa[0] ? o->a : o->b);
        return 1;
    }
    int rc = gv_safetensors_read(pa, (size_t)16 << 30, fa, err);
    if (rc)
        return rc;
    rc = gv_safetensors_read(pb, (size_t)16 << 30, fb, err);
    if (rc)
        gv_safetensors_free(fa);
    return rc;
}

/* ---------- output ---------- */

static void num_str(char *out, size_t n, double v, int bits)
{
    if (isnan(v))
        snprintf(out, n, "nan");
    else if (isinf(v))
        snprintf(out, n, v > 0 ? "inf" : "-inf");
    else if (bits)
        snprintf(out, n, "%.1f", v);
    else
        snprintf(out, n, "%.3g", v);
}

static json_t *jnum(double v)
{
    if (isnan(v))
        return json_string("nan");
    if (isinf(v))
        return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

static json_t *side_json(const struct gv_result_case *r)
{
    if (!r)
        return json_null();
    static const char *const v[] = {"pass", "fail", "error", "skipped"};
    json_t *o = json_object();
    json_object_set_new(o, "verdict", json_string(v[r->verdict]));
    if (r->has_metrics) {
        json_object_set_new(o, "effective_bits", jnum(r->eff_bits));
        json_object_set_new(o, "err_over_bound", jnum(r->err_over_bound));
        json_object_set_new(o, "mean_signed_error", jnum(r->mean_signed));
    }
    json_object_set_new(o, "output_digest",
                        r->output_digest[0] ? json_string(r->output_digest) : json_null());
    if (r->error[0])
        gv_json_set_str(o, "error", r->error);
    return o;
}

static json_t *compare_json(const struct cli_compare_opts *o, const struct gv_compare *c)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("gpuvet.compare"));
    json_object_set_new(doc, "schema_version", json_integer(1));
    gv_json_set_str(doc, "before", o->a);
    gv_json_set_str(doc, "after", o->b);
    json_object_set_new(doc, "flagged", json_boolean(c->flagged));
    json_t *s = json_object();
    for (int i = 0; i < GV_CH_COUNT; i++)
        json_object_set_new(s, gv_change_name((enum gv_change)i),
                            json_integer((json_int_t)c->count[i]));
    json_object_set_new(doc, "summary", s);
    if (c->outputs_note[0])
        gv_json_set_str(doc, "elementwise_note", c->outputs_note);
    json_t *cases = json_array();
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_cmp_case *x = &c->cases[i];
        json_t *e = json_object();
        json_object_set_new(e, "id", json_string(x->id));
        json_object_set_new(e, "change", json_string(gv_change_name(x->status)));
        json_object_set_new(e, "flagged", json_boolean(gv_change_flagged(x->status)));
        json_object_set_new(e, "before", side_json(x->a));
        json_object_set_new(e, "after", side_json(x->b));
        if (x->a && x->b && x->a->has_metrics && x->b->has_metrics)
            json_object_set_new(e, "delta_effective_bits", jnum(x->dbits));
        if (x->has_elem) {
            json_t *el = json_object();
            json_object_set_new(el, "count", json_integer((json_int_t)x->count));
            json_object_set_new(el, "differing", json_integer((json_int_t)x->ndiff));
            json_object_set_new(el, "max_ulp", x->max_ulp == UINT64_MAX
                                                   ? json_string("nan")
                                                   : json_integer((json_int_t)x->max_ulp));
            json_object_set_new(e, "elementwise", el);
        }
        json_array_append_new(cases, e);
    }
    json_object_set_new(doc, "cases", cases);
    json_t *ex = cli_explain_json(c, NULL, NULL);
    json_t *causes = json_incref(json_object_get(ex, "causes"));
    json_object_set(doc, "route", json_object_get(ex, "route"));
    json_object_set(doc, "signatures", json_object_get(ex, "signatures"));
    json_object_set(doc, "signature_groups", json_object_get(ex, "signature_groups"));
    json_object_set(doc, "fingerprint_changes", json_object_get(ex, "fingerprint_changes"));
    if (json_object_get(ex, "fingerprint_note"))
        json_object_set(doc, "fingerprint_note", json_object_get(ex, "fingerprint_note"));
    json_decref(ex);
    json_object_set_new(doc, "causes", causes);
    return doc;
}

static const char *change_color(enum gv_change c)
{
    if (gv_change_flagged(c) || c == GV_CH_INPUTS_DIFFER)
        return cli_red();
    if (c == GV_CH_IMPROVED || c == GV_CH_NEWLY_PASSING)
        return cli_green();
    if (c == GV_CH_IDENTICAL)
        return "";
    return cli_yellow();
}

static void side_str(const struct gv_result_case *r, int bits, char *out, size_t n)
{
    if (!r)
        snprintf(out, n, "-");
    else if (!r->has_metrics)
        snprintf(out, n, "%s", r->verdict == GV_ERROR ? "error" : "skipped");
    else
        num_str(out, n, bits ? r->eff_bits : r->err_over_bound, bits);
}

static void print_human(const struct cli_compare_opts *o, const struct gv_results *ra,
                        const struct gv_results *rb, const struct gv_compare *c)
{
    printf("%sbefore%s %s (%s)\n%safter%s  %s (%s)\n", cli_bold(), cli_reset(), o->a, ra->created,
           cli_bold(), cli_reset(), o->b, rb->created);
    size_t w = 4;
    for (size_t i = 0; i < c->n; i++)
        if (strlen(c->cases[i].id) > w)
            w = strlen(c->cases[i].id);
    printf("\n%s%-*s  %-14s  %-15s  %-19s  %s%s\n", cli_bold(), (int)w, "case", "change",
           "eff.bits", "err/bound", "outputs", cli_reset());
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_cmp_case *x = &c->cases[i];
        if (x->status == GV_CH_IDENTICAL && !o->all)
            continue;
        char b1[16], b2[16], e1[16], e2[16], bits[40], eob[40], el[64] = "";
        side_str(x->a, 1, b1, sizeof b1);
        side_str(x->b, 1, b2, sizeof b2);
        side_str(x->a, 0, e1, sizeof e1);
        side_str(x->b, 0, e2, sizeof e2);
        snprintf(bits, sizeof bits, "%s -> %s", b1, b2);
        snprintf(eob, sizeof eob, "%s -> %s", e1, e2);
        if (x->has_elem && x->max_ulp == UINT64_MAX)
            snprintf(el, sizeof el, "%llu/%llu differ, NaN", (unsigned long long)x->ndiff,
                     (unsigned long long)x->count);
        else if (x->has_elem)
            snprintf(el, sizeof el, "%llu/%llu differ, max %llu ulp",
                     (unsigned long long)x->ndiff, (unsigned long long)x->count,
                     (unsigned long long)x->max_ulp);
        printf("%-*s  %s%-14s%s  %-15s  %-19s  %s\n", (int)w, x->id, change_color(x->status),
               gv_change_name(x->status), cli_reset(), bits, eob, el);
    }
    printf("\n");
    int first = 1;
    for (int i = 0; i < GV_CH_COUNT; i++)
        if (c->count[i]) {
            printf("%s%zu %s", first ? "" : ", ", c->count[i], gv_change_name((enum gv_change)i));
            first = 0;
        }
    printf("\n");
    if (c->outputs_note[0])
        printf("%selement-wise comparison not done: %s%s\n", cli_dim(), c->outputs_note,
               cli_reset());
    cli_explain_print(c, o->all);
    json_t *doc = compare_json(o, c); /* the verdict in the words the report page opens with */
    printf("\n");
    cli_verdict_print(doc);
    json_decref(doc);
}

static int write_junit(const char *path, const struct gv_compare *c, struct gv_err *err)
{
    struct gv_junit *j = gv_junit_begin("gpuvet compare");
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_cmp_case *x = &c->cases[i];
        char msg[200];
        snprintf(msg, sizeof msg, "%s (effective bits %+.1f)", gv_change_name(x->status), x->dbits);
        enum gv_junit_status st =
            gv_change_flagged(x->status)        ? GV_JUNIT_FAILURE
            : x->status == GV_CH_INPUTS_DIFFER ? GV_JUNIT_ERROR
            : (x->status == GV_CH_MISSING_AFTER || x->status == GV_CH_MISSING_BEFORE ||
               x->status == GV_CH_NOT_RUN)
                ? GV_JUNIT_SKIPPED
                : GV_JUNIT_PASS;
        gv_junit_add(j, "gpuvet.compare", x->id, 0, st, msg, NULL);
    }
    int rc = gv_junit_save(j, path, err);
    gv_junit_free(j);
    return rc;
}

static int report_mismatches(const struct cli_compare_opts *o, const struct gv_compare *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_cmp_case *x = &c->cases[i];
        if (x->status != GV_CH_INPUTS_DIFFER)
            continue;
        fprintf(stderr,
                "gpuvet: error: case %s: %s and %s were not computed from the same inputs "
                "(input digest %.12s vs %.12s, op %s/%s, output %s/%s); not comparable\n",
                x->id, o->a, o->b, x->a->input_digest, x->b->input_digest, x->a->op, x->b->op,
                x->a->out_dtype, x->b->out_dtype);
    }
    return GV_EXIT_ERROR;
}

static int run(const struct cli_compare_opts *o, struct gv_results *ra, struct gv_results *rb)
{
    struct gv_err err = {0};
    struct gv_st_file fa = {0}, fb = {0};
    char note[512] = "";
    int lo = load_outputs(o, ra, rb, &fa, &fb, note, sizeof note, &err);
    if (lo < 0)
        return cli_fail(&err);
    struct gv_compare c;
    if (gv_compare_results(ra, rb, lo == 0 ? &fa : NULL, lo == 0 ? &fb : NULL, &c, &err)) {
        if (lo == 0) {
            gv_safetensors_free(&fa);
            gv_safetensors_free(&fb);
        }
        return cli_fail(&err);
    }
    snprintf(c.outputs_note, sizeof c.outputs_note, "%s", note);
    int rc = c.flagged ? GV_EXIT_FINDINGS : GV_EXIT_OK;
    if (c.mismatches)
        rc = report_mismatches(o, &c);
    if (o->junit && write_junit(o->junit, &c, &err))
        rc = cli_fail(&err);
    struct cli_out out = {o->output, o->json};
    if (o->json || o->output) {
        json_t *doc = compare_json(o, &c);
        int erc = cli_put_doc("compare", doc, &out);
        json_decref(doc);
        if (erc)
            rc = erc;
    }
    if (cli_out_text(&out))
        print_human(o, ra, rb, &c);
    gv_compare_free(&c);
    if (lo == 0) {
        gv_safetensors_free(&fa);
        gv_safetensors_free(&fb);
    }
    return rc;
}

/* The kind of document at PATH, for a message, when it is one compare takes: a
 * capture, check results or a bench document (0 otherwise: unreadable, not JSON, no
 * schema, or another schema, which the reader's own message names). */
static int kind_of(const char *path, char *kind, size_t n)
{
    json_t *d = NULL;
    struct gv_err e = {0};
    if (gv_cap_is_capture(path)) {
        snprintf(kind, n, "a gpuvet torch capture");
        return 1;
    }
    if (gv_json_read_file(path, (size_t)256 << 20, &d, &e))
        return 0;
    const char *schema = json_string_value(json_object_get(d, "schema"));
    int comparable = schema && (!strcmp(schema, "gpuvet.results") || !strcmp(schema, "gpuvet.bench"));
    if (comparable)
        snprintf(kind, n, "schema %s", schema);
    json_decref(d);
    return comparable;
}

/* Two documents compare takes, of different kinds, are refused naming both and their
 * kinds, rather than blaming the one read second: nonzero (the exit status) when they
 * are. A file of no kind compare takes is left to the reader, whose message names it. */
static int kinds_differ(const struct cli_compare_opts *o)
{
    char ka[160], kb[160];
    if (!kind_of(o->a, ka, sizeof ka) || !kind_of(o->b, kb, sizeof kb) || !strcmp(ka, kb))
        return 0;
    return cli_failf("%s (%s) and %s (%s) are different kinds of document; compare takes two "
                     "of one kind: check results, bench documents or torch captures",
                     o->a, ka, o->b, kb);
}

/* A bench document whose "schema" is not among its first bytes (keys written
 * in another order): found by reading it whole, once BEFORE fails as a result file. */
static int bench_fallback(const struct cli_compare_opts *o, const struct gv_err *err)
{
    int rc = err->code == GV_E_SCHEMA ? kinds_differ(o) : 0;
    if (rc)
        return rc;
    json_t *d = NULL;
    struct gv_err e2 = {0};
    int bench = err->code == GV_E_SCHEMA && gv_json_read_file(o->a, (size_t)256 << 20, &d, &e2) == 0 &&
                json_is_string(json_object_get(d, "schema")) &&
                !strcmp(json_string_value(json_object_get(d, "schema")), GV_BENCH_SCHEMA);
    json_decref(d);
    if (bench)
        return cli_compare_bench(o);
    return cli_fail(err);
}

int cli_compare_files(const struct cli_compare_opts *o)
{
    int cap_a = gv_cap_is_capture(o->a), bench_a = gv_bench_is_bench_file(o->a);
    int rc = cap_a != gv_cap_is_capture(o->b) || bench_a != gv_bench_is_bench_file(o->b)
                 ? kinds_differ(o)
                 : 0;
    if (rc)
        return rc;
    if (cap_a || gv_cap_is_capture(o->b)) /* gpuvet torch capture files */
        return cli_compare_captures(o);
    if (bench_a || gv_bench_is_bench_file(o->b)) /* gpuvet bench -o */
        return cli_compare_bench(o);
    if (cli_is_probe_file(o->a) && cli_is_probe_file(o->b)) /* gpuvet probe --json */
        return cli_compare_probes(o);
    struct gv_results ra, rb;
    struct gv_err err = {0};
    if (cli_results_load(o->a, &ra, &err))
        return bench_fallback(o, &err);
    if (cli_results_load(o->b, &rb, &err)) {
        gv_results_free(&ra);
        rc = err.code == GV_E_SCHEMA ? kinds_differ(o) : 0;
        return rc ? rc : cli_fail(&err);
    }
    rc = run(o, &ra, &rb);
    gv_results_free(&ra);
    gv_results_free(&rb);
    return rc;
}
