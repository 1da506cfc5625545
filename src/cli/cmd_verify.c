/* gpuvet verify: is the machine back at the baseline? */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "cli/child.h"
#include "cli/cli.h"
#include "dev/kind.h"
#include "env/probe.h"
#include "env/rootenv.h"
#include "check/compare.h"
#include "plan/image_pin.h"
#include "plan/verify.h"
#include "check/results.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet verify --baseline SNAPSHOT [--root DIR] [--snapshot CURRENT]\n"
    "                     [--results BASELINE_RESULTS] [--device D] [--python PY]\n"
    "                     [--json] [-o FILE]\n"
    "       gpuvet verify --baseline IMG-SNAPSHOT --image REF [--json] [-o FILE]\n"
    "       gpuvet verify --baseline IMG-SNAPSHOT --pid N [--json] [-o FILE]\n"
    "\n"
    "Prove that the machine matches a baseline again, after a rollback: snapshot it now,\n"
    "and the GPU-stack part of the difference to the baseline (kernel driver, runtime and\n"
    "math libraries, framework wheels, loader and environment, GPU packages) must be empty.\n"
    "GPU library files that no package owns are listed as leftovers. With the baseline's\n"
    "result file, the numerics suite is run again and compared: degraded or newly failing\n"
    "cases fail the verification. Exit 0 only when the stack matches and the numerics are\n"
    "not degraded; 1 otherwise.\n"
    "With --image, the image REF names (docs/image.md) must have the baseline image's\n"
    "manifest digest (the config digest for a legacy docker-archive). With --pid, every GPU\n"
    "library the running process N mapped, read through /proc/N/root, must be one of the\n"
    "baseline's libraries with the same sha256.\n"
    "The document is gpuvet.verify (docs/rollback.md).\n"
    "\n"
    "      --baseline FILE  the baseline snapshot\n"
    "      --root DIR       verify a chroot or mounted image instead of this machine\n"
    "      --snapshot FILE  use a saved snapshot as the current state\n"
    "      --results FILE   the baseline's result file ('gpuvet check -o'): rerun and compare\n"
    "      --device D       device for the rerun (default: the one the baseline used)\n"
    "      --python PY      for a torch:... baseline, the interpreter of the rerun (default:\n"
    "                       the one the baseline ran, in the root filesystem it ran in)\n"
    "      --image REF      verify an image against a baseline of an image\n"
    "      --pid N          verify the libraries a running process (a container's) mapped\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "  -h, --help           this help\n";

struct verify_opts {
    const char *baseline, *root, *snapshot, *results, *device, *python, *image;
    struct cli_out out;
    int pid;
};

