/* Comparisons (gpuvet.compare, also what `ab` prints): the summary, the
 * likely causes, per case the change, and per flagged case the error
 * distribution before and after. The two result files the document names
 * are read when they can be found (as named, or beside the comparison),
 * for their devices, stacks and ULP histograms; their saved outputs, when
 * both are there and match the recorded digests, are binned by the ULP
 * distance between before and after. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "num/fp.h"
#include "report/report.h"
#include "report/results_view.h"
#include "store/safetensors.h"

#define MAX_OUTPUTS ((size_t)16 << 30)

struct side {
    const char *label;  /* "before" / "after" */
    char path[GV_PATH_MAX];
    json_t *doc;        /* the result file, or NULL (note says why) */
    json_t *byid;       /* case id -> case (borrowed) */
    char note[1200];
    int st_tried, st_ok;
    char st_path[GV_PATH_MAX];
    struct gv_st_file st;
};

/* named as given, else beside base (named relative to it), else its base
 * name beside base. "" when none is a file. */
static void resolve(const char *base, const char *named, char *out, size_t n)
{
    out[0] = '\0';
    if (!named || !named[0])
        return;
    if (gv_is_file(named)) {
        snprintf(out, n, "%s", named);
        return;
    }
    char b[GV_PATH_MAX], nm[GV_PATH_MAX], cand[2 * GV_PATH_MAX + 2];
    snprintf(b, sizeof b, "%s", base);
    const char *dir = dirname(b);
    if (named[0] != '/') {
        snprintf(cand, sizeof cand, "%s/%s", dir, named);
        if (gv_is_file(cand)) {
            snprintf(out, n, "%s", cand);
            return;
        }
    }
    snprintf(nm, sizeof nm, "%s", named);
    snprintf(cand, sizeof cand, "%s/%s", dir, basename(nm));
    if (gv_is_file(cand))
        snprintf(out, n, "%s", cand);
}

static void side_load(struct side *s, const char *docpath, const char *named)
{
    struct gv_err err = {0};
    resolve(docpath, named, s->path, sizeof s->path);
    if (!s->path[0]) {
        snprintf(s->note, sizeof s->note, "the %s result file %.900s was not found (as named, or beside %.200s)",
                 s->label, named ? named : "(not named)", docpath);
        return;
    }
    if (gv_json_read_file(s->path, GV_REPORT_MAX_JSON, &s->doc, &err) ||
        gv_json_check_schema(s->doc, "gpuvet.results", 1, s->path, &err)) {
        snprintf(s->note, sizeof s->note, "the %s result file could not be used: %.1000s", s->label, err.msg);
        json_decref(s->doc);
        s->doc = NULL;
        return;
    }
    s->byid = json_object();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(s->doc, "cases"), i, c) {
        const char *id = gv_jstr(c, "id");
        if (id)
            json_object_set(s->byid, id, c);
    }
}

static void side_free(struct side *s)
{
    if (s->st_ok)
        gv_safetensors_free(&s->st);
    json_decref(s->byid);
    json_decref(s->doc);
}

static int side_outputs(struct side *s)
{
    if (s->st_tried)
        return s->st_ok;
    s->st_tried = 1;
    if (!s->doc)
        return 0;
    resolve(s->path, gv_jpstr(s->doc, "outputs.file"), s->st_path, sizeof s->st_path);
    if (!s->st_path[0]) {
        snprintf(s->note, sizeof s->note, "the %s run's saved outputs %.900s were not found", s->label,
                 gv_jpstr(s->doc, "outputs.file") ? gv_jpstr(s->doc, "outputs.file")
                                                  : "(not saved: check --save-outputs)");
        return 0;
    }
    struct gv_err err = {0};
    if (gv_safetensors_read(s->st_path, MAX_OUTPUTS, &s->st, &err)) {
        snprintf(s->note, sizeof s->note, "the %s run's saved outputs could not be read: %.1000s", s->label,
                 err.msg);
        return 0;
    }
    s->st_ok = 1;
    return 1;
}

