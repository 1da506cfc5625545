/* gpuvet torch: the user's own model, captured op by op (capture), and the
 * operation that changed found by replaying it in another environment (bisect).
 * gpuvet compare A.gvcap B.gvcap compares two captures (cmd_compare.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "capture/capture.h"
#include "capture/gvcap.h"
#include "cli/cli.h"
#include "dev/kind.h"
#include "env/probe.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet torch capture --model SPEC [--python PY] [--python-root DIR | --image REF]\n"
    "                            [--device D] [--max-bytes N] [--seed N] [--strict]\n"
    "                            -o RUN.gvcap [--json] [--record] [--db URL]\n"
    "       gpuvet torch bisect A.gvcap [--python PY] [--python-root DIR | --image REF]\n"
    "                            [--device D]\n"
    "                            [--strategy ops|modules|auto] [--keep-capture B.gvcap]\n"
    "                            [-o REPORT.json] [--junit F] [--json]\n"
    "\n"
    "capture: runs your model once (evaluation mode, fixed seed) in the interpreter PY\n"
    "and records every ATen operation in order, with the module it ran in, its inputs'\n"
    "and outputs' shapes, dtypes, devices and digests, its time, and the output tensors\n"
    "themselves, streamed to RUN.gvcap (never all in memory); also the final outputs,\n"
    "the CPU fallbacks and device transfers on a GPU, non-deterministic ops and RNG use,\n"
    "and the embedded snapshot. Compare two captures with 'gpuvet compare A B'.\n"
    "\n"
    "bisect: which operation changed. In the environment it runs in (its variables,\n"
    "the interpreter PY) it replays each op of A's trace on A's exact recorded inputs\n"
    "(so a difference cannot be inherited), computes the same op in float64 on the CPU\n"
    "as the referee, and classifies each op: identical, different but equally accurate,\n"
    "or less accurate here. It also runs the model itself here, so that a change above\n"
    "ATen (Python code choosing other ops or other arguments) is found too. On a large\n"
    "trace it walks the module tree first: each module's ops are replayed as one chain\n"
    "from A's values at its boundary, and only a module whose outputs are not identical\n"
    "or equally accurate is opened up, down to single ops.\n"
    "\n"
    "      --model SPEC      path/to/file.py:function (returns (model, inputs) or\n"
    "                        (model, args, kwargs); inputs: a tensor, a tuple or a dict)\n"
    "                        or a torch.export program (.pt2); bisect: run this file\n"
    "                        as the model (its sha256 must be the capture's) where the\n"
    "                        capture's own lies outside the current directory and the\n"
    "                        capture's\n"
    CLI_HELP_PYTHON
    "      --device D        cuda:N or cpu (default: cuda:0 where a GPU is present)\n"
    "      --max-bytes N     keep tensors up to N bytes in all (K, M, G suffixes); beyond\n"
    "                        that only digests and statistics (and say so)\n"
    "      --seed N          the seed set before the model is built and run (default 0)\n"
    "      --strict          capture: exit 1 when ops ran on the CPU or moved between\n"
    "                        devices inside the forward pass of a GPU model\n"
    "      --strategy S      bisect: ops (every op on its own), modules (module tree\n"
    "                        first), auto (default: modules beyond 2000 ops)\n"
    "      --record          capture: record the capture's index in the history database\n"
    "                        (GPUVET_RECORD=1: always; see 'gpuvet history')\n"
    "      --db URL          capture: record it in this database (a path or\n"
    "                        postgresql://...)\n"
    "      --keep-capture F  bisect: keep this environment's capture of the model in F\n"

    "      --junit F         bisect: JUnit XML, one testcase per op (a culprit is a\n"
    "                        failure) and a failure per call change\n"
    "  -o, --output FILE     capture: the .gvcap to write (required); bisect: also write\n"
    "                        the document, its report (gpuvet.bisect), to FILE\n"
    "                        (atomically; -o -: stdout)\n"
    CLI_HELP_JSON
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 fine, 1 a finding (capture --strict: CPU fallback; bisect: an op is\n"
    "less accurate here, or a call changed), 2 usage error, 3 the model or the\n"
    "environment failed (the message names the file and line; nothing is written).\n";

struct torch_opts {
    const char *model, *device, *out, *keep, *junit;
    struct cli_python py; /* --python, --python-root, --image */
    char **ops;           /* the operands */
    int nops;
    uint64_t max_bytes;
    int seed, strict, json, record;
    int by_module; /* bisect: 0 ops, 1 modules, -1 auto */
};

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1ull << 30, end++;
    if (end == s || *end || v == 0 || v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

/* argv[0] is the subcommand (capture, bisect). */
static int parse(int argc, char **argv, struct torch_opts *o)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'},    CLI_PYTHON_OPTIONS,
        {"device", required_argument, 0, 'd'},   CLI_OUT_OPTIONS,
        {"max-bytes", required_argument, 0, 'B'}, {"seed", required_argument, 0, 's'},
        {"strict", no_argument, 0, 'S'},         {"keep-capture", required_argument, 0, 'k'},
        {"junit", required_argument, 0, 'J'},    {"strategy", required_argument, 0, 'T'},
        {"record", no_argument, 0, 'r'},         {"db", required_argument, 0, 'Q'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    char cmd[32];
    snprintf(cmd, sizeof cmd, "torch %s", argv[0]);
    struct cli_args a = CLI_ARGS(cmd, argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&a)) != -1;) {
        const char *optarg = a.arg;
        if (cli_python_opt(&o->py, c, optarg))
            continue;
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'd': o->device = optarg; break;
        case 'o': o->out = optarg; break;
        case CLI_OPT_JSON: o->json = 1; break;
        case 'J': o->junit = optarg; break;
        case 'B':
            if (parse_size(optarg, &o->max_bytes))
                return cli_usage("torch", "--max-bytes takes a size such as 500M, not '%s'",
                                 optarg);
            break;
        case 's': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 1000000000)
                return cli_usage("torch", "--seed takes a whole number, not '%s'", optarg);
            o->seed = (int)v;
            break;
        }
        case 'S': o->strict = 1; break;
        case 'k': o->keep = optarg; break;
        case 'T':
            if (!strcmp(optarg, "ops"))
                o->by_module = 0;
            else if (!strcmp(optarg, "modules"))
                o->by_module = 1;
            else if (!strcmp(optarg, "auto"))
                o->by_module = -1;
            else
                return cli_usage("torch", "--strategy is ops, modules or auto, not '%s'", optarg);
            break;
        case 'r': o->record = 1; break;
        case 'Q': cli_record_set_db(optarg), o->record = 1; break;
        case 'h': return -1;
        default: return GV_EXIT_USAGE;
        }
    }
    o->ops = a.ops;
    o->nops = a.nops;
    return GV_EXIT_OK;
}