static int parse(int argc, char **argv, struct verify_opts *o)
{
    static const struct option opts[] = {
        {"baseline", required_argument, 0, 'b'}, {"root", required_argument, 0, 'r'},
        {"snapshot", required_argument, 0, 's'}, {"results", required_argument, 0, 'R'},
        {"device", required_argument, 0, 'd'},   CLI_OUT_OPTIONS,
        {"python", required_argument, 0, 'P'},   {"help", no_argument, 0, 'h'},
        {"image", required_argument, 0, 'I'},    {"pid", required_argument, 0, 'p'},
        {0, 0, 0, 0}};
    char *end;
    struct cli_args args = CLI_ARGS("verify", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        const char *optarg = args.arg;
        if (cli_out_opt(&o->out, c, optarg))
            continue;
        switch (c) {
        case 'b': o->baseline = optarg; break;
        case 'r': o->root = optarg; break;
        case 's': o->snapshot = optarg; break;
        case 'R': o->results = optarg; break;
        case 'd': o->device = optarg; break;
        case 'P': o->python = optarg; break;
        case 'I': o->image = optarg; break;
        case 'p':
            o->pid = (int)strtol(optarg, &end, 10);
            if (*end || o->pid <= 0 || end == optarg)
                return cli_usage("verify", "--pid wants a process id, not '%s'", optarg);
            break;
        case 'h': return cli_help(usage) - 1;
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    if (!o->baseline)
        return cli_usage("verify", "--baseline SNAPSHOT is required");
    if (!!o->root + !!o->snapshot + !!o->image + !!o->pid > 1)
        return cli_usage("verify", "--root, --snapshot, --image and --pid exclude each other");
    if ((o->image || o->pid) && (o->results || o->device || o->python))
        return cli_usage("verify", "--results, --device and --python do not go with --image or "
                                   "--pid");
    return GV_EXIT_OK;
}

/* Where the baseline's PyTorch ran (its interpreter, root or image), as a note:
 * the rerun does not go there by itself. */
static void note_baseline_python(const json_t *doc, const char *python, json_t *report)
{
    const char *py = gv_json_path_str(doc, "device.description.python.executable");
    const char *root = gv_json_path_str(doc, "device.description.python_root");
    const char *image = gv_json_path_str(doc, "device.description.image.reference");
    if (!py && !root && !image)
        return;
    char note[1400];
    snprintf(note, sizeof note, "the baseline ran in %s%s%s%s%s; the rerun uses %s (a document "
             "never chooses the interpreter: pass --python to choose it)",
             py ? py : "", root ? " under root " : "", root ? root : "",
             image ? " inside image " : "", image ? image : "",
             python ? python : "check's default interpreter");
    json_object_set_new(report, "numerics_note", json_string(note));
}

/* Reruns the suite the baseline results came from and compares. */
static int rerun_numerics(const struct verify_opts *o, json_t *report, struct gv_err *err)
{
    struct gv_results base = {0}, now = {0};
    int rc = cli_results_load(o->results, &base, err);
    if (rc)
        return rc;
    char tmpl[] = "/tmp/gpuvet-verify-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        gv_results_free(&base);
        return gv_err_set(err, GV_E_IO, "cannot create a temporary result file");
    }
    close(fd);
    const char *only = json_string_value(json_object_get(base.doc, "only"));
    const char *dev = o->device ? o->device : gv_json_path_str(base.doc, "device.spec");
    char *args[16];
    int n = 0;
    args[n++] = (char *)"check";
    args[n++] = (char *)"--suite";
    args[n++] = base.suite;
    if (only) {
        args[n++] = (char *)"--only";
        args[n++] = (char *)only;
    }
    if (dev) {
        args[n++] = (char *)"--device";
        args[n++] = (char *)dev;
    }
    /* The interpreter is the user's (--python) or check's own choice, never one
     * the baseline document names: a document does not choose code to run
     * (docs/security.md). The baseline's is said beside the verdict. */
    if (gv_dev_spec_starts_python(dev) && o->python) {
        args[n++] = (char *)"--python";
        args[n++] = (char *)o->python;
    }
    note_baseline_python(base.doc, o->python, report);
    args[n++] = (char *)"-o";
    args[n++] = tmpl;
    args[n] = NULL;
    int child = cli_run_self(args, NULL, 1);
    if (child != 0 && child != 1) {
        unlink(tmpl);
        gv_results_free(&base);
        return gv_err_set(err, GV_E_DEVICE, "rerunning the suite (gpuvet check) failed with exit "
                                            "status %d",
                          child);
    }
    rc = cli_results_load(tmpl, &now, err);
    unlink(tmpl);
    if (rc) {
        gv_results_free(&base);
        return rc;
    }
    struct gv_compare cmp = {0};
    rc = gv_compare_results(&base, &now, NULL, NULL, &cmp, err);
    if (!rc) {
        json_t *num = json_pack("{s:s, s:s, s:b, s:i, s:{}, s:[]}", "results", o->results, "suite",
                                base.suite, "degraded", cmp.flagged || cmp.mismatches,
                                "mismatched_inputs", cmp.mismatches, "counts", "flagged");
        for (int k = 0; k < GV_CH_COUNT; k++)
            if (cmp.count[k])
                json_object_set_new(json_object_get(num, "counts"), gv_change_name(k),
                                    json_integer((json_int_t)cmp.count[k]));
        for (size_t i = 0; i < cmp.n; i++)
            if (gv_change_flagged(cmp.cases[i].status))
                json_array_append_new(json_object_get(num, "flagged"),
                                      json_pack("{s:s, s:s}", "id", cmp.cases[i].id, "change",
                                                gv_change_name(cmp.cases[i].status)));
        json_object_set_new(num, "explanation", cli_explain_json(&cmp, &base, &now));
        json_object_set_new(report, "numerics", num);
        gv_compare_free(&cmp);
    }
    gv_results_free(&base);
    gv_results_free(&now);
    return rc;
}

/* "WHAT: verdict", green or red by the report's stack_matches; returns it. */
static int print_verdict(const json_t *r, const char *what, const char *yes, const char *no)
{
    int ok = json_is_true(json_object_get(r, "stack_matches"));
    printf("%s%s:%s %s%s%s\n", cli_bold(), what, cli_reset(), ok ? cli_green() : cli_red(),
           ok ? yes : no, cli_reset());
    return ok;
}

static void print_human(const json_t *r)
{
    print_verdict(r, "stack", "matches the baseline", "differs from the baseline");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "differences"), i, c)
    {
        const char *b = json_string_value(json_object_get(c, "before"));
        const char *a = json_string_value(json_object_get(c, "after"));
        printf("  %-9s %s: %s -> %s\n", json_string_value(json_object_get(c, "layer")),
               json_string_value(json_object_get(c, "subject")), b ? b : "(absent)",
               a ? a : "(absent)");
    }
    json_array_foreach(json_object_get(r, "not_comparable"), i, c)
        printf("  cannot compare %s: %s\n", json_string_value(json_object_get(c, "section")),
               json_string_value(json_object_get(c, "reason")));
    json_int_t others = json_integer_value(json_object_get(r, "other_changes"));
    if (others)
        printf("  (%lld changes outside the GPU stack not counted: other packages, Python "
               "environments without a GPU framework)\n",
               (long long)others);
    json_t *left = json_object_get(r, "leftovers");
    if (json_array_size(left)) {
        printf("%sleftovers%s (GPU library files no package owns):\n", cli_bold(), cli_reset());
        json_array_foreach(left, i, c)
            printf("  %s%s\n", json_string_value(json_object_get(c, "path")),
                   json_is_true(json_object_get(c, "new")) ? "  (not at the baseline)" : "");
    } else {
        printf("%sleftovers:%s none\n", cli_bold(), cli_reset());
    }
    json_t *num = json_object_get(r, "numerics");
    if (num) {
        int bad = json_is_true(json_object_get(num, "degraded"));
        printf("%snumerics:%s %s%s%s (suite %s)\n", cli_bold(), cli_reset(),
               bad ? cli_red() : cli_green(), bad ? "degraded" : "not degraded", cli_reset(),
               json_string_value(json_object_get(num, "suite")));
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(num, "counts"), k, v)
            printf("  %-15s %lld\n", k, (long long)json_integer_value(v));
        json_array_foreach(json_object_get(num, "flagged"), i, c)
            printf("  %s%s%s %s\n", cli_red(), json_string_value(json_object_get(c, "change")),
                   cli_reset(), json_string_value(json_object_get(c, "id")));
        if (bad)
            cli_explain_print_json(json_object_get(num, "explanation"));
    }
    const char *note = json_string_value(json_object_get(r, "numerics_note"));
    if (note)
        printf("  note: %s\n", note);
}

