/* Doctor reports (gpuvet.doctor) and snapshot diffs (gpuvet.diff). */
#include <stdio.h>
#include <string.h>

#include "report/page.h"
#include "report/results_view.h"

static void finding(struct gv_page *p, const json_t *f)
{
    const char *sev = gv_jstr(f, "severity");
    int unchecked = json_is_false(json_object_get(f, "checked"));
    gv_buf_add(p->b, "<article class=\"finding sev-");
    gv_html_esc(p->b, unchecked ? "unchecked" : sev ? sev : "unknown");
    gv_buf_add(p->b, "\" data-rule=\"");
    gv_html_esc(p->b, gv_jstr(f, "rule"));
    gv_buf_add(p->b, "\"><h4>");
    gv_page_verdict(p, unchecked ? "not_run" : sev);
    gv_buf_add(p->b, " <code>");
    gv_html_esc(p->b, gv_jstr(f, "rule"));
    gv_buf_add(p->b, "</code> <span class=\"title\">");
    gv_html_esc(p->b, gv_jstr(f, "title"));
    gv_buf_add(p->b, "</span></h4>\n");
    size_t i;
    const json_t *e;
    if (json_array_size(gv_jarr(f, "evidence"))) {
        gv_buf_add(p->b, "<table class=\"kv evidence\"><caption>evidence</caption>");
        json_array_foreach(gv_jarr(f, "evidence"), i, e) {
            gv_buf_add(p->b, "<tr><th scope=\"row\"><code>");
            gv_html_esc(p->b, gv_jstr(e, "path"));
            gv_buf_add(p->b, "</code></th><td><code>");
            gv_html_json(p->b, json_object_get(e, "value"));
            gv_buf_add(p->b, "</code></td></tr>");
        }
        gv_buf_add(p->b, "</table>\n");
    }
    if (json_array_size(gv_jarr(f, "fix"))) {
        gv_buf_add(p->b, "<p><b>Fix</b></p><pre class=\"fix\">");
        json_array_foreach(gv_jarr(f, "fix"), i, e) {
            gv_html_json(p->b, e);
            gv_buf_add(p->b, "\n");
        }
        gv_buf_add(p->b, "</pre>\n");
    }
    if (gv_jstr(f, "reference")) {
        gv_buf_add(p->b, "<p class=\"src\">reference: ");
        gv_html_esc(p->b, gv_jstr(f, "reference"));
        gv_buf_add(p->b, "</p>");
    }
    gv_buf_add(p->b, "</article>\n");
}

int gv_render_doctor(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    static const char *const keys[] = {"errors", "warnings", "info", "not_checked", "rules"};
    static const char *const words[] = {"error", "warning", "info", "not_run", "rules"};
    const json_t *sum = gv_jobj(doc, "summary");
    gv_buf_add(p->b, "<p>Snapshot: <code>");
    gv_html_esc(p->b, gv_jpstr(doc, "snapshot.source"));
    gv_buf_add(p->b, "</code>, root <code>");
    gv_html_esc(p->b, gv_jpstr(doc, "snapshot.root"));
    gv_buf_add(p->b, "</code></p>\n<ul class=\"summary\">");
    for (size_t i = 0; i < 5; i++) {
        double v;
        if (!gv_jnum(sum, keys[i], &v))
            continue;
        char t[32];
        gv_fmt_num(t, sizeof t, v, 10);
        gv_buf_add(p->b, "<li data-key=\"");
        gv_html_esc(p->b, keys[i]);
        gv_buf_add(p->b, "\">");
        if (i < 4)
            gv_page_verdict(p, words[i]);
        else
            gv_buf_add(p->b, "rules");
        gv_buf_printf(p->b, " (%s) <b class=\"count\">%s</b></li>", keys[i], t);
    }
    gv_buf_add(p->b, "</ul>\n");
    gv_page_section(p, "findings", "Findings and their fixes");
    const json_t *fs = gv_jarr(doc, "findings");
    if (!json_array_size(fs))
        gv_page_note(p, "no findings");
    size_t i;
    const json_t *f;
    json_array_foreach(fs, i, f)
        finding(p, f);
    gv_page_end_section(p);
    return GV_OK;
}

static const char *const layers[] = {"driver", "runtime", "math", "framework", "loader", "packages"};

int gv_render_diff(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "before", gv_jpstr(doc, "before.file"));
    gv_page_kv(p, "after", gv_jpstr(doc, "after.file"));
    gv_buf_add(p->b, "</table>\n");
    const json_t *by = gv_jobj(gv_jobj(doc, "summary"), "by_layer");
    double v[6];
    for (int i = 0; i < 6; i++) {
        v[i] = 0;
        gv_jnum(by, layers[i], &v[i]);
    }
    char desc[600];
    size_t len = (size_t)snprintf(desc, sizeof desc, "changes per layer, most consequential first:");
    for (int i = 0; i < 6 && len < sizeof desc; i++) {
        char t[32];
        gv_fmt_num(t, sizeof t, v[i], 10);
        len += (size_t)snprintf(desc + len, sizeof desc - len, " %s %s;", layers[i], t);
    }
    if (by) {
        struct gv_series s = {"changes", v};
        gv_svg_bars(p, "Changes by layer", desc, layers, 6, &s, 1, "changes");
    }
    const json_t *changes = gv_jarr(doc, "changes");
    for (int l = 0; l < 6; l++) {
        size_t i, n = 0;
        const json_t *c;
        json_array_foreach(changes, i, c) {
            const char *layer = gv_jstr(c, "layer");
            if (!layer || strcmp(layer, layers[l]))
                continue;
            if (!n++) {
                char title[64];
                snprintf(title, sizeof title, "%d. %s", l + 1, layers[l]);
                gv_page_section(p, "layer", title);
                static const char *const heads[] = {"kind", "what", "before", "after", "detail"};
                gv_page_table(p, NULL, heads, 5);
            }
            const char *kind = gv_jstr(c, "kind");
            int bad = kind && (!strcmp(kind, "mixed") || !strcmp(kind, "unowned"));
            gv_buf_printf(p->b, "<tr class=\"%s\"><td>%s", bad ? "bad" : "", bad ? "! " : "");
            gv_html_esc(p->b, kind);
            gv_buf_add(p->b, "</td><td><code>");
            gv_html_esc(p->b, gv_jstr(c, "subject"));
            gv_buf_add(p->b, "</code></td>");
            gv_html_td_str(p->b, gv_jstr(c, "before"), NULL);
            gv_html_td_str(p->b, gv_jstr(c, "after"), NULL);
            gv_html_td_str(p->b, gv_jstr(c, "detail"), NULL);
            gv_buf_add(p->b, "</tr>\n");
        }
        if (n) {
            gv_page_table_end(p);
            gv_page_end_section(p);
        }
    }
    if (!json_array_size(changes))
        gv_page_note(p, "no change between the two snapshots");
    size_t i;
    const json_t *nc;
    json_array_foreach(gv_jarr(doc, "not_comparable"), i, nc) {
        gv_page_note(p, "not comparable: %s (%s)", gv_jstr(nc, "section") ? gv_jstr(nc, "section") : "?",
                     gv_jstr(nc, "reason") ? gv_jstr(nc, "reason") : "");
    }
    return GV_OK;
}
