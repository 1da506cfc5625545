/* Fleet comparisons (gpuvet.fleet, docs/fleet.md): the verdict, then per
 * group of nodes that must agree the odd nodes with their class and
 * evidence, the vote per case, the split cases; the missing ranks. Every
 * value is one the document holds. */
#include <stdio.h>
#include <string.h>

#include "report/page.h"

/* The classes of an odd node: the word, its symbol and colour class. */
static const struct fleet_class {
    const char *key, *text, *sym, *cls;
} classes[] = {
    {"could_not_run", "could not run", "!", "bad"},
    {"stack_drift", "stack drift", "\xe2\x89\xa0", "warn"},
    {"numerics_outlier", "numerics outlier", "\xe2\x9c\x97", "bad"},
    {"slow", "slow", "\xe2\x96\xbc", "warn"},
};
#define NCLASSES (sizeof classes / sizeof classes[0])

static const struct fleet_class *find_class(const char *key)
{
    for (size_t i = 0; key && i < NCLASSES; i++)
        if (!strcmp(classes[i].key, key))
            return &classes[i];
    return NULL;
}

static void class_word(struct gv_page *p, const char *key)
{
    const struct fleet_class *c = find_class(key);
    gv_buf_printf(p->b, "<span class=\"v v-%s\" data-word=\"", c ? c->cls : "na");
    gv_html_esc(p->b, key ? key : "");
    gv_buf_printf(p->b, "\"><span aria-hidden=\"true\">%s</span> ", c ? c->sym : "?");
    gv_html_esc(p->b, c ? c->text : key ? key : "unknown");
    gv_buf_add(p->b, "</span>");
}

static void count_item(struct gv_page *p, const json_t *o, const char *key, const char *label)
{
    double v;
    if (!gv_jnum(o, key, &v))
        return;
    char t[32];
    gv_fmt_num(t, sizeof t, v, 10);
    gv_buf_add(p->b, "<li data-key=\"");
    gv_html_esc(p->b, key);
    gv_buf_add(p->b, "\">");
    gv_html_esc(p->b, label);
    gv_buf_add(p->b, " <b class=\"count\">");
    gv_html_esc(p->b, t);
    gv_buf_add(p->b, "</b></li>");
}

static void verdict(struct gv_page *p, const json_t *doc)
{
    const json_t *sum = gv_jobj(doc, "summary");
    /* the verdict line, in fleet compare's words, opens the page (report.c, verdict.c) */
    gv_buf_add(p->b, "<ul class=\"summary\">");
    count_item(p, doc, "nodes", "nodes");
    count_item(p, doc, "ranks_expected", "ranks expected");
    count_item(p, sum, "odd", "odd nodes");
    for (size_t i = 0; i < NCLASSES; i++)
        count_item(p, sum, classes[i].key, classes[i].text);
    count_item(p, sum, "missing", "missing ranks");
    count_item(p, sum, "split_cases", "split cases");
    gv_buf_add(p->b, "</ul>\n<table class=\"kv\">");
    gv_page_kv(p, "gpuvet version", gv_jstr(doc, "gpuvet_version"));
    gv_page_kv(p, "created", gv_jstr(doc, "created"));
    gv_buf_add(p->b, "</table>\n");
}

static void group_title(char *out, size_t n, const json_t *g)
{
    const json_t *key = gv_jobj(g, "key");
    const char *model = gv_jstr(key, "model"), *driver = gv_jstr(key, "driver");
    double cu;
    char t[32] = "?";
    if (gv_jnum(key, "compute_units", &cu))
        gv_fmt_num(t, sizeof t, cu, 10);
    if (!model)
        snprintf(out, n, "hardware unknown (no document says)");
    else
        snprintf(out, n, "%.200s, %s compute units, driver %.100s", model, t, driver ? driver : "—");
}

static void td_code(struct gv_page *p, const char *s)
{
    if (!s) {
        gv_html_td_str(p->b, NULL, NULL);
        return;
    }
    gv_buf_add(p->b, "<td><code>");
    gv_html_esc(p->b, s);
    gv_buf_add(p->b, "</code></td>");
}

/* A row of a case table: its class, its id as data-case and its first cell. */
static void case_row(struct gv_page *p, const char *cls, const char *id)
{
    gv_buf_printf(p->b, "<tr class=\"%s\" data-case=\"", cls);
    gv_html_esc(p->b, id);
    gv_buf_add(p->b, "\">");
    td_code(p, id);
}

/* A key/value row whose value is a number of the document. */
static void kv_num(struct gv_page *p, const char *label, const json_t *o, const char *key)
{
    gv_buf_printf(p->b, "<tr><th scope=\"row\">%s</th>", label);
    gv_html_td_num(p->b, o, key, 10);
    gv_buf_add(p->b, "</tr>\n");
}

