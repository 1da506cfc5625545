/* Rollback verifications (gpuvet.verify, docs/rollback.md): did the machine
 * get back to its baseline, layer by layer, and are its numbers as before. */
#include <stdio.h>
#include <string.h>

#include "report/page.h"

static void verdict_line(struct gv_page *p, const char *what, int good, const char *text)
{
    gv_buf_add(p->b, "<li data-key=\"");
    gv_html_esc(p->b, what);
    gv_buf_add(p->b, "\">");
    gv_page_verdict(p, good ? "pass" : "fail");
    gv_buf_add(p->b, " ");
    gv_html_esc(p->b, what);
    gv_buf_add(p->b, ": <b>");
    gv_html_esc(p->b, text);
    gv_buf_add(p->b, "</b></li>");
}

static void differences(struct gv_page *p, const json_t *doc)
{
    const json_t *diffs = gv_jarr(doc, "differences");
    gv_page_section(p, "differences", "GPU stack against the baseline");
    if (!json_array_size(diffs)) {
        gv_page_note(p, "no difference in the GPU stack");
    } else {
        static const char *const heads[] = {"layer", "kind", "what", "baseline", "now"};
        gv_page_table(p, NULL, heads, 5);
        size_t i;
        const json_t *c;
        json_array_foreach(diffs, i, c) {
            gv_buf_add(p->b, "<tr class=\"bad\">");
            gv_html_td_str(p->b, gv_jstr(c, "layer"), NULL);
            gv_html_td_str(p->b, gv_jstr(c, "kind"), NULL);
            gv_buf_add(p->b, "<td><code>");
            gv_html_esc(p->b, gv_jstr(c, "subject"));
            gv_buf_add(p->b, "</code></td>");
            gv_html_td_str(p->b, gv_jstr(c, "before") ? gv_jstr(c, "before") : "(absent)", NULL);
            gv_html_td_str(p->b, gv_jstr(c, "after") ? gv_jstr(c, "after") : "(absent)", NULL);
            gv_buf_add(p->b, "</tr>\n");
        }
        gv_page_table_end(p);
    }
    size_t i;
    const json_t *nc;
    json_array_foreach(gv_jarr(doc, "not_comparable"), i, nc)
        gv_page_note(p, "cannot compare %s: %s", gv_jstr(nc, "section") ? gv_jstr(nc, "section") : "?",
                     gv_jstr(nc, "reason") ? gv_jstr(nc, "reason") : "");
    double others = 0;
    if (gv_jnum(doc, "other_changes", &others) && others > 0)
        gv_page_note(p, "%.0f changes outside the GPU stack not counted (other packages, Python "
                     "environments without a GPU framework)", others);
    gv_page_end_section(p);
}

static void leftovers(struct gv_page *p, const json_t *doc)
{
    const json_t *left = gv_jarr(doc, "leftovers");
    gv_page_section(p, "leftovers", "GPU library files no package owns");
    if (!json_array_size(left)) {
        gv_page_note(p, "none");
        gv_page_end_section(p);
        return;
    }
    static const char *const heads[] = {"file", "package name", "version", "at the baseline"};
    gv_page_table(p, NULL, heads, 4);
    size_t i;
    const json_t *c;
    json_array_foreach(left, i, c) {
        int fresh = json_is_true(json_object_get(c, "new"));
        gv_buf_printf(p->b, "<tr class=\"%s\"><td><code>", fresh ? "bad" : "");
        gv_html_esc(p->b, gv_jstr(c, "path"));
        gv_buf_add(p->b, "</code></td>");
        gv_html_td_str(p->b, gv_jstr(c, "name"), NULL);
        gv_html_td_str(p->b, gv_jstr(c, "version"), NULL);
        gv_html_td_str(p->b, fresh ? "no" : "yes", NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

static void numerics(struct gv_page *p, const json_t *num)
{
    gv_page_section(p, "numerics", "Numerics rerun against the baseline results");
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "baseline results", gv_jstr(num, "results"));
    gv_page_kv(p, "suite", gv_jstr(num, "suite"));
    gv_buf_add(p->b, "</table>\n");
    static const char *const heads[] = {"change", "#cases"};
    gv_page_table(p, "cases by change", heads, 2);
    const char *k;
    const json_t *v;
    const json_t *counts = gv_jobj(num, "counts");
    json_object_foreach((json_t *)counts, k, v) {
        gv_buf_add(p->b, "<tr><td>");
        gv_page_verdict(p, k);
        gv_buf_add(p->b, "</td>");
        gv_html_td_num(p->b, counts, k, 10);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    const json_t *flagged = gv_jarr(num, "flagged");
    if (json_array_size(flagged)) {
        static const char *const fh[] = {"case", "change"};
        gv_page_table(p, "flagged cases", fh, 2);
        size_t i;
        const json_t *c;
        json_array_foreach(flagged, i, c) {
            gv_buf_add(p->b, "<tr class=\"bad\"><td><code>");
            gv_html_esc(p->b, gv_jstr(c, "id"));
            gv_buf_add(p->b, "</code></td><td>");
            gv_page_verdict(p, gv_jstr(c, "change"));
            gv_buf_add(p->b, "</td></tr>\n");
        }
        gv_page_table_end(p);
    }
    gv_page_end_section(p);
}

int gv_render_verify(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    const json_t *num = gv_jobj(doc, "numerics");
    gv_buf_add(p->b, "<p>Baseline: <code>");
    gv_html_esc(p->b, gv_jstr(doc, "baseline"));
    gv_buf_add(p->b, "</code></p>\n<ul class=\"summary\">");
    verdict_line(p, "verification", json_is_true(json_object_get(doc, "ok")),
                 json_is_true(json_object_get(doc, "ok")) ? "back at the baseline" : "not at the baseline");
    int same = json_is_true(json_object_get(doc, "stack_matches"));
    verdict_line(p, "stack", same, same ? "matches the baseline" : "differs from the baseline");
    if (num) {
        int bad = json_is_true(json_object_get(num, "degraded"));
        verdict_line(p, "numerics", !bad, bad ? "degraded" : "not degraded");
    }
    gv_buf_add(p->b, "</ul>\n");
    differences(p, doc);
    leftovers(p, doc);
    if (num)
        numerics(p, num);
    return GV_OK;
}