/* "torch:cuda:0" / "torch:cpu" for the worker; the GPU when the machine has one. */
static void torch_device(const char *given, char *out, size_t n)
{
    if (given)
        snprintf(out, n, "%s%s", gv_dev_spec_starts_python(given) ? "" : "torch:", given);
    else
        snprintf(out, n, "%s", gv_kind_torch.default_spec());
}

static int open_torch(const struct torch_opts *o, const struct gv_backend **be,
                      struct gv_device **dev)
{
    char spec[64], note[1200];
    torch_device(o->device, spec, sizeof spec);
    struct gv_err err = {0};
    const char *root;
    char image_root[PATH_MAX];
    json_t *image = NULL;
    int rc = cli_python_setup("torch", &o->py, spec, image_root, sizeof image_root, &root, &image,
                              note, sizeof note);
    json_decref(image);
    if (rc)
        return rc;
    if (gv_device_open(spec, be, dev, NULL, 0, &err))
        return err.code == GV_E_USAGE ? cli_usage("torch", "%s", err.msg) : cli_fail(&err);
    return GV_EXIT_OK;
}

/* ---------- capture ---------- */

static json_t *live_snapshot(void)
{
    struct gv_probe_ctx ctx = {.root = "/", .live = 1, .envp = environ, .hash_files = 0};
    json_t *doc = NULL;
    struct gv_err err = {0};
    if (gv_snapshot_collect(&ctx, &doc, &err))
        return gv_section_missing("gv_snapshot_collect", err.msg);
    return doc;
}