static void evidence_reason(struct gv_page *p, const json_t *ev)
{
    if (!json_object_get(ev, "reason"))
        return;
    gv_buf_add(p->b, "<p class=\"reason\">reason: <b>");
    gv_html_json(p->b, json_object_get(ev, "reason"));
    gv_buf_add(p->b, "</b></p>\n");
}

static void evidence_diff(struct gv_page *p, const json_t *ev)
{
    const json_t *diff = gv_jarr(ev, "diff");
    if (!diff && !gv_jstr(ev, "stack_digest"))
        return;
    gv_buf_add(p->b, "<p>its stack <code>");
    gv_html_esc(p->b, gv_jstr(ev, "stack_digest") ? gv_jstr(ev, "stack_digest") : "—");
    gv_buf_add(p->b, "</code>, against the majority's:</p>\n<pre class=\"diff\">");
    size_t i;
    const json_t *l;
    json_array_foreach(diff, i, l) {
        gv_html_json(p->b, l);
        gv_buf_add(p->b, "\n");
    }
    gv_buf_add(p->b, "</pre>\n");
}

static void evidence_cases(struct gv_page *p, const json_t *ev)
{
    const json_t *cases = gv_jarr(ev, "cases");
    if (!json_array_size(cases))
        return;
    static const char *const heads[] = {"case", "its digest", "majority digest", "#nodes agreeing",
                                        "repeats differing", "#elements differing", "#max bits",
                                        "#effective bits", "#majority's", "other evidence"};
    gv_page_table(p, "cases", heads, 10);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        case_row(p, "bad", gv_jstr(c, "id"));
        td_code(p, gv_jstr(c, "digest"));
        td_code(p, gv_jstr(c, "majority_digest"));
        gv_html_td_num(p->b, c, "nodes_agreeing", 6);
        gv_html_td_str(p->b, gv_jstr(c, "repeats_differing"), NULL);
        gv_html_td_num(p->b, c, "elements_differing", 6);
        gv_html_td_num(p->b, c, "max_bits", 6);
        gv_html_td_num(p->b, c, "effective_bits", 6);
        gv_html_td_num(p->b, c, "majority_effective_bits", 6);
        gv_buf_add(p->b, "<td class=\"other\">");
        static const char *const more[] = {"fails_against_fp64", "not_run_to_run_identical",
                                           "identical_on_nodes", "outputs_note"};
        for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
            const json_t *v = json_object_get(c, more[k]);
            if (!v)
                continue;
            gv_buf_printf(p->b, "<div>%s: ", more[k]);
            gv_html_json(p->b, v);
            gv_buf_add(p->b, "</div>");
        }
        gv_buf_add(p->b, "</td></tr>\n");
    }
    gv_page_table_end(p);
}

