/* gpuvet diff: what changed between two snapshots, most consequential first. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "env/diff.h"
#include "env/probe.h"

static const char usage[] =
    "usage: gpuvet diff [--json] [-o FILE] BEFORE.json AFTER.json\n"
    "\n"
    "Compare two snapshots made by 'gpuvet snapshot' and list what changed, grouped by\n"
    "layer, most consequential first: kernel driver, GPU runtime (HIP/HSA/comgr, CUDA),\n"
    "math and communication libraries, framework (Python environments, torch build,\n"
    "GPU targets), loader and environment (LD_LIBRARY_PATH, ld.so.conf, /opt/rocm link,\n"
    "allowlisted variables, profile.d), then every package. Also reports GPU library\n"
    "files that no package owns, and libraries the loader picks from another ROCm\n"
    "release than the HIP runtime (mixed sets). Sections that one snapshot did not\n"
    "collect are listed as not comparable, never as removed.\n"
    "\n"
    "      --json         the gpuvet.diff document (docs/diff-schema.md) on stdout\n"
    "  -o, --output FILE  write the JSON document to FILE (atomically) as well\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 no difference, 1 differences, 2 usage error,\n"
    "3 a snapshot is unreadable, corrupt or of another schema.\n";

static const char *kind_mark(const char *kind)
{
    if (!strcmp(kind, "added"))
        return "+";
    if (!strcmp(kind, "removed"))
        return "-";
    if (!strcmp(kind, "changed"))
        return "~";
    return "!";
}

static const char *kind_color(const char *kind)
{
    if (!strcmp(kind, "added"))
        return cli_green();
    if (!strcmp(kind, "removed"))
        return cli_red();
    if (!strcmp(kind, "changed"))
        return cli_yellow();
    return cli_red();
}

static const char *s_or(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

static void print_change(const json_t *c)
{
    const char *kind = s_or(c, "kind", "?");
    const char *before = s_or(c, "before", NULL), *after = s_or(c, "after", NULL);
    const char *detail = s_or(c, "detail", NULL);
    printf("  %s%s%s %s: ", kind_color(kind), kind_mark(kind), cli_reset(), s_or(c, "subject", "?"));
    if (before && after)
        printf("%s -> %s", before, after);
    else if (after)
        printf("%s%s", !strcmp(kind, "added") ? "added " : "", after);
    else if (before)
        printf("removed (was %s)", before);
    if (strcmp(kind, "added") && strcmp(kind, "removed") && strcmp(kind, "changed"))
        printf(" %s[%s]%s", cli_bold(), kind, cli_reset());
    if (detail)
        printf("  %s(%s)%s", cli_dim(), detail, cli_reset());
    putchar('\n');
}

static void print_text(const json_t *doc)
{
    const json_t *b = json_object_get(doc, "before"), *a = json_object_get(doc, "after");
    printf("%sbefore%s %s (%s, root %s)\n%safter%s  %s (%s, root %s)\n", cli_bold(), cli_reset(),
           s_or(b, "file", "?"), s_or(b, "created", "?"), s_or(b, "root", "?"), cli_bold(),
           cli_reset(), s_or(a, "file", "?"), s_or(a, "created", "?"), s_or(a, "root", "?"));
    const json_t *changes = json_object_get(doc, "changes"), *c;
    const char *layer = NULL;
    size_t i;
    json_array_foreach(changes, i, c) {
        const char *l = s_or(c, "layer", "?");
        if (!layer || strcmp(layer, l)) {
            layer = l;
            int rank = (int)json_integer_value(json_object_get(c, "rank"));
            const char *title = gv_diff_layer_title(rank);
            printf("\n%s%s%s\n", cli_bold(), title ? title : l, cli_reset());
        }
        print_change(c);
    }
    const json_t *nc = json_object_get(doc, "not_comparable");
    if (json_array_size(nc)) {
        printf("\n%snot comparable%s\n", cli_bold(), cli_reset());
        json_array_foreach(nc, i, c)
            printf("  %s?%s %s: %s\n", cli_dim(), cli_reset(), s_or(c, "section", "?"),
                   s_or(c, "reason", "not collected"));
    }
    size_t n = json_array_size(changes);
    if (!n) {
        printf("\n%sno differences%s\n", cli_green(), cli_reset());
        return;
    }
    printf("\n%zu change%s:", n, n == 1 ? "" : "s");
    const json_t *by = json_object_get(json_object_get(doc, "summary"), "by_layer");
    int first = 1;
    for (int l = GV_LAYER_DRIVER; l <= GV_LAYER_PACKAGES; l++) {
        json_int_t k = json_integer_value(json_object_get(by, gv_diff_layer_name(l)));
        if (k) {
            printf("%s %lld %s", first ? "" : ",", (long long)k, gv_diff_layer_name(l));
            first = 0;
        }
    }
    putchar('\n');
}

int cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int json = 0;
    const char *output = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'o': output = optarg; break;
        case 'h': return cli_help(usage);
        case ':': return cli_usage("diff", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage("diff", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return cli_usage("diff", "needs two snapshot files, BEFORE and AFTER (got %d)",
                         argc - optind);
    const char *fa = argv[optind], *fb = argv[optind + 1];
    struct gv_err err = {0};
    json_t *a = NULL, *b = NULL, *doc = NULL;
    if (gv_snapshot_load(fa, &a, &err))
        return cli_fail(&err);
    if (gv_snapshot_load(fb, &b, &err)) {
        json_decref(a);
        return cli_fail(&err);
    }
    int rc = gv_diff_snapshots(a, b, fa, fb, &doc, &err);
    json_decref(a);
    json_decref(b);
    if (rc)
        return cli_fail(&err);
    if (output && (rc = cli_emit_json(doc, output)) != GV_EXIT_OK) {
        json_decref(doc);
        return rc;
    }
    if (json)
        rc = cli_emit_json(doc, NULL);
    else
        print_text(doc);
    size_t n = json_array_size(json_object_get(doc, "changes"));
    json_decref(doc);
    if (rc)
        return rc;
    return n ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}

/* The same text for a diff made elsewhere (gpuvet history diff). */
void cli_diff_print(const json_t *doc)
{
    print_text(doc);
}
