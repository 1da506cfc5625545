/* Benchmark documents (gpuvet.bench): the best GEMM per precision against
 * the device's peak (a figure), a table per group (value ± spread, status,
 * check), the fp16/bf16 verdicts, topology warnings, collectives, the
 * conditions and the method; and a comparison of two of them (gpuvet.compare
 * with "kind": "bench"). Every number shown is one the document holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/page.h"
#include "report/results_view.h"

static const json_t *result_by_id(const json_t *doc, const char *id)
{
    size_t i;
    const json_t *r;
    json_array_foreach(gv_jarr(doc, "results"), i, r)
        if (id && gv_jstr(r, "id") && !strcmp(gv_jstr(r, "id"), id))
            return r;
    return NULL;
}

static void best_figure(struct gv_page *p, const json_t *doc)
{
    const json_t *best = gv_jarr(doc, "best");
    size_t n = json_array_size(best);
    if (!n)
        return;
    if (n > 16)
        n = 16;
    const char *cats[16];
    double tf[16], peak[16];
    char desc[2048];
    size_t used = (size_t)snprintf(desc, sizeof desc, "best GEMM TFLOP/s per precision:");
    int any_peak = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *b = json_array_get(best, i);
        cats[i] = gv_jstr(b, "dtype") ? gv_jstr(b, "dtype") : "?";
        tf[i] = peak[i] = NAN;
        gv_jnum(b, "tflops", &tf[i]);
        gv_jnum(result_by_id(doc, gv_jstr(b, "id")), "peak", &peak[i]);
        any_peak |= !isnan(peak[i]);
        char t[32], q[32] = "unknown";
        gv_fmt_num(t, sizeof t, tf[i], 4);
        if (!isnan(peak[i]))
            gv_fmt_num(q, sizeof q, peak[i], 4);
        if (used < sizeof desc)
            used += (size_t)snprintf(desc + used, sizeof desc - used, "%s %s %s (peak %s)",
                                     i ? ";" : "", cats[i], t, q);
    }
    struct gv_series s[2] = {{"best measured", tf}, {"peak (gpuvet's table)", peak}};
    gv_page_section(p, "best", "Best GEMM per precision");
    gv_svg_bars(p, "Best GEMM TFLOP/s per precision, against the device's peak", desc, cats, n, s,
                any_peak ? 2 : 1, "TFLOP/s");
    static const char *const heads[] = {"precision", "#TFLOP/s", "#of peak", "result", "route"};
    gv_page_table(p, NULL, heads, 5);
    size_t i;
    const json_t *b;
    json_array_foreach(best, i, b) {
        gv_buf_add(p->b, "<tr data-dtype=\"");
        gv_html_esc(p->b, gv_jstr(b, "dtype"));
        gv_buf_add(p->b, "\">");
        gv_html_td_str(p->b, gv_jstr(b, "dtype"), NULL);
        gv_html_td_num(p->b, b, "tflops", 4);
        gv_html_td_num(p->b, b, "of_peak", 3);
        gv_html_td_str(p->b, gv_jstr(b, "id"), NULL);
        gv_html_td_str(p->b, gv_jstr(b, "route"), NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    if (!any_peak)
        gv_page_note(p, "peak: %s", gv_jpstr(doc, "peaks.part") ? gv_jpstr(doc, "peaks.part")
                                                               : "not known for this device");
    gv_page_end_section(p);
}

/* A result's value (its data-v the document's number) and, in the next cell,
 * "± 2.0 %": its spread as the document holds it. */
static void value_cells(struct gv_page *p, const json_t *r)
{
    double v, sp;
    if (!gv_jnum(r, "value", &v)) {
        gv_buf_add(p->b, "<td class=\"num\" data-v=\"\">—</td><td>—</td>");
        return;
    }
    gv_html_td_num(p->b, r, "value", 4);
    if (gv_jnum(r, "spread", &sp)) {
        char s[32];
        gv_fmt_num(s, sizeof s, 100 * sp, 3);
        gv_buf_printf(p->b, "<td class=\"spread\">± %s %%</td>", s);
    } else {
        gv_buf_add(p->b, "<td>—</td>");
    }
}

