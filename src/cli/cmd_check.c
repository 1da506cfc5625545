/* gpuvet check: run the numerics suite on a device and judge every case
 * against its fp64 reference. */
#include <pthread.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "dev/backend.h"
#include "dev/kind.h"
#include "dev/vendor.h"
#include "dev/cpu/cpu.h"
#include "env/probe.h"
#include "env/rootenv.h"
#include "num/catalog.h"
#include "check/runner.h"
#include "probe/probe.h"
#include "store/junit.h"
#include "kb/cuda_compat.h"
#include "check/results.h"
#include "store/safetensors.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet check [--suite S] [--only PATTERN] [--device D] [-o RESULTS]\n"
    "                    [--save-outputs FILE] [--junit FILE] [--json] [--list]\n"
    "                    [--python PY] [--python-root DIR | --image REF] [--probe]\n"
    "                    [--record] [--db URL]\n"
    "\n"
    "Runs a deterministic numerics suite on a device and judges every case against an\n"
    "fp64 reference computed on the CPU, in units of what the case's precision can\n"
    "promise (error/bound <= 1 passes). Inputs are generated from the case id, so the\n"
    "same case has the same inputs on every machine and gpuvet version.\n"
    "The document is the result file (schema gpuvet.results) that 'gpuvet compare'\n"
    "reads; without -o nothing is written.\n"
    "\n"
    "Options:\n"
    "      --suite S         quick (a few seconds, default), standard, or full\n"
    "      --only PATTERN    only cases whose id matches the glob (several: comma-separated),\n"
    "                        e.g. 'gemm.f16*' or 'softmax.*,sdpa.*'\n"
    "      --device D        cpu, cuda:N or hip:N; default: the first GPU found, else the\n"
    "                        CPU (the choice is printed). torch:cuda:N or torch:cpu: the\n"
    "                        suite through your own PyTorch (also on ROCm, where the\n"
    "                        device is still called cuda), plus PyTorch's own cases\n"
    "                        (linear, matmul at PyTorch's defaults, each attention\n"
    "                        backend, autocast with GradScaler); see docs/torch.md\n"
    CLI_HELP_PYTHON
    CLI_HELP_OUTPUT

    "      --save-outputs F  also save every output tensor to F (safetensors) so that\n"
    "                        compare can diff outputs element by element\n"
    "      --junit FILE      write a JUnit XML report (one testcase per case)\n"
    "      --determinism M   run cases twice to check bit-identical repeats:\n"
    "                        quick (cases of the quick suite, default), all, none\n"
    "      --lib-path DIRS   look for vendor GPU libraries (libcuda, NVRTC, cuBLAS,\n"
    "                        libamdhip64, hipRTC, rocBLAS ...) in these directories\n"
    "                        first (colon-separated; default $GPUVET_LIB_PATH)\n"
    "      --blas B          GEMM library on a GPU: auto (default: what PyTorch uses;\n"
    "                        on ROCm hipBLASLt on gfx90a/gfx942 and, from 6.4/6.5,\n"
    "                        gfx1200/gfx1201/gfx950, else rocBLAS; on CUDA cuBLAS;\n"
    "                        TORCH_BLAS_PREFER_HIPBLASLT/_CUBLASLT are honoured),\n"
    "                        lt (hipBLASLt / cuBLASLt) or classic (rocBLAS / cuBLAS);\n"
    "                        sets $GPUVET_BLAS\n"
    "      --probe           also embed the device's numerical fingerprint (gpuvet probe,\n"
    "                        every route and precision) so that compare can name the\n"
    "                        property that changed\n"
    CLI_HELP_JSON

    "      --list            list the selected cases and exit\n"
    "      --record          also record the result in the history database ($GPUVET_DB,\n"
    "                        default ~/.local/share/gpuvet/history.db; GPUVET_RECORD=1:\n"
    "                        always); if that fails: exit 3 where the run gave 0\n"
    "      --db URL          record it in this database (a path or postgresql://...)\n"
    "  -h, --help            this help\n"
    "\n"
    "CPU backend options (--device cpu:OPT,OPT): threads=N, and emulate=A+B+...,\n"
    "a TESTING AID that makes the CPU misbehave like some GPU stacks so that check and\n"
    "compare can be tested without a GPU. Results made with it say so. Emulations:\n";

