/* Result files (gpuvet.results): device, stack, per-case table, and the
 * error distribution (the ULP histogram each case records) of failed cases. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/page.h"
#include "report/results_view.h"

const char *const gv_ulp_bins[GV_ULP_NBINS] = {"0", "1", "2–3", "4–7", "8–15", "16–255", "256–65535",
                                               "more/NaN"};

int gv_ulp_hist(const json_t *metrics, double out[GV_ULP_NBINS])
{
    const json_t *h = gv_jarr(metrics, "ulp_histogram");
    for (int i = 0; i < GV_ULP_NBINS; i++)
        out[i] = NAN;
    if (!h)
        return 0;
    int any = 0;
    for (size_t i = 0; i < GV_ULP_NBINS && i < json_array_size(h); i++)
        any |= gv_jnumv(json_array_get(h, i), &out[i]);
    return any;
}

/* Scalar fields of an object as key/value rows (nested objects as JSON). */
static void scalar_rows(struct gv_page *p, const json_t *o, const char *prefix)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        char key[256];
        snprintf(key, sizeof key, "%s%s", prefix, k);
        if (json_is_array(v) && json_array_size(v) && json_is_object(json_array_get(v, 0)))
            continue; /* tables of their own */
        if (json_is_object(v) && strlen(prefix) < 40) {
            char sub[300];
            snprintf(sub, sizeof sub, "%s.", key);
            scalar_rows(p, v, sub);
            continue;
        }
        for (char *c = key; *c; c++) /* a label, not the document's key */
            if (*c == '.')
                *c = ' ';
        gv_buf_add(p->b, "<tr><th scope=\"row\">");
        gv_page_label(p, key);
        gv_buf_add(p->b, "</th><td class=\"long\">");
        gv_html_json(p->b, v);
        gv_buf_add(p->b, "</td></tr>\n");
    }
}

void gv_render_device(struct gv_page *p, const char *title, const json_t *desc)
{
    gv_page_section(p, "device", title);
    if (!json_is_object(desc)) {
        gv_page_note(p, "no device description in the document");
        gv_page_end_section(p);
        return;
    }
    if (json_is_true(json_object_get(desc, "testing_aid")))
        gv_buf_add(p->b, "<p class=\"v v-warn\">! a testing aid: this run emulated GPU behaviours on the "
                         "CPU; it says nothing about any hardware</p>\n");
    gv_buf_add(p->b, "<table class=\"kv device\">");
    scalar_rows(p, desc, "");
    gv_buf_add(p->b, "</table>\n");
    const json_t *libs = gv_jarr(desc, "libraries");
    if (json_array_size(libs)) {
        static const char *const heads[] = {"library that computed", "version", "file"};
        gv_page_table(p, NULL, heads, 3);
        size_t i;
        const json_t *l;
        json_array_foreach(libs, i, l) {
            gv_buf_add(p->b, "<tr>");
            gv_html_td_str(p->b, gv_jstr(l, "name"), NULL);
            gv_html_td_str(p->b, gv_jstr(l, "version"), NULL);
            gv_buf_add(p->b, "<td><code>");
            gv_html_esc(p->b, gv_jstr(l, "path"));
            gv_buf_add(p->b, "</code></td></tr>\n");
        }
        gv_page_table_end(p);
    }
    gv_page_end_section(p);
}

void gv_summary_list(struct gv_page *p, const json_t *summary, const char *const *keys, size_t n)
{
    gv_buf_add(p->b, "<ul class=\"summary\">");
    for (size_t i = 0; i < n; i++) {
        double v;
        if (!gv_jnum(summary, keys[i], &v))
            continue;
        char t[32];
        gv_fmt_num(t, sizeof t, v, 10);
        gv_buf_add(p->b, "<li data-key=\"");
        gv_html_esc(p->b, keys[i]);
        gv_buf_add(p->b, "\">");
        gv_page_verdict(p, keys[i]);
        gv_buf_printf(p->b, " <b class=\"count\">%s</b></li>", t);
    }
    gv_buf_add(p->b, "</ul>\n");
}

void gv_hist_desc(char *out, size_t n, const char *what, const double *v)
{
    size_t len = (size_t)snprintf(out, n, "%s:", what);
    for (int i = 0; i < GV_ULP_NBINS && len < n; i++) {
        char t[32];
        if (isnan(v[i]))
            snprintf(t, sizeof t, "none");
        else
            gv_fmt_num(t, sizeof t, v[i], 10);
        len += (size_t)snprintf(out + len, n - len, "%s %s ULP: %s", i ? ";" : "", gv_ulp_bins[i], t);
    }
}

