/* gpuvet bench: honest speed of every layer (src/bench, docs/bench.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"
#include "bench/bench.h"
#include "bench/load.h"
#include "cli/cli.h"
#include "dev/kind.h"
#include "dev/vendor.h"
#include "env/probe.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet bench [--device D] [--only PATTERN] [--quick|--full] [--json] [-o FILE]\n"
    "                    [--python PY] [--python-root DIR | --image REF] [--no-snapshot]\n"
    "\n"
    "Measures the speed of every layer, each result checked for correctness:\n"
    "  gemm.*      GEMM TFLOP/s per route (cuBLASLt, cuBLAS; hipBLASLt, rocBLAS; OpenBLAS\n"
    "              on the CPU) and precision (f64, f32, tf32, f16, bf16, f8e4m3), square\n"
    "              and LLM shapes,\n"
    "              against the device's peak where gpuvet knows it\n"
    "  memory.*    device memory bandwidth: copy, scale, add, triad, read with gpuvet's\n"
    "              kernels, and the runtime's device-to-device copy\n"
    "  transfer.*  host to device and back, pinned and pageable\n"
    "  latency.*   an empty kernel: back to back, launch and wait, issue cost\n"
    "  peer.*      every GPU pair's copy bandwidth (with two or more GPUs)\n"
    "  coll.*      (CUDA) NCCL all-reduce, all-gather, reduce-scatter, broadcast, all-to-all over\n"
    "              a size sweep, bus bandwidth as nccl-tests counts it\n"
    "  verdict.bf16_vs_fp16.*  interleaved rounds: is bf16 slower than fp16 here?\n"
    "Device events time the GPU's work behind a spin kernel (not the host's launches);\n"
    "warm-up first; the median of the samples with their spread; a wrong result has no\n"
    "figure. The method is in the output document and docs/bench.md.\n"
    "\n"
    "The document is gpuvet.bench.\n"
    "\n"
    "Options:\n"
    "      --device D        cpu, cuda:N, hip:N (default: the first GPU found, else the\n"
    "                        CPU); torch:cuda:N, torch:cpu: the GEMMs through your PyTorch\n"
    CLI_HELP_PYTHON
    "      --only PATTERN    only results whose id matches (comma-separated globs,\n"
    "                        e.g. 'gemm.*.bf16.*,memory.*')\n"
    "      --quick           fewer shapes and samples (under a minute on a GPU)\n"
    "      --full            more shapes, larger copies, more samples\n"
    "      --no-snapshot     do not embed the environment snapshot\n"
    "      --lib-path DIRS   vendor library directories to search first\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 every benchmark ran and was right, 1 a result was wrong or a\n"
    "             benchmark failed, 2 usage error, 3 the device could not be opened.\n";

static void progress(void *ctx, const char *id, int done, int total)
{
    (void)ctx;
    if (!isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\r\033[K[%d/%d] %s", done + 1, total, id);
    fflush(stderr);
}

static const char *fmt_value(const json_t *r, char *buf, size_t n)
{
    double v = json_real_value(json_object_get(r, "value"));
    double sp = json_real_value(json_object_get(r, "spread"));
    double fv;
    const char *unit = gv_bench_fit_unit(v, json_string_value(json_object_get(r, "unit")), &fv);
    snprintf(buf, n, "%10.*f %-7s ±%4.1f%%", fv >= 100 ? 1 : 2, fv, unit,
             isfinite(sp) ? 50 * sp : 0.0);
    return buf;
}

static void print_result(const json_t *r)
{
    const char *st = json_string_value(json_object_get(r, "status"));
    const char *id = json_string_value(json_object_get(r, "id"));
    char v[64];
    if (strcmp(st, "ok") == 0) {
        json_t *op = json_object_get(r, "of_peak");
        printf("  %-44s %s", id, fmt_value(r, v, sizeof v));
        if (op)
            printf("  %3.0f%% of peak", 100 * json_real_value(op));
        printf("\n");
    } else {
        const char *why = json_string_value(json_object_get(r, "reason"));
        const char *col = strcmp(st, "unsupported") == 0 ? cli_dim() : cli_red();
        printf("  %s%-44s %s: %s%s\n", col, id, st, why ? why : "", cli_reset());
    }
}

/* The machine was busy: said first and last, so the figures are read with it. */
static void print_busy(const json_t *doc)
{
    const json_t *ml = json_object_get(doc, "machine_load");
    if (!json_is_true(json_object_get(ml, "busy")))
        return;
    printf("%swarning: the machine was busy while this ran; these figures are not reliable:%s\n",
           cli_yellow(), cli_reset());
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(ml, "why"), i, w)
        printf("%s  - %s%s\n", cli_yellow(), json_string_value(w), cli_reset());
}