static double num(const json_t *o, const char *path)
{
    return json_number_value(gv_json_path(o, path));
}

/* "LEAD name name ... and N more" for a non-empty list of module or buffer names, the
 * first eight of them ("" is the model itself) */
static void print_names(const char *lead, const json_t *names)
{
    if (!json_array_size(names))
        return;
    printf("%s", lead);
    size_t i;
    json_t *e;
    json_array_foreach(names, i, e) if (i < 8 && json_is_string(e))
        printf(" %s", json_string_value(e)[0] ? json_string_value(e) : "(the model itself)");
    if (json_array_size(names) > 8)
        printf(" and %zu more", json_array_size(names) - 8);
    printf("\n");
}

static void print_summary(const json_t *h, const char *path)
{
    printf("captured %s: %lld ops of %s on %s (torch %s)\n", path,
           (long long)json_integer_value(json_object_get(h, "ops")),
           json_string_value(gv_json_path(h, "model.spec")),
           json_string_value(gv_json_path(h, "device.device")),
           json_string_value(gv_json_path(h, "device.torch.version")));
    printf("  plain forward %.4f s; recorded forward %.4f s (ops %.4f s, writing %.4f s)\n",
           num(h, "timing.plain_forward_seconds"), num(h, "timing.capture_seconds"),
           num(h, "timing.capture_ops_seconds"), num(h, "timing.capture_writing_seconds"));
    const json_t *fb = json_object_get(h, "cpu_fallback");
    size_t ncpu = json_array_size(json_object_get(fb, "cpu_ops"));
    size_t nmove = json_array_size(json_object_get(fb, "transfers"));
    if (ncpu || nmove) {
        printf("%sCPU fallback:%s %zu ops ran on the CPU (%.1f%% of the op time), %zu moved "
               "tensors between devices (%.1f%%)\n", cli_yellow(), cli_reset(), ncpu,
               100 * num(fb, "cpu_share"), nmove, 100 * num(fb, "transfer_share"));
        const char *kinds[] = {"cpu_ops", "transfers"};
        for (int k = 0; k < 2; k++) {
            size_t i;
            json_t *e;
            json_array_foreach(json_object_get(fb, kinds[k]), i, e)
                printf("  op %lld %-36s in %s (%.1f%%)\n",
                       (long long)json_integer_value(json_object_get(e, "op")),
                       json_string_value(json_object_get(e, "name")),
                       json_string_value(json_object_get(e, "module"))[0]
                           ? json_string_value(json_object_get(e, "module"))
                           : "(the model itself)",
                       100 * json_number_value(json_object_get(e, "share")));
        }
    }
    const char *lists[] = {"nondeterministic_ops", "rng_ops"};
    const char *what[] = {"non-deterministic ops", "ops that used the random number generator"};
    for (int k = 0; k < 2; k++) {
        const json_t *l = json_object_get(h, lists[k]);
        if (!json_array_size(l))
            continue;
        printf("%s: %zu:", what[k], json_array_size(l));
        size_t i;
        json_t *e;
        json_array_foreach(l, i, e) if (i < 8) printf(" %s (op %lld)",
                                                       json_string_value(json_object_get(e, "name")),
                                                       (long long)json_integer_value(
                                                           json_object_get(e, "op")));
        printf("\n");
    }
    print_names("TorchScript modules (ops their graph executor fuses run out of sight of the "
                "capture; their results come in as values from outside the recorded ops):",
                json_object_get(h, "opaque_modules"));
    print_names("buffers the forward updates (each pass started from their values before the "
                "first):", json_object_get(h, "buffers_updated"));
}