static const char usage_tail[] =
    "\n"
    "Cache: fp64 references are cached under $XDG_CACHE_HOME/gpuvet (default\n"
    "~/.cache/gpuvet), keyed by input digest; safe to delete at any time.\n"
    "Exit status: 0 every case passed, 1 a case failed or could not run,\n"
    "             2 usage error, 3 device or library error (nothing could run).\n";

static int help(void)
{
    fputs(usage, stdout);
    const char *names[16], *whats[16];
    size_t n = gv_cpu_emulations(names, whats, 16);
    for (size_t i = 0; i < n; i++)
        printf("  %-10s %s\n", names[i], whats[i]);
    fputs(usage_tail, stdout);
    return GV_EXIT_OK;
}

struct check_opts {
    const char *suite, *only, *device, *output, *save_outputs, *junit;
    struct cli_python py; /* --python, --python-root, --image */
    const char *python_root; /* where the worker runs (cli_python_setup) */
    int json, list, probe, record;
    enum gv_det_mode det;
    json_t *run_image; /* --image: how the worker ran (cli_image_python) */
};

/* ---------- progress ---------- */

/* Tests only: GPUVET_TEST_STOP_AT=case-N stops this process (SIGSTOP) as
 * case N starts, so that a test can kill it there (tests/cli/check_killed.sh). */
static void stop_point(size_t i)
{
    const char *at = getenv("GPUVET_TEST_STOP_AT");
    char want[32];
    snprintf(want, sizeof want, "case-%zu", i);
    if (at && !strcmp(at, want))
        raise(SIGSTOP);
}

