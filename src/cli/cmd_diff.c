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
        cli_diff_print(doc);
    size_t n = json_array_size(json_object_get(doc, "changes"));
    json_decref(doc);
    if (rc)
        return rc;
    return n ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}
