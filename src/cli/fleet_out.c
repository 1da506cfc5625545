/* gpuvet fleet compare (docs/fleet.md): the node documents of a gathered
 * directory or named files compared, the odd nodes said verdict first, the
 * fleet document, the reference. cmd_fleet.c calls cli_fleet_compare for
 * the "compare" subcommand. */
#include <stdio.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"
#include "fleet/fleet.h"
#include "report/verdict.h"
#include "store/history.h"

static const char compare_usage[] =
    "usage: gpuvet fleet compare DIR|FILE... [--json] [-o FILE] [--write-reference REF.json]\n"
    "                            [--record] [--db URL]\n"
    "\n"
    "Compare the node documents of a fleet run (DIR/nodes/NODE.rRANK.json of a gathered\n"
    "directory, or node documents named one by one). Nodes are grouped by the hardware\n"
    "that must agree (GPU model, compute units, driver); in each group the majority's\n"
    "stack and, per case, the majority's output digest are the reference, and every\n"
    "other node is named with its class: could not run, stack drift (what changed),\n"
    "numerics outlier on the same stack (which cases, how many repeats, elements and\n"
    "bits), slow (a bench figure outside the group's spread). Ranks without a document\n"
    "are named as missing. The document is gpuvet.fleet.\n"
    "\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "      --write-reference REF  write the majority per group (gpuvet.fleet.reference)\n"
    "                        for 'gpuvet fleet gate --reference REF'\n"
    "      --record          also record the fleet document, with its nodes' job, in the\n"
    "                        history database ($GPUVET_DB; docs/history.md)\n"
    "      --db URL          record it in this database (a path or postgresql://...)\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 no odd node, 1 at least one odd or missing node, 2 usage error,\n"
    "3 a node document is unreadable, invalid or of another run.\n";

static const char *sget(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void print_case(const json_t *c)
{
    printf("      %s:", sget(c, "id"));
    if (sget(c, "digest"))
        printf(" digest %.12s… where %lld nodes have %.12s…, %s repeats", sget(c, "digest"),
               (long long)json_integer_value(json_object_get(c, "nodes_agreeing")),
               sget(c, "majority_digest"), sget(c, "repeats_differing"));
    if (json_is_integer(json_object_get(c, "elements_differing"))) {
        long long e = json_integer_value(json_object_get(c, "elements_differing"));
        long long b = json_integer_value(json_object_get(c, "max_bits"));
        printf(", %lld element%s differ%s by up to %lld bit%s", e, e == 1 ? "" : "s",
               e == 1 ? "s" : "", b, b == 1 ? "" : "s");
    }
    if (sget(c, "outputs_note"))
        printf(" (outputs: %s)", sget(c, "outputs_note"));
    if (json_is_true(json_object_get(c, "fails_against_fp64")))
        printf(", fails against fp64");
    if (json_is_true(json_object_get(c, "not_run_to_run_identical")))
        printf(", not run-to-run identical here (identical on %lld nodes)",
               (long long)json_integer_value(json_object_get(c, "identical_on_nodes")));
    printf("\n");
}

static void print_odd(const json_t *o)
{
    const json_t *ev = json_object_get(o, "evidence");
    size_t i;
    const json_t *v;
    printf("  %s%s%s (rank %lld): ", cli_bold(), sget(o, "node"), cli_reset(),
           (long long)json_integer_value(json_object_get(o, "rank")));
    json_array_foreach(json_object_get(o, "classes"), i, v)
        printf("%s%s", i ? ", " : "", gv_fleet_class_words(json_string_value(v)));
    printf("\n");
    if (sget(ev, "reason"))
        printf("      %s\n", sget(ev, "reason"));
    json_array_foreach(json_object_get(ev, "diff"), i, v)
        printf("      %s\n", json_string_value(v));
    json_array_foreach(json_object_get(ev, "cases"), i, v)
        print_case(v);
    json_array_foreach(json_object_get(ev, "bench"), i, v)
        printf("      %s: %.4g %s, group median %.4g (%lld nodes), limit %.4g\n", sget(v, "id"),
               json_number_value(json_object_get(v, "value")), sget(v, "unit"),
               json_number_value(json_object_get(v, "group_median")),
               (long long)json_integer_value(json_object_get(v, "nodes")),
               json_number_value(json_object_get(v, "limit")));
}

static void print_group(const json_t *g)
{
    const json_t *k = json_object_get(g, "key");
    long long n = json_integer_value(json_object_get(g, "nodes"));
    if (sget(k, "model"))
        printf("\n%s%s%s, %lld compute units, driver %s: ", cli_bold(), sget(k, "model"),
               cli_reset(), (long long)json_integer_value(json_object_get(k, "compute_units")),
               sget(k, "driver"));
    else
        printf("\n%shardware unknown%s (no document says): ", cli_bold(), cli_reset());
    printf("%lld node%s", n, n == 1 ? "" : "s");
    if (sget(g, "stack_digest"))
        printf(", stack %.19s… on %lld", sget(g, "stack_digest"),
               (long long)json_integer_value(json_object_get(g, "stack_nodes")));
    printf("\n");
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(g, "odd"), i, v)
        print_odd(v);
    json_array_foreach(json_object_get(g, "split"), i, v)
        printf("  %ssplit%s %s: %lld digests among %lld nodes, the largest on %lld: no majority,"
               " no node named\n",
               cli_yellow(), cli_reset(), sget(v, "id"),
               (long long)json_integer_value(json_object_get(v, "digests")),
               (long long)json_integer_value(json_object_get(v, "voters")),
               (long long)json_integer_value(json_object_get(v, "largest")));
}