static void progress(void *ud, size_t i, size_t n, const struct gv_catalog_entry *e,
                     const struct gv_case_result *r)
{
    (void)ud;
    if (!r)
        stop_point(i);
    if (!gv_term.tty)
        return;
    if (!r)
        fprintf(stderr, "\r\033[K[%zu/%zu] %s", i + 1, n, e->id);
    else if (i + 1 == n)
        fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

/* ---------- human output ---------- */

static void fmt_num(char *out, size_t n, double v, int bits)
{
    if (isnan(v))
        snprintf(out, n, "nan");
    else if (isinf(v))
        snprintf(out, n, "inf");
    else if (bits)
        snprintf(out, n, "%.1f", v);
    else
        snprintf(out, n, "%.3g", v);
}

static const char *verdict_color(enum gv_verdict v)
{
    return v == GV_PASS ? cli_green() : v == GV_SKIPPED ? cli_yellow() : cli_red();
}

/* Under a FAIL: what its error looks like, as a skip says why (results.h). */
static void print_signatures(const struct gv_case_result *x)
{
    const struct kb_numsig *sig[3];
    double expected;
    size_t ns = gv_case_signatures(x, sig, 3, &expected);
    if (x->verdict != GV_FAIL || !x->measured)
        return;
    if (!ns)
        printf("    %slooks like: no error signature gpuvet knows (%.1f effective bits where a "
               "correct result keeps about %.0f)%s\n",
               cli_dim(), x->m.eff_bits, expected, cli_reset());
    for (size_t i = 0; i < ns; i++)
        printf("    %slooks like %s: %s [%s]%s\n", cli_dim(), sig[i]->id, sig[i]->text,
               sig[i]->source, cli_reset());
}

static void print_table(const struct gv_case_result *r, size_t n, const char *device_line)
{
    static const char *const vnames[] = {"pass", "FAIL", "ERROR", "skipped"};
    size_t w = 4;
    for (size_t i = 0; i < n; i++)
        if (strlen(r[i].entry->id) > w)
            w = strlen(r[i].entry->id);
    printf("%s%s%s\n", cli_dim(), device_line, cli_reset());
    printf("%s%-*s  %-9s  %-22s  %7s  %10s  %s%s\n", cli_bold(), (int)w, "case", "dtype", "shape",
           "eff.bits", "err/bound", "verdict", cli_reset());
    size_t count[4] = {0}, nondet = 0;
    for (size_t i = 0; i < n; i++) {
        const struct gv_case_result *x = &r[i];
        char bits[16] = "-", eob[16] = "-";
        if (x->measured) {
            fmt_num(bits, sizeof bits, x->m.eff_bits, 1);
            fmt_num(eob, sizeof eob, x->m.err_over_bound, 0);
        }
        count[x->verdict]++;
        nondet += x->det_checked && !x->det_identical;
        printf("%-*s  %-9s  %-22s  %7s  %10s  %s%s%s%s\n", (int)w, x->entry->id, x->entry->prec,
               x->entry->shape, bits, eob, verdict_color(x->verdict), vnames[x->verdict],
               cli_reset(), x->det_checked && !x->det_identical ? " (not run-to-run identical)" : "");
        if (x->status)
            printf("    %s%s%s\n", cli_dim(), x->error, cli_reset());
        print_signatures(x);
    }
    printf("\n%zu cases: %s%zu passed%s, %s%zu failed%s, %zu errors, %zu skipped", n, cli_green(),
           count[GV_PASS], cli_reset(), count[GV_FAIL] ? cli_red() : "", count[GV_FAIL],
           cli_reset(), count[GV_ERROR], count[GV_SKIPPED]);
    if (nondet)
        printf(", %s%zu not run-to-run identical%s", cli_yellow(), nondet, cli_reset());
    printf("\n");
}

/* ---------- outputs ---------- */

static int save_outputs(const char *path, const struct gv_case_result *r, size_t n,
                        struct gv_err *err)
{
    struct gv_st_tensor *t = calloc(n ? n : 1, sizeof *t);
    json_t *meta = json_object();
    if (!t || !meta) {
        free(t);
        json_decref(meta);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", path);
    }
    json_object_set_new(meta, "format", json_string("gpuvet.outputs"));
    json_object_set_new(meta, "gpuvet_version", json_string(GPUVET_VERSION));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!r[i].output.data)
            continue;
        const struct gv_case *c = &r[i].entry->c;
        t[k].name = c->id;
        t[k].dtype = c->out_dtype;
        t[k].ndim = gv_case_out_shape(c, t[k].dims);
        t[k].data = r[i].output.data;
        t[k].nbytes = r[i].output.count * gv_dtype_size(c->out_dtype);
        char key[160];
        snprintf(key, sizeof key, "%s.input_digest", c->id);
        json_object_set_new(meta, key, json_string(r[i].input_digest));
        snprintf(key, sizeof key, "%s.output_digest", c->id);
        json_object_set_new(meta, key, json_string(r[i].m.out_digest));
        k++;
    }
    int rc = gv_safetensors_write(path, t, k, meta, err);
    free(t);
    json_decref(meta);
    return rc;
}

static int write_junit(const char *path, const struct gv_case_result *r, size_t n,
                       struct gv_err *err)
{
    struct gv_junit *j = gv_junit_begin("gpuvet check");
    for (size_t i = 0; i < n; i++) {
        char cls[48], msg[256] = "";
        enum gv_junit_status st;
        snprintf(cls, sizeof cls, "gpuvet.check.%s", gv_op_name(r[i].entry->c.op));
        switch (r[i].verdict) {
        case GV_PASS: st = GV_JUNIT_PASS; break;
        case GV_FAIL:
            st = GV_JUNIT_FAILURE;
            snprintf(msg, sizeof msg, "error/bound %.3g, effective bits %.1f, %llu NaN, %llu Inf",
                     r[i].m.err_over_bound, r[i].m.eff_bits, (unsigned long long)r[i].m.nan_count,
                     (unsigned long long)r[i].m.inf_count);
            break;
        case GV_ERROR: st = GV_JUNIT_ERROR; break;
        default: st = GV_JUNIT_SKIPPED; break;
        }
        gv_junit_add(j, cls, r[i].entry->id, r[i].seconds, st, r[i].status ? r[i].error : msg,
                     NULL);
    }
    int rc = gv_junit_save(j, path, err);
    gv_junit_free(j);
    return rc;
}

