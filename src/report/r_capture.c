/* Model captures (gpuvet.capture, the index of a .gvcap), their comparison
 * (gpuvet.capture-compare) and bisection (gpuvet.bisect): the per-op error
 * along the model with the culprits and call changes marked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"
#include "report/results_view.h"

#define MAX_POINTS 200000

/* A module path as shown: the model's own forward has the empty path. */
static const char *module_name(const json_t *o)
{
    const char *m = gv_jstr(o, "module");
    return m && !*m ? "the model itself" : m;
}

static void op_ref(char *out, size_t n, const char *what, const json_t *o, const char *opkey)
{
    double i = NAN;
    gv_jnum(o, opkey, &i);
    snprintf(out, n, "%s: op %.0f %.200s (%.200s)", what, i, gv_jstr(o, "name") ? gv_jstr(o, "name") : "?",
             module_name(o) ? module_name(o) : "no module");
}

static void kv_numrow(struct gv_page *p, const char *key, const json_t *o, const char *field)
{
    gv_buf_add(p->b, "<tr><th scope=\"row\">");
    gv_page_label(p, key);
    gv_buf_add(p->b, "</th>");
    gv_html_td_num(p->b, o, field, 6);
    gv_buf_add(p->b, "</tr>\n");
}

/* The verdict on the model's outputs and how far apart they are, from o's
 * outputs_status and outputs_units (a comparison's summary, a bisection). */
static void outputs_verdict_rows(struct gv_page *p, const char *key, const json_t *o)
{
    gv_buf_add(p->b, "<tr><th scope=\"row\">");
    gv_html_esc(p->b, key);
    gv_buf_add(p->b, "</th><td>");
    gv_page_verdict(p, gv_jstr(o, "outputs_status"));
    gv_buf_add(p->b, "</td></tr>");
    kv_numrow(p, "model outputs apart (units of roundoff)", o, "outputs_units");
}

static void model_table(struct gv_page *p, const json_t *model)
{
    gv_buf_add(p->b, "<table class=\"kv model\">");
    gv_page_kv(p, "model", gv_jstr(model, "spec"));
    gv_page_kv(p, "model file sha256", gv_jstr(model, "file_sha256"));
    gv_page_kv(p, "parameters digest", gv_jstr(model, "parameters_digest"));
    gv_page_kv(p, "inputs digest", gv_jstr(model, "inputs_digest"));
    gv_buf_add(p->b, "</table>\n");
}

static void scalar_obj_rows(struct gv_page *p, const char *prefix, const json_t *o)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        if (json_is_object(v) || json_is_array(v))
            continue;
        char key[300];
        snprintf(key, sizeof key, "%s %s", prefix, k);
        if (json_is_number(v)) {
            kv_numrow(p, key, o, k);
        } else {
            gv_buf_add(p->b, "<tr><th scope=\"row\">");
            gv_page_label(p, key);
            gv_buf_add(p->b, "</th><td class=\"long\">");
            gv_html_json(p->b, v);
            gv_buf_add(p->b, "</td></tr>\n");
        }
    }
}

/* A shape as 2×5×16 ("scalar" for none). */
static void shape_cell(struct gv_page *p, const json_t *shape)
{
    gv_buf_add(p->b, "<td>");
    if (!json_is_array(shape)) {
        gv_buf_add(p->b, "</td>");
        return;
    }
    if (!json_array_size(shape))
        gv_buf_add(p->b, "scalar");
    size_t i;
    const json_t *d;
    json_array_foreach(shape, i, d) {
        gv_buf_printf(p->b, "%s%lld", i ? "×" : "", (long long)json_integer_value(d));
    }
    gv_buf_add(p->b, "</td>");
}

/* A tensor of the index by its id: ids are positions in the list where the
 * writer numbered them in order, else it is looked for. */
static const json_t *tensor_by_id(const json_t *tensors, json_int_t id)
{
    const json_t *t = id >= 0 ? json_array_get(tensors, (size_t)id) : NULL;
    if (t && json_integer_value(json_object_get(t, "id")) == id)
        return t;
    size_t i;
    json_array_foreach(tensors, i, t) {
        if (json_integer_value(json_object_get(t, "id")) == id)
            return t;
    }
    return NULL;
}

