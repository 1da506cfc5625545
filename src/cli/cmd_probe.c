/* gpuvet probe: the numerical fingerprint of every GEMM route of a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "dev/vendor.h"
#include "probe/probe.h"

static const char usage[] =
    "usage: gpuvet probe [--device D] [--route R] [--dtype T] [--fit-k LIST] [--json]\n"
    "                    [-o FILE]\n"
    "                    [--python PY] [--python-root DIR | --image REF]\n"
    "\n"
    "Measures, for every GEMM route the device offers and every input precision, how\n"
    "the stack computes: subnormal inputs and outputs kept or flushed; the mantissa\n"
    "bits of the inputs that survive and how they are rounded (TF32, bf16 inside fp16);\n"
    "the bits a sum keeps, its rounding and extra accumulator bits; whether products\n"
    "are exact; the accumulation order for several K (FPRev swamping) with the number\n"
    "of terms fused per rounding; run-to-run determinism and batch invariance; and the\n"
    "order and determinism of row sums; and, for each K of a grid, the kernel structure\n"
    "that reproduces two random GEMMs of that K bit for bit (model.kN: the block, a\n"
    "partial K tile handled first, split-K slices), which `--device cpu:emulate=FILE`\n"
    "then follows. Every property says how it was established\n"
    "(inputs, outputs seen) and is \"undetermined\" when the answers disagree.\n"
    "\n"
    "Routes: cuda:N  cublas, cublaslt, kernel (gpuvet's own fp32 kernel)\n"
    "        hip:N   rocblas, hipblaslt, kernel\n"
    "        torch:… torch.matmul, torch.linear, torch.defaults\n"
    "        cpu     cpu (with cpu:emulate=… the emulated behaviour)\n"
    "Precisions: f64 f32 tf32 f16 f16.out16 f16acc16 bf16 bf16.out16 f8e4m3 f8e5m2\n"
    "            (GEMMs), sum.f32 sum.f64; --dtype gemm or sum selects a whole kind.\n"
    "\n"
    "The document is the fingerprint, schema gpuvet.probe.\n"
    "\n"
    "Options:\n"
    "      --device D        cpu (default), cuda:N, hip:N, torch:cuda:N, torch:cpu,\n"
    "                        cpu:emulate=tf32 ...\n"
    "      --route R         only this route\n"
    "      --dtype T         only this precision\n"
    "      --fit-k LIST      the K to fit model.kN at (\"255,4096\"; default 1 to 4096\n"
    "                        in 21 steps), or none\n"
    "      --lib-path DIRS   vendor library directories to search first\n"
    CLI_HELP_PYTHON
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 probed, 1 a route or precision could not be probed (error),\n"
    "             2 usage error, 3 nothing could be probed.\n";

static const char *const shown[] = {
    "input_subnormals", "output_subnormals", "input_mantissa_bits", "input_rounding",
    "sum_mantissa_bits", "sum_rounding", "combine_rounding", "extra_bits", "product_rounding",
    "product_alignment", "fused_terms",
    "order.k16", "order.k64", "order.k256", "order.k512", "deterministic", "batch_invariant",
};

struct kmodel {
    int k;
    const char *v;
};

static int by_k(const void *a, const void *b)
{
    return ((const struct kmodel *)a)->k - ((const struct kmodel *)b)->k;
}

/* model.kN, runs of K with the same structure on one line each. */
static void print_models(const json_t *props)
{
    struct kmodel m[64];
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)props, key, v) {
        int k = 0, used = 0;
        const char *val = json_string_value(json_object_get(v, "value"));
        if (n < 64 && val && sscanf(key, "model.k%d%n", &k, &used) == 1 && !key[used])
            m[n++] = (struct kmodel){k, val};
    }
    qsort(m, n, sizeof m[0], by_k);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && !strcmp(m[j + 1].v, m[i].v))
            j++;
        char ks[40];
        if (j > i)
            snprintf(ks, sizeof ks, "model K=%d..%d", m[i].k, m[j].k);
        else
            snprintf(ks, sizeof ks, "model K=%d", m[i].k);
        printf("    %-20s %s%s%s\n", ks, !strcmp(m[i].v, "undetermined") ? cli_yellow() : "",
               m[i].v, cli_reset());
        i = j + 1;
    }
}

