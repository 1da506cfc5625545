/* gpuvet diff: what changed between two snapshots, most consequential first. */
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
    "The document is gpuvet.diff (docs/diff-schema.md).\n"
    "\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "  -h, --help            this help\n"
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
    static const struct option opts[] = {CLI_OUT_OPTIONS, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct cli_out out = {0};
    struct cli_args args = CLI_ARGS("diff", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        if (cli_out_opt(&out, c, args.arg))
            continue;
        if (c == 'h')
            return cli_help(usage);
        return GV_EXIT_USAGE;
    }
    if (args.nops != 2)
        return cli_usage("diff", "needs two operands, BEFORE and AFTER (got %d)", args.nops);
    const char *fa = args.ops[0], *fb = args.ops[1];
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
    rc = cli_put_doc("diff", doc, &out);
    if (!rc && cli_out_text(&out))
        cli_diff_print(doc);
    size_t n = json_array_size(json_object_get(doc, "changes"));
    json_decref(doc);
    if (rc)
        return rc;
    return n ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}
