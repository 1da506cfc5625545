/* gpuvet probe: the numerical fingerprint of every GEMM route of a device. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "dev/vendor.h"
#include "probe/probe.h"

static const char usage[] =
    "usage: gpuvet probe [--device D] [--route R] [--dtype T] [--json] [-o FILE]\n"
    "\n"
    "Measures, for every GEMM route the device offers and every input precision, how\n"
    "the stack computes: subnormal inputs and outputs kept or flushed; the mantissa\n"
    "bits of the inputs that survive and how they are rounded (TF32, bf16 inside fp16);\n"
    "the bits a sum keeps, its rounding and extra accumulator bits; whether products\n"
    "are exact; the accumulation order for several K (FPRev swamping) with the number\n"
    "of terms fused per rounding; run-to-run determinism and batch invariance; and the\n"
    "order and determinism of row sums. Every property says how it was established\n"
    "(inputs, outputs seen) and is \"undetermined\" when the answers disagree.\n"
    "\n"
    "Routes: cuda:N  cublas, cublaslt, kernel (gpuvet's own fp32 kernel)\n"
    "        hip:N   rocblas, hipblaslt, kernel\n"
    "        torch:… torch.matmul, torch.linear, torch.defaults\n"
    "        cpu     cpu (with cpu:emulate=… the emulated behaviour)\n"
    "Precisions: f64 f32 tf32 f16 f16.out16 f16acc16 bf16 bf16.out16 f8e4m3 f8e5m2\n"
    "            (GEMMs), sum.f32 sum.f64; --dtype gemm or sum selects a whole kind.\n"
    "\n"
    "Options:\n"
    "      --device D     cpu (default), cuda:N, hip:N, torch:cuda:N, torch:cpu,\n"
    "                     cpu:emulate=tf32 ...\n"
    "      --route R      only this route\n"
    "      --dtype T      only this precision\n"
    "      --lib-path DIRS  vendor library directories to search first\n"
    "      --json         print the fingerprint document (schema gpuvet.probe)\n"
    "  -o, --output FILE  write the fingerprint document (atomically)\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 probed, 1 a route or precision could not be probed (error),\n"
    "             2 usage error, 3 nothing could be probed.\n";

static const char *const shown[] = {
    "input_subnormals", "output_subnormals", "input_mantissa_bits", "input_rounding",
    "sum_mantissa_bits", "sum_rounding", "extra_bits", "product_rounding", "fused_terms",
    "order.k16", "order.k64", "order.k256", "order.k512", "deterministic", "batch_invariant",
};

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
        {"dtype", required_argument, 0, 't'},  {"json", no_argument, 0, 'j'},
        {"output", required_argument, 0, 'o'}, {"lib-path", required_argument, 0, 'L'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    struct gv_probe_opts o = {0};
    const char *output = NULL;
    int json = 0, ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'd': o.device = optarg; break;
        case 'r': o.route = optarg; break;
        case 't': o.dtype = optarg; break;
        case 'j': json = 1; break;
        case 'o': output = optarg; break;
        case 'L': gv_vendor_set_lib_path(optarg); break;
        case 'h': return cli_help(usage);
        default:
            return cli_usage("probe", "unknown option or missing value: '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage("probe", "unexpected argument '%s'", argv[optind]);
    json_t *doc = NULL;
    struct gv_err err = {0};
    int rc = gv_probe_run(&o, &doc, &err);
    if (rc)
        return rc == GV_E_USAGE ? cli_usage("probe", "%s", err.msg) : cli_fail(&err);
    if (output && gv_json_write_file(output, doc, &err)) {
        json_decref(doc);
        return cli_fail(&err);
    }
    if (json) {
        rc = cli_emit_json(doc, NULL);
    } else {
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
