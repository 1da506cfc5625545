/* gpuvet snapshot: record every layer of the GPU stack. */
#include <getopt.h>
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
    "\n"
    "  -o, --output FILE  write the snapshot to FILE (atomically) instead of stdout\n"
    "      --root DIR     inspect a mounted image or chroot instead of this machine;\n"
    "                     parts that need a running system are marked not collected\n"
    "      --image REF    inspect a container image without unpacking it: an OCI layout\n"
    "                     DIR[:TAG], an oci-archive or docker-archive FILE[:TAG], or\n"
    "                     podman:NAME[:TAG] / docker:NAME[:TAG] (docs/image.md)\n"
    "      --pid N        also list the GPU libraries process N has mapped\n"
    "      --no-hash      skip content hashes of library files (faster)\n"
    "      --json         JSON output (the default for this command)\n"
    "      --record       also record it in the history database ($GPUVET_DB, default\n"
    "                     ~/.local/share/gpuvet/history.db; GPUVET_RECORD=1: always)\n"
    "      --db URL       record it in this database (a path or postgresql://...)\n"
    "  -h, --help         this help\n";

/* Writes the document (atomically with -o), records it when asked, frees it. */
static int emit(json_t *doc, const char *output, int record)
{
    int rc = cli_emit_json(doc, output);
    if (!rc && output && strcmp(output, "-"))
        cli_say_written("snapshot", output);
    if (cli_record_wanted(record) && cli_record(doc, output) && !rc)
        rc = GV_EXIT_ERROR;
    json_decref(doc);
    return rc;
}

static int snapshot_image(const char *ref, int root_given, int pid, int hash,
                          const char *output, int record)
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
        {"output", required_argument, 0, 'o'}, {"root", required_argument, 0, 'r'},
        {"pid", required_argument, 0, 'p'},    {"no-hash", no_argument, 0, 'n'},
        {"json", no_argument, 0, 'j'},         {"help", no_argument, 0, 'h'},
        {"record", no_argument, 0, 'R'}, {"db", required_argument, 0, 'Q'},
        {"image", required_argument, 0, 'I'},
        {0, 0, 0, 0}};
    const char *output = NULL, *root = "/", *image = NULL;
    int pid = 0, hash = 1, record = 0, root_given = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
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
        case 'j': break;
        case 'R': record = 1; break;
        case 'Q': cli_record_set_db(optarg), record = 1; break;
        case 'h': return cli_help(usage);
        default: return cli_usage("snapshot", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage("snapshot", "unexpected argument '%s'", argv[optind]);
    if (image)
        return snapshot_image(image, root_given, pid, hash, output, record);
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
    return emit(doc, output, record);
}
