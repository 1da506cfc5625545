/* gpuvet snapshot: record every layer of the GPU stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"
#include "env/probe.h"
#include "env/rootenv.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet snapshot [-o FILE] [--root DIR | --image REF] [--pid N] [--no-hash] [--json]\n"
    "                       [--record] [--db URL]\n"
    "\n"
    "Record every layer of the GPU stack in one versioned JSON document: host, GPUs\n"
    "(from PCI/sysfs, no vendor tool needed), kernel drivers, ROCm and CUDA installs and\n"
    "every GPU library in them, packages, Python environments and framework builds,\n"
    "loader configuration, GPU-related environment variables, and device permissions.\n"
    "Keep one before you change anything; compare later ones with 'gpuvet diff'.\n"
    "The document (schema gpuvet.snapshot) goes to stdout unless -o writes it.\n"
    "\n"

    "      --root DIR     inspect a mounted image or chroot instead of this machine;\n"
    "                     parts that need a running system are marked not collected\n"
    "      --image REF    inspect a container image without unpacking it: an OCI layout\n"
    "                     DIR[:TAG], an oci-archive or docker-archive FILE[:TAG], or\n"
    "                     podman:NAME[:TAG] / docker:NAME[:TAG] (docs/image.md)\n"
    "      --pid N        also list the GPU libraries process N has mapped\n"
    "      --no-hash      skip content hashes of library files (faster)\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "      --record       also record it in the history database ($GPUVET_DB, default\n"
    "                     ~/.local/share/gpuvet/history.db; GPUVET_RECORD=1: always)\n"
    "      --db URL       record it in this database (a path or postgresql://...)\n"
    "  -h, --help         this help\n";

/* Writes the document (atomically with -o; on stdout without -o or with
 * --json), records it when asked, frees it. */
static int emit(json_t *doc, const struct cli_out *out, int record)
{
    struct cli_out o = {out->output, out->json || !out->output};
    int rc = cli_put_doc("snapshot", doc, &o);
    if (cli_record_wanted(record) && cli_record(doc, out->output) && !rc)
        rc = GV_EXIT_ERROR;
    json_decref(doc);
    return rc;
}

static int snapshot_image(const char *ref, int root_given, int pid, int hash,
                          const struct cli_out *output, int record)
{
    if (root_given || pid)
        return cli_usage("snapshot", "--image inspects an image and cannot be combined with "
                                     "--root or --pid");
    struct gv_err err = {0};
    json_t *doc;
    if (cli_image_snapshot(ref, hash, &doc, &err))
        return cli_fail(&err);
    return emit(doc, output, record);
}

int cmd_snapshot(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_OUT_OPTIONS,                       {"root", required_argument, 0, 'r'},
        {"pid", required_argument, 0, 'p'},    {"no-hash", no_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'},         {"record", no_argument, 0, 'R'},
        {"db", required_argument, 0, 'Q'},     {"image", required_argument, 0, 'I'},
        {0, 0, 0, 0}};
    struct cli_out out = {0};
    const char *root = "/", *image = NULL;
    int pid = 0, hash = 1, record = 0, root_given = 0;
    struct cli_args args = CLI_ARGS("snapshot", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        const char *optarg = args.arg;
        if (cli_out_opt(&out, c, optarg))
            continue;
        switch (c) {
        case 'r': root = optarg, root_given = 1; break;
        case 'I': image = optarg; break;
        case 'p': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 1 << 30)
                return cli_usage("snapshot", "--pid needs a process id, got '%s'", optarg);
            pid = (int)v;
            break;
        }
        case 'n': hash = 0; break;
        case 'R': record = 1; break;
        case 'Q': cli_record_set_db(optarg), record = 1; break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    if (image)
        return snapshot_image(image, root_given, pid, hash, &out, record);
    if (!gv_is_dir(root))
        return cli_failf("--root %s: not a directory", root);
    int live = strcmp(root, "/") == 0;
    if (pid && !live)
        return cli_usage("snapshot", "--pid inspects a running process and cannot be combined "
                                     "with --root");
    /* Under --root the image's variables are what a login there gets from
     * its /etc/environment; this process's environment is not the image's. */
    struct gv_err err = {0};
    char **root_env = NULL;
    if (!live && gv_rootenv_read(root, &root_env, &err))
        return cli_fail(&err);
    struct gv_probe_ctx ctx = {.root = root, .live = live, .pid = pid,
                               .envp = live ? environ : root_env, .hash_files = hash};
    json_t *doc;
    int failed = gv_snapshot_collect(&ctx, &doc, &err);
    gv_rootenv_free(root_env);
    if (failed)
        return cli_fail(&err);
    return emit(doc, &out, record);
}