static void print_image(const json_t *r)
{
    int ok = print_verdict(r, "image", "the baseline's", "not the baseline's");
    const char *key = json_string_value(json_object_get(r, "compared"));
    printf("  %s: baseline %s\n  %*s  image    %s\n", key,
           json_string_value(json_object_get(r, "baseline_digest")), (int)strlen(key), "",
           json_string_value(json_object_get(r, "image_digest")));
    const char *which[] = {"baseline_tags", "image_tags"};
    for (int k = 0; k < 2 && !ok; k++) {
        size_t i;
        json_t *t;
        printf("  %s:", which[k]);
        json_array_foreach(json_object_get(r, which[k]), i, t)
            printf(" %s", json_string_value(t));
        printf("\n");
    }
}

static void print_process(const json_t *r)
{
    char what[48];
    snprintf(what, sizeof what, "process %lld", (long long)json_integer_value(json_object_get(r, "pid")));
    print_verdict(r, what, "maps the baseline's GPU libraries", "does not match the baseline");
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(r, "mapped"), i, m)
    {
        const char *st = json_string_value(json_object_get(m, "status"));
        const char *why = json_string_value(json_object_get(m, "reason"));
        printf("  %-15s %s%s%s\n", st ? st : "?", json_string_value(json_object_get(m, "path")),
               why ? ": " : "", why ? why : "");
    }
    json_array_foreach(json_object_get(r, "not_comparable"), i, m)
        printf("  %s\n", json_string_value(json_object_get(m, "reason")));
}