static void case_table(struct gv_page *p, const json_t *cases)
{
    static const char *const heads[] = {"case", "op", "precision", "verdict", "#effective bits",
                                        "#error / bound", "#max |error|", "#NaN", "repeatable",
                                        "#seconds"};
    gv_page_table(p, "Every case", heads, 10);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        const char *v = gv_jstr(c, "verdict");
        const json_t *m = gv_jobj(c, "metrics");
        gv_buf_printf(p->b, "<tr class=\"%s\" data-case=\"", gv_page_word_class(v));
        gv_html_esc(p->b, gv_jstr(c, "id"));
        gv_buf_add(p->b, "\"><td><code>");
        gv_html_esc(p->b, gv_jstr(c, "id"));
        gv_buf_add(p->b, "</code>");
        if (gv_jstr(c, "error")) {
            gv_buf_add(p->b, "<br><span class=\"note\">");
            gv_html_esc(p->b, gv_jstr(c, "error"));
            gv_buf_add(p->b, "</span>");
        }
        gv_buf_add(p->b, "</td>");
        gv_html_td_str(p->b, gv_jstr(c, "op"), NULL);
        gv_html_td_str(p->b, gv_jstr(c, "precision"), NULL);
        gv_buf_add(p->b, "<td>");
        gv_page_verdict(p, v);
        gv_buf_add(p->b, "</td>");
        gv_html_td_num(p->b, m, "effective_bits", 4);
        gv_html_td_num(p->b, m, "err_over_bound", 3);
        gv_html_td_num(p->b, m, "max_abs", 3);
        gv_html_td_num(p->b, m, "nan_count", 10);
        const json_t *det = json_object_get(gv_jobj(c, "determinism"), "run_to_run_identical");
        gv_html_td_str(p->b, json_is_true(det) ? "✓ identical" : json_is_false(det) ? "✗ differs" : NULL,
                       json_is_false(det) ? "v v-bad" : NULL);
        gv_html_td_num(p->b, gv_jobj(c, "timing"), "seconds", 3);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

static void failed_histograms(struct gv_page *p, const json_t *cases)
{
    size_t i, shown = 0;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        const char *v = gv_jstr(c, "verdict");
        double h[GV_ULP_NBINS];
        if (!v || strcmp(v, "fail") || !gv_ulp_hist(gv_jobj(c, "metrics"), h))
            continue;
        if (!shown++) {
            gv_page_section(p, "failed", "Error distribution of the failed cases");
            gv_buf_add(p->b, "<div class=\"figs\">");
        }
        char title[600], desc[1200];
        snprintf(title, sizeof title, "%s: error against the fp64 reference, in ULPs of the output format",
                 gv_jstr(c, "id") ? gv_jstr(c, "id") : "?");
        gv_hist_desc(desc, sizeof desc, "elements per ULP range", h);
        struct gv_series s = {"elements", h};
        gv_svg_bars(p, title, desc, gv_ulp_bins, GV_ULP_NBINS, &s, 1, "elements");
    }
    if (shown) {
        gv_buf_add(p->b, "</div>");
        gv_page_end_section(p);
    }
}

int gv_render_results(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    static const char *const keys[] = {"cases", "pass", "fail", "error", "skipped", "nondeterministic"};
    gv_buf_add(p->b, "<p>Suite <b>");
    gv_html_esc(p->b, gv_jstr(doc, "suite"));
    gv_buf_add(p->b, "</b>");
    if (gv_jstr(doc, "only")) {
        gv_buf_add(p->b, ", only <code>");
        gv_html_esc(p->b, gv_jstr(doc, "only"));
        gv_buf_add(p->b, "</code>");
    }
    gv_buf_add(p->b, " on device <code>");
    gv_html_esc(p->b, gv_jpstr(doc, "device.spec") ? gv_jpstr(doc, "device.spec") : "automatic");
    gv_buf_add(p->b, "</code></p>\n");
    gv_summary_list(p, gv_jobj(doc, "summary"), keys, 6);
    gv_render_device(p, "Device", gv_jobj(gv_jobj(doc, "device"), "description"));
    gv_render_stack(p, "Stack at a glance", gv_jobj(doc, "snapshot"));
    const json_t *cases = gv_jarr(doc, "cases");
    failed_histograms(p, cases);
    gv_page_section(p, "cases", "Cases");
    case_table(p, cases);
    gv_page_end_section(p);
    return GV_OK;
}