static void print_fleet(const json_t *doc)
{
    cli_verdict_print(doc); /* the words the report page opens with */
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(doc, "groups"), i, g)
        print_group(g);
    const json_t *miss = json_object_get(doc, "missing");
    long long nmiss =
        json_integer_value(json_object_get(json_object_get(doc, "summary"), "missing"));
    if (nmiss) {
        printf("\n%smissing%s (no document):", cli_red(), cli_reset());
        json_array_foreach(miss, i, g)
            printf(" %s%lld", i ? "" : "rank ", (long long)json_integer_value(g));
        if ((size_t)nmiss > json_array_size(miss))
            printf(" … (%lld in all)", nmiss);
        printf("\n");
    }
}

struct compare_opts {
    struct cli_out out;
    const char *reference;
    char **ops; /* the directories or node documents */
    int nops;
    int record;
};

static int parse(int argc, char **argv, struct compare_opts *o)
{
    static const struct option opts[] = {CLI_OUT_OPTIONS,
                                         {"write-reference", required_argument, 0, 'R'},
                                         {"record", no_argument, 0, 'r'},
                                         {"db", required_argument, 0, 'Q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct cli_args a = CLI_ARGS("fleet compare", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&a)) != -1;) {
        if (cli_out_opt(&o->out, c, a.arg))
            continue;
        switch (c) {
        case 'R': o->reference = a.arg; break;
        case 'r': o->record = 1; break;
        case 'Q': cli_record_set_db(a.arg), o->record = 1; break;
        case 'h': return cli_help(compare_usage) - 1;
        default: return GV_EXIT_USAGE;
        }
    }
    if (!a.nops)
        return cli_usage("fleet compare", "needs a gathered directory or node documents");
    o->ops = a.ops;
    o->nops = a.nops;
    return GV_EXIT_OK;
}

static int write_reference(const char *path, const json_t *fleet, const json_t *nodes)
{
    struct gv_err err = {0};
    json_t *ref;
    if (gv_fleet_reference(fleet, nodes, &ref, &err))
        return cli_fail(&err);
    int rc = cli_emit_json(ref, path);
    json_decref(ref);
    if (!rc)
        cli_say_written("fleet compare", path);
    return rc;
}

int cli_fleet_compare(int argc, char **argv)
{
    struct compare_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc == -1)
        return GV_EXIT_OK; /* --help */
    if (rc)
        return rc;
    struct gv_err err = {0};
    char dir[GV_PATH_MAX];
    json_t *nodes, *fleet;
    if (gv_fleet_load((const char *const *)o.ops, (size_t)o.nops, &nodes, dir, sizeof dir, &err))
        return cli_fail(&err);
    if (gv_fleet_compare(nodes, dir, &fleet, &err)) {
        json_decref(nodes);
        return cli_fail(&err);
    }
    /* --record: the comparison carries its nodes' job (one run, one job: gv_fleet_load) */
    o.record = cli_record_wanted(o.record);
    if (o.record && gv_history_mark_fleet_job(fleet, sget(json_array_get(nodes, 0), "job"), &err))
        fprintf(stderr, "gpuvet fleet compare: %s\n", err.msg);
    if (cli_out_text(&o.out))
        print_fleet(fleet);
    rc = cli_put_doc("fleet compare", fleet, &o.out);
    int recorded = rc || !o.record ? GV_EXIT_OK : cli_record(fleet, o.out.output);
    if (!rc && o.reference)
        rc = write_reference(o.reference, fleet, nodes);
    const json_t *s = json_object_get(fleet, "summary");
    if (!rc && (json_integer_value(json_object_get(s, "odd")) ||
                json_integer_value(json_object_get(s, "missing"))))
        rc = GV_EXIT_FINDINGS;
    json_decref(fleet);
    json_decref(nodes);
    return rc ? rc : recorded;
}
