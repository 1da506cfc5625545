/* The fleet over time (gpuvet.fleet-history, `gpuvet history fleet --json`,
 * docs/history.md): the nodes by group, the odd nodes of each recorded
 * comparison, and a node × comparison grid with each node's class per cell. */
#include <stdio.h>
#include <string.h>

#include "report/page.h"
#include "report/verdict.h"

#define MAX_ROUNDS 60  /* grid columns: the latest comparisons */
#define MAX_NODES 2000 /* grid rows */

static const char *or_dash(const char *s)
{
    return s ? s : "—";
}

/* The latest run of a node (its runs are oldest first). */
static const json_t *latest(const json_t *node)
{
    const json_t *runs = gv_jarr(node, "runs");
    size_t n = json_array_size(runs);
    return n ? json_array_get(runs, n - 1) : NULL;
}

/* Two latest runs in the same group: GPU model, driver and stack digest alike. */
static int same_group(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"gpu_model", "driver", "stack_digest"};
    for (size_t k = 0; k < 3; k++)
        if (!json_equal(json_object_get(a, keys[k]), json_object_get(b, keys[k])) &&
            (json_object_get(a, keys[k]) || json_object_get(b, keys[k])))
            return 0;
    return 1;
}

/* Nodes by group: GPU model, driver and stack digest of each node's latest run. */
static void groups(struct gv_page *p, const json_t *nodes)
{
    gv_page_section(p, "groups", "Nodes by group (each node's latest run)");
    static const char *const heads[] = {"GPU", "driver", "stack digest", "#nodes", "nodes"};
    gv_page_table(p, NULL, heads, 5);
    size_t n = json_array_size(nodes) < MAX_NODES ? json_array_size(nodes) : MAX_NODES, i, j;
    for (i = 0; i < n; i++) {
        const json_t *a = latest(json_array_get(nodes, i));
        int first = 1; /* a group's row is written by its first node */
        for (j = 0; j < i && first; j++)
            first = !same_group(a, latest(json_array_get(nodes, j)));
        if (!first)
            continue;
        size_t count = 0;
        for (j = i; j < n; j++)
            count += (size_t)same_group(a, latest(json_array_get(nodes, j)));
        gv_buf_add(p->b, "<tr>");
        gv_html_td_str(p->b, or_dash(gv_jstr(a, "gpu_model")), NULL);
        gv_html_td_str(p->b, or_dash(gv_jstr(a, "driver")), NULL);
        gv_html_td_str(p->b, or_dash(gv_jstr(a, "stack_digest")), "digest");
        gv_buf_printf(p->b, "<td class=\"num\" data-v=\"%zu\">%zu</td><td class=\"long\">", count,
                      count);
        for (j = i, count = 0; j < n; j++) {
            if (!same_group(a, latest(json_array_get(nodes, j))))
                continue;
            gv_buf_add(p->b, count++ ? ", " : "");
            gv_html_esc(p->b, or_dash(gv_jstr(json_array_get(nodes, j), "node")));
        }
        gv_buf_add(p->b, "</td></tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

/* Every odd node of every comparison shown, newest comparison first. */
static void odd_nodes(struct gv_page *p, const json_t *rounds)
{
    gv_page_section(p, "odd", "Odd nodes, newest comparison first");
    static const char *const heads[] = {"compared", "job", "node", "#rank", "class", "GPU", "stack digest"};
    size_t i, j, shown = 0;
    const json_t *r, *o;
    json_array_foreach(rounds, i, r) shown += json_array_size(gv_jarr(r, "odd"));
    if (!shown) {
        gv_page_note(p, "no recorded comparison named an odd node");
        gv_page_end_section(p);
        return;
    }
    gv_page_table(p, NULL, heads, 7);
    json_array_foreach(rounds, i, r) {
        json_array_foreach(gv_jarr(r, "odd"), j, o) {
            double gi = -1;
            gv_jnum(o, "group", &gi);
            const json_t *g = gi >= 0 ? json_array_get(gv_jarr(r, "groups"), (size_t)gi) : NULL;
            gv_buf_add(p->b, "<tr class=\"bad\">");
            gv_html_td_str(p->b, or_dash(gv_jstr(r, "time")), NULL);
            gv_html_td_str(p->b, or_dash(gv_jstr(r, "job")), NULL);
            gv_html_td_str(p->b, or_dash(gv_jstr(o, "node")), NULL);
            gv_html_td_num(p->b, o, "rank", 10);
            gv_html_td_str(p->b, gv_fleet_class_words(gv_jstr(o, "class")), "v-bad");
            gv_html_td_str(p->b, or_dash(gv_jstr(g, "gpu_model")), NULL);
            gv_html_td_str(p->b, or_dash(gv_jstr(g, "stack_digest")), "digest");
            gv_buf_add(p->b, "</tr>\n");
        }
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

/* The node's run in comparison run (its "round"), or NULL. */
static const json_t *run_in(const json_t *node, double round)
{
    size_t i;
    const json_t *e;
    json_array_foreach(gv_jarr(node, "runs"), i, e) {
        double r;
        if (gv_jnum(e, "round", &r) && r == round)
            return e;
    }
    return NULL;
}

/* Nodes × comparisons, oldest comparison first: each cell the node's class
 * there ("ok" when it was not odd, "—" when it has no run in it). */
static void grid(struct gv_page *p, const json_t *rounds, const json_t *nodes)
{
    gv_page_section(p, "grid", "Each node in each comparison, oldest first");
    size_t nr = json_array_size(rounds), cols = nr < MAX_ROUNDS ? nr : MAX_ROUNDS;
    if (!cols || !json_array_size(nodes)) {
        gv_page_note(p, "no recorded comparison or no recorded node run");
        gv_page_end_section(p);
        return;
    }
    gv_buf_add(p->b, "<table class=\"grid\"><thead><tr><th>node</th>");
    for (size_t c = cols; c-- > 0;) { /* rounds are newest first */
        const json_t *r = json_array_get(rounds, c);
        gv_buf_add(p->b, "<th title=\"");
        gv_html_esc(p->b, or_dash(gv_jstr(r, "time")));
        gv_buf_add(p->b, "\">job ");
        gv_html_esc(p->b, or_dash(gv_jstr(r, "job")));
        gv_buf_add(p->b, "</th>");
    }
    gv_buf_add(p->b, "</tr></thead><tbody>\n");
    size_t i;
    const json_t *n;
    json_array_foreach(nodes, i, n) {
        if (i >= MAX_NODES)
            break;
        gv_buf_add(p->b, "<tr><th>");
        gv_html_esc(p->b, or_dash(gv_jstr(n, "node")));
        gv_buf_add(p->b, "</th>");
        for (size_t c = cols; c-- > 0;) {
            double round = -1;
            gv_jnum(json_array_get(rounds, c), "run", &round);
            const json_t *e = run_in(n, round);
            const char *cls = gv_jstr(e, "class");
            gv_buf_printf(p->b, "<td class=\"%s\" data-class=\"%s\">", !e ? "na" : cls ? "v-bad" : "v-good",
                          !e ? "none" : cls ? "odd" : "ok");
            gv_html_esc(p->b, !e ? "—" : cls ? gv_fleet_class_words(cls) : "ok");
            gv_buf_add(p->b, "</td>");
        }
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_buf_add(p->b, "</tbody></table>\n");
    if (nr > cols)
        gv_page_note(p, "the latest %zu of %zu comparisons", cols, nr);
    gv_page_end_section(p);
}

int gv_render_fleet_history(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    const json_t *f = gv_jobj(doc, "filters"), *rounds = gv_jarr(doc, "rounds"),
                 *nodes = gv_jarr(doc, "nodes");
    char db[2048];
    gv_page_db_name(gv_jstr(doc, "db"), db, sizeof db);
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "history", gv_jstr(doc, "db") ? db : NULL);
    gv_page_kv(p, "made", gv_jstr(doc, "generated"));
    gv_page_kv(p, "since", gv_jstr(f, "since") ? gv_jstr(f, "since") : "the beginning");
    gv_page_kv(p, "node filter", gv_jstr(f, "node") ? gv_jstr(f, "node") : "any");
    gv_buf_add(p->b, "</table>\n");
    groups(p, nodes);
    odd_nodes(p, rounds);
    grid(p, rounds, nodes);
    return GV_OK;
}