/* ---------- main ---------- */

static int list_cases(const struct gv_catalog_entry **sel, size_t n, int json)
{
    if (json) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_object();
            json_object_set_new(o, "id", json_string(sel[i]->id));
            json_object_set_new(o, "suite", json_string(gv_suite_name(sel[i]->suite)));
            json_object_set_new(o, "op", json_string(gv_op_name(sel[i]->c.op)));
            json_object_set_new(o, "precision", json_string(sel[i]->prec));
            json_object_set_new(o, "shape", json_string(sel[i]->shape));
            json_array_append_new(a, o);
        }
        int rc = cli_emit_json(a, NULL);
        json_decref(a);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        printf("%-52s %-9s %s\n", sel[i]->id, gv_suite_name(sel[i]->suite), sel[i]->prec);
    return GV_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct check_opts *o)
{
    static const struct option opts[] = {
        {"suite", required_argument, 0, 's'},       {"only", required_argument, 0, 'O'},
        {"device", required_argument, 0, 'd'},      CLI_OUT_OPTIONS,
        {"save-outputs", required_argument, 0, 'S'}, {"junit", required_argument, 0, 'J'},
        {"determinism", required_argument, 0, 'D'}, CLI_PYTHON_OPTIONS,
        {"list", no_argument, 0, 'l'},              {"help", no_argument, 0, 'h'},
        {"lib-path", required_argument, 0, 'L'},    {"blas", required_argument, 0, 'B'},
        {"probe", no_argument, 0, 'p'},             {"record", no_argument, 0, 'r'},
        {"db", required_argument, 0, 'Q'},          {0, 0, 0, 0}};
    struct cli_out out = {0};
    struct cli_args args = CLI_ARGS("check", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        const char *optarg = args.arg;
        if (cli_out_opt(&out, c, optarg) || cli_python_opt(&o->py, c, optarg))
            continue;
        switch (c) {
        case 's': o->suite = optarg; break;
        case 'O': o->only = optarg; break;
        case 'd': o->device = optarg; break;
        case 'S': o->save_outputs = optarg; break;
        case 'J': o->junit = optarg; break;
        case 'D':
            if (!strcmp(optarg, "none"))
                o->det = GV_DET_NONE;
            else if (!strcmp(optarg, "all"))
                o->det = GV_DET_ALL;
            else if (!strcmp(optarg, "quick"))
                o->det = GV_DET_QUICK;
            else
                return cli_usage("check", "--determinism takes quick, all or none, not '%s'",
                                 optarg);
            break;
        case 'l': o->list = 1; break;
        case 'p': o->probe = 1; break;
        case 'r': o->record = 1; break;
        case 'Q': cli_record_set_db(optarg), o->record = 1; break;
        case 'L': gv_vendor_set_lib_path(optarg); break;
        case 'B':
            if (strcmp(optarg, "auto") && strcmp(optarg, "lt") && strcmp(optarg, "classic"))
                return cli_usage("check", "--blas takes auto, lt or classic, not '%s'", optarg);
            setenv("GPUVET_BLAS", optarg, 1); /* read by the GPU backends, in the worker too */
            break;
        case 'h': return -1;
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    o->output = out.output;
    o->json = out.json;
    if (gv_suite_from_name(o->suite) < 0)
        return cli_usage("check", "--suite takes quick, standard or full, not '%s'", o->suite);
    return GV_EXIT_OK;
}

/* The snapshot embedded in the result file is collected in a thread while
 * the cases run (it reads files only; nothing it calls is shared with the
 * runner), so it costs no wall time. It is of the stack that ran: this
 * machine, or the root the worker ran in (--python-root, or --image's
 * unpacked rootfs named by the image's reference; the description names the
 * image's digests). */
struct snapshot_job {
    pthread_t thread;
    int started;
    const char *root; /* NULL: this machine */
    const char *name; /* the root's name in the document (an image's reference) */
};

static void *collect_snapshot(void *arg)
{
    const struct snapshot_job *j = arg;
    struct gv_err err = {0};
    char **root_env = NULL;
    if (j->root && gv_rootenv_read(j->root, &root_env, &err))
        return gv_section_missing("gv_rootenv_read", err.msg);
    struct gv_probe_ctx ctx = {.root = j->root ? j->root : "/", .live = !j->root, .pid = 0,
                               .envp = j->root ? root_env : environ, .hash_files = 0};
    json_t *doc = NULL;
    int rc = gv_snapshot_collect(&ctx, &doc, &err);
    gv_rootenv_free(root_env);
    if (rc)
        return gv_section_missing("gv_snapshot_collect", err.msg);
    if (j->name)
        json_object_set_new(doc, "root", json_string(j->name));
    return doc;
}

static void snapshot_start(struct snapshot_job *j)
{
    j->started = pthread_create(&j->thread, NULL, collect_snapshot, j) == 0;
}

static json_t *snapshot_finish(struct snapshot_job *j)
{
    void *doc = NULL;
    if (!j->started)
        return collect_snapshot(j);
    pthread_join(j->thread, &doc);
    j->started = 0;
    return doc;
}

/* One line per PyTorch build found, saying whether it has code for this GPU. */
static void print_frameworks(const json_t *fw)
{
    size_t i;
    json_t *f;
    json_array_foreach(fw, i, f) {
        const char *cover = json_string_value(json_object_get(f, "cover"));
        const char *msg = json_string_value(json_object_get(f, "message"));
        int ok = cover && !strcmp(cover, "sass");
        printf("%s%s: %s%s\n", ok ? "" : cli_red(), ok ? "note" : "warning", msg ? msg : "?",
               ok ? "" : cli_reset());
    }
}

/* The absolute path of a file just written, for the result file. */
static void abs_path(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX];
    snprintf(out, n, "%s", realpath(path, buf) ? buf : path);
}

static int finish(const struct check_opts *o, struct snapshot_job *job,
                  const struct gv_backend *be, struct gv_device *dev,
                  const char *note, struct gv_case_result *res, size_t n)
{
    struct gv_err err = {0};
    char outputs_abs[PATH_MAX] = "";
    if (o->save_outputs) {
        if (save_outputs(o->save_outputs, res, n, &err))
            return cli_fail(&err);
        abs_path(o->save_outputs, outputs_abs, sizeof outputs_abs);
    }
    json_t *desc = be->describe(dev);
    if (o->run_image) /* the description names the image and the way it ran */
        json_object_set(desc, "image", o->run_image);
    const char *cc = json_string_value(json_object_get(desc, "compute_capability"));
    json_t *snap = (o->output || o->json || cc || o->record) ? snapshot_finish(job) : NULL;
    if (cc) /* will the installed PyTorch builds run on this GPU at all? */
        json_object_set_new(desc, "frameworks", gv_cuda_framework_compat(snap, cc));
    json_t *fp = NULL;
    if (o->probe) { /* the fingerprint of the same device (gpuvet probe) */
        struct gv_probe_opts po = {o->device ? o->device : be->name, NULL, NULL, NULL};
        if (gv_probe_run(&po, &fp, &err)) {
            json_decref(desc);
            json_decref(snap);
            return cli_fail(&err);
        }
    }
    struct gv_results_meta meta = {o->suite, o->only, o->device, note, desc, snap,
                                   o->save_outputs ? outputs_abs : NULL, fp};
    json_t *doc = gv_results_build(&meta, res, n);
    json_decref(fp);
    int rc = o->output ? cli_put_doc("check", doc, &(struct cli_out){o->output, 0}) : GV_EXIT_OK;
    if (!rc && o->junit && write_junit(o->junit, res, n, &err))
        rc = cli_fail(&err);
    if (!rc) {
        if (o->json) {
            rc = cli_emit_json(doc, NULL);
        } else {
            const char *name = json_string_value(json_object_get(desc, "name"));
            json_t *line = json_sprintf("device: %s%s%s", name ? name : be->name,
                                        note[0] ? " — " : "", note); /* whole, never cut */
            print_table(res, n, json_string_value(line) ?: "device: ?");
            json_decref(line);
            print_frameworks(json_object_get(desc, "frameworks"));
        }
    }
    int recorded = rc || !o->record ? GV_EXIT_OK : cli_record(doc, o->output);
    json_decref(doc);
    json_decref(desc);
    json_decref(snap);
    if (rc)
        return rc;
    size_t errors = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        errors += res[i].verdict == GV_ERROR;
        /* a skipped case could not run here (e.g. fp64 GEMM without a vendor BLAS): the
         * promise "0 = every case passed" does not hold */
        bad += res[i].verdict != GV_PASS;
    }
    if (errors == n) /* nothing could run: a device or library problem, not a finding */
        return cli_failf("no case could run on %s (first error: %s)", be->name, res[0].error);
    return bad ? GV_EXIT_FINDINGS : recorded;
}

