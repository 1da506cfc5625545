/* gpuvet plan rollback: a reviewed, verifiable rollback plan (dry run). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"
#include "env/probe.h"
#include "env/rootenv.h"
#include "plan/image_pin.h"
#include "plan/plan.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet plan rollback --to BASELINE|last-good [--machine M] [--from CURRENT]\n"
    "                            [--root DIR] [--name NAME]\n"
    "                            [--format sh|md|json] [-o FILE] [--no-check] [--archive-rocm]\n"
    "\n"
    "Generate the plan that takes this machine back to a baseline snapshot, every layer\n"
    "together: GPU packages to the baseline versions in one package-manager transaction\n"
    "(removing what the baseline did not have), held; the framework wheels from the index\n"
    "of the baseline's build; environment and loader files; the kernel driver only if it\n"
    "changed; then 'gpuvet verify'. It only prints: nothing is changed until you run it.\n"
    "Before printing, every target version is checked against the package manager's\n"
    "sources and local caches, and the transaction is simulated; if anything is missing\n"
    "the plan is refused with what to do (exit 1).\n"
    "A baseline of a container image (snapshot --image) gives a digest pin instead:\n"
    "NAME@sha256:... and the docker, podman, Kubernetes and compose lines that select it.\n"
    "\n"
    "      --to FILE       the baseline snapshot (from 'gpuvet snapshot -o')\n"
    "      --to last-good  the snapshot of this machine's last run that passed, from the\n"
    "                      history database ($GPUVET_DB; see 'gpuvet history good')\n"
    "      --machine M     with last-good: that machine's (hostname or machine id)\n"
    "      --from FILE     the current state as a saved snapshot (default: snapshot now)\n"
    "      --root DIR      plan for a chroot or mounted image: snapshot and query it there\n"
    "      --name NAME     an image baseline: the image name to pin (default: from its tags)\n"
    "      --format F      sh (default; a bash script), md (for review) or json\n"
    "  -o, --output FILE   write the plan to FILE (atomically) instead of stdout\n"
    "      --no-check      do not query the package manager (the plan is marked unchecked)\n"
    "      --archive-rocm  step 0 also archives the /opt/rocm-* trees being replaced\n"
    "      --json          same as --format json\n"
    "  -h, --help          this help\n";

static int print_problems(const json_t *plan)
{
    size_t i;
    json_t *p;
    fprintf(stderr, "gpuvet plan: cannot plan the rollback:\n");
    json_array_foreach(json_object_get(plan, "problems"), i, p)
        fprintf(stderr, "  %s: %s\n    how: %s\n", json_string_value(json_object_get(p, "subject")),
                json_string_value(json_object_get(p, "message")),
                json_string_value(json_object_get(p, "how")));
    fprintf(stderr, "Nothing was generated and nothing was changed.\n");
    return GV_EXIT_FINDINGS;
}

static int emit_text(const char *text, const char *format, const char *output)
{
    struct gv_err err = {0};
    if (!text)
        return cli_failf("the plan holds a value that cannot be rendered safely; refusing");
    if (output && strcmp(output, "-")) {
        int rc = gv_write_atomic(output, text, strlen(text), !strcmp(format, "sh") ? 0755 : 0644,
                                 &err);
        if (rc)
            return cli_fail(&err);
        cli_say_written("plan", output);
        return GV_EXIT_OK;
    }
    fputs(text, stdout);
    return GV_EXIT_OK;
}

/* A partial plan (it leaves differences outside the GPU stack as they are) is
 * generated, and says so on stderr: how many, and where they are listed. */
static void say_partial(const json_t *plan)
{
    const json_t *left = json_object_get(plan, "not_rolled_back");
    size_t n = json_array_size(left);
    if (!n)
        return;
    fprintf(stderr, "gpuvet plan: partial: %zu difference%s %s not rolled back (outside the GPU "
            "stack), listed in the plan's not_rolled_back:\n", n, n == 1 ? "" : "s",
            n == 1 ? "is" : "are");
    size_t i;
    json_t *d;
    json_array_foreach(left, i, d) {
        if (i == 5) {
            fprintf(stderr, "  ... and %zu more\n", n - 5);
            break;
        }
        const char *b = json_string_value(json_object_get(d, "before"));
        const char *a = json_string_value(json_object_get(d, "after"));
        fprintf(stderr, "  %s: %s -> %s\n", json_string_value(json_object_get(d, "subject")),
                b ? b : "(absent)", a ? a : "(absent)");
    }
}

/* Prints or writes the plan (taking it) in its format; an incomplete plan's
 * problems instead, exit 1. A partial one is written, and says what it leaves. */
static int emit_plan(json_t *plan, const char *format, const char *output)
{
    const char *status = json_string_value(json_object_get(plan, "status"));
    int rc, complete = json_is_true(json_object_get(plan, "complete")) ||
                       (status && !strcmp(status, "partial"));
    say_partial(plan);
    if (!strcmp(format, "json")) {
        rc = cli_emit_json(plan, output);
        json_decref(plan);
        if (!rc && output && strcmp(output, "-"))
            cli_say_written("plan", output);
        return rc ? rc : complete ? GV_EXIT_OK : GV_EXIT_FINDINGS;
    }
    if (!complete) {
        rc = print_problems(plan);
        json_decref(plan);
        return rc;
    }
    char *text = !strcmp(format, "sh") ? gv_plan_render_sh(plan) : gv_plan_render_md(plan);
    json_decref(plan);
    rc = emit_text(text, format, output);
    free(text);
    return rc;
}