static void evidence_bench(struct gv_page *p, const json_t *ev)
{
    const json_t *bench = gv_jarr(ev, "bench");
    if (!json_array_size(bench))
        return;
    static const char *const heads[] = {"figure", "unit", "#value", "#group median", "#group MAD",
                                        "#limit", "#nodes"};
    gv_page_table(p, "benchmark figures", heads, 7);
    size_t i;
    const json_t *c;
    json_array_foreach(bench, i, c) {
        gv_buf_add(p->b, "<tr class=\"warn\">");
        td_code(p, gv_jstr(c, "id"));
        gv_html_td_str(p->b, gv_jstr(c, "unit"), NULL);
        gv_html_td_num(p->b, c, "value", 6);
        gv_html_td_num(p->b, c, "group_median", 6);
        gv_html_td_num(p->b, c, "group_mad", 6);
        gv_html_td_num(p->b, c, "limit", 6);
        gv_html_td_num(p->b, c, "nodes", 6);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

static void odd_node(struct gv_page *p, const json_t *o)
{
    char rank[32] = "?";
    double r;
    if (gv_jnum(o, "rank", &r))
        gv_fmt_num(rank, sizeof rank, r, 10);
    const struct fleet_class *c0 = find_class(gv_jstr(o, "class"));
    gv_buf_printf(p->b, "<article class=\"finding odd%s\" data-node=\"",
                  !c0 ? "" : !strcmp(c0->cls, "bad") ? " sev-error" : " sev-warning");
    gv_html_esc(p->b, gv_jstr(o, "node"));
    gv_buf_add(p->b, "\" data-class=\"");
    gv_html_esc(p->b, gv_jstr(o, "class"));
    gv_buf_add(p->b, "\"><h4><code class=\"node\">");
    gv_html_esc(p->b, gv_jstr(o, "node") ? gv_jstr(o, "node") : "—");
    gv_buf_add(p->b, "</code> (rank <span class=\"rank\">");
    gv_html_esc(p->b, rank);
    gv_buf_add(p->b, "</span>): ");
    class_word(p, gv_jstr(o, "class"));
    size_t i;
    const json_t *c;
    json_array_foreach(gv_jarr(o, "classes"), i, c) {
        const char *k = json_string_value(c);
        if (!k || (gv_jstr(o, "class") && !strcmp(k, gv_jstr(o, "class"))))
            continue;
        gv_buf_add(p->b, ", ");
        class_word(p, k);
    }
    gv_buf_add(p->b, "</h4>\n");
    const json_t *ev = gv_jobj(o, "evidence");
    evidence_reason(p, ev);
    evidence_diff(p, ev);
    evidence_cases(p, ev);
    evidence_bench(p, ev);
    gv_buf_add(p->b, "</article>\n");
}

static void votes(struct gv_page *p, const json_t *g)
{
    const json_t *cases = gv_jarr(g, "cases");
    if (!json_array_size(cases))
        return;
    static const char *const heads[] = {"case", "#voters", "majority digest", "#nodes agreeing",
                                        "#not run-to-run identical on"};
    gv_page_table(p, "the vote per case", heads, 5);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        case_row(p, "vote", gv_jstr(c, "id"));
        gv_html_td_num(p->b, c, "voters", 6);
        td_code(p, gv_jstr(c, "majority_digest"));
        gv_html_td_num(p->b, c, "nodes_agreeing", 6);
        gv_html_td_num(p->b, c, "not_run_to_run_identical_on", 6);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

static void split(struct gv_page *p, const json_t *g)
{
    const json_t *sp = gv_jarr(g, "split");
    if (!json_array_size(sp))
        return;
    static const char *const heads[] = {"case", "#voters", "#digests", "#largest"};
    gv_page_table(p, "split cases (no strict majority: no node made odd by them)", heads, 4);
    size_t i;
    const json_t *c;
    json_array_foreach(sp, i, c) {
        case_row(p, "warn split", gv_jstr(c, "id"));
        gv_html_td_num(p->b, c, "voters", 6);
        gv_html_td_num(p->b, c, "digests", 6);
        gv_html_td_num(p->b, c, "largest", 6);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

static void group(struct gv_page *p, const json_t *g)
{
    char title[400];
    group_title(title, sizeof title, g);
    gv_page_section(p, "group", title);
    gv_buf_add(p->b, "<table class=\"kv\">");
    const json_t *key = gv_jobj(g, "key");
    gv_page_kv(p, "GPU model", gv_jstr(key, "model"));
    kv_num(p, "compute units", key, "compute_units");
    gv_page_kv(p, "driver", gv_jstr(key, "driver"));
    kv_num(p, "nodes", g, "nodes");
    gv_page_kv(p, "majority stack digest", gv_jstr(g, "stack_digest"));
    kv_num(p, "nodes on it", g, "stack_nodes");
    kv_num(p, "distinct stacks", g, "stack_distinct");
    gv_buf_add(p->b, "</table>\n");
    const json_t *odd = gv_jarr(g, "odd");
    if (!json_array_size(odd))
        gv_page_note(p, "no odd node in this group");
    size_t i;
    const json_t *o;
    json_array_foreach(odd, i, o)
        odd_node(p, o);
    split(p, g);
    votes(p, g);
    gv_page_end_section(p);
}

static void missing(struct gv_page *p, const json_t *doc)
{
    const json_t *m = gv_jarr(doc, "missing");
    if (!json_array_size(m))
        return;
    gv_page_section(p, "missing", "Missing ranks (no document)");
    gv_buf_add(p->b, "<p class=\"ranks\">");
    size_t i;
    const json_t *r;
    json_array_foreach(m, i, r) {
        gv_buf_add(p->b, i ? ", <span class=\"rank\">" : "<span class=\"rank\">");
        gv_html_json(p->b, r);
        gv_buf_add(p->b, "</span>");
    }
    gv_buf_add(p->b, "</p>\n");
    double all;
    if (gv_jnum(gv_jobj(doc, "summary"), "missing", &all) && all > (double)json_array_size(m))
        gv_page_note(p, "the document lists %zu of the %.0f missing ranks", json_array_size(m), all);
    gv_page_end_section(p);
}

int gv_render_fleet(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    verdict(p, doc);
    const json_t *groups = gv_jarr(doc, "groups");
    if (!json_array_size(groups))
        gv_page_note(p, "no group: no node document was compared");
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g)
        group(p, g);
    missing(p, doc);
    return GV_OK;
}
