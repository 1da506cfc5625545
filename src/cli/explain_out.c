/* Explanations of a comparison of result files, shared by compare, ab and
 * verify: the ranked likely causes, each degraded case's error signature and
 * the fingerprint properties that changed (check --probe on both sides). */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "check/compare.h"

static void cause_line(const struct gv_cmp_cause *x, size_t i)
{
    const char *name = !strcmp(x->kind, "library") ? gv_lib_display(x->name) : x->name;
    printf("  %zu. %-11s %s: %s -> %s", i + 1, x->kind, name,
           x->before[0] ? x->before : "(absent)", x->after[0] ? x->after : "(absent)");
    if (x->change[0])
        printf(" (%s)", x->change);
    if (x->note[0])
        printf("  %s[%s]%s", cli_yellow(), x->note, cli_reset());
    printf("\n");
    if (x->rank == 0)
        printf("     touches every degraded case (%d): %s\n", x->touched, x->touches);
    else if (x->rank == 1)
        printf("     touches %d degraded case%s: %s\n", x->touched, x->touched == 1 ? "" : "s",
               x->touches);
    else if (x->rank == 2)
        printf("     %sknown numerics effect, but no degraded case it applies to%s\n", cli_dim(),
               cli_reset());
}

void cli_explain_print(const struct gv_compare *c, const struct gv_results *ra,
                       const struct gv_results *rb)
{
    (void)ra;
    (void)rb;
    if (c->ncauses) {
        printf("\n%sLikely causes%s (what differs between the two runs, by evidence):\n",
               cli_bold(), cli_reset());
        for (size_t i = 0; i < c->ncauses; i++)
            cause_line(&c->causes[i], i);
    } else if (c->count[GV_CH_IDENTICAL] != c->n) {
        printf("\nNo difference found in environment, GPU libraries, device or driver.\n");
    }
    if (c->routes_note[0])
        printf("\n%sRoute:%s %s\n", cli_bold(), cli_reset(), c->routes_note);
    int head = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_cmp_case *x = &c->cases[i];
        for (int k = 0; k < x->nsig; k++) {
            if (!head++)
                printf("\n%sWhat the errors look like%s:\n", cli_bold(), cli_reset());
            printf("  %s: %s %s[%s]%s\n", x->id, x->sig[k]->text, cli_dim(), x->sig[k]->source,
                   cli_reset());
        }
    }
    if (c->nfp) {
        printf("\n%sFingerprint changes%s (check --probe on both sides):\n", cli_bold(),
               cli_reset());
        for (size_t i = 0; i < c->nfp; i++)
            printf("  %s\n", c->fp[i].text);
    } else if (c->fp_note[0]) {
        printf("\n%sfingerprints not compared: %s%s\n", cli_dim(), c->fp_note, cli_reset());
    }
}

struct json_t *cli_explain_json(const struct gv_compare *c, const struct gv_results *ra,
                                const struct gv_results *rb)
{
    (void)ra;
    (void)rb;
    json_t *o = json_object();
    json_t *causes = json_array();
    for (size_t i = 0; i < c->ncauses; i++) {
        const struct gv_cmp_cause *x = &c->causes[i];
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
        json_array_append_new(causes, e);
    }
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

void cli_explain_print_json(const json_t *ex)
{
    size_t i;
    json_t *x;
    if (json_array_size(json_object_get(ex, "causes")))
        printf("  likely causes, by evidence:\n");
    json_array_foreach(json_object_get(ex, "causes"), i, x) {
        const char *name = json_string_value(json_object_get(x, "display"));
        const char *b = json_string_value(json_object_get(x, "before"));
        const char *a = json_string_value(json_object_get(x, "after"));
        const char *ch = json_string_value(json_object_get(x, "change"));
        const char *t = json_string_value(json_object_get(x, "touched_cases"));
        printf("    %zu. %s %s: %s -> %s%s%s%s\n", i + 1,
               json_string_value(json_object_get(x, "kind")),
               name ? name : json_string_value(json_object_get(x, "name")), b ? b : "(absent)",
               a ? a : "(absent)", ch ? " (" : "", ch ? ch : "", ch ? ")" : "");
        if (t && *t)
            printf("       touches: %s\n", t);
    }
    const char *route = json_string_value(json_object_get(ex, "route"));
    if (route)
        printf("  route: %s\n", route);
    json_array_foreach(json_object_get(ex, "signatures"), i, x)
        printf("  %s: %s\n", json_string_value(json_object_get(x, "case")),
               json_string_value(json_object_get(x, "text")));
    json_array_foreach(json_object_get(ex, "fingerprint_changes"), i, x)
        printf("  %s\n", json_string_value(json_object_get(x, "text")));
}