static int read_model(const char *spec, char **data, size_t *len, char sha[65], struct gv_err *err)
{
    char file[4096];
    size_t n = strlen(spec);
    const char *colon = strrchr(spec, ':');
    if (n > 4 && !strcmp(spec + n - 4, ".pt2"))
        snprintf(file, sizeof file, "%s", spec);
    else if (colon && colon != spec)
        snprintf(file, sizeof file, "%.*s", (int)(colon - spec), spec);
    else
        return gv_err_set(err, GV_E_USAGE, "--model %s: expected path/to/file.py:function or a "
                          ".pt2 torch.export program", spec);
    int rc = gv_read_file(file, (size_t)4 << 30, data, len, err);
    if (!rc)
        gv_sha256_buf_hex(*data, *len, sha);
    return rc;
}

static int capture(int argc, char **argv)
{
    struct torch_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc < 0)
        return cli_help(usage);
    if (rc)
        return rc;
    if (o.nops)
        return cli_usage("torch", "capture: unexpected argument '%s'", o.ops[0]);
    if (!o.model || !o.out)
        return cli_usage("torch", "capture needs --model SPEC and -o RUN.gvcap");
    struct gv_err err = {0};
    char *src = NULL, sha[65];
    size_t srclen = 0;
    if (read_model(o.model, &src, &srclen, sha, &err))
        return err.code == GV_E_USAGE ? cli_usage("torch", "%s", err.msg) : cli_fail(&err);
    const struct gv_backend *be = NULL;
    struct gv_device *dev = NULL;
    if ((rc = open_torch(&o, &be, &dev))) {
        free(src);
        return rc;
    }
    json_t *snap = live_snapshot();
    struct gv_capture_opts co = {o.model, o.seed, o.max_bytes, o.out, snap, src, srclen, sha, NULL};
    json_t *h = NULL;
    rc = gv_capture_run(be, dev, &co, &h, &err);
    be->close(dev);
    json_decref(snap);
    free(src);
    if (rc)
        return cli_fail(&err);
    if (o.json)
        cli_emit_json(h, NULL);
    else
        print_summary(h, o.out);
    const json_t *fb = json_object_get(h, "cpu_fallback");
    int fell = json_array_size(json_object_get(fb, "cpu_ops")) ||
               json_array_size(json_object_get(fb, "transfers"));
    json_decref(h);
    if (cli_record_wanted(o.record) && cli_record_file(o.out) && !(o.strict && fell))
        return GV_EXIT_ERROR;
    return o.strict && fell ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}

/* ---------- bisect ---------- */

/* e's "module" for the text: escaped (a capture's strings are data), or "(the model
 * itself)". */
static const char *module_text(const json_t *e, char *buf, size_t n)
{
    const char *m = json_string_value(json_object_get(e, "module"));
    if (!m || !m[0])
        return "(the model itself)";
    gv_escape(m, buf, n);
    return buf;
}