static void print_doc(const json_t *doc)
{
    const json_t *dev = json_object_get(doc, "device");
    printf("%sgpuvet bench%s on %s (%s, %s mode, %.1f s)\n", cli_bold(), cli_reset(),
           json_string_value(json_object_get(doc, "device_spec")),
           json_string_value(json_object_get(dev, "name")) ?: "?",
           json_string_value(json_object_get(doc, "mode")),
           json_real_value(json_object_get(doc, "seconds")));
    const char *note = json_string_value(json_object_get(doc, "device_note"));
    if (note)
        printf("%s%s%s\n", cli_dim(), note, cli_reset());
    print_busy(doc);
    const char *group = "";
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "results"), i, r) {
        const char *g = json_string_value(json_object_get(r, "group"));
        if (strcmp(g, group) != 0) {
            printf("\n%s%s%s\n", cli_bold(), g, cli_reset());
            group = g;
        }
        print_result(r);
    }
    json_t *best = json_object_get(doc, "best");
    if (json_array_size(best)) {
        printf("\n%sbest GEMM per precision%s\n", cli_bold(), cli_reset());
        json_array_foreach(best, i, r) {
            json_t *op = json_object_get(r, "of_peak");
            char fig[64];
            gv_bench_format_figure(json_real_value(json_object_get(r, "tflops")), "TFLOP/s", fig,
                                   sizeof fig);
            printf("  %-7s %16s  %s", json_string_value(json_object_get(r, "dtype")), fig,
                   json_string_value(json_object_get(r, "id")));
            if (op)
                printf("  (%.0f%% of peak)", 100 * json_real_value(op));
            printf("\n");
        }
    }
    json_array_foreach(json_object_get(doc, "verdicts"), i, r)
        printf("\n%s%s%s\n", cli_bold(), json_string_value(json_object_get(r, "text")), cli_reset());
    json_t *topo = json_object_get(doc, "topology");
    const char *tnote = json_string_value(json_object_get(topo, "note"));
    if (tnote)
        printf("\n%stopology: %s%s\n", cli_dim(), tnote, cli_reset());
    json_array_foreach(json_object_get(topo, "warnings"), i, r)
        printf("%swarning: %s%s\n", cli_yellow(), json_string_value(r), cli_reset());
    json_t *coll = json_object_get(doc, "collectives");
    const char *cerr = json_string_value(json_object_get(coll, "error"));
    const char *cskip = json_string_value(json_object_get(coll, "skipped"));
    if (cerr)
        printf("%scollectives: %s%s\n", cli_red(), cerr, cli_reset());
    else if (cskip)
        printf("%scollectives: %s%s\n", cli_dim(), cskip, cli_reset());
    const char *stopped = json_string_value(json_object_get(doc, "stopped"));
    if (stopped)
        printf("%s%s%s\n", cli_red(), stopped, cli_reset());
    if (json_is_true(json_object_get(json_object_get(doc, "machine_load"), "busy")))
        printf("\n");
    print_busy(doc);
}

static int count(const json_t *doc, const char *status)
{
    int n = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "results"), i, r)
        n += strcmp(json_string_value(json_object_get(r, "status")), status) == 0;
    return n;
}

static json_t *snapshot_now(void)
{
    struct gv_probe_ctx ctx = {.root = "/", .live = 1, .pid = 0, .envp = environ,
                               .hash_files = 1};
    json_t *doc = NULL;
    struct gv_err err = {0};
    if (gv_snapshot_collect(&ctx, &doc, &err))
        return json_pack("{s:s}", "error", err.msg);
    return doc;
}

int cmd_bench(int argc, char **argv)
{
    static const struct option opts[] = {
        {"device", required_argument, 0, 'd'},   {"only", required_argument, 0, 'O'},
        {"quick", no_argument, 0, 'q'},          {"full", no_argument, 0, 'F'},
        CLI_OUT_OPTIONS,                         CLI_PYTHON_OPTIONS,
        {"lib-path", required_argument, 0, 'L'}, {"no-snapshot", no_argument, 0, 'N'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    struct gv_bench_opts o = {0};
    o.mode = GV_BENCH_DEFAULT;
    struct cli_out out = {0};
    struct cli_python py = {0};
    int snap = 1, modes = 0;
    struct cli_args args = CLI_ARGS("bench", argc, argv, "o:h", opts);
    for (int ch; (ch = cli_next(&args)) != -1;) {
        if (cli_out_opt(&out, ch, args.arg) || cli_python_opt(&py, ch, args.arg))
            continue;
        switch (ch) {
        case 'd': o.device = args.arg; break;
        case 'O': o.only = args.arg; break;
        case 'q': o.mode = GV_BENCH_QUICK, modes++; break;
        case 'F': o.mode = GV_BENCH_FULL, modes++; break;
        case 'N': snap = 0; break;
        case 'L': gv_vendor_set_lib_path(args.arg); break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    if (modes > 1)
        return cli_usage("bench", "--quick and --full exclude each other");
    int prc = cli_python_ready("bench", &py, o.device);
    if (prc)
        return prc;
    o.progress = progress;
    json_t *doc = NULL;
    struct gv_err err = {0};
    int rc = gv_bench_run(&o, &doc, &err);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    if (rc)
        return rc == GV_E_USAGE ? cli_usage("bench", "%s", err.msg) : cli_fail(&err);
    json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
    char when[32];
    time_t t = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    json_object_set_new(doc, "created", json_string(when));
    if (snap)
        json_object_set_new(doc, "snapshot", snapshot_now());
    rc = cli_put_doc("bench", doc, &out);
    if (!rc && cli_out_text(&out))
        print_doc(doc);
    int bad = count(doc, "failed") + count(doc, "error") + count(doc, "timeout");
    int okn = count(doc, "ok");
    json_decref(doc);
    if (rc)
        return rc;
    if (!okn && !bad)
        return cli_failf("no benchmark ran on %s (see the reasons above)",
                         o.device ? o.device : "the device");
    return bad ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}