/* A baseline of an image: the digest pin (docs/rollback.md, "Images"). */
static int plan_image(json_t *baseline, const char *to, const char *name, int machine_opts,
                      const char *format, const char *output)
{
    struct gv_err err = {0};
    if (!gv_plan_is_image(baseline)) {
        json_decref(baseline);
        return cli_usage("plan", "--name goes with a baseline of an image (snapshot --image)");
    }
    if (name && !gv_valid_image_name(name)) {
        json_decref(baseline);
        return cli_usage("plan", "--name %s: not an image name (OCI reference grammar)", name);
    }
    if (machine_opts) {
        json_decref(baseline);
        return cli_usage("plan", "--from, --root and --archive-rocm do not apply to an image "
                                 "baseline: its plan is a digest pin");
    }
    char base_abs[PATH_MAX], self[PATH_MAX];
    if (!realpath(to, base_abs))
        snprintf(base_abs, sizeof base_abs, "%s", to);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    struct gv_plan_opts po = {.baseline_path = base_abs, .gpuvet_path = n > 0 ? self : NULL};
    json_t *plan = NULL;
    int rc = gv_plan_image_pin(baseline, &po, name, &plan, &err);
    json_decref(baseline);
    if (rc)
        return cli_fail(&err);
    return emit_plan(plan, format, output);
}

int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"to", required_argument, 0, 't'},     {"from", required_argument, 0, 'f'},
        {"root", required_argument, 0, 'r'},   {"format", required_argument, 0, 'F'},
        {"output", required_argument, 0, 'o'}, {"no-check", no_argument, 0, 'n'},
        {"archive-rocm", no_argument, 0, 'a'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},         {"machine", required_argument, 0, 'm'},
        {"name", required_argument, 0, 'N'},   {0, 0, 0, 0}};
    const char *name = NULL;
    const char *machine = NULL;
    char good_path[4096];
    const char *to = NULL, *from = NULL, *root = NULL, *format = "sh", *output = NULL;
    int check = 1, archive = 0;
    struct cli_args args = CLI_ARGS("plan rollback", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        const char *optarg = args.arg;
        switch (c) {
        case 't': to = optarg; break;
        case 'f': from = optarg; break;
        case 'r': root = optarg; break;
        case 'F': format = optarg; break;
        case 'o': output = optarg; break;
        case 'n': check = 0; break;
        case 'a': archive = 1; break;
        case 'j': format = "json"; break;
        case 'm': machine = optarg; break;
        case 'N': name = optarg; break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (args.nops < 1 || strcmp(args.ops[0], "rollback") != 0)
        return cli_usage("plan", "the only plan kind is 'rollback'");
    if (args.nops > 1)
        return cli_usage("plan", "unexpected argument '%s'", args.ops[1]);
    if (!to)
        return cli_usage("plan", "--to BASELINE is required");
    if (strcmp(format, "sh") && strcmp(format, "md") && strcmp(format, "json"))
        return cli_usage("plan", "--format must be sh, md or json, not '%s'", format);
    if (root && !gv_is_dir(root))
        return cli_failf("--root %s: not a directory", root);
    if (machine && strcmp(to, "last-good"))
        return cli_usage("plan", "--machine goes with --to last-good");
    if (!strcmp(to, "last-good")) { /* from the history database (cmd_history.c) */
        int grc = cli_history_last_good(machine, good_path, sizeof good_path);
        if (grc)
            return grc;
        to = good_path;
    }

    struct gv_err err = {0};
    json_t *baseline = NULL, *current = NULL;
    if (gv_snapshot_load(to, &baseline, &err))
        return cli_fail(&err);
    if (gv_plan_is_image(baseline) || name)
        return plan_image(baseline, to, name, from || root || archive, format, output);
    int rc;
    if (from) {
        rc = gv_snapshot_load(from, &current, &err);
    } else {
        const char *r = root ? root : "/";
        int live = strcmp(r, "/") == 0;
        char **root_env = NULL;
        rc = live ? GV_OK : gv_rootenv_read(r, &root_env, &err);
        struct gv_probe_ctx ctx = {.root = r, .live = live, .envp = live ? environ : root_env,
                                   .hash_files = 0};
        if (!rc)
            rc = gv_snapshot_collect(&ctx, &current, &err);
        gv_rootenv_free(root_env);
    }
    if (rc) {
        json_decref(baseline);
        return cli_fail(&err);
    }
    char base_abs[PATH_MAX], self[PATH_MAX];
    if (!realpath(to, base_abs))
        snprintf(base_abs, sizeof base_abs, "%s", to);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    const char *query_root = root ? root : gv_json_path_str(current, "root");
    struct gv_plan_opts po = {.baseline_path = base_abs,
                              .root = query_root ? query_root : "/",
                              .check_availability = check,
                              .archive_tree = archive,
                              .gpuvet_path = n > 0 ? self : NULL};
    json_t *plan = NULL;
    rc = gv_plan_rollback(baseline, current, &po, &plan, &err);
    json_decref(baseline);
    json_decref(current);
    if (rc)
        return cli_fail(&err);
    if (!check)
        json_object_set_new(plan, "checked", json_false());
    return emit_plan(plan, format, output);
}