/* The saved output of a case, checked against its recorded digest. */
static const struct gv_st_tensor *side_tensor(struct side *s, const json_t *c, char *why, size_t n)
{
    if (!side_outputs(s)) {
        snprintf(why, n, "%s", s->note);
        return NULL;
    }
    const char *name = gv_jstr(c, "output_tensor") ? gv_jstr(c, "output_tensor") : gv_jstr(c, "id");
    const struct gv_st_tensor *t = name ? gv_safetensors_find(&s->st, name) : NULL;
    if (!t) {
        snprintf(why, n, "the %s outputs have no tensor for this case", s->label);
        return NULL;
    }
    char hex[65];
    gv_sha256_buf_hex(t->data, t->nbytes, hex);
    const char *want = gv_jstr(c, "output_digest");
    if (!want || strcmp(hex, want)) {
        snprintf(why, n, "the %s outputs (%.900s) do not belong to this run: the tensor's digest differs from "
                 "the result file's", s->label, s->st_path);
        return NULL;
    }
    return t;
}

/* ULP distances straight from the stored bits for the IEEE-like formats
 * (the same as gv_fp_ulp_distance of the decoded values: sign-magnitude
 * order, +0 == -0, NaN in the last bin), much faster than decoding. 0 when
 * the format is not one of them. */
static int bits_hist(const struct gv_st_tensor *ta, const struct gv_st_tensor *tb, size_t count,
                     uint64_t bins[GV_ULP_NBINS])
{
    int ebits, fbits;
    switch (ta->dtype) {
    case GV_F64: ebits = 11, fbits = 52; break;
    case GV_F32: ebits = 8, fbits = 23; break;
    case GV_F16: ebits = 5, fbits = 10; break;
    case GV_BF16: ebits = 8, fbits = 7; break;
    default: return 0;
    }
    size_t w = gv_dtype_size(ta->dtype);
    if (w * 8 != (size_t)(1 + ebits + fbits))
        return 0;
    const uint64_t sign = UINT64_C(1) << (ebits + fbits), mag = sign - 1;
    const uint64_t inf = ((UINT64_C(1) << ebits) - 1) << fbits;
    /* safetensors data is little-endian, like this host; one loop per width so
     * that the loads are plain ones */
#define BITS_LOOP(T)                                                                             \
    for (size_t i = 0; i < count; i++) {                                                         \
        T ra, rb;                                                                                \
        memcpy(&ra, (const unsigned char *)ta->data + i * sizeof(T), sizeof(T));                  \
        memcpy(&rb, (const unsigned char *)tb->data + i * sizeof(T), sizeof(T));                  \
        uint64_t x = ra, y = rb;                                                                 \
        if ((x & mag) > inf || (y & mag) > inf) {                                                \
            bins[GV_ULP_NBINS - 1]++;                                                            \
            continue;                                                                            \
        }                                                                                        \
        int64_t ox = (x & sign) ? -(int64_t)(x & mag) : (int64_t)(x & mag);                      \
        int64_t oy = (y & sign) ? -(int64_t)(y & mag) : (int64_t)(y & mag);                      \
        bins[gv_ulp_bin(ox > oy ? (uint64_t)(ox - oy) : (uint64_t)(oy - ox))]++;                  \
    }
    if (w == 8)
        BITS_LOOP(uint64_t)
    else if (w == 4)
        BITS_LOOP(uint32_t)
    else
        BITS_LOOP(uint16_t)
#undef BITS_LOOP
    return 1;
}

/* Bins the ULP distance between the two saved outputs of a case. */
static int outputs_hist(struct side *a, struct side *b, const json_t *ca, const json_t *cb,
                        double h[GV_ULP_NBINS], char *why, size_t n)
{
    const struct gv_st_tensor *ta = side_tensor(a, ca, why, n), *tb = ta ? side_tensor(b, cb, why, n) : NULL;
    if (!ta || !tb)
        return 0;
    if (ta->dtype != tb->dtype || ta->nbytes != tb->nbytes) {
        snprintf(why, n, "the saved outputs differ in format or size");
        return 0;
    }
    size_t es = gv_dtype_size(ta->dtype), count = es ? ta->nbytes / es : 0;
    uint64_t bins[GV_ULP_NBINS] = {0};
    for (size_t i = 0; !bits_hist(ta, tb, count, bins) && i < count; i++) {
        double x = gv_fp_load(ta->data, ta->dtype, i), y = gv_fp_load(tb->data, tb->dtype, i);
        bins[gv_ulp_bin(gv_fp_ulp_distance(x, y, ta->dtype))]++;
    }
    for (int i = 0; i < GV_ULP_NBINS; i++)
        h[i] = (double)bins[i];
    return 1;
}

