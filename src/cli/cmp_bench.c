/* gpuvet compare A B for two gpuvet.bench documents (and gpuvet ab --bench):
 * the printing of bench/compare.h's comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/compare.h"
#include "bench/load.h"
#include "cli/cli.h"
#include "store/junit.h"

static const char *change_color(enum gv_bcmp_change c)
{
    if (gv_bcmp_flagged(c))
        return cli_red();
    if (c == GV_BC_IMPROVED || c == GV_BC_NEWLY_OK)
        return cli_green();
    if (c == GV_BC_WITHIN_NOISE)
        return "";
    return cli_yellow();
}

static void value_str(const json_t *r, const char *status, double v, const char *unit, char *out,
                      size_t n)
{
    if (!r)
        snprintf(out, n, "-");
    else if (strcmp(status, "ok") != 0 || !isfinite(v))
        snprintf(out, n, "%s", status);
    else {
        double fv;
        const char *u = gv_bench_fit_unit(v, unit, &fv);
        snprintf(out, n, "%.4g %s", fv, u);
    }
}

static int shown(const struct gv_bcmp_case *x, int all)
{
    return all || (x->change != GV_BC_WITHIN_NOISE && x->change != GV_BC_NOT_RUN);
}

static void print_table(const struct gv_bench_compare *c, int all)
{
    size_t w = 6;
    int any = 0;
    for (size_t i = 0; i < c->n; i++)
        if (shown(&c->cases[i], all)) {
            any = 1;
            if (strlen(c->cases[i].id) > w)
                w = strlen(c->cases[i].id);
        }
    if (!any) {
        printf("\nNo result changed beyond its noise.\n");
        return;
    }
    printf("\n%s%-*s  %-14s  %-18s  %-18s  %-8s  %s%s\n", cli_bold(), (int)w, "result", "change",
           "A", "B", "B vs A", "noise", cli_reset());
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_bcmp_case *x = &c->cases[i];
        if (!shown(x, all))
            continue;
        char va[64], vb[64], ratio[32] = "", noise[32] = "";
        value_str(x->a, x->status_a, x->a ? json_number_value(json_object_get(x->a, "value")) : NAN,
                  x->unit, va, sizeof va);
        value_str(x->b, x->status_b, x->b ? json_number_value(json_object_get(x->b, "value")) : NAN,
                  x->unit, vb, sizeof vb);
        if (isfinite(x->ratio))
            snprintf(ratio, sizeof ratio, "%.3fx", x->ratio);
        if (isfinite(x->noise))
            snprintf(noise, sizeof noise, "%.1f%%%s", 100 * x->noise,
                     x->apart ? "" : ", ranges overlap");
        printf("%-*s  %s%-14s%s  %-18s  %-18s  %-8s  %s\n", (int)w, x->id, change_color(x->change),
               gv_bcmp_change_name(x->change), cli_reset(), va, vb, ratio, noise);
        if (x->why[0])
            printf("%*s  %s%s%s\n", (int)w, "", cli_dim(), x->why, cli_reset());
    }
}

static void print_causes(const struct gv_bench_compare *c)
{
    if (!c->ncauses) {
        if (c->flagged)
            printf("\nNo difference found in conditions, libraries, environment, device or "
                   "driver.\n");
        return;
    }
    if (c->flagged)
        printf("\n%sLikely causes%s (what differs between the two runs, by evidence):\n",
               cli_bold(), cli_reset());
    else
        printf("\n%sWhat differs between the two runs%s (nothing regressed):\n", cli_bold(),
               cli_reset());
    for (size_t i = 0; i < c->ncauses; i++) {
        const struct gv_cmp_cause *x = &c->causes[i];
        const char *name = !strcmp(x->kind, "library") ? gv_lib_display(x->name) : x->name;
        printf("  %zu. %-11s %s: %s -> %s", i + 1, x->kind, name,
               x->before[0] ? x->before : "(absent)", x->after[0] ? x->after : "(absent)");
        if (x->change[0])
            printf(" (%s)", x->change);
        if (x->note[0])
            printf("  %s[%s]%s", cli_yellow(), x->note, cli_reset());
        printf("\n");
        if (x->rank == 0)
            printf("     touches every regressed result (%d): %s\n", x->touched, x->touches);
        else if (x->rank == 1)
            printf("     touches %d regressed result%s: %s\n", x->touched,
                   x->touched == 1 ? "" : "s", x->touches);
        else if (x->rank == 2 && c->flagged)
            printf("     %sa known effect, but on none of the regressed results%s\n", cli_dim(),
                   cli_reset());
    }
}

/* A side that ran on a busy machine (bench/load.h) says so before its figures are compared. */
static void print_busy(const json_t *doc, const char *side, const char *path)
{
    const json_t *ml = json_object_get(doc, "machine_load");
    if (!json_is_true(json_object_get(ml, "busy")))
        return;
    printf("%swarning:%s %s (%s) ran on a busy machine, its figures are not reliable:\n",
           cli_yellow(), cli_reset(), side, path);
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(ml, "why"), i, w)
        if (json_is_string(w))
            printf("  - %s\n", json_string_value(w));
}

