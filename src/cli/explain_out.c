/* Explanations of a comparison of result files, shared by compare, ab and
 * verify: the ranked likely causes, each degraded case's error signature and
 * the fingerprint properties that changed (check --probe on both sides). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "check/compare.h"

/* The ids of a cause's cases (k) or of a group (g), named readably (all: every
 * one); "" when none. malloc'ed, or NULL when out of memory. */
static char *ids_text(const struct gv_compare *c, const struct gv_cmp_cause *k, int g, int all,
                      size_t *n)
{
    const char **ids = gv_cmp_ids(c, k, g, n);
    char *t = ids ? gv_cmp_ids_text(c, ids, *n, all) : strdup("");
    free(ids);
    return t;
}

/* "LD_LIBRARY_PATH=/x" or "LD_LIBRARY_PATH, now unset". */
static void mechanism_str(const struct gv_cmp_cause *x, char *out, size_t n)
{
    if (x->mech_after[0])
        snprintf(out, n, "%s=%s", x->mechanism, x->mech_after);
    else
        snprintf(out, n, "%s, now unset", x->mechanism);
}

/* Each case of a route group with the impls before and after (--all). */
static void route_impls(const struct gv_compare *c, const struct gv_cmp_cause *x)
{
    for (size_t j = 0; j < c->n; j++) {
        const struct gv_cmp_case *y = &c->cases[j];
        if (gv_cmp_cause_touches(x, y))
            printf("       %s: %s -> %s\n", y->id, y->a->impl, y->b->impl);
    }
}

static void cause_line(const struct gv_compare *c, const struct gv_cmp_cause *x, size_t i, int all)
{
    const char *name = !strcmp(x->kind, "library") ? gv_lib_display(x->name) : x->name;
    if (x->from)
        printf("  %zu. %-11s %s", i + 1, x->kind, name);
    else
        printf("  %zu. %-11s %s: %s -> %s", i + 1, x->kind, name,
               x->before[0] ? x->before : "(absent)", x->after[0] ? x->after : "(absent)");
    if (x->change[0])
        printf(" (%s)", x->change);
    if (x->mechanism[0]) {
        char m[600];
        mechanism_str(x, m, sizeof m);
        printf(" (through %s)", m);
    }
    if (x->note[0])
        printf("  %s[%s]%s", cli_yellow(), x->note, cli_reset());
    printf("\n");
    size_t n = 0;
    char *t = x->rank <= 1 ? ids_text(c, x, 0, all, &n) : NULL;
    if (x->rank == 0)
        printf("     touches every degraded case (%d): %s\n", x->touched, t ? t : x->touches);
    else if (x->rank == 1)
        printf("     touches %d degraded case%s: %s\n", x->touched, x->touched == 1 ? "" : "s",
               t ? t : x->touches);
    else if (x->rank == 2)
        printf("     %sknown numerics effect, but no degraded case it applies to%s\n", cli_dim(),
               cli_reset());
    free(t);
    if (all && x->from)
        route_impls(c, x);
}

/* One line per group of flagged cases with the same signatures and causes. */
static void signature_lines(const struct gv_compare *c, int all)
{
    int head = 0;
    for (int g = 1; g <= c->ngroups; g++) {
        const struct gv_cmp_case *x = NULL;
        for (size_t j = 0; j < c->n && !x; j++)
            if (c->cases[j].group == g)
                x = &c->cases[j];
        if (!x || !x->nsig)
            continue;
        if (!head++)
            printf("\n%sWhat the errors look like%s:\n", cli_bold(), cli_reset());
        size_t n = 0;
        char *t = ids_text(c, NULL, g, all, &n);
        char count[32] = "";
        if (n > 1)
            snprintf(count, sizeof count, " (%zu)", n);
        printf("  %s%s:%s", t ? t : x->id, count, x->nsig > 1 ? "\n" : "");
        for (int k = 0; k < x->nsig; k++)
            printf("%s%s %s[%s]%s\n", x->nsig > 1 ? "    " : " ", x->sig[k]->text, cli_dim(),
                   x->sig[k]->source, cli_reset());
        free(t);
    }
}