/* The first 16 digits of a digest, the whole one as the cell's title. */
static void digest_cell(struct gv_page *p, const char *sha)
{
    gv_buf_add(p->b, "<td>");
    if (sha) {
        gv_buf_add(p->b, "<span title=\"");
        gv_html_esc(p->b, sha);
        gv_buf_add(p->b, "\">");
        gv_html_escn(p->b, sha, strlen(sha) < 16 ? strlen(sha) : 16);
        gv_buf_add(p->b, "…</span>");
    }
    gv_buf_add(p->b, "</td>");
}

/* The model's outputs as the header lists them ({"$t", "name"}), with each
 * tensor's format from the index, and how the model was called. */
static void outputs_and_call(struct gv_page *p, const json_t *h, const json_t *tensors)
{
    const json_t *outs = gv_jarr(h, "outputs"), *call = gv_jobj(h, "call");
    if (!json_array_size(outs) && !call)
        return;
    gv_page_section(p, "outputs", "The model's outputs");
    if (call) {
        gv_buf_add(p->b, "<table class=\"kv call\"><tr><th scope=\"row\">called with</th><td>");
        gv_html_json(p->b, call);
        gv_buf_add(p->b, "</td></tr></table>\n");
    }
    static const char *const heads[] = {"output", "#tensor", "dtype", "shape", "sha256 (first 16 digits)"};
    gv_page_table(p, NULL, heads, 5);
    size_t i;
    const json_t *o;
    json_array_foreach(outs, i, o) {
        json_int_t id = json_integer_value(json_object_get(o, "$t"));
        const json_t *t = tensor_by_id(tensors, id);
        char pos[32];
        snprintf(pos, sizeof pos, "#%zu", i);
        gv_buf_add(p->b, "<tr>");
        gv_html_td_str(p->b, gv_jstr(o, "name") ? gv_jstr(o, "name") : pos, NULL);
        gv_html_td_num(p->b, o, "$t", 10);
        gv_html_td_str(p->b, gv_jstr(t, "dtype"), NULL);
        shape_cell(p, json_object_get(t, "shape"));
        digest_cell(p, gv_jstr(t, "sha256"));
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

/* ---------- capture ---------- */

int gv_render_capture(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    const json_t *h = gv_jobj(doc, "header"), *ops = gv_jarr(doc, "ops");
    model_table(p, gv_jobj(h, "model"));
    gv_page_section(p, "run", "The recorded run");
    gv_buf_add(p->b, "<table class=\"kv run\">");
    kv_numrow(p, "seed", h, "seed");
    kv_numrow(p, "ops", h, "ops");
    scalar_obj_rows(p, "timing", gv_jobj(h, "timing"));
    scalar_obj_rows(p, "memory", gv_jobj(h, "memory"));
    scalar_obj_rows(p, "CPU fallback", gv_jobj(h, "cpu_fallback"));
    scalar_obj_rows(p, "budget", gv_jobj(doc, "budget"));
    gv_buf_add(p->b, "</table>\n");
    gv_page_end_section(p);
    outputs_and_call(p, h, gv_jarr(doc, "tensors"));

    size_t n = json_array_size(ops) < MAX_POINTS ? json_array_size(ops) : MAX_POINTS;
    double *x = calloc(n ? n : 1, sizeof *x), *v = calloc(n ? n : 1, sizeof *v);
    if (x && v && n) {
        for (size_t i = 0; i < n; i++) {
            x[i] = (double)i;
            v[i] = NAN;
            if (gv_jnum(json_array_get(ops, i), "seconds", &v[i]))
                v[i] *= 1e3;
        }
        struct gv_series s = {"milliseconds", v};
        gv_svg_curve(p, "Time of each op along the model",
                     "the synchronised time of each recorded op in milliseconds, in the order the model ran "
                     "them; the table below lists them",
                     x, n, &s, 1, NULL, 0, "op", "milliseconds");
    }
    free(x);
    free(v);
    gv_page_section(p, "ops", "Ops");
    static const char *const heads[] = {"#op", "operator", "module", "devices", "#seconds", "draws random numbers",
                                        "not deterministic on CUDA"};
    gv_page_table(p, NULL, heads, 7);
    size_t i;
    const json_t *o;
    json_array_foreach(ops, i, o) {
        gv_buf_add(p->b, "<tr>");
        gv_html_td_num(p->b, o, "i", 10);
        gv_html_td_str(p->b, gv_jstr(o, "name"), NULL);
        gv_html_td_str(p->b, module_name(o), NULL);
        gv_buf_add(p->b, "<td>");
        gv_html_json(p->b, json_object_get(o, "devices"));
        gv_buf_add(p->b, "</td>");
        gv_html_td_num(p->b, o, "seconds", 3);
        const json_t *rng = json_object_get(o, "rng");
        gv_html_td_str(p->b, json_is_true(rng) || json_is_object(rng) ? "! yes" : "", NULL);
        gv_html_td_str(p->b, json_is_true(json_object_get(o, "nondeterministic")) ? "! yes" : "", NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
    gv_render_device(p, "Device", gv_jobj(h, "device"));
    gv_render_stack(p, "Stack at a glance", gv_jobj(h, "snapshot"));
    return GV_OK;
}

/* ---------- capture comparison ---------- */

static void outputs_cells(struct gv_page *p, const json_t *outs)
{
    gv_buf_add(p->b, "<td>");
    size_t i;
    const json_t *o;
    json_array_foreach(outs, i, o) {
        if (i)
            gv_buf_add(p->b, "<br>");
        gv_html_esc(p->b, gv_jstr(o, "dtype"));
        double d, c, u;
        char t[32];
        if (gv_jnum(o, "differing", &d)) {
            gv_fmt_num(t, sizeof t, d, 10);
            gv_buf_printf(p->b, " · %s", t);
            if (gv_jnum(o, "count", &c)) {
                gv_fmt_num(t, sizeof t, c, 10);
                gv_buf_printf(p->b, " of %s", t);
            }
            gv_buf_add(p->b, " differ");
        }
        if (gv_jnum(o, "max_ulp", &u)) {
            gv_fmt_num(t, sizeof t, u, 6);
            gv_buf_printf(p->b, " · max %s ULP", t);
        }
    }
    gv_buf_add(p->b, "</td>");
}

/* Each of the model's outputs against A's (a comparison's or a bisection's model run),
 * by name where the captures name them. */
static void outputs_table(struct gv_page *p, const json_t *outs)
{
    if (!json_array_size(outs))
        return;
    gv_page_section(p, "outputs", "The model's outputs");
    static const char *const heads[] = {"output", "status", "dtype", "shape", "#units apart", "#elements differing",
                                        "#of", "#max ULP"};
    gv_page_table(p, NULL, heads, 8);
    size_t i;
    const json_t *o;
    json_array_foreach(outs, i, o) {
        const char *st = gv_jstr(o, "status");
        char pos[32];
        snprintf(pos, sizeof pos, "#%zu", i);
        gv_buf_printf(p->b, "<tr class=\"%s\">", gv_page_word_class(st));
        gv_html_td_str(p->b, gv_jstr(o, "name") ? gv_jstr(o, "name") : pos, NULL);
        gv_buf_add(p->b, "<td>");
        gv_page_verdict(p, st);
        gv_buf_add(p->b, "</td>");
        gv_html_td_str(p->b, gv_jstr(o, "dtype"), NULL);
        shape_cell(p, json_object_get(o, "shape"));
        gv_html_td_num(p->b, o, "units", 4);
        gv_html_td_num(p->b, o, "differing", 10);
        gv_html_td_num(p->b, o, "count", 10);
        gv_html_td_num(p->b, o, "max_ulp", 10);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

int gv_render_capture_compare(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    const json_t *s = gv_jobj(doc, "summary"), *ops = gv_jarr(doc, "ops");
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "before", gv_jstr(doc, "before"));
    gv_page_kv(p, "after", gv_jstr(doc, "after"));
    kv_numrow(p, "ops before", s, "ops_before");
    kv_numrow(p, "ops after", s, "ops_after");
    kv_numrow(p, "aligned", s, "aligned");
    kv_numrow(p, "identical", s, "identical");
    kv_numrow(p, "beyond rounding", s, "beyond_noise");
    char t[600];
    const json_t *fd = gv_jobj(s, "first_difference"), *fb = gv_jobj(s, "first_beyond_noise");
    if (fd)
        op_ref(t, sizeof t, "first difference", fd, "op");
    gv_page_kv(p, "first op that differs", fd ? t + strlen("first difference: ") : "none");
    if (fb)
        op_ref(t, sizeof t, "first beyond rounding", fb, "op");
    gv_page_kv(p, "first op beyond rounding", fb ? t + strlen("first beyond rounding: ") : "none");
    outputs_verdict_rows(p, "model outputs", s);
    gv_buf_add(p->b, "</table>\n");
    outputs_table(p, gv_jarr(doc, "outputs"));

    size_t n = json_array_size(ops) < MAX_POINTS ? json_array_size(ops) : MAX_POINTS;
    double *x = calloc(n ? n : 1, sizeof *x), *v = calloc(n ? n : 1, sizeof *v);
    if (x && v && n) {
        for (size_t i = 0; i < n; i++) {
            const json_t *o = json_array_get(ops, i);
            x[i] = NAN;
            v[i] = NAN;
            gv_jnum(o, "a", &x[i]);
            gv_jnum(o, "units", &v[i]);
        }
        struct gv_mark m[2];
        size_t nm = 0;
        char l1[600], l2[600];
        if (fd) {
            op_ref(l1, sizeof l1, "first difference", fd, "op");
            m[nm].x = NAN;
            gv_jnum(fd, "op", &m[nm].x);
            m[nm].label = l1;
            m[nm++].kind = 1;
        }
        if (fb) {
            op_ref(l2, sizeof l2, "first beyond rounding", fb, "op");
            m[nm].x = NAN;
            gv_jnum(fb, "op", &m[nm].x);
            m[nm].label = l2;
            m[nm++].kind = 0;
        }
        struct gv_series sr = {"after against before", v};
        gv_svg_curve(p, "Difference of each op along the model, in units of roundoff",
                     "for each aligned op (by its index in the before capture) how far the after capture's "
                     "output is from the before capture's, in units of roundoff of its format; the first op "
                     "that differs and the first beyond rounding are marked; the table below lists every op",
                     x, n, &sr, 1, m, nm, "op (before)", "units of roundoff");
    }
    free(x);
    free(v);
    gv_page_section(p, "ops", "Ops");
    static const char *const heads[] = {"#op before", "#op after", "operator", "module", "status",
                                        "#units apart", "outputs"};
    gv_page_table(p, NULL, heads, 7);
    size_t i;
    const json_t *o;
    json_array_foreach(ops, i, o) {
        const char *st = gv_jstr(o, "status");
        gv_buf_printf(p->b, "<tr class=\"%s\">", gv_page_word_class(st));
        gv_html_td_num(p->b, o, "a", 10);
        gv_html_td_num(p->b, o, "b", 10);
        gv_html_td_str(p->b, gv_jstr(o, "name"), NULL);
        gv_html_td_str(p->b, module_name(o), NULL);
        gv_buf_add(p->b, "<td>");
        gv_page_verdict(p, st);
        gv_buf_add(p->b, "</td>");
        gv_html_td_num(p->b, o, "units", 4);
        outputs_cells(p, gv_jarr(o, "outputs"));
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
    static const char *const only[] = {"only_before", "only_after"};
    for (int k = 0; k < 2; k++) {
        const json_t *l = gv_jarr(doc, only[k]);
        if (!json_array_size(l))
            continue;
        gv_page_section(p, "only", k ? "Ops only the after capture has" : "Ops only the before capture has");
        gv_buf_add(p->b, "<ul>");
        json_array_foreach(l, i, o) {
            gv_buf_add(p->b, "<li>");
            gv_html_json(p->b, o);
            gv_buf_add(p->b, "</li>");
        }
        gv_buf_add(p->b, "</ul>");
        gv_page_end_section(p);
    }
    return GV_OK;
}

/* ---------- bisect ---------- */

static void culprits_table(struct gv_page *p, const json_t *cul)
{
    gv_page_section(p, "culprits", "Culprits: ops less accurate here on A's own inputs");
    if (!json_array_size(cul)) {
        gv_page_note(p, "no culprit: every op replayed on A's inputs computes as accurately as in A");
        gv_page_end_section(p);
        return;
    }
    static const char *const heads[] = {"#op", "operator", "module", "dtype", "#error in A (units)",
                                        "#error here (units)", "what ran it here"};
    gv_page_table(p, NULL, heads, 7);
    size_t i, k;
    const json_t *c, *o;
    json_array_foreach(cul, i, c) {
        json_array_foreach(gv_jarr(c, "outputs"), k, o) {
            gv_buf_add(p->b, "<tr class=\"bad culprit\">");
            gv_html_td_num(p->b, c, "op", 10);
            gv_html_td_str(p->b, gv_jstr(c, "name"), NULL);
            gv_html_td_str(p->b, module_name(c), NULL);
            gv_html_td_str(p->b, gv_jstr(o, "dtype"), NULL);
            gv_html_td_num(p->b, o, "error_a_units", 4);
            gv_html_td_num(p->b, o, "error_b_units", 4);
            gv_buf_add(p->b, "<td><code>");
            gv_html_esc(p->b, gv_jstr(c, "impl_b"));
            gv_buf_add(p->b, "</code></td></tr>\n");
        }
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

static void calls_table(struct gv_page *p, const json_t *calls)
{
    if (!json_array_size(calls))
        return;
    gv_page_section(p, "calls", "Call changes: the model's own run chose other ops or arguments");
    static const char *const heads[] = {"#op in A", "#op here", "operator", "module", "call in A", "call here"};
    gv_page_table(p, NULL, heads, 6);
    size_t i;
    const json_t *c;
    json_array_foreach(calls, i, c) {
        gv_buf_add(p->b, "<tr class=\"bad\">");
        gv_html_td_num(p->b, c, "op_a", 10);
        gv_html_td_num(p->b, c, "op_b", 10);
        gv_html_td_str(p->b, gv_jstr(c, "name"), NULL);
        gv_html_td_str(p->b, module_name(c), NULL);
        gv_buf_add(p->b, "<td><code>");
        gv_html_esc(p->b, gv_jstr(c, "call_a"));
        gv_buf_add(p->b, "</code></td><td><code>");
        gv_html_esc(p->b, gv_jstr(c, "call_b"));
        gv_buf_add(p->b, "</code></td></tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

/* The module strategy: every stretch of ops replayed as one chain. */
static void spans_table(struct gv_page *p, const json_t *spans)
{
    if (!json_array_size(spans))
        return;
    gv_page_section(p, "spans", "Modules replayed as one chain");
    static const char *const heads[] = {"module", "#first op", "#last op", "verdict", "why"};
    gv_page_table(p, NULL, heads, 5);
    size_t i;
    const json_t *sp;
    json_array_foreach(spans, i, sp) {
        const char *v = gv_jstr(sp, "verdict");
        gv_buf_printf(p->b, "<tr class=\"%s\">", gv_page_word_class(v));
        gv_html_td_str(p->b, module_name(sp), NULL);
        gv_html_td_num(p->b, sp, "first_op", 10);
        gv_html_td_num(p->b, sp, "last_op", 10);
        gv_buf_add(p->b, "<td>");
        gv_page_verdict(p, v);
        gv_buf_add(p->b, "</td>");
        gv_html_td_str(p->b, gv_jstr(sp, "why"), NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

static void bisect_curve(struct gv_page *p, const json_t *doc)
{
    const json_t *ops = gv_jarr(doc, "ops");
    size_t n = 0, i, k;
    const json_t *o, *out;
    json_array_foreach(ops, i, o)
        n += json_array_size(gv_jarr(o, "outputs")) ? json_array_size(gv_jarr(o, "outputs")) : 1;
    if (!n || n > MAX_POINTS)
        return;
    double *x = calloc(n, sizeof *x), *ea = calloc(n, sizeof *ea), *eb = calloc(n, sizeof *eb);
    double *ap = calloc(n, sizeof *ap);
    const json_t *cul = gv_jarr(doc, "culprits"), *calls = gv_jarr(doc, "call_changes");
    size_t nm = json_array_size(cul) + json_array_size(calls), j = 0;
    if (nm > 64)
        nm = 64;
    struct gv_mark *m = calloc(nm ? nm : 1, sizeof *m);
    char (*labels)[300] = calloc(nm ? nm : 1, sizeof *labels);
    if (!x || !ea || !eb || !ap || !m || !labels)
        goto out;
    json_array_foreach(ops, i, o) {
        double at = NAN;
        gv_jnum(o, "op", &at);
        const json_t *outs = gv_jarr(o, "outputs");
        if (!json_array_size(outs)) {
            x[j] = at, ea[j] = NAN, ap[j] = NAN, eb[j++] = NAN;
            continue;
        }
        json_array_foreach(outs, k, out) {
            x[j] = at;
            ea[j] = eb[j] = ap[j] = NAN;
            gv_jnum(out, "units_apart", &ap[j]);
            gv_jnum(out, "error_a_units", &ea[j]);
            gv_jnum(out, "error_b_units", &eb[j]);
            j++;
        }
    }
    size_t mi = 0;
    json_array_foreach(cul, i, o) {
        if (mi >= nm)
            break;
        op_ref(labels[mi], sizeof labels[mi], "✗ culprit", o, "op");
        m[mi].x = NAN;
        gv_jnum(o, "op", &m[mi].x);
        m[mi].label = labels[mi];
        m[mi++].kind = 0;
    }
    json_array_foreach(calls, i, o) {
        if (mi >= nm)
            break;
        op_ref(labels[mi], sizeof labels[mi], "⚑ call change", o, "op_a");
        m[mi].x = NAN;
        gv_jnum(o, "op_a", &m[mi].x);
        m[mi].label = labels[mi];
        m[mi++].kind = 1;
    }
    struct gv_series s[3] = {{"A's error", ea}, {"error here", eb}, {"A and here apart", ap}};
    gv_svg_curve(p, "Error of each op against float64, along the model",
                 "for each op (by its index in capture A) the error of its output against the float64 referee, "
                 "in units of roundoff of its format: A's recorded output (circles), the replay here on A's "
                 "inputs (squares), and how far the two are apart (triangles, every op); culprits are marked "
                 "with solid lines, call changes with dashed lines; the tables list every value",
                 x, j, s, 3, m, mi, "op", "error (units of roundoff)");
out:
    free(x);
    free(ea);
    free(eb);
    free(ap);
    free(m);
    free(labels);
}

int gv_render_bisect(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    static const char *const keys[] = {"identical", "equally_accurate", "less_accurate", "more_accurate",
                                       "different", "not_replayed", "replay_failed", "cleared_with_module"};
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "capture (A)", gv_jstr(doc, "capture"));
    if (json_object_get(doc, "strategy")) {
        gv_buf_add(p->b, "<tr><th scope=\"row\">strategy</th><td>");
        gv_html_json(p->b, json_object_get(doc, "strategy"));
        gv_buf_add(p->b, "</td></tr>");
    }
    if (json_object_get(doc, "replays"))
        kv_numrow(p, "replays", doc, "replays");
    gv_buf_add(p->b, "</table>\n");
    model_table(p, gv_jobj(doc, "model"));
    gv_summary_list(p, gv_jobj(doc, "summary"), keys, sizeof keys / sizeof keys[0]);
    bisect_curve(p, doc);
    culprits_table(p, gv_jarr(doc, "culprits"));
    spans_table(p, gv_jarr(doc, "spans"));
    calls_table(p, gv_jarr(doc, "call_changes"));
    const json_t *mr = gv_jobj(doc, "model_run");
    if (mr || gv_jstr(doc, "model_run_note")) {
        gv_page_section(p, "model-run", "The model's own run here, aligned with A");
        if (gv_jstr(doc, "model_run_note"))
            gv_page_note(p, "%s", gv_jstr(doc, "model_run_note"));
        gv_buf_add(p->b, "<table class=\"kv\">");
        scalar_obj_rows(p, "", mr);
        if (gv_jstr(doc, "outputs_status"))
            outputs_verdict_rows(p, "model outputs here against A", doc);
        gv_buf_add(p->b, "</table>\n");
        const json_t *inh = gv_jarr(doc, "inherited");
        if (json_array_size(inh)) {
            static const char *const heads[] = {"#op", "operator", "module", "#units apart"};
            gv_page_table(p, "Inherited: these differ in the model's run, but not on their own", heads, 4);
            size_t i;
            const json_t *o;
            json_array_foreach(inh, i, o) {
                gv_buf_add(p->b, "<tr>");
                gv_html_td_num(p->b, o, "op", 10);
                gv_html_td_str(p->b, gv_jstr(o, "name"), NULL);
                gv_html_td_str(p->b, module_name(o), NULL);
                gv_html_td_num(p->b, o, "units", 4);
                gv_buf_add(p->b, "</tr>\n");
            }
            gv_page_table_end(p);
        }
        gv_page_end_section(p);
    }
    outputs_table(p, gv_jarr(doc, "outputs"));
    gv_page_section(p, "ops", "Every op, replayed on A's inputs");
    static const char *const heads[] = {"#op", "operator", "module", "verdict", "dtype", "#elements differing",
                                        "#units apart", "#error in A (units)", "#error here (units)", "why"};
    gv_page_table(p, NULL, heads, 10);
    size_t i, k;
    const json_t *o, *out;
    json_array_foreach(gv_jarr(doc, "ops"), i, o) {
        const char *v = gv_jstr(o, "verdict");
        const json_t *outs = gv_jarr(o, "outputs");
        size_t no = json_array_size(outs) ? json_array_size(outs) : 1;
        for (k = 0; k < no; k++) {
            out = json_array_get(outs, k);
            gv_buf_printf(p->b, "<tr class=\"%s\">", gv_page_word_class(v));
            gv_html_td_num(p->b, o, "op", 10);
            gv_html_td_str(p->b, gv_jstr(o, "name"), NULL);
            gv_html_td_str(p->b, module_name(o), NULL);
            gv_buf_add(p->b, "<td>");
            gv_page_verdict(p, v);
            gv_buf_add(p->b, "</td>");
            gv_html_td_str(p->b, gv_jstr(out, "dtype"), NULL);
            gv_html_td_num(p->b, out, "differing", 10);
            gv_html_td_num(p->b, out, "units_apart", 4);
            gv_html_td_num(p->b, out, "error_a_units", 4);
            gv_html_td_num(p->b, out, "error_b_units", 4);
            const char *why = gv_jstr(out, "why") ? gv_jstr(out, "why") : gv_jstr(o, "why");
            if (!why && gv_jstr(o, "cleared_with")) {
                gv_buf_add(p->b, "<td>cleared with module <code>");
                gv_html_esc(p->b, gv_jstr(o, "cleared_with"));
                gv_buf_add(p->b, "</code></td>");
            } else {
                gv_html_td_str(p->b, why, NULL);
            }
            gv_buf_add(p->b, "</tr>\n");
        }
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
    gv_buf_add(p->b, "<div class=\"pair\">");
    gv_render_device(p, "Device of A", gv_jobj(doc, "device_a"));
    gv_render_device(p, "Device here (B)", gv_jobj(doc, "device_b"));
    gv_buf_add(p->b, "</div>\n");
    return GV_OK;
}
