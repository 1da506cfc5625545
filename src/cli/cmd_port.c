/* gpuvet port: what will break when CUDA code runs on AMD GPUs (docs/port.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "cli/port_out.h"
#include "port/port.h"

static const char usage[] =
    "usage: gpuvet port scan  DIR|FILE... [--target LIST] [--root DIR | --image REF]\n"
    "                         [--extensions] [--json] [-o FILE] [--junit FILE]\n"
    "       gpuvet port check DIR|FILE... [--target LIST] [--root DIR | --image REF]\n"
    "                         [--json] [-o FILE]\n"
    "\n"
    "scan reads CUDA, HIP, C++ and Python sources (.cu .cuh .hip .cpp .cc .cxx .c .h .hpp\n"
    ".py; directories are walked without following links) and reports each thing that\n"
    "will break or silently change on AMD GPUs: file, line and column, a rule id, what\n"
    "goes wrong and why (a fact with its source), and the change to make. Code that\n"
    "assumes 32-lane warps is reported only for targets with 64-lane wavefronts (CDNA:\n"
    "gfx90a, gfx942, ...); warpSize is never a finding. With --extensions it also reads\n"
    "the compiled extension modules of the Python environments (of this machine, --root\n"
    "or --image). check compiles the HIP sources with a real hipcc for each target.\n"
    "The document is gpuvet.port.\n"
    "\n"
    "      --target LIST  GPU targets, comma-separated (gfx942,gfx1100); default: the AMD\n"
    "                     GPUs present, else gfx942 and gfx1100 (both wavefront sizes)\n"
    "      --root DIR     the machine tree whose GPUs, environments and hipcc are used\n"
    "      --image REF    the same from a container image (docs/image.md)\n"
    "      --extensions   also scan compiled extension modules (scan only)\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "      --junit FILE   JUnit XML: one testcase per file, a failure per file with errors\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 no finding of severity error, 1 findings of severity error,\n"
    "2 usage error, 3 bad input (a path that cannot be read, an unknown target).\n";

struct port_opts {
    const char *target, *root, *image, *junit;
    struct cli_out out;
    int extensions, check;
    char **paths; /* the operands */
    int npaths;
};

static int parse(int argc, char **argv, struct port_opts *o)
{
    static const struct option opts[] = {{"target", required_argument, 0, 't'},
                                         {"root", required_argument, 0, 'r'},
                                         {"image", required_argument, 0, 'i'},
                                         {"extensions", no_argument, 0, 'e'},
                                         CLI_OUT_OPTIONS,
                                         {"junit", required_argument, 0, 'u'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct cli_args a = CLI_ARGS(o->check ? "port check" : "port scan", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&a)) != -1;) {
        if (cli_out_opt(&o->out, c, a.arg))
            continue;
        switch (c) {
        case 't': o->target = a.arg; break;
        case 'r': o->root = a.arg; break;
        case 'i': o->image = a.arg; break;
        case 'e': o->extensions = 1; break;
        case 'u': o->junit = a.arg; break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (o->root && o->image)
        return cli_usage("port", "--root and --image exclude each other");
    if (o->check && (o->extensions || o->junit))
        return cli_usage("port", "check takes neither --extensions nor --junit");
    if (!a.nops)
        return cli_usage("port", "needs at least one DIR or FILE");
    o->paths = a.ops;
    o->npaths = a.nops;
    return -1;
}

static json_t *new_doc(const char *command, const struct gv_port_targets *t, const char *how)
{
    json_t *doc = json_object(), *names = json_array();
    json_object_set_new(doc, "schema", json_string("gpuvet.port"));
    json_object_set_new(doc, "schema_version", json_integer(1));
    json_object_set_new(doc, "command", json_string(command));
    for (size_t i = 0; i < t->n; i++)
        json_array_append_new(names, json_string(t->names[i]));
    json_object_set_new(doc, "targets", names);
    json_object_set_new(doc, "targets_from", json_string(how));
    json_object_set_new(doc, "findings", json_array());
    json_object_set_new(doc, "stats", json_object());
    return doc;
}

/* The findings into doc; GV_OK or an error in err. */
static int run(const struct port_opts *o, const char *root, const char *const *paths, size_t n,
               const struct gv_port_targets *t, json_t *doc, struct gv_err *err)
{
    json_t *findings = json_object_get(doc, "findings"), *stats = json_object_get(doc, "stats");
    if (o->check)
        return gv_port_compile(root, paths, n, t, findings, stats, err);
    int rc = gv_port_scan(paths, n, t, findings, stats, err);
    if (rc || !o->extensions)
        return rc;
    json_t *ext = json_object();
    rc = gv_port_extensions(root, t, findings, ext, err);
    json_object_set_new(stats, "extensions", ext);
    json_object_set_new(stats, "findings", json_integer((json_int_t)json_array_size(findings)));
    return rc;
}

static int emit(const struct port_opts *o, json_t *doc, const json_t *files)
{
    int rc = GV_EXIT_OK;
    struct gv_err err = {0};
    if (o->junit && cli_port_junit(o->junit, doc, files, &err))
        return cli_fail(&err);
    if (o->junit)
        cli_say_written("port", o->junit);
    if ((rc = cli_put_doc("port", doc, &o->out)) != GV_EXIT_OK)
        return rc;
    if (cli_out_text(&o->out))
        cli_port_print(doc);
    return GV_EXIT_OK;
}

static int port_main(struct port_opts *o)
{
    char root[4096] = "/";
    struct gv_err err = {0};
    json_t *image = NULL;
    if (o->image && cli_image_rootfs(o->image, root, sizeof root, &image, &err))
        return cli_fail(&err);
    json_decref(image);
    if (o->root)
        snprintf(root, sizeof root, "%s", o->root);
    struct gv_port_targets t;
    const char *how = "";
    if (gv_port_targets_resolve(o->target, root, &t, &how, &err))
        return cli_fail(&err);
    json_t *doc = new_doc(o->check ? "check" : "scan", &t, how);
    int rc = run(o, root, (const char *const *)o->paths, (size_t)o->npaths, &t, doc, &err);
    gv_port_targets_free(&t);
    json_t *stats = json_object_get(doc, "stats");
    cli_port_print_skipped(o->check ? "port check" : "port scan", stats);
    if (rc) {
        json_decref(doc);
        return cli_fail(&err);
    }
    json_t *files = json_incref(json_object_get(stats, "paths"));
    json_object_del(stats, "paths");
    rc = emit(o, doc, files);
    json_decref(files);
    struct cli_port_counts c;
    cli_port_count(json_object_get(doc, "findings"), &c);
    json_decref(doc);
    if (rc)
        return rc;
    return c.errors ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}

int cmd_port(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return argc < 2 ? cli_usage("port", "needs a subcommand: scan or check")
                        : cli_help(usage);
    struct port_opts o = {0};
    if (!strcmp(argv[1], "check"))
        o.check = 1;
    else if (strcmp(argv[1], "scan"))
        return cli_usage("port", "unknown subcommand '%s' (scan or check)", argv[1]);
    int rc = parse(argc - 1, argv + 1, &o);
    if (rc >= 0)
        return rc;
    return port_main(&o);
}