void cli_explain_print(const struct gv_compare *c, int all)
{
    if (c->ncauses) {
        printf("\n%sLikely causes%s (what differs between the two runs, by evidence):\n",
               cli_bold(), cli_reset());
        for (size_t i = 0; i < c->ncauses; i++)
            cause_line(c, &c->causes[i], i, all);
    } else if (c->count[GV_CH_IDENTICAL] != c->n) {
        printf("\nNo difference found in environment, GPU libraries, device or driver.\n");
    }
    if (c->routes_note[0])
        printf("\n%sRoute:%s %s\n", cli_bold(), cli_reset(), c->routes_note);
    signature_lines(c, all);
    if (c->nfp) {
        printf("\n%sFingerprint changes%s (check --probe on both sides):\n", cli_bold(),
               cli_reset());
        for (size_t i = 0; i < c->nfp; i++)
            printf("  %s\n", c->fp[i].text);
    } else if (c->fp_note[0]) {
        printf("\n%sfingerprints not compared: %s%s\n", cli_dim(), c->fp_note, cli_reset());
    }
}

/* "cases": every id, "cases_text": the same named readably. */
static void ids_json(json_t *e, const struct gv_compare *c, const struct gv_cmp_cause *k, int g)
{
    size_t n = 0;
    const char **ids = gv_cmp_ids(c, k, g, &n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_string(ids[i]));
    json_object_set_new(e, "cases", arr);
    char *t = ids ? gv_cmp_ids_text(c, ids, n, 0) : NULL;
    gv_json_set_str(e, "cases_text", t ? t : "");
    free(t);
    free(ids);
}

/* A route group's classes and each case's impls before and after. */
static void route_json(json_t *e, const struct gv_compare *c, const struct gv_cmp_cause *x)
{
    json_object_set_new(e, "from_class", json_string(x->from->id));
    json_object_set_new(e, "to_class", json_string(x->to->id));
    json_t *impls = json_array();
    for (size_t j = 0; j < c->n; j++) {
        const struct gv_cmp_case *y = &c->cases[j];
        if (gv_cmp_cause_touches(x, y))
            json_array_append_new(impls, json_pack("{s:s, s:s, s:s}", "case", y->id, "before",
                                                   y->a->impl, "after", y->b->impl));
    }
    json_object_set_new(e, "impls", impls);
}

static json_t *cause_json(const struct gv_compare *c, const struct gv_cmp_cause *x)
{
    json_t *e = json_object();
    json_object_set_new(e, "kind", json_string(x->kind));
    gv_json_set_str(e, "name", x->name);
    if (!strcmp(x->kind, "library"))
        gv_json_set_str(e, "display", gv_lib_display(x->name));
    json_object_set_new(e, "before", x->before[0] ? json_string(x->before) : json_null());
    json_object_set_new(e, "after", x->after[0] ? json_string(x->after) : json_null());
    if (x->change[0])
        gv_json_set_str(e, "change", x->change);
    if (x->note[0])
        gv_json_set_str(e, "note", x->note);
    json_object_set_new(e, "rank", json_integer(x->rank));
    json_object_set_new(e, "touches", json_integer(x->touched));
    gv_json_set_str(e, "touched_cases", x->touches);
    ids_json(e, c, x, 0);
    if (x->from)
        route_json(e, c, x);
    if (x->mechanism[0])
        json_object_set_new(e, "mechanism",
                            json_pack("{s:s, s:s, s:o, s:o}", "kind", "environment", "name",
                                      x->mechanism, "before",
                                      x->mech_before[0] ? json_string(x->mech_before) : json_null(),
                                      "after",
                                      x->mech_after[0] ? json_string(x->mech_after) : json_null()));
    return e;
}

/* The groups of flagged cases that share signatures and causes. */
static json_t *groups_json(const struct gv_compare *c)
{
    json_t *groups = json_array();
    for (int g = 1; g <= c->ngroups; g++) {
        const struct gv_cmp_case *x = NULL;
        for (size_t j = 0; j < c->n && !x; j++)
            if (c->cases[j].group == g)
                x = &c->cases[j];
        if (!x)
            continue;
        json_t *e = json_object();
        ids_json(e, c, NULL, g);
        json_object_set_new(e, "count", json_integer((json_int_t)json_array_size(json_object_get(e, "cases"))));
        json_t *sigs = json_array(), *causes = json_array();
        for (int k = 0; k < x->nsig; k++)
            json_array_append_new(sigs, json_pack("{s:s, s:s, s:s}", "signature", x->sig[k]->id,
                                                  "text", x->sig[k]->text, "source",
                                                  x->sig[k]->source));
        for (size_t i = 0; i < c->ncauses; i++)
            if (gv_cmp_cause_touches(&c->causes[i], x))
                json_array_append_new(causes, json_integer((json_int_t)i));
        json_object_set_new(e, "signatures", sigs);
        json_object_set_new(e, "causes", causes);
        json_array_append_new(groups, e);
    }
    return groups;
}