static void print_bisect(const json_t *d)
{
    char mod[600];
    const json_t *sm = json_object_get(d, "summary");
    int modules = !strcmp(json_string_value(json_object_get(d, "strategy")), "modules");
    char spec[600];
    gv_escape(json_string_value(gv_json_path(d, "model.spec")), spec, sizeof spec);
    printf("bisect of %s (%s), replayed %s here on its recorded inputs (%lld replays):\n",
           json_string_value(json_object_get(d, "capture")), spec,
           modules ? "module by module, then op by op inside the modules that changed"
                   : "op by op",
           (long long)json_integer_value(json_object_get(d, "replays")));
    static const char *const keys[] = {"identical",     "equally_accurate", "less_accurate",
                                       "more_accurate", "different",        "not_replayed",
                                       "replay_failed", "cleared_with_module"};
    for (int k = 0; k < 8; k++)
        if (k < 7 || modules)
            printf("%s%s %lld", k ? ", " : "  ", keys[k],
                   (long long)json_integer_value(json_object_get(sm, keys[k])));
    printf("\n");
    size_t si;
    json_t *sp;
    json_array_foreach(json_object_get(d, "ops"), si, sp) {
        const char *why = json_string_value(json_object_get(sp, "why"));
        if (why && !strncmp(why, "not an operator", 15)) /* why names it, escaped */
            printf("  op %zu: %s\n", si, why);
    }
    json_array_foreach(json_object_get(d, "spans"), si, sp) {
        const char *v = json_string_value(json_object_get(sp, "verdict"));
        const char *why = json_string_value(json_object_get(sp, "why"));
        printf("  module %s (ops %lld-%lld): %s%s%s\n", module_text(sp, mod, sizeof mod),
               (long long)json_integer_value(json_object_get(sp, "first_op")),
               (long long)json_integer_value(json_object_get(sp, "last_op")), v,
               why ? ": " : "", why ? why : "");
    }
    size_t i;
    json_t *e;
    const json_t *cul = json_object_get(d, "culprits");
    if (json_array_size(cul)) {
        printf("\n%sless accurate here than in A, on the same inputs (the culprits):%s\n",
               cli_red(), cli_reset());
        json_array_foreach(cul, i, e) {
            printf("  op %lld %s in %s\n", (long long)json_integer_value(json_object_get(e, "op")),
                   json_string_value(json_object_get(e, "name")), module_text(e, mod, sizeof mod));
            size_t k;
            json_t *o;
            json_array_foreach(json_object_get(e, "outputs"), k, o) {
                const json_t *ua = json_object_get(o, "error_a_units"), *ub = json_object_get(o, "error_b_units");
                if (json_is_number(ua))
                    printf("    output %zu (%s): error against float64 %.3g units of roundoff "
                           "in A, %.3g here\n", k, json_string_value(json_object_get(o, "dtype")),
                           json_number_value(ua), json_number_value(ub));
            }
            printf("    ran here: %s\n", json_string_value(json_object_get(e, "impl_b")));
        }
    }
    const json_t *calls = json_object_get(d, "call_changes");
    if (json_array_size(calls)) {
        printf("\n%scalls that changed above ATen (same inputs as in A, another call):%s\n",
               cli_red(), cli_reset());
        json_array_foreach(calls, i, e)
            printf("  op %lld in %s:\n    A:    %s\n    here: %s\n",
                   (long long)json_integer_value(json_object_get(e, "op_a")),
                   module_text(e, mod, sizeof mod),
                   json_string_value(json_object_get(e, "call_a")),
                   json_string_value(json_object_get(e, "call_b")));
    }
    const json_t *inh = json_object_get(d, "inherited");
    if (inh)
        printf("\n%zu ops differ in the model's own run here but not on their own inputs "
               "(they inherited the difference)\n", json_array_size(inh));
    if (json_object_get(d, "outputs_status"))
        printf("model outputs here against A: %s (%.3g units)\n",
               json_string_value(json_object_get(d, "outputs_status")),
               json_number_value(json_object_get(d, "outputs_units")));
    cli_capture_print_outputs(json_object_get(d, "outputs"));
    if (json_object_get(d, "model_run_note"))
        printf("model run here: %s\n", json_string_value(json_object_get(d, "model_run_note")));
    json_array_foreach(json_object_get(d, "causes"), si, sp)
        printf("cause: %s\n", json_string_value(json_object_get(sp, "text")));
    printf("\n");
    cli_verdict_print(d); /* the words the report page opens with */
}