static const char *const change_keys[] = {"identical", "noise", "improved", "degraded", "newly_failing",
                                          "newly_passing", "still_failing", "not_run", "missing_before",
                                          "missing_after", "inputs_differ"};
#define NCHANGE (sizeof change_keys / sizeof change_keys[0])

static void summary_figure(struct gv_page *p, const json_t *summary)
{
    double v[NCHANGE];
    char desc[1024];
    size_t len = (size_t)snprintf(desc, sizeof desc, "cases per change:");
    int any = 0;
    for (size_t i = 0; i < NCHANGE; i++) {
        v[i] = NAN;
        if (gv_jnum(summary, change_keys[i], &v[i])) {
            char t[32];
            gv_fmt_num(t, sizeof t, v[i], 10);
            if (len < sizeof desc)
                len += (size_t)snprintf(desc + len, sizeof desc - len, " %s %s;", change_keys[i], t);
            any = 1;
        }
    }
    if (!any)
        return;
    struct gv_series s = {"cases", v};
    gv_svg_bars(p, "Cases by change", desc, change_keys, NCHANGE, &s, 1, "cases");
}

/* "ids (n)" of a cause or group: its cases_text (and count), else the old
 * touched_cases list. */
static void ids_label(struct gv_page *p, const json_t *x)
{
    const char *t = gv_jstr(x, "cases_text");
    size_t n = json_array_size(gv_jarr(x, "cases"));
    gv_buf_add(p->b, "<code>");
    gv_html_esc(p->b, t && t[0] ? t : gv_jstr(x, "touched_cases") ? gv_jstr(x, "touched_cases") : "");
    gv_buf_add(p->b, "</code>");
    if (t && t[0] && n > 1)
        gv_buf_printf(p->b, " (%zu)", n);
}

/* "<code>before</code> → <code>after</code>" of an entry of a route group's impls. */
static void impl_pair(struct gv_page *p, const json_t *x)
{
    gv_buf_add(p->b, "<code>");
    gv_html_esc(p->b, gv_jstr(x, "before"));
    gv_buf_add(p->b, "</code> → <code>");
    gv_html_esc(p->b, gv_jstr(x, "after"));
    gv_buf_add(p->b, "</code>");
}

/* A route group's cases with their kernels before and after, folded. */
static void route_impls(struct gv_page *p, const json_t *c)
{
    const json_t *impls = gv_jarr(c, "impls");
    if (!json_array_size(impls))
        return;
    gv_buf_printf(p->b, "<details><summary>the kernels of each case (%zu)</summary><ul>",
                  json_array_size(impls));
    size_t i;
    const json_t *x;
    json_array_foreach(impls, i, x) {
        gv_buf_add(p->b, "<li><code>");
        gv_html_esc(p->b, gv_jstr(x, "case"));
        gv_buf_add(p->b, "</code>: ");
        impl_pair(p, x);
        gv_buf_add(p->b, "</li>");
    }
    gv_buf_add(p->b, "</ul></details>");
}