struct json_t *cli_explain_json(const struct gv_compare *c, const struct gv_results *ra,
                                const struct gv_results *rb)
{
    (void)ra;
    (void)rb;
    json_t *o = json_object();
    json_t *causes = json_array();
    for (size_t i = 0; i < c->ncauses; i++)
        json_array_append_new(causes, cause_json(c, &c->causes[i]));
    json_object_set_new(o, "causes", causes);
    json_object_set_new(o, "route", c->routes_note[0] ? json_string(c->routes_note) : json_null());
    json_t *sigs = json_array();
    for (size_t i = 0; i < c->n; i++)
        for (int k = 0; k < c->cases[i].nsig; k++)
            json_array_append_new(sigs, json_pack("{s:s, s:s, s:s, s:s}", "case", c->cases[i].id,
                                                  "signature", c->cases[i].sig[k]->id, "text",
                                                  c->cases[i].sig[k]->text, "source",
                                                  c->cases[i].sig[k]->source));
    json_object_set_new(o, "signatures", sigs);
    json_object_set_new(o, "signature_groups", groups_json(c));
    json_t *fp = json_array();
    for (size_t i = 0; i < c->nfp; i++) {
        const struct gv_fp_change *x = &c->fp[i];
        json_array_append_new(fp, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "route",
                                            x->route, "op", x->op, "precision", x->precision,
                                            "property", x->prop, "before", x->before, "after",
                                            x->after, "text", x->text));
    }
    json_object_set_new(o, "fingerprint_changes", fp);
    if (c->fp_note[0])
        gv_json_set_str(o, "fingerprint_note", c->fp_note);
    return o;
}

/* "a, b (2)" of a group or cause in JSON: its cases_text, else touched_cases. */
static void json_ids(const json_t *x, char *out, size_t n)
{
    const char *t = json_string_value(json_object_get(x, "cases_text"));
    size_t k = json_array_size(json_object_get(x, "cases"));
    if (t && *t)
        snprintf(out, n, k > 1 ? "%s (%zu)" : "%s", t, k);
    else
        snprintf(out, n, "%s", json_string_value(json_object_get(x, "touched_cases")) ?: "");
}

static void cause_print_json(const json_t *x, size_t i)
{
    const char *name = json_string_value(json_object_get(x, "display"));
    const char *b = json_string_value(json_object_get(x, "before"));
    const char *a = json_string_value(json_object_get(x, "after"));
    const char *ch = json_string_value(json_object_get(x, "change"));
    const char *mech = json_string_value(json_object_get(json_object_get(x, "mechanism"), "name"));
    name = name ? name : json_string_value(json_object_get(x, "name"));
    if (json_object_get(x, "from_class"))
        printf("    %zu. %s %s", i + 1, json_string_value(json_object_get(x, "kind")), name);
    else
        printf("    %zu. %s %s: %s -> %s", i + 1, json_string_value(json_object_get(x, "kind")),
               name, b ? b : "(absent)", a ? a : "(absent)");
    printf("%s%s%s%s%s\n", ch ? " (" : "", ch ? ch : "", ch ? ")" : "",
           mech ? " through " : "", mech ? mech : "");
    char t[1024];
    json_ids(x, t, sizeof t);
    if (t[0])
        printf("       touches: %s\n", t);
}

void cli_explain_print_json(const json_t *ex)
{
    size_t i;
    json_t *x;
    if (json_array_size(json_object_get(ex, "causes")))
        printf("  likely causes, by evidence:\n");
    json_array_foreach(json_object_get(ex, "causes"), i, x)
        cause_print_json(x, i);
    const char *route = json_string_value(json_object_get(ex, "route"));
    if (route)
        printf("  route: %s\n", route);
    const json_t *groups = json_object_get(ex, "signature_groups");
    json_array_foreach(groups, i, x) {
        char t[1024];
        size_t k;
        json_t *s;
        json_ids(x, t, sizeof t);
        json_array_foreach(json_object_get(x, "signatures"), k, s)
            printf("  %s: %s\n", t, json_string_value(json_object_get(s, "text")));
    }
    if (!json_is_array(groups))
        json_array_foreach(json_object_get(ex, "signatures"), i, x)
            printf("  %s: %s\n", json_string_value(json_object_get(x, "case")),
                   json_string_value(json_object_get(x, "text")));
    json_array_foreach(json_object_get(ex, "fingerprint_changes"), i, x)
        printf("  %s\n", json_string_value(json_object_get(x, "text")));
}