/* Adds "ok", prints the report (taking it); the exit status. */
static int finish(const struct verify_opts *o, json_t *report)
{
    int rc = GV_EXIT_OK;
    int ok = json_is_true(json_object_get(report, "stack_matches")) &&
             !json_is_true(gv_json_path(report, "numerics.degraded"));
    json_object_set_new(report, "ok", json_boolean(ok));
    rc = cli_put_doc("verify", report, &o->out);
    if (rc || !cli_out_text(&o->out))
        ;
    else if (o->image)
        print_image(report);
    else if (o->pid)
        print_process(report);
    else
        print_human(report);
    json_decref(report);
    return rc ? rc : ok ? GV_EXIT_OK : GV_EXIT_FINDINGS;
}

/* --image or --pid: the running or stored image against an image baseline. */
static int verify_image_or_pid(const struct verify_opts *o, json_t **report, struct gv_err *err)
{
    json_t *baseline = NULL, *image = NULL;
    int rc = gv_snapshot_load(o->baseline, &baseline, err);
    if (!rc && o->image)
        rc = cli_image_identity(o->image, &image, err);
    if (!rc && o->image)
        rc = gv_verify_image(baseline, image, o->baseline, report, err);
    else if (!rc)
        rc = gv_verify_process(baseline, o->pid, o->baseline, report, err);
    json_decref(baseline);
    json_decref(image);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    struct verify_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc == -1)
        return GV_EXIT_OK; /* --help */
    if (rc)
        return rc;
    if (o.root && !gv_is_dir(o.root))
        return cli_failf("--root %s: not a directory", o.root);
    struct gv_err err = {0};
    json_t *baseline = NULL, *current = NULL, *report = NULL;
    if (o.image || o.pid) {
        if (verify_image_or_pid(&o, &report, &err))
            return cli_fail(&err);
        return finish(&o, report);
    }
    if (gv_snapshot_load(o.baseline, &baseline, &err))
        return cli_fail(&err);
    if (o.snapshot) {
        rc = gv_snapshot_load(o.snapshot, &current, &err);
    } else {
        /* a root's variables are its /etc/environment's, not this process's */
        const char *r = o.root ? o.root : "/";
        int live = strcmp(r, "/") == 0;
        char **root_env = NULL;
        rc = live ? GV_OK : gv_rootenv_read(r, &root_env, &err);
        struct gv_probe_ctx ctx = {.root = r, .live = live, .envp = live ? environ : root_env,
                                   .hash_files = 1};
        if (!rc)
            rc = gv_snapshot_collect(&ctx, &current, &err);
        gv_rootenv_free(root_env);
    }
    if (!rc)
        rc = gv_verify_stack(baseline, current, o.baseline, &report, &err);
    json_decref(baseline);
    json_decref(current);
    if (!rc && o.results)
        rc = rerun_numerics(&o, report, &err);
    if (rc) {
        json_decref(report);
        return cli_fail(&err);
    }
    return finish(&o, report);
}