static void causes_table(struct gv_page *p, const json_t *causes)
{
    gv_page_section(p, "causes", "Likely causes");
    if (!json_array_size(causes)) {
        gv_page_note(p, "the two runs' snapshots and devices show no difference that could explain a change");
        gv_page_end_section(p);
        return;
    }
    gv_page_note(p, "most likely first: a cause every degraded case ran through, then one some "
                    "ran through, then one with a known numerics effect; route changes grouped "
                    "by the kind of kernel before and after");
    static const char *const heads[] = {"kind", "what", "before", "after", "note",
                                        "#degraded cases it touches"};
    gv_page_table(p, NULL, heads, 6);
    size_t i;
    const json_t *c;
    json_array_foreach(causes, i, c) {
        const json_t *mech = gv_jobj(c, "mechanism");
        gv_buf_add(p->b, "<tr>");
        gv_html_td_str(p->b, gv_jstr(c, "kind"), NULL);
        gv_buf_add(p->b, "<td><code>");
        gv_html_esc(p->b, gv_jstr(c, "name"));
        gv_buf_add(p->b, "</code></td>");
        gv_html_td_str(p->b, gv_jstr(c, "before"), NULL);
        gv_html_td_str(p->b, gv_jstr(c, "after"), NULL);
        gv_buf_add(p->b, "<td>");
        gv_html_esc(p->b, gv_jstr(c, "note"));
        if (mech && gv_jstr(mech, "name")) {
            gv_buf_add(p->b, "through <code>");
            gv_html_esc(p->b, gv_jstr(mech, "name"));
            gv_buf_add(p->b, "</code>: ");
            gv_html_esc(p->b, gv_jstr(mech, "before") ? gv_jstr(mech, "before") : "(unset)");
            gv_buf_add(p->b, " → ");
            gv_html_esc(p->b, gv_jstr(mech, "after") ? gv_jstr(mech, "after") : "(unset)");
        }
        if ((gv_jstr(c, "cases_text") && gv_jstr(c, "cases_text")[0]) ||
            (gv_jstr(c, "touched_cases") && gv_jstr(c, "touched_cases")[0])) {
            gv_buf_add(p->b, "<br>touches: ");
            ids_label(p, c);
        }
        route_impls(p, c);
        gv_buf_add(p->b, "</td>");
        gv_html_td_num(p->b, c, "touches", 6);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

/* What the degraded cases' errors look like: one row per group of cases with
 * the same signature and causes (signature_groups), or per case in a document
 * written before groups were. */
static void signatures_table(struct gv_page *p, const json_t *doc)
{
    const json_t *groups = json_object_get(doc, "signature_groups"), *sig = gv_jarr(doc, "signatures");
    size_t i, k, rows = 0;
    const json_t *x, *s;
    json_array_foreach(groups, i, x)
        rows += json_array_size(gv_jarr(x, "signatures"));
    if (!json_is_array(groups))
        rows = json_array_size(sig);
    if (!rows)
        return;
    gv_page_section(p, "signatures", "What the errors look like");
    static const char *const heads[] = {"cases", "signature", "what it means", "source"};
    gv_page_table(p, NULL, heads, 4);
    json_array_foreach(groups, i, x)
        json_array_foreach(gv_jarr(x, "signatures"), k, s) {
            gv_buf_add(p->b, "<tr><td>");
            ids_label(p, x);
            gv_buf_add(p->b, "</td>");
            gv_html_td_str(p->b, gv_jstr(s, "signature"), NULL);
            gv_html_td_str(p->b, gv_jstr(s, "text"), NULL);
            gv_html_td_str(p->b, gv_jstr(s, "source"), NULL);
            gv_buf_add(p->b, "</tr>\n");
        }
    if (!json_is_array(groups))
        json_array_foreach(sig, i, x) {
            gv_buf_add(p->b, "<tr><td><code>");
            gv_html_esc(p->b, gv_jstr(x, "case"));
            gv_buf_add(p->b, "</code></td>");
            gv_html_td_str(p->b, gv_jstr(x, "signature"), NULL);
            gv_html_td_str(p->b, gv_jstr(x, "text"), NULL);
            gv_html_td_str(p->b, gv_jstr(x, "source"), NULL);
            gv_buf_add(p->b, "</tr>\n");
        }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

/* What each degraded case's error looks like, and the fingerprint properties that
 * changed (compare's explanation, as the document holds it). */
static void explanation(struct gv_page *p, const json_t *doc)
{
    const json_t *fc = gv_jarr(doc, "fingerprint_changes");
    size_t i;
    const json_t *x;
    const char *route = gv_jstr(doc, "route"), *fpnote = gv_jstr(doc, "fingerprint_note");
    if (route && route[0])
        gv_page_note(p, "%s", route);
    signatures_table(p, doc);
    if (json_array_size(fc) || (fpnote && fpnote[0])) {
        gv_page_section(p, "fingerprint", "What changed in the fingerprint (check --probe)");
        if (fpnote && fpnote[0])
            gv_page_note(p, "%s", fpnote);
        gv_buf_add(p->b, "<ul>\n");
        json_array_foreach(fc, i, x) {
            gv_buf_add(p->b, "<li>");
            const char *t = json_is_string(x) ? json_string_value(x) : gv_jstr(x, "text");
            gv_html_esc(p->b, t ? t : "");
            gv_buf_add(p->b, "</li>\n");
        }
        gv_buf_add(p->b, "</ul>\n");
        gv_page_end_section(p);
    }
}

static void case_row(struct gv_page *p, const json_t *c)
{
    const char *ch = gv_jstr(c, "change");
    const json_t *b = gv_jobj(c, "before"), *a = gv_jobj(c, "after"), *el = gv_jobj(c, "elementwise");
    gv_buf_printf(p->b, "<tr class=\"%s\" data-case=\"", gv_page_word_class(ch));
    gv_html_esc(p->b, gv_jstr(c, "id"));
    gv_buf_add(p->b, "\"><td><code>");
    gv_html_esc(p->b, gv_jstr(c, "id"));
    gv_buf_add(p->b, "</code></td><td>");
    gv_page_verdict(p, ch);
    gv_buf_add(p->b, "</td><td>");
    gv_page_verdict(p, gv_jstr(b, "verdict"));
    gv_buf_add(p->b, "</td><td>");
    gv_page_verdict(p, gv_jstr(a, "verdict"));
    gv_buf_add(p->b, "</td>");
    gv_html_td_num(p->b, b, "effective_bits", 4);
    gv_html_td_num(p->b, a, "effective_bits", 4);
    gv_html_td_num(p->b, c, "delta_effective_bits", 3);
    gv_html_td_num(p->b, b, "err_over_bound", 3);
    gv_html_td_num(p->b, a, "err_over_bound", 3);
    gv_html_td_num(p->b, el, "differing", 10);
    gv_html_td_num(p->b, el, "max_ulp", 6);
    gv_buf_add(p->b, "</tr>\n");
}

static void kv_num(struct gv_page *p, const char *key, const json_t *o, const char *field)
{
    gv_buf_add(p->b, "<tr><th scope=\"row\">");
    gv_html_esc(p->b, key);
    gv_buf_add(p->b, "</th>");
    gv_html_td_num(p->b, o, field, 6);
    gv_buf_add(p->b, "</tr>");
}

/* Whether a route group names case id among its "cases". */
static int names_case(const json_t *k, const char *id)
{
    const json_t *cases = json_object_get(k, "cases");
    size_t i;
    const json_t *x;
    json_array_foreach(cases, i, x)
        if (json_is_string(x) && !strcmp(json_string_value(x), id))
            return 1;
    return 0;
}

/* A route group's entry for case id in "impls", or NULL. */
static const json_t *case_impl(const json_t *k, const char *id)
{
    size_t i;
    const json_t *x;
    json_array_foreach(gv_jarr(k, "impls"), i, x)
        if (gv_jstr(x, "case") && !strcmp(gv_jstr(x, "case"), id))
            return x;
    return NULL;
}

/* One flagged case: its numbers, the histograms, the causes that name it. */
static void flagged_case(struct gv_page *p, const json_t *c, struct side *sa, struct side *sb,
                         const json_t *causes)
{
    const char *id = gv_jstr(c, "id") ? gv_jstr(c, "id") : "?";
    gv_buf_add(p->b, "<article class=\"flagged\" data-case=\"");
    gv_html_esc(p->b, id);
    gv_buf_add(p->b, "\"><h4><code>");
    gv_html_esc(p->b, id);
    gv_buf_add(p->b, "</code> ");
    gv_page_verdict(p, gv_jstr(c, "change"));
    gv_buf_add(p->b, "</h4>\n<table class=\"kv\"><tr><th></th><th scope=\"col\">before</th><th scope=\"col\">after"
                     "</th></tr>");
    static const char *const rows[][2] = {{"effective bits", "effective_bits"},
                                          {"error / bound", "err_over_bound"},
                                          {"mean signed error", "mean_signed_error"}};
    for (size_t i = 0; i < 3; i++) {
        gv_buf_add(p->b, "<tr><th scope=\"row\">");
        gv_html_esc(p->b, rows[i][0]);
        gv_buf_add(p->b, "</th>");
        gv_html_td_num(p->b, gv_jobj(c, "before"), rows[i][1], 6);
        gv_html_td_num(p->b, gv_jobj(c, "after"), rows[i][1], 6);
        gv_buf_add(p->b, "</tr>");
    }
    gv_buf_add(p->b, "</table><table class=\"kv\">");
    kv_num(p, "effective bits lost (−) or won", c, "delta_effective_bits");
    kv_num(p, "elements", gv_jobj(c, "elementwise"), "count");
    kv_num(p, "elements whose bits differ", gv_jobj(c, "elementwise"), "differing");
    kv_num(p, "largest difference (ULPs of the output format)", gv_jobj(c, "elementwise"), "max_ulp");
    gv_buf_add(p->b, "</table>\n");

    const json_t *ca = sa->byid ? json_object_get(sa->byid, id) : NULL;
    const json_t *cb = sb->byid ? json_object_get(sb->byid, id) : NULL;
    gv_buf_add(p->b, "<div class=\"figs\">");
    double hb[GV_ULP_NBINS], ha[GV_ULP_NBINS];
    int okb = ca && gv_ulp_hist(gv_jobj(ca, "metrics"), hb), oka = cb && gv_ulp_hist(gv_jobj(cb, "metrics"), ha);
    if (okb || oka) {
        char title[700], desc[2400], d1[1100], d2[1100];
        if (!okb)
            gv_ulp_hist(NULL, hb);
        if (!oka)
            gv_ulp_hist(NULL, ha);
        snprintf(title, sizeof title, "%.500s: error against the fp64 reference before and after, in ULPs", id);
        gv_hist_desc(d1, sizeof d1, "before", hb);
        gv_hist_desc(d2, sizeof d2, "after", ha);
        snprintf(desc, sizeof desc, "elements per ULP range; %s. %s", d1, d2);
        struct gv_series s[2] = {{"before", hb}, {"after", ha}};
        gv_svg_bars(p, title, desc, gv_ulp_bins, GV_ULP_NBINS, s, 2, "elements");
    } else {
        gv_page_note(p, "no error distribution: %s", !sa->doc ? sa->note : !sb->doc ? sb->note
                                                                              : "the result files hold none");
    }
    if (ca && cb) {
        double h[GV_ULP_NBINS];
        char why[1400] = "";
        if (outputs_hist(sa, sb, ca, cb, h, why, sizeof why)) {
            char title[700], desc[1200];
            snprintf(title, sizeof title, "%.500s: saved outputs, after against before, in ULPs", id);
            gv_hist_desc(desc, sizeof desc, "elements per ULP distance between the two saved outputs", h);
            struct gv_series s = {"elements", h};
            gv_svg_bars(p, title, desc, gv_ulp_bins, GV_ULP_NBINS, &s, 1, "elements");
        } else {
            gv_page_note(p, "no histogram of the saved outputs: %s", why);
        }
    }
    gv_buf_add(p->b, "</div>");
    size_t i, n = 0;
    const json_t *k;
    json_array_foreach(causes, i, k) {
        const char *name = gv_jstr(k, "name"), *kind = gv_jstr(k, "kind");
        int route = kind && !strcmp(kind, "route");
        if (route && (json_object_get(k, "from_class") ? !names_case(k, id) : !name || strcmp(name, id)))
            continue;
        if (!n++)
            gv_buf_add(p->b, "<p>Likely causes:</p><ul class=\"causes\">");
        gv_buf_add(p->b, "<li>");
        const json_t *mine = case_impl(k, id);
        gv_html_esc(p->b, route ? "the route: " : kind);
        if (mine) { /* a route group: this case's own kernels */
            gv_html_esc(p->b, gv_jstr(k, "name"));
            gv_buf_add(p->b, " (");
            impl_pair(p, mine);
            gv_buf_add(p->b, ")</li>");
            continue;
        }
        if (!route) {
            gv_buf_add(p->b, " <code>");
            gv_html_esc(p->b, name);
            gv_buf_add(p->b, "</code>: ");
        }
        gv_html_esc(p->b, gv_jstr(k, "before") ? gv_jstr(k, "before") : "(none)");
        gv_buf_add(p->b, " → ");
        gv_html_esc(p->b, gv_jstr(k, "after") ? gv_jstr(k, "after") : "(none)");
        if (gv_jstr(k, "note")) {
            gv_buf_add(p->b, " <span class=\"note\">");
            gv_html_esc(p->b, gv_jstr(k, "note"));
            gv_buf_add(p->b, "</span>");
        }
        gv_buf_add(p->b, "</li>");
    }
    if (n)
        gv_buf_add(p->b, "</ul>");
    gv_buf_add(p->b, "</article>\n");
}

int gv_render_compare(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    struct side sa = {.label = "before"}, sb = {.label = "after"};
    side_load(&sa, p->path, gv_jstr(doc, "before"));
    side_load(&sb, p->path, gv_jstr(doc, "after"));
    /* the verdict opens the page (report.c, verdict.c) */
    gv_buf_add(p->b, "<table class=\"kv\">");
    gv_page_kv(p, "before", gv_jstr(doc, "before"));
    gv_page_kv(p, "after", gv_jstr(doc, "after"));
    gv_buf_add(p->b, "</table>\n");
    if (!sa.doc)
        gv_page_note(p, "%s", sa.note);
    if (!sb.doc)
        gv_page_note(p, "%s", sb.note);
    const json_t *summary = gv_jobj(doc, "summary");
    gv_summary_list(p, summary, change_keys, NCHANGE);
    summary_figure(p, summary);
    gv_buf_add(p->b, "<div class=\"pair\">");
    if (sa.doc)
        gv_render_stack(p, "Stack at a glance, before", gv_jobj(sa.doc, "snapshot"));
    if (sb.doc)
        gv_render_stack(p, "Stack at a glance, after", gv_jobj(sb.doc, "snapshot"));
    gv_buf_add(p->b, "</div>\n");
    const json_t *causes = gv_jarr(doc, "causes");
    causes_table(p, causes);
    explanation(p, doc);

    const json_t *cases = gv_jarr(doc, "cases");
    size_t i, nflag = 0;
    const json_t *c;
    json_array_foreach(cases, i, c) {
        if (!json_is_true(json_object_get(c, "flagged")))
            continue;
        if (!nflag++)
            gv_page_section(p, "degraded", "Degraded and newly failing cases");
        flagged_case(p, c, &sa, &sb, causes);
    }
    if (nflag)
        gv_page_end_section(p);

    gv_page_section(p, "cases", "Cases");
    static const char *const heads[] = {"case", "change", "before", "after", "#bits before", "#bits after",
                                        "#Δ bits", "#error/bound before", "#error/bound after",
                                        "#elements differing", "#max ULP"};
    gv_page_table(p, "Every case in the comparison", heads, 11);
    json_array_foreach(cases, i, c)
        case_row(p, c);
    gv_page_table_end(p);
    gv_page_end_section(p);

    gv_buf_add(p->b, "<div class=\"pair\">");
    if (sa.doc)
        gv_render_device(p, "Device before", gv_jobj(gv_jobj(sa.doc, "device"), "description"));
    if (sb.doc)
        gv_render_device(p, "Device after", gv_jobj(gv_jobj(sb.doc, "device"), "description"));
    gv_buf_add(p->b, "</div>\n");
    side_free(&sa);
    side_free(&sb);
    return GV_OK;
}
