/* The version matrix (gpuvet.matrix, from `gpuvet matrix --json` or a
 * history database): one row per combination of versions, with its runs,
 * passes and failures, the worst case, and pass/fail over time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"

#define MAX_CELLS 1000

static void timeline(struct gv_page *p, const json_t *row)
{
    const json_t *tl = gv_jarr(row, "timeline");
    size_t n = json_array_size(tl) < MAX_CELLS ? json_array_size(tl) : MAX_CELLS;
    gv_buf_add(p->b, "<td class=\"strip\">");
    if (!n) {
        gv_buf_add(p->b, "—</td>");
        return;
    }
    struct gv_cell *c = calloc(n, sizeof *c);
    char (*labels)[400] = calloc(n, sizeof *labels);
    if (!c || !labels) {
        free(c);
        free(labels);
        gv_buf_add(p->b, "—</td>");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(tl, i);
        const char *v = gv_jstr(e, "verdict");
        c[i].pass = v && !strcmp(v, "pass") ? 1 : v && !strcmp(v, "fail") ? 0 : -1;
        double run = -1;
        gv_jnum(e, "run", &run);
        snprintf(labels[i], sizeof labels[i], "%.60s on %.200s, run %.0f: %s",
                 gv_jstr(e, "time") ? gv_jstr(e, "time") : "?", gv_jstr(e, "machine") ? gv_jstr(e, "machine") : "?",
                 run, v ? (c[i].pass == 1 ? "✓ pass" : c[i].pass == 0 ? "✗ fail" : v) : "?");
        c[i].label = labels[i];
    }
    static const char desc[] = "the latest runs of this combination, oldest first, in rows of 20: a tall square "
                               "passed, a short crossed square failed; each square names its time, machine and run";
    gv_svg_strip(p, "Pass and fail over time", desc, c, n);
    gv_buf_add(p->b, "</td>");
    free(c);
    free(labels);
}

/* The database URL with any password replaced (the matrix command removes it
 * already; a page is a file people pass around, so make sure). */
void gv_page_db_name(const char *db, char *out, size_t n)
{
    snprintf(out, n, "%s", db ? db : "");
    char *scheme = strstr(out, "://");
    if (!scheme)
        return;
    char *user = scheme + 3, *at = strchr(user, '@'), *colon = strchr(user, ':');
    if (!at || !colon || colon > at)
        return;
    char rest[2048];
    snprintf(rest, sizeof rest, "%s", at);
    snprintf(colon, n - (size_t)(colon - out), ":***%s", rest);
}

/* The image a row's runs were made in: its tag and the manifest digest's first
 * 12 hex digits, the whole digest as the title; a dash for a host's stack. */
static void image_td(struct gv_page *p, const json_t *image)
{
    const char *d = gv_jstr(image, "manifest_digest");
    if (!d)
        d = gv_jstr(image, "config_digest");
    if (!d) {
        gv_html_td_str(p->b, NULL, NULL);
        return;
    }
    const char *tag = gv_jstr(image, "tag");
    gv_buf_add(p->b, "<td class=\"digest\" title=\"");
    gv_html_esc(p->b, d);
    gv_buf_add(p->b, "\">");
    if (tag) {
        gv_html_esc(p->b, tag);
        gv_buf_add(p->b, "@");
    }
    gv_buf_printf(p->b, "%.19s", d);
    gv_buf_add(p->b, "</td>");
}

int gv_render_matrix(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    const json_t *f = gv_jobj(doc, "filters");
    gv_buf_add(p->b, "<table class=\"kv\">");
    char db[2048];
    gv_page_db_name(gv_jstr(doc, "db"), db, sizeof db);
    gv_page_kv(p, "history", gv_jstr(doc, "db") ? db : NULL);
    gv_page_kv(p, "made", gv_jstr(doc, "generated"));
    gv_page_kv(p, "GPU filter", gv_jstr(f, "gpu") ? gv_jstr(f, "gpu") : "any");
    gv_page_kv(p, "since", gv_jstr(f, "since") ? gv_jstr(f, "since") : "the beginning");
    gv_page_kv(p, "torch filter", gv_jstr(f, "torch") ? gv_jstr(f, "torch") : "any");
    gv_buf_add(p->b, "</table>\n");
    const json_t *rows = gv_jarr(doc, "rows");
    gv_page_section(p, "matrix", "Version matrix, newest first");
    if (!json_array_size(rows)) {
        gv_page_note(p, "no run is recorded that matches");
        gv_page_end_section(p);
        return GV_OK;
    }
    static const char *const heads[] = {"GPU", "arch", "kernel", "driver", "ROCm / CUDA", "torch",
                                        "image", "#runs", "#machines", "#passes", "#failures",
                                        "first seen", "last seen", "worst case", "#bits lost",
                                        "over time"};
    gv_page_table(p, NULL, heads, 16);
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        double fails = 0;
        gv_jnum(r, "failures", &fails);
        gv_buf_printf(p->b, "<tr class=\"%s\">", fails > 0 ? "bad" : "good");
        gv_html_td_str(p->b, gv_jstr(r, "gpu_model"), NULL);
        gv_html_td_str(p->b, gv_jstr(r, "gpu_arch"), NULL);
        gv_html_td_str(p->b, gv_jstr(r, "kernel"), NULL);
        gv_html_td_str(p->b, gv_jstr(r, "driver"), NULL);
        if (gv_jstr(r, "rocm") || gv_jstr(r, "cuda")) {
            gv_buf_add(p->b, "<td>");
            if (gv_jstr(r, "rocm")) {
                gv_buf_add(p->b, "ROCm ");
                gv_html_esc(p->b, gv_jstr(r, "rocm"));
            }
            if (gv_jstr(r, "cuda")) {
                gv_buf_add(p->b, gv_jstr(r, "rocm") ? "<br>CUDA " : "CUDA ");
                gv_html_esc(p->b, gv_jstr(r, "cuda"));
            }
            gv_buf_add(p->b, "</td>");
        } else {
            gv_html_td_str(p->b, NULL, NULL);
        }
        gv_html_td_str(p->b, gv_jstr(r, "torch"), NULL);
        image_td(p, json_object_get(r, "image"));
        gv_html_td_num(p->b, r, "runs", 10);
        gv_html_td_num(p->b, r, "machines", 10);
        gv_html_td_num(p->b, r, "passes", 10);
        gv_buf_add(p->b, fails > 0 ? "<td class=\"num v-bad\" data-v=\"" : "<td class=\"num\" data-v=\"");
        {
            double v;
            if (gv_jnum(r, "failures", &v)) {
                char t[32];
                gv_fmt_num(t, sizeof t, v, 10);
                gv_html_esc(p->b, t);
                gv_buf_add(p->b, "\">");
                if (v > 0)
                    gv_buf_add(p->b, "✗ ");
                gv_html_esc(p->b, t);
            } else {
                gv_buf_add(p->b, "\">—");
            }
        }
        gv_buf_add(p->b, "</td>");
        gv_html_td_str(p->b, gv_jstr(r, "first_seen"), NULL);
        gv_html_td_str(p->b, gv_jstr(r, "last_seen"), NULL);
        const json_t *w = gv_jobj(r, "worst");
        gv_buf_add(p->b, "<td><code>");
        gv_html_esc(p->b, gv_jstr(w, "case") ? gv_jstr(w, "case") : "—");
        gv_buf_add(p->b, "</code></td>");
        gv_html_td_num(p->b, w, "bits_lost", 4);
        timeline(p, r);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
    return GV_OK;
}
