/* Probe fingerprints (gpuvet.probe): per route and precision, the
 * properties with their value and the method and observations the document
 * records. Every number shown is one the document holds. */
#include <stdio.h>
#include <string.h>

#include "report/page.h"
#include "report/results_view.h"

/* A property value: "undetermined" and "not_applicable" are words with
 * their symbol, anything else is shown as the document holds it. */
static void prop_value(struct gv_page *p, const json_t *v)
{
    const char *s = json_string_value(v);
    if (s && (!strcmp(s, "undetermined") || !strcmp(s, "not_applicable"))) {
        gv_buf_add(p->b, !strcmp(s, "undetermined") ? "<span class=\"v v-na\">? undetermined</span>"
                                                     : "<span class=\"v v-na\">– not applicable</span>");
        return;
    }
    gv_buf_add(p->b, "<code>");
    if (s)
        gv_html_esc(p->b, s);
    else
        gv_html_json(p->b, v);
    gv_buf_add(p->b, "</code>");
}

static void properties(struct gv_page *p, const json_t *props)
{
    static const char *const heads[] = {"property", "value", "method and evidence"};
    gv_page_table(p, "properties", heads, 3);
    const char *name;
    const json_t *pr;
    json_object_foreach((json_t *)props, name, pr) {
        gv_buf_add(p->b, "<tr data-property=\"");
        gv_html_esc(p->b, name);
        gv_buf_add(p->b, "\"><th scope=\"row\"><code>");
        gv_html_esc(p->b, name);
        gv_buf_add(p->b, "</code></th><td class=\"pv\">");
        prop_value(p, json_object_get(pr, "value"));
        gv_buf_add(p->b, "</td><td>");
        const json_t *obs = gv_jarr(pr, "observations");
        if (gv_jstr(pr, "method") || json_array_size(obs)) {
            gv_buf_add(p->b, "<details><summary>");
            gv_html_esc(p->b, gv_jstr(pr, "method") ? gv_jstr(pr, "method") : "observations");
            gv_buf_add(p->b, "</summary><ul>");
            size_t i;
            const json_t *o;
            json_array_foreach(obs, i, o) {
                gv_buf_add(p->b, "<li><code>");
                gv_html_json(p->b, o);
                gv_buf_add(p->b, "</code></li>");
            }
            if (gv_jstr(pr, "tree_sha256")) {
                gv_buf_add(p->b, "<li>tree sha256 <code>");
                gv_html_esc(p->b, gv_jstr(pr, "tree_sha256"));
                gv_buf_add(p->b, "</code></li>");
            }
            gv_buf_add(p->b, "</ul></details>");
        }
        gv_buf_add(p->b, "</td></tr>\n");
    }
    gv_page_table_end(p);
}

static void precision(struct gv_page *p, const json_t *pc)
{
    gv_buf_add(p->b, "<article class=\"precision\" data-op=\"");
    gv_html_esc(p->b, gv_jstr(pc, "op"));
    gv_buf_add(p->b, "\" data-precision=\"");
    gv_html_esc(p->b, gv_jstr(pc, "precision"));
    gv_buf_add(p->b, "\"><h4><code>");
    gv_html_esc(p->b, gv_jstr(pc, "op"));
    gv_buf_add(p->b, " ");
    gv_html_esc(p->b, gv_jstr(pc, "precision"));
    gv_buf_add(p->b, "</code> ");
    gv_page_verdict(p, gv_jstr(pc, "status"));
    gv_buf_add(p->b, "</h4>\n<table class=\"kv\">");
    gv_page_kv(p, "in", gv_jstr(pc, "in"));
    gv_page_kv(p, "compute", gv_jstr(pc, "compute"));
    gv_page_kv(p, "out", gv_jstr(pc, "out"));
    gv_page_kv(p, "what", gv_jstr(pc, "what"));
    if (gv_jstr(pc, "reason"))
        gv_page_kv(p, "reason", gv_jstr(pc, "reason"));
    gv_buf_add(p->b, "</table>\n");
    const json_t *props = gv_jobj(pc, "properties");
    if (json_object_size(props))
        properties(p, props);
    gv_buf_add(p->b, "</article>\n");
}

static void route(struct gv_page *p, const json_t *r)
{
    char title[256];
    snprintf(title, sizeof title, "Route %.200s", gv_jstr(r, "route") ? gv_jstr(r, "route") : "?");
    gv_page_section(p, "route", title);
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "device", gv_jstr(r, "device"));
    gv_page_kv(p, "status", gv_jstr(r, "status"));
    gv_page_kv(p, "blas", gv_jstr(r, "blas"));
    gv_page_kv(p, "gemm", gv_jstr(r, "gemm"));
    gv_page_kv(p, "what", gv_jstr(r, "what"));
    if (gv_jstr(r, "reason"))
        gv_page_kv(p, "reason", gv_jstr(r, "reason"));
    gv_buf_add(p->b, "</table>\n");
    size_t i;
    const json_t *pc;
    json_array_foreach(gv_jarr(r, "precisions"), i, pc) precision(p, pc);
    gv_page_end_section(p);
}

int gv_render_probe(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "device spec", gv_jstr(doc, "device_spec"));
    gv_page_kv(p, "created", gv_jstr(doc, "created"));
    gv_buf_add(p->b, "</table>\n");
    size_t i;
    const json_t *r;
    json_array_foreach(gv_jarr(doc, "routes"), i, r) route(p, r);
    return 0;
}