static void print_route(const json_t *r)
{
    const char *name = json_string_value(json_object_get(r, "route"));
    const char *status = json_string_value(json_object_get(r, "status"));
    printf("%sroute %s%s (%s)", cli_bold(), name, cli_reset(),
           json_string_value(json_object_get(r, "what")));
    if (status && strcmp(status, "probed")) {
        printf(": %s%s%s\n\n", cli_red(), json_string_value(json_object_get(r, "reason")),
               cli_reset());
        return;
    }
    printf("\n");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(r, "precisions"), i, p) {
        const char *st = json_string_value(json_object_get(p, "status"));
        printf("  %s%s.%s%s", cli_bold(), json_string_value(json_object_get(p, "op")),
               json_string_value(json_object_get(p, "precision")), cli_reset());
        if (strcmp(st, "probed")) {
            printf(": %s%s: %s%s\n", st[0] == 'e' ? cli_red() : cli_dim(), st,
                   json_string_value(json_object_get(p, "reason")), cli_reset());
            continue;
        }
        const json_t *impl = json_array_get(json_object_get(p, "impl"), 0);
        printf("  %s[%s]%s\n", cli_dim(), impl ? json_string_value(impl) : "?", cli_reset());
        const json_t *props = json_object_get(p, "properties");
        for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++) {
            const char *v = json_string_value(json_object_get(json_object_get(props, shown[k]),
                                                              "value"));
            if (!v || !strcmp(v, "not applicable"))
                continue;
            printf("    %-20s %s%s%s\n", shown[k], !strcmp(v, "undetermined") ? cli_yellow() : "",
                   v, cli_reset());
        }
        print_models(props);
    }
    printf("\n");
}

static int count_status(const json_t *doc, const char *want)
{
    int n = 0;
    size_t i, j;
    json_t *r, *p;
    json_array_foreach(json_object_get(doc, "routes"), i, r)
        json_array_foreach(json_object_get(r, "precisions"), j, p)
            n += !strcmp(json_string_value(json_object_get(p, "status")), want);
    return n;
}

int cmd_probe(int argc, char **argv)
{
    static const struct option opts[] = {
        {"device", required_argument, 0, 'd'}, {"route", required_argument, 0, 'r'},
        {"dtype", required_argument, 0, 't'},  {"fit-k", required_argument, 0, 'k'},
        CLI_OUT_OPTIONS,
        {"lib-path", required_argument, 0, 'L'}, CLI_PYTHON_OPTIONS,
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    struct gv_probe_opts o = {0};
    struct cli_out out = {0};
    struct cli_python py = {0};
    struct cli_args args = CLI_ARGS("probe", argc, argv, "o:h", opts);
    for (int ch; (ch = cli_next(&args)) != -1;) {
        if (cli_out_opt(&out, ch, args.arg) || cli_python_opt(&py, ch, args.arg))
            continue;
        switch (ch) {
        case 'd': o.device = args.arg; break;
        case 'r': o.route = args.arg; break;
        case 't': o.dtype = args.arg; break;
        case 'k': o.fit_k = args.arg; break;
        case 'L': gv_vendor_set_lib_path(args.arg); break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    int prc = cli_python_ready("probe", &py, o.device);
    if (prc)
        return prc;
    json_t *doc = NULL;
    struct gv_err err = {0};
    int rc = gv_probe_run(&o, &doc, &err);
    if (rc)
        return rc == GV_E_USAGE ? cli_usage("probe", "%s", err.msg) : cli_fail(&err);
    rc = cli_put_doc("probe", doc, &out);
    if (!rc && cli_out_text(&out)) {
        size_t i;
        json_t *r;
        printf("%sfingerprint of %s%s (%.1f s)\n\n", cli_bold(), o.device ? o.device : "cpu",
               cli_reset(), json_real_value(json_object_get(doc, "seconds")));
        json_array_foreach(json_object_get(doc, "routes"), i, r)
            print_route(r);
    }
    int probed = count_status(doc, "probed"), errors = count_status(doc, "error");
    const char *why = json_string_value(
        json_object_get(json_array_get(json_object_get(doc, "routes"), 0), "reason"));
    if (!rc && !probed)
        rc = cli_failf("nothing could be probed on %s%s%s", o.device ? o.device : "cpu",
                       why ? ": " : "", why ? why : "");
    json_decref(doc);
    if (rc)
        return rc;
    return errors ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}
