/* Printing capture comparisons and bisections (gpuvet compare A.gvcap B.gvcap,
 * gpuvet torch bisect). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "capture/capture.h"
#include "cli/cli.h"
#include "store/junit.h"

static const char *s(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static double units(const json_t *o)
{
    const json_t *u = json_object_get(o, "units");
    return json_is_number(u) ? json_number_value(u) : NAN;
}

static void print_brief(const char *label, const json_t *b)
{
    if (json_is_object(b))
        printf("%s: op %lld %s in %s\n", label, (long long)json_integer_value(json_object_get(b, "op")),
               s(b, "name"), s(b, "module")[0] ? s(b, "module") : "(the model itself)");
    else
        printf("%s: none\n", label);
}

void cli_capture_print_outputs(const json_t *outs)
{
    size_t i, shown = 0;
    const json_t *e;
    if (json_array_size(outs) < 2)
        return;
    json_array_foreach(outs, i, e) {
        if (!strcmp(s(e, "status"), "identical"))
            continue;
        if (shown++ == 8) {
            printf("  ...\n");
            break;
        }
        printf("  %s: %s (%.3g units)\n", s(e, "name")[0] ? s(e, "name") : "?", s(e, "status"),
               units(e));
    }
}

static void print_compare(const json_t *d)
{
    const json_t *sm = json_object_get(d, "summary");
    printf("%sbefore%s %s\n%safter%s  %s\n\n", cli_bold(), cli_reset(), s(d, "before"), cli_bold(),
           cli_reset(), s(d, "after"));
    printf("ops: %lld before, %lld after, %lld aligned, %lld identical, %lld beyond rounding "
           "(more than %.0f units of roundoff of their format, normwise)\n",
           (long long)json_integer_value(json_object_get(sm, "ops_before")),
           (long long)json_integer_value(json_object_get(sm, "ops_after")),
           (long long)json_integer_value(json_object_get(sm, "aligned")),
           (long long)json_integer_value(json_object_get(sm, "identical")),
           (long long)json_integer_value(json_object_get(sm, "beyond_noise")), GV_CAP_NOISE_UNITS);
    print_brief("first op that differs", json_object_get(sm, "first_difference"));
    print_brief("first op beyond rounding", json_object_get(sm, "first_beyond_noise"));
    const json_t *ops = json_object_get(d, "ops");
    size_t i, shown = 0;
    json_t *e;
    printf("\n%s%5s  %-34s %-28s %-16s %12s%s\n", cli_bold(), "op", "operator", "module",
           "status", "units", cli_reset());
    json_array_foreach(ops, i, e) {
        if (!strcmp(s(e, "status"), "identical") || shown >= 40)
            continue;
        shown++;
        printf("%5lld  %-34s %-28s %s%-16s%s %12.3g\n",
               (long long)json_integer_value(json_object_get(e, "a")), s(e, "name"),
               s(e, "module")[0] ? s(e, "module") : "-",
               !strcmp(s(e, "status"), "rounding") ? "" : cli_yellow(), s(e, "status"), cli_reset(),
               units(e));
    }
    size_t nd = 0;
    json_array_foreach(ops, i, e) nd += strcmp(s(e, "status"), "identical") != 0;
    if (nd > shown)
        printf("  (%zu more)\n", nd - shown);
    printf("\nmodel outputs: %s (%.3g units)\n", s(sm, "outputs_status"),
           json_number_value(json_object_get(sm, "outputs_units")));
    cli_capture_print_outputs(json_object_get(d, "outputs"));
    const char *only[] = {"only_before", "only_after"};
    for (int k = 0; k < 2; k++) {
        const json_t *l = json_object_get(d, only[k]);
        if (!json_array_size(l))
            continue;
        printf("%s%zu ops only %s%s (the graph changed there):", cli_yellow(), json_array_size(l),
               k ? "after" : "before", cli_reset());
        json_array_foreach(l, i, e) if (i < 8) printf(" %s (op %lld, %s)", s(e, "name"),
                                                      (long long)json_integer_value(json_object_get(e, "op")),
                                                      s(e, "module")[0] ? s(e, "module") : "-");
        printf("\n");
    }
    printf("\n");
    cli_verdict_print(d); /* the words the report page opens with */
}

static enum gv_junit_status op_status(const char *v)
{
    if (!strcmp(v, "beyond_rounding") || !strcmp(v, "less_accurate"))
        return GV_JUNIT_FAILURE;
    if (!strcmp(v, "replay_failed"))
        return GV_JUNIT_ERROR;
    if (!strcmp(v, "not_replayed") || !strcmp(v, "differs_not_kept"))
        return GV_JUNIT_SKIPPED;
    return GV_JUNIT_PASS;
}

/* One testcase per op of a capture comparison or bisection (the op's status or
 * verdict: a less accurate op or one beyond rounding is a failure), then one
 * failure per call change and per op only one side has. */
int cli_capture_junit(const char *path, const char *suite, const struct json_t *d,
                      struct gv_err *err)
{
    const json_t *ops = json_object_get(d, "ops");
    const char *lists[] = {"call_changes", "only_before", "only_after"};
    struct gv_junit *j = gv_junit_begin(suite);
    for (int k = -1; k < 3; k++) {
        const json_t *list = k < 0 ? ops : json_object_get(d, lists[k]);
        for (size_t i = 0; i < json_array_size(list); i++) {
            const json_t *e = json_array_get(list, i);
            const json_t *idx = json_object_get(e, "op");
            if (!idx)
                idx = json_object_get(e, "a");
            if (!idx)
                idx = json_object_get(e, "op_a"); /* a call change: its op in A */
            char name[160], cls[200];
            snprintf(name, sizeof name, "%05lld %s", (long long)json_integer_value(idx),
                     s(e, "name"));
            snprintf(cls, sizeof cls, "gpuvet.%s.%s", suite,
                     s(e, "module")[0] ? s(e, "module") : "-");
            const char *v = s(e, "verdict")[0] ? s(e, "verdict") : s(e, "status");
            if (k < 0)
                gv_junit_add(j, cls, name, 0, op_status(v), v, NULL);
            else
                gv_junit_add(j, cls, name, 0, GV_JUNIT_FAILURE, lists[k], NULL);
        }
    }
    int rc = gv_junit_save(j, path, err);
    gv_junit_free(j);
    return rc;
}

int cli_compare_captures(const struct cli_compare_opts *o)
{
    const char *a = o->a, *b = o->b, *junit = o->junit;
    struct cli_out out = {o->output, o->json};
    struct gv_cap ca, cb;
    struct gv_err err = {0};
    if (gv_cap_open(a, &ca, &err))
        return cli_fail(&err);
    if (gv_cap_open(b, &cb, &err)) {
        gv_cap_close(&ca);
        return cli_fail(&err);
    }
    json_t *d = NULL;
    int rc = gv_cap_verify(&ca, &err);
    if (!rc)
        rc = gv_cap_verify(&cb, &err);
    if (!rc)
        rc = gv_capture_compare(&ca, &cb, &d, &err);
    gv_cap_close(&ca);
    gv_cap_close(&cb);
    if (!rc && junit)
        rc = cli_capture_junit(junit, "compare", d, &err);
    if (rc) {
        json_decref(d);
        return cli_fail(&err);
    }
    rc = cli_put_doc("compare", d, &out);
    if (cli_out_text(&out))
        print_compare(d);
    int flagged = json_is_true(json_object_get(d, "flagged"));
    json_decref(d);
    return rc ? rc : flagged ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}