static void print_human(const struct gv_bench_compare *c, const char *a, const char *b, int all)
{
    printf("%sbefore%s %s (%s, %s, %s)\n%safter%s  %s (%s, %s, %s)\n", cli_bold(), cli_reset(), a,
           c->device_a, c->mode_a, c->created_a, cli_bold(), cli_reset(), b, c->device_b,
           c->mode_b, c->created_b);
    for (size_t i = 0; i < c->nnotes; i++)
        printf("%snote:%s %s\n", cli_yellow(), cli_reset(), c->notes[i]);
    print_table(c, all);
    printf("\n");
    int first = 1;
    for (int i = 0; i < GV_BC_COUNT; i++)
        if (c->count[i]) {
            printf("%s%zu %s", first ? "" : ", ", c->count[i],
                   gv_bcmp_change_name((enum gv_bcmp_change)i));
            first = 0;
        }
    printf("%s\n", first ? "no results" : "");
    printf("%sregressed/improved: the change is larger than the noise, max(spread A, spread B, "
           "%.0f%%; %.0f%% for launch latencies, %.0f%% for pageable copies, which vary more "
           "between runs than within one), and the sample ranges do not overlap%s\n", cli_dim(),
           100 * GV_BCMP_NOISE_FLOOR, 100 * GV_BCMP_NOISE_LATENCY, 100 * GV_BCMP_NOISE_PAGEABLE,
           cli_reset());
    print_causes(c);
}

static int write_junit(const char *path, const struct gv_bench_compare *c, struct gv_err *err)
{
    struct gv_junit *j = gv_junit_begin("gpuvet compare (bench)");
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_bcmp_case *x = &c->cases[i];
        char msg[400];
        if (isfinite(x->ratio))
            snprintf(msg, sizeof msg, "%s (B vs A %.3fx, noise %.1f%%)",
                     gv_bcmp_change_name(x->change), x->ratio, 100 * x->noise);
        else
            snprintf(msg, sizeof msg, "%s%s%s", gv_bcmp_change_name(x->change),
                     x->why[0] ? ": " : "", x->why);
        enum gv_junit_status st =
            gv_bcmp_flagged(x->change)       ? GV_JUNIT_FAILURE
            : x->change == GV_BC_NOT_COMPARABLE ? GV_JUNIT_ERROR
            : (x->change == GV_BC_ONLY_A || x->change == GV_BC_ONLY_B ||
               x->change == GV_BC_NOT_RUN)
                ? GV_JUNIT_SKIPPED
                : GV_JUNIT_PASS;
        gv_junit_add(j, "gpuvet.compare.bench", x->id, 0, st, msg, NULL);
    }
    int rc = gv_junit_save(j, path, err);
    gv_junit_free(j);
    return rc;
}

int cli_compare_bench(const struct cli_compare_opts *o)
{
    const char *a = o->a, *b = o->b, *junit = o->junit;
    struct cli_out out = {o->output, o->json};
    struct gv_err err = {0};
    json_t *da = NULL, *db = NULL;
    if (gv_bench_load(a, &da, &err))
        return cli_fail(&err);
    if (gv_bench_load(b, &db, &err)) {
        json_decref(da);
        return cli_fail(&err);
    }
    struct gv_bench_compare c;
    int rc = gv_bench_compare_docs(da, db, &c, &err);
    if (rc) {
        json_decref(da);
        json_decref(db);
        return cli_fail(&err);
    }
    rc = c.flagged ? GV_EXIT_FINDINGS : GV_EXIT_OK;
    if (junit && write_junit(junit, &c, &err))
        rc = cli_fail(&err);
    if (o->json || o->output) {
        json_t *doc = gv_bench_compare_json(&c, a, b);
        int erc = cli_put_doc("compare", doc, &out);
        json_decref(doc);
        if (erc)
            rc = erc;
    }
    if (cli_out_text(&out)) {
        print_human(&c, a, b, o->all);
        print_busy(da, "A", a);
        print_busy(db, "B", b);
    }
    gv_bench_compare_free(&c);
    json_decref(da);
    json_decref(db);
    return rc;
}