/* The file of a model spec (path/to/file.py:function, or a .pt2), into file. */
static void spec_file(const char *spec, char *file, size_t filesz)
{
    size_t n = strlen(spec);
    const char *colon = strrchr(spec, ':');
    int pt2 = n > 4 && !strcmp(spec + n - 4, ".pt2");
    snprintf(file, filesz, "%.*s", (int)(pt2 || !colon ? n : (size_t)(colon - spec)), spec);
}

/* 1 when the real path of file lies inside the real directory dir. */
static int file_under(const char *file, const char *dir)
{
    char rf[PATH_MAX], rd[PATH_MAX];
    if (!realpath(file, rf) || !realpath(dir, rd))
        return 0;
    size_t n = strlen(rd);
    return !strncmp(rf, rd, n) && (rf[n] == '/' || (n == 1 && rd[0] == '/'));
}

/* Where bisect may take the model from without being told: the file a capture
 * names must lie in the current directory or the capture's own directory (a
 * colleague's capture sent with its model.py), never anywhere on the machine
 * (a capture could otherwise name any installed file whose bytes are known,
 * a setup.py or a module with side effects, and the digest would match). */
static int model_where_allowed(const char *spec, const char *capture)
{
    char file[4096], dir[4096];
    spec_file(spec, file, sizeof file);
    snprintf(dir, sizeof dir, "%s", capture);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    return file_under(file, ".") || file_under(file, dir);
}

/* The model file capture a names (or the user's --model, user_spec), read once
 * into *src, when its bytes are the ones a was captured from
 * (header.model.file_sha256); else a note saying why the model is not run. A
 * recorded path is used only inside the current directory or the capture's
 * (model_where_allowed); --model names any file. Either way the digest decides:
 * text that differs from what was captured never runs. */
static int model_of_capture(const struct gv_cap *a, const char *user_spec, char **src,
                            size_t *len, char sha[65], char *note, size_t notesz)
{
    const char *spec = user_spec ? user_spec
                                 : json_string_value(gv_json_path(a->header, "model.spec"));
    const char *want = json_string_value(gv_json_path(a->header, "model.file_sha256"));
    char esc[600], why[1200];
    gv_escape(spec, esc, sizeof esc);
    struct gv_err err = {0};
    *src = NULL;
    if (!spec) {
        snprintf(note, notesz, "not run: the capture names no model");
        return -1;
    }
    if (!want || strlen(want) != 64 || strspn(want, "0123456789abcdef") != 64) {
        snprintf(note, notesz, "model %s: the capture records no sha256 of its file: the "
                 "model was not run; ops replayed only", esc);
        return -1;
    }
    if (!user_spec && !model_where_allowed(spec, a->path)) {
        snprintf(note, notesz, "model %s lies outside the current directory and the capture's: "
                 "the model was not run; ops replayed only (name it with --model to run it)", esc);
        return -1;
    }
    if (read_model(spec, src, len, sha, &err)) {
        gv_escape(err.msg, why, sizeof why);
        snprintf(note, notesz, "model %s cannot be read (%s): the model was not run; ops "
                 "replayed only", esc, why);
        return -1;
    }
    if (strcmp(sha, want) != 0) {
        char file[4096];
        spec_file(spec, file, sizeof file);
        gv_escape(file, esc, sizeof esc);
        snprintf(note, notesz, "model file %s differs from the capture (sha256 %.12s... vs "
                 "%.12s... in the capture): the model was not run; ops replayed only", esc, sha,
                 want);
        free(*src);
        *src = NULL;
        return -1;
    }
    return 0;
}

/* The model's own run in B, on A's parameters and inputs, into path: only the
 * bytes model_of_capture read and checked are sent to the worker. */