/* Which cases apply to the device (catalog.h, "Targets"). */
static unsigned targets_of(const char *device)
{
    if (!gv_dev_spec_starts_python(device))
        return GV_TARGET_KERNEL;
    return gv_dev_spec_on_host(device) ? GV_TARGET_TORCH_CPU : GV_TARGET_TORCH_GPU;
}

int cmd_check(int argc, char **argv)
{
    struct check_opts o = {.suite = "quick", .det = GV_DET_QUICK};
    int rc = parse_args(argc, argv, &o);
    if (rc < 0)
        return help();
    if (rc)
        return rc;
    size_t total;
    gv_catalog(&total);
    const struct gv_catalog_entry **sel = calloc(total ? total : 1, sizeof *sel);
    if (!sel)
        return cli_failf("out of memory");
    size_t n = gv_catalog_select((enum gv_suite)gv_suite_from_name(o.suite), targets_of(o.device),
                                 o.only, sel, total);
    if (n == 0) {
        free(sel);
        return cli_usage("check", "no case of suite %s matches --only '%s' (see --list)", o.suite,
                         o.only ? o.only : "");
    }
    if (o.list) {
        rc = list_cases(sel, n, o.json);
        free(sel);
        return rc;
    }
    const struct gv_backend *be = NULL;
    struct gv_device *dev = NULL;
    char note[1200] = "", pynote[1100] = "";
    struct gv_err err = {0};
    json_t *image = NULL;
    char image_root[PATH_MAX];
    if ((rc = cli_python_setup("check", &o.py, o.device, image_root, sizeof image_root,
                               &o.python_root, &image, pynote, sizeof pynote))) {
        free(sel);
        return rc;
    }
    o.run_image = image;
    if (gv_device_open(o.device, &be, &dev, note, sizeof note, &err)) {
        json_decref(image);
        free(sel);
        return err.code == GV_E_USAGE ? cli_usage("check", "%s", err.msg) : cli_fail(&err);
    }
    /* no --device: say which device runs the suite, once (the table's device line says it) */
    if (note[0] && o.json)
        fprintf(stderr, "gpuvet: %s\n", note);
    else if (!note[0] && pynote[0])
        snprintf(note, sizeof note, "%s", pynote);
    struct gv_case_result *res = calloc(n, sizeof *res);
    struct gv_run_opts ro = {be, dev, o.det, o.save_outputs != NULL, progress, NULL};
    struct snapshot_job job = {0};
    job.root = o.python_root && strcmp(o.python_root, "/") ? o.python_root : NULL;
    job.name = o.py.image;
    o.record = cli_record_wanted(o.record);
    const struct gv_dev_kind *kind = gv_dev_kind_find(be->name);
    if (o.output || o.json || o.record || (kind && kind->framework_compat))
        snapshot_start(&job);
    if (!res)
        gv_err_set(&err, GV_E_NOMEM, "out of memory for %zu results", n);
    if (!res || gv_run_cases(sel, n, &ro, res, &err)) {
        if (job.started)
            json_decref(snapshot_finish(&job));
        json_decref(image);
        free(res);
        free(sel);
        be->close(dev);
        return cli_fail(&err);
    }
    rc = finish(&o, &job, be, dev, note, res, n);
    json_decref(image);
    gv_run_results_free(res, n);
    free(res);
    free(sel);
    be->close(dev);
    return rc;
}