static void group_table(struct gv_page *p, const json_t *doc, const char *group)
{
    char title[160];
    snprintf(title, sizeof title, "%s", group);
    static const char *const heads[] = {"result", "status", "#value", "± spread", "unit", "#min",
                                        "#max",   "#of peak", "implementation", "check / reason"};
    gv_page_table(p, title, heads, 10);
    size_t i;
    const json_t *r;
    json_array_foreach(gv_jarr(doc, "results"), i, r) {
        const char *g = gv_jstr(r, "group");
        if (!g || strcmp(g, group))
            continue;
        const char *st = gv_jstr(r, "status");
        gv_buf_printf(p->b, "<tr class=\"%s\" data-id=\"", gv_page_word_class(st));
        gv_html_esc(p->b, gv_jstr(r, "id"));
        gv_buf_add(p->b, "\"><td><code>");
        gv_html_esc(p->b, gv_jstr(r, "id"));
        gv_buf_add(p->b, "</code><br><span class=\"note\">");
        gv_html_esc(p->b, gv_jstr(r, "name"));
        gv_buf_add(p->b, "</span></td><td>");
        gv_page_verdict(p, st);
        gv_buf_add(p->b, "</td>");
        value_cells(p, r);
        gv_html_td_str(p->b, gv_jstr(r, "unit"), NULL);
        gv_html_td_num(p->b, r, "min", 4);
        gv_html_td_num(p->b, r, "max", 4);
        gv_html_td_num(p->b, r, "of_peak", 3);
        gv_html_td_str(p->b, gv_jstr(r, "impl"), NULL);
        const char *why = gv_jstr(r, "reason") ? gv_jstr(r, "reason") : gv_jpstr(r, "check.what");
        gv_html_td_str(p->b, why, NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

static void results(struct gv_page *p, const json_t *doc)
{
    const char *groups[32];
    size_t ng = 0, i;
    const json_t *r;
    json_array_foreach(gv_jarr(doc, "results"), i, r) {
        const char *g = gv_jstr(r, "group");
        if (!g)
            continue;
        size_t k = 0;
        while (k < ng && strcmp(groups[k], g))
            k++;
        if (k == ng && ng < 32)
            groups[ng++] = g;
    }
    gv_page_section(p, "results", "Results by group");
    gv_page_note(p, "value: the median of the samples; ± the spread, (max − min) / median");
    for (size_t k = 0; k < ng; k++)
        group_table(p, doc, groups[k]);
    gv_page_end_section(p);
}

static void verdicts(struct gv_page *p, const json_t *doc)
{
    const json_t *v = gv_jarr(doc, "verdicts");
    if (!json_array_size(v))
        return;
    gv_page_section(p, "verdicts", "Verdicts");
    gv_buf_add(p->b, "<ul class=\"verdicts\">");
    size_t i;
    const json_t *x;
    json_array_foreach(v, i, x) {
        gv_buf_add(p->b, "<li data-id=\"");
        gv_html_esc(p->b, gv_jstr(x, "id"));
        gv_buf_add(p->b, "\">");
        gv_html_esc(p->b, gv_jstr(x, "text"));
        gv_buf_add(p->b, "</li>");
    }
    gv_buf_add(p->b, "</ul>\n");
    gv_page_end_section(p);
}

static void kv_object(struct gv_page *p, const json_t *o)
{
    gv_buf_add(p->b, "<table class=\"kv\">");
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        gv_buf_add(p->b, "<tr><th scope=\"row\">");
        gv_html_esc(p->b, k);
        gv_buf_add(p->b, "</th><td>");
        if (json_is_string(v))
            gv_html_esc(p->b, json_string_value(v));
        else
            gv_html_json(p->b, v);
        gv_buf_add(p->b, "</td></tr>\n");
    }
    gv_buf_add(p->b, "</table>\n");
}

static void topology(struct gv_page *p, const json_t *doc)
{
    const json_t *t = gv_jobj(doc, "topology");
    if (!t)
        return;
    gv_page_section(p, "topology", "Topology");
    const json_t *w = gv_jarr(t, "warnings");
    size_t i;
    const json_t *x;
    json_array_foreach(w, i, x) {
        gv_buf_add(p->b, "<p class=\"v v-warn topo-warning\">! ");
        gv_html_esc(p->b, json_string_value(x));
        gv_buf_add(p->b, "</p>\n");
    }
    if (gv_jstr(t, "note"))
        gv_page_note(p, "%s", gv_jstr(t, "note"));
    json_array_foreach(gv_jarr(t, "gpus"), i, x) {
        char title[64];
        snprintf(title, sizeof title, "GPU %zu", i);
        gv_buf_printf(p->b, "<h4>%s</h4>", title);
        kv_object(p, x);
    }
    if (json_array_size(gv_jarr(t, "pairs"))) {
        gv_buf_add(p->b, "<h4>pairs</h4><ul>");
        json_array_foreach(gv_jarr(t, "pairs"), i, x) {
            gv_buf_add(p->b, "<li><code>");
            gv_html_json(p->b, x);
            gv_buf_add(p->b, "</code></li>");
        }
        gv_buf_add(p->b, "</ul>\n");
    }
    gv_page_end_section(p);
}

static void collectives(struct gv_page *p, const json_t *doc)
{
    const json_t *c = gv_jobj(doc, "collectives");
    if (!c)
        return;
    gv_page_section(p, "collectives", "Collectives");
    if (gv_jstr(c, "skipped"))
        gv_page_note(p, "not run: %s", gv_jstr(c, "skipped"));
    if (gv_jstr(c, "error"))
        gv_buf_add(p->b, "<p class=\"v v-bad\">! "), gv_html_esc(p->b, gv_jstr(c, "error")),
            gv_buf_add(p->b, "</p>\n");
    if (!gv_jstr(c, "skipped") && !gv_jstr(c, "error"))
        kv_object(p, c);
    gv_page_end_section(p);
}

static void conditions(struct gv_page *p, const json_t *doc)
{
    const json_t *c = gv_jobj(doc, "conditions");
    if (!c)
        return;
    gv_page_section(p, "conditions", "Conditions before and after");
    static const char *const sides[] = {"before", "after"};
    for (int s = 0; s < 2; s++) {
        gv_buf_printf(p->b, "<h4>%s</h4>", sides[s]);
        if (json_object_size(gv_jobj(c, sides[s])))
            kv_object(p, gv_jobj(c, sides[s]));
        else
            gv_page_note(p, "not readable on this device");
    }
    gv_page_end_section(p);
}

int gv_render_bench(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "device", gv_jpstr(doc, "device.name"));
    gv_page_kv(p, "mode", gv_jstr(doc, "mode"));
    gv_page_kv(p, "only", gv_jstr(doc, "only") ? gv_jstr(doc, "only") : "all");
    gv_page_kv(p, "created", gv_jstr(doc, "created"));
    gv_page_kv(p, "gpuvet", gv_jstr(doc, "gpuvet_version"));
    gv_buf_add(p->b, "</table>\n");
    best_figure(p, doc);
    verdicts(p, doc);
    results(p, doc);
    topology(p, doc);
    collectives(p, doc);
    conditions(p, doc);
    if (gv_jobj(doc, "method")) {
        gv_page_section(p, "method", "Method");
        kv_object(p, gv_jobj(doc, "method"));
        gv_page_end_section(p);
    }
    gv_render_device(p, "Device", gv_jobj(doc, "device"));
    gv_render_stack(p, "Stack at a glance", gv_jobj(doc, "snapshot"));
    return GV_OK;
}

/* ---------- a comparison of two bench documents ---------- */

static void side_value(struct gv_page *p, const json_t *s)
{
    if (!json_is_object(s)) {
        gv_buf_add(p->b, "<td class=\"num\" data-v=\"\">—</td>");
        return;
    }
    const char *st = gv_jstr(s, "status");
    if (st && strcmp(st, "ok")) {
        gv_buf_add(p->b, "<td>");
        gv_page_verdict(p, st);
        gv_buf_add(p->b, "</td>");
        return;
    }
    gv_html_td_num(p->b, s, "value", 4);
}

int gv_render_bench_compare(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    static const char *const keys[] = {"regressed", "newly_failing", "improved", "newly_ok",
                                       "within_noise", "not_comparable", "not_run", "only_before",
                                       "only_after"};
    gv_buf_add(p->b, "<table class=\"kv\">");
    static const char *const sides[] = {"before", "after"};
    for (int s = 0; s < 2; s++) {
        const json_t *x = gv_jobj(doc, sides[s]);
        char v[1024];
        snprintf(v, sizeof v, "%s (%s, %s, %s)", gv_jstr(x, "file") ?: "?",
                 gv_jstr(x, "device") ?: "?", gv_jstr(x, "mode") ?: "?",
                 gv_jstr(x, "created") ?: "?");
        gv_page_kv(p, s ? "B (after)" : "A (before)", v);
    }
    gv_buf_add(p->b, "</table>\n");
    size_t i;
    const json_t *x;
    json_array_foreach(gv_jarr(doc, "notes"), i, x) {
        gv_buf_add(p->b, "<p class=\"v v-warn bench-note\">! ");
        gv_html_esc(p->b, json_string_value(x));
        gv_buf_add(p->b, "</p>\n");
    }
    gv_summary_list(p, gv_jobj(doc, "summary"), keys, sizeof keys / sizeof keys[0]);
    gv_page_section(p, "results", "Results");
    gv_page_note(p, "B vs A: above 1, B is better. Regressed or improved: the change is larger "
                    "than the noise, max(spread A, spread B, 2 %%), and the sample ranges do not "
                    "overlap.");
    static const char *const heads[] = {"result", "change", "#A", "#B", "unit", "#B vs A",
                                        "#noise", "why"};
    gv_page_table(p, NULL, heads, 8);
    json_array_foreach(gv_jarr(doc, "results"), i, x) {
        const char *ch = gv_jstr(x, "change");
        gv_buf_printf(p->b, "<tr class=\"%s\" data-id=\"", gv_page_word_class(ch));
        gv_html_esc(p->b, gv_jstr(x, "id"));
        gv_buf_add(p->b, "\"><td><code>");
        gv_html_esc(p->b, gv_jstr(x, "id"));
        gv_buf_add(p->b, "</code></td><td>");
        gv_page_verdict(p, ch);
        gv_buf_add(p->b, "</td>");
        side_value(p, json_object_get(x, "before"));
        side_value(p, json_object_get(x, "after"));
        gv_html_td_str(p->b, gv_jstr(x, "unit"), NULL);
        gv_html_td_num(p->b, x, "ratio", 4);
        gv_html_td_num(p->b, x, "noise", 3);
        gv_html_td_str(p->b, gv_jstr(x, "why"), NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
    const json_t *causes = gv_jarr(doc, "causes");
    if (json_array_size(causes)) {
        gv_page_section(p, "causes", "Likely causes, by evidence");
        gv_buf_add(p->b, "<ol class=\"causes\">");
        json_array_foreach(causes, i, x) {
            gv_buf_add(p->b, "<li><b>");
            gv_html_esc(p->b, gv_jstr(x, "kind"));
            gv_buf_add(p->b, "</b> <code>");
            gv_html_esc(p->b, gv_jstr(x, "name"));
            gv_buf_add(p->b, "</code>: ");
            gv_html_esc(p->b, gv_jstr(x, "before") ? gv_jstr(x, "before") : "(absent)");
            gv_buf_add(p->b, " → ");
            gv_html_esc(p->b, gv_jstr(x, "after") ? gv_jstr(x, "after") : "(absent)");
            if (gv_jstr(x, "change")) {
                gv_buf_add(p->b, " (");
                gv_html_esc(p->b, gv_jstr(x, "change"));
                gv_buf_add(p->b, ")");
            }
            if (gv_jstr(x, "note")) {
                gv_buf_add(p->b, " <span class=\"note\">[");
                gv_html_esc(p->b, gv_jstr(x, "note"));
                gv_buf_add(p->b, "]</span>");
            }
            const char *t = gv_jstr(x, "touched_results");
            if (t && *t) {
                gv_buf_add(p->b, "<br>touches: ");
                gv_html_esc(p->b, t);
            }
            gv_buf_add(p->b, "</li>\n");
        }
        gv_buf_add(p->b, "</ol>\n");
        gv_page_end_section(p);
    }
    return GV_OK;
}