static int run_model_here(const struct gv_backend *be, struct gv_device *dev,
                          const struct gv_cap *a, const char *user_spec, const char *path,
                          int *have, char *note, size_t notesz)
{
    *have = 0;
    char *src = NULL, sha[65];
    size_t len = 0;
    if (model_of_capture(a, user_spec, &src, &len, sha, note, notesz))
        return GV_OK;
    const char *spec = user_spec ? user_spec
                                 : json_string_value(gv_json_path(a->header, "model.spec"));
    struct gv_err err = {0};
    json_t *h = NULL;
    struct gv_capture_opts co = {spec, (int)json_integer_value(json_object_get(a->header, "seed")),
                                 0, path, NULL, src, len, sha, a};
    int rc = gv_capture_run(be, dev, &co, &h, &err);
    free(src);
    json_decref(h);
    if (rc) {
        snprintf(note, notesz, "the model failed here: %s", err.msg);
        return GV_OK;
    }
    *have = 1;
    return GV_OK;
}

static int bisect(int argc, char **argv)
{
    struct torch_opts o = {.by_module = -1};
    int rc = parse(argc, argv, &o);
    if (rc < 0)
        return cli_help(usage);
    if (rc)
        return rc;
    if (o.nops != 1)
        return cli_usage("torch", "bisect takes one capture (A.gvcap)");
    struct gv_cap a, b;
    struct gv_err err = {0};
    if (gv_cap_open(o.ops[0], &a, &err) || gv_cap_verify(&a, &err)) {
        gv_cap_close(&a);
        return cli_fail(&err);
    }
    if (!o.device) /* the device A ran on */
        o.device = json_string_value(gv_json_path(a.header, "device.device"));
    const struct gv_backend *be = NULL;
    struct gv_device *dev = NULL;
    if ((rc = open_torch(&o, &be, &dev))) {
        gv_cap_close(&a);
        return rc;
    }
    char tmp[64] = "", note[1200] = "";
    const char *keep = o.keep;
    if (!keep) {
        snprintf(tmp, sizeof tmp, "/tmp/gpuvet-bisect-XXXXXX");
        int fd = mkstemp(tmp);
        if (fd >= 0)
            close(fd);
        keep = tmp;
    }
    int have_b = 0;
    run_model_here(be, dev, &a, o.model, keep, &have_b, note, sizeof note);
    if (have_b && gv_cap_open(keep, &b, &err)) {
        snprintf(note, sizeof note, "its capture cannot be read: %s", err.msg);
        have_b = 0;
    }
    json_t *d = NULL;
    rc = gv_capture_bisect(&a, have_b ? &b : NULL, dev, o.by_module, &d, &err);
    if (!rc) {
        json_object_set_new(d, "device_b", be->describe(dev));
        if (note[0])
            json_object_set_new(d, "model_run_note", json_string(note));
        if (o.keep && have_b)
            json_object_set_new(d, "capture_b", json_string(o.keep));
    }
    be->close(dev);
    if (have_b)
        gv_cap_close(&b);
    gv_cap_close(&a);
    if (tmp[0])
        unlink(tmp);
    if (rc)
        return cli_fail(&err);
    if (o.junit && cli_capture_junit(o.junit, "bisect", d, &err)) {
        json_decref(d);
        return cli_fail(&err);
    }
    struct cli_out out = {.json = o.json};
    if (o.out)
        cli_out_opt(&out, 'o', o.out);
    rc = cli_put_doc("torch bisect", d, &out);
    if (!rc && cli_out_text(&out))
        print_bisect(d);
    if (rc) {
        json_decref(d);
        return rc;
    }
    int flagged = json_is_true(json_object_get(d, "flagged"));
    int cannot = json_object_get(d, "cannot_judge") != NULL; /* no trustworthy referee */
    json_decref(d);
    return cannot ? GV_EXIT_ERROR : flagged ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}

int cmd_torch(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return argc < 2 ? cli_usage("torch", "capture or bisect?") : cli_help(usage);
    if (!strcmp(argv[1], "capture"))
        return capture(argc - 1, argv + 1);
    if (!strcmp(argv[1], "bisect"))
        return bisect(argc - 1, argv + 1);
    return cli_usage("torch", "unknown subcommand '%s' (capture, bisect)", argv[1]);
}
