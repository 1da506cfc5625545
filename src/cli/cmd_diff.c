/* gpuvet diff: what changed between two snapshots, most consequential first. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "env/diff.h"
#include "env/probe.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet diff [--json] [-o FILE] BEFORE AFTER\n"
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
    "BEFORE and AFTER are each a snapshot file, image=REF (a container image, read\n"
    "as 'gpuvet snapshot --image REF' does: docs/image.md), or host (this machine\n"
    "now; a file named host is ./host). Where a side is an image, each library and\n"
    "package change names the image layer that brought it, the image itself is\n"
    "compared (digests, tags, platform, labels, env, entrypoint/cmd/user, layers\n"
    "shared or not), and what its tag says is checked against its content.\n"
    "\n"
    "      --json         the gpuvet.diff document (docs/diff-schema.md) on stdout\n"
    "  -o, --output FILE  write the JSON document to FILE (atomically) as well\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 no difference, 1 differences, 2 usage error,\n"
    "3 a snapshot is unreadable, corrupt or of another schema, or an image or this\n"
    "host could not be read.\n";

/* An operand: a snapshot file, image=REF, or host. */
static int load_side(const char *arg, json_t **doc, struct gv_err *err)
{
    if (!strncmp(arg, "image=", 6))
        return cli_image_snapshot(arg + 6, 1, doc, err);
    if (!strcmp(arg, "host")) {
        struct gv_probe_ctx ctx = {.root = "/", .live = 1, .envp = environ, .hash_files = 1};
        return gv_snapshot_collect(&ctx, doc, err);
    }
    return gv_snapshot_load(arg, doc, err);
}

/* The operand's failure, naming it (an image error may not). */
static int fail_side(const char *arg, const struct gv_err *err)
{
    if (strncmp(arg, "image=", 6) || strstr(err->msg, arg + 6))
        return cli_fail(err);
    struct gv_err named = *err;
    snprintf(named.msg, sizeof named.msg, "%s: %s", arg + 6, err->msg);
    return cli_fail(&named);
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
        return cli_usage("diff", "needs two operands, BEFORE and AFTER (got %d)",
                         argc - optind);
    const char *fa = argv[optind], *fb = argv[optind + 1];
    struct gv_err err = {0};
    json_t *a = NULL, *b = NULL, *doc = NULL;
    if (load_side(fa, &a, &err))
        return fail_side(fa, &err);
    if (load_side(fb, &b, &err)) {
        json_decref(a);
        return fail_side(fb, &err);
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
