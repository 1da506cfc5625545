/* gpuvet ab: the suite on two stacks side by side, compared like `compare`.
 * Each side runs `gpuvet check` in its own child process, so each can load a
 * different set of vendor libraries: "would rolling back fix it?" without
 * rolling back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "cli/child.h"
#include "cli/cli.h"
#include "dev/kind.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet ab --a SPEC --b SPEC [--suite S] [--only PATTERN] [--device D]\n"
    "                 [--python PY] [--python-root DIR | --image REF] [--keep DIR]\n"
    "                 [--json] [-o FILE] [--junit FILE] [--record] [--db URL]\n"
    "       gpuvet ab --bench --a SPEC --b SPEC [--only PATTERN] [--quick|--full]\n"
    "                 [--device D] [--keep DIR] [--json] [-o FILE] [--junit FILE]\n"
    "\n"
    "Run the numerics suite twice, each time in a child process set up for one stack, and\n"
    "compare the two result files case by case like 'gpuvet compare' (A is 'before', B\n"
    "'after'). It answers \"would rolling back fix it?\" without rolling anything back.\n"
    "The document is the comparison, as 'gpuvet compare' makes it.\n"
    "\n"
    "A SPEC is a comma-separated list of (options may also be repeated):\n"
    "  lib-path=DIR     load vendor libraries from DIR first (e.g. /opt/rocm-5.7.0/lib,\n"
    "                   or a torch/lib directory); also put first on LD_LIBRARY_PATH\n"
    "  env=NAME=VALUE   set an environment variable (e.g. env=NVIDIA_TF32_OVERRIDE=0,\n"
    "                   or env=GPUVET_BLAS=lt to run the GEMMs through hipBLASLt/cuBLASLt)\n"
    "  unset=NAME       remove an environment variable\n"
    "  device=D         the device for this side (default: --device, else the first GPU)\n"
    "  python=PY        this side runs the suite through the PyTorch of interpreter PY\n"
    "                   (device torch:cuda:0 where a GPU is present, else torch:cpu,\n"
    "                   unless device= or --device name another torch device)\n"
    "  python-root=DIR  PY (default python3) lives in this root filesystem (a chroot or\n"
    "                   an unpacked container image), as for check --python-root\n"
    "  image=REF        PY runs inside the container image REF (unpacked once into the\n"
    "                   cache, run in an isolated root with the image's Env), as for\n"
    "                   check --image\n"
    "  system           no change (the stack this shell would load)\n"
    "A SPEC that names none of python=, python-root= and image= takes --python,\n"
    "--python-root and --image.\n"
    "\n"
    "      --bench          run 'gpuvet bench' on each side instead of the numerics suite\n"
    "                       and compare the two benchmark documents (regressed: worse\n"
    "                       beyond the measured noise, sample ranges apart; see\n"
    "                       'gpuvet compare --help'); python= does not apply\n"
    "      --quick, --full  with --bench: the benchmark mode (default: bench's default)\n"
    "      --suite S        quick (default), standard or full\n"
    "      --only PATTERN   only the cases whose id matches (glob)\n"
    "      --device D       device for both sides unless a SPEC says otherwise\n"
    "      --keep DIR       keep the result and output files in DIR (a.json, b.json,\n"
    "                       a.safetensors, b.safetensors)\n"
    CLI_HELP_PYTHON
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "      --junit FILE     as for 'gpuvet compare'\n"
    "      --record         record both sides' results in the history database (as\n"
    "                       'gpuvet check --record'; GPUVET_RECORD=1: always)\n"
    "      --db URL         record them in this database (a path or postgresql://...)\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit codes as for 'gpuvet compare': 1 when B is degraded or newly failing against A\n"
    "(with --bench: a result regressed or newly fails).\n";

#define MAX_ITEMS 64

struct side {
    const char *items[MAX_ITEMS];
    int n;
    char *lib_path;   /* joined with ':' */
    const char *device;
    const char *python, *python_root, *image;
};

static int add_items(struct side *s, char *spec)
{
    for (char *tok = strtok(spec, ","); tok; tok = strtok(NULL, ",")) {
        if (s->n == MAX_ITEMS)
            return -1;
        s->items[s->n++] = tok;
    }
    return 0;
}

static int valid_name(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || s[i] == '_' ||
              (i && s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

/* Builds the child's environment from ours and the side's items. */
static int build_env(struct side *s, char ***envp_out, char *why, size_t whysz)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + MAX_ITEMS + 4, sizeof *env);
    if (!env)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        env[m++] = environ[i];
    for (int i = 0; i < s->n; i++) {
        const char *it = s->items[i];
        if (!strcmp(it, "system") || !*it)
            continue;
        if (!strncmp(it, "lib-path=", 9)) {
            const char *dir = it + 9;
            if (!gv_is_dir(dir)) {
                snprintf(why, whysz, "lib-path=%s: not a directory", dir);
                free(env);
                return -1;
            }
            size_t old = s->lib_path ? strlen(s->lib_path) : 0;
            char *p = realloc(s->lib_path, old + strlen(dir) + 2);
            if (!p) {
                free(env);
                return -1;
            }
            if (old)
                p[old++] = ':';
            strcpy(p + old, dir);
            s->lib_path = p;
            continue;
        }
        if (!strncmp(it, "device=", 7)) {
            s->device = it + 7;
            continue;
        }
        if (!strncmp(it, "python=", 7) && it[7]) {
            s->python = it + 7;
            continue;
        }
        if (!strncmp(it, "python-root=", 12) && it[12]) {
            if (!gv_is_dir(it + 12)) {
                snprintf(why, whysz, "python-root=%s: not a directory", it + 12);
                free(env);
                return -1;
            }
            s->python_root = it + 12;
            continue;
        }
        if (!strncmp(it, "image=", 6) && it[6]) {
            s->image = it + 6;
            continue;
        }
        const char *assign = NULL, *unset = NULL;
        if (!strncmp(it, "env=", 4))
            assign = it + 4;
        else if (!strncmp(it, "unset=", 6))
            unset = it + 6;
        else {
            snprintf(why, whysz, "'%s' is not a SPEC item (lib-path=, env=, unset=, device=, "
                                 "python=, python-root=, image=)", it);
            free(env);
            return -1;
        }
        const char *name = assign ? assign : unset;
        size_t nl = assign ? (size_t)(strchr(assign, '=') ? strchr(assign, '=') - assign : 0)
                           : strlen(unset);
        if (!valid_name(name, nl)) {
            snprintf(why, whysz, "'%s': expected NAME=VALUE with a valid variable name", it);
            free(env);
            return -1;
        }
        for (size_t k = 0; k < m; k++)
            if (!strncmp(env[k], name, nl) && env[k][nl] == '=') {
                memmove(env + k, env + k + 1, (m - k - 1) * sizeof *env);
                m--;
                k--;
            }
        if (assign)
            env[m++] = (char *)assign;
    }
    if (s->lib_path) {
        static char *owned[2];
        const char *ld = getenv("LD_LIBRARY_PATH");
        size_t len = strlen(s->lib_path) + (ld ? strlen(ld) : 0) + 40;
        for (int k = 0; k < 2; k++)
            owned[k] = malloc(len);
        snprintf(owned[0], len, "GPUVET_LIB_PATH=%s", s->lib_path);
        snprintf(owned[1], len, "LD_LIBRARY_PATH=%s%s%s", s->lib_path, ld && *ld ? ":" : "",
                 ld ? ld : "");
        for (size_t k = 0; k < m; k++)
            if (!strncmp(env[k], "GPUVET_LIB_PATH=", 16) || !strncmp(env[k], "LD_LIBRARY_PATH=", 16)) {
                memmove(env + k, env + k + 1, (m - k - 1) * sizeof *env);
                m--;
                k--;
            }
        env[m++] = owned[0];
        env[m++] = owned[1];
    }
    env[m] = NULL;
    *envp_out = env;
    return 0;
}

/* --bench: `gpuvet bench -o out` in the side's environment. */
static int run_bench_side(const char *label, struct side *s, const char *mode, const char *only,
                          const char *device, const char *out, char **env)
{
    if (s->python || s->python_root || s->image) {
        free(env);
        return cli_usage("ab", "--%s: python=, python-root= and image= select a PyTorch for the numerics "
                               "suite; 'gpuvet bench' runs gpuvet's own kernels (drop them, or "
                               "drop --bench)", label);
    }
    char *args[12];
    int n = 0;
    args[n++] = (char *)"bench";
    if (mode)
        args[n++] = (char *)mode;
    if (only) {
        args[n++] = (char *)"--only";
        args[n++] = (char *)only;
    }
    const char *dev = s->device ? s->device : device;
    if (dev) {
        args[n++] = (char *)"--device";
        args[n++] = (char *)dev;
    }
    args[n++] = (char *)"-o";
    args[n++] = (char *)out;
    args[n] = NULL;
    fprintf(stderr, "gpuvet ab: benchmarking side %s%s%s\n", label,
            s->lib_path ? " with libraries from " : "", s->lib_path ? s->lib_path : "");
    int rc = cli_run_self(args, env, 1);
    free(env);
    if (rc != GV_EXIT_OK && rc != GV_EXIT_FINDINGS)
        return cli_failf("side %s: 'gpuvet bench' failed (exit status %d); see the messages above",
                         label, rc);
    if (!gv_is_file(out))
        return cli_failf("side %s: 'gpuvet bench' wrote no result to %s", label, out);
    return GV_EXIT_OK;
}

static int run_side(const char *label, struct side *s, const char *suite, const char *only,
                    const char *device, const char *out, const char *outputs,
                    const char *bench_mode, int bench, const struct cli_python *py)
{
    char why[512] = "";
    char **env = NULL;
    if (build_env(s, &env, why, sizeof why) != 0)
        return cli_usage("ab", "--%s: %s", label, why[0] ? why : "cannot build the environment");
    if (!s->python && !s->python_root && !s->image) { /* --python ...: both sides' default */
        s->python = py->python;
        s->python_root = py->root;
        s->image = py->image;
    }
    if (bench)
        return run_bench_side(label, s, bench_mode, only, device, out, env);
    char *args[22];
    int n = 0;
    args[n++] = (char *)"check";
    args[n++] = (char *)"--save-outputs";
    args[n++] = (char *)outputs;
    args[n++] = (char *)"--suite";
    args[n++] = (char *)suite;
    if (only) {
        args[n++] = (char *)"--only";
        args[n++] = (char *)only;
    }
    const char *dev = s->device ? s->device : device;
    if ((s->python || s->python_root || s->image) && !gv_dev_spec_starts_python(dev))
        dev = gv_kind_torch.default_spec(); /* python= means: this PyTorch */
    if (s->python) {
        args[n++] = (char *)"--python";
        args[n++] = (char *)s->python;
    }
    if (s->python_root) {
        args[n++] = (char *)"--python-root";
        args[n++] = (char *)s->python_root;
    }
    if (s->image) {
        args[n++] = (char *)"--image";
        args[n++] = (char *)s->image;
    }
    if (dev) {
        args[n++] = (char *)"--device";
        args[n++] = (char *)dev;
    }
    args[n++] = (char *)"-o";
    args[n++] = (char *)out;
    args[n] = NULL;
    fprintf(stderr, "gpuvet ab: running side %s%s%s\n", label, s->lib_path ? " with libraries from " : "",
            s->lib_path ? s->lib_path : "");
    int rc = cli_run_self(args, env, 1);
    free(env);
    if (rc != GV_EXIT_OK && rc != GV_EXIT_FINDINGS)
        return cli_failf("side %s: 'gpuvet check' failed (exit status %d); see the messages above",
                         label, rc);
    return GV_EXIT_OK;
}

int cmd_ab(int argc, char **argv)
{
    static const struct option opts[] = {
        {"a", required_argument, 0, 'a'},      {"b", required_argument, 0, 'b'},
        {"suite", required_argument, 0, 's'},  {"only", required_argument, 0, 'O'},
        {"device", required_argument, 0, 'd'}, {"keep", required_argument, 0, 'k'},
        CLI_OUT_OPTIONS,                       {"junit", required_argument, 0, 'J'},
        {"help", no_argument, 0, 'h'},         {"record", no_argument, 0, 'R'},
        {"db", required_argument, 0, 'Q'},     {"bench", no_argument, 0, 'X'},
        {"quick", no_argument, 0, 'q'},        {"full", no_argument, 0, 'F'},
        CLI_PYTHON_OPTIONS,                    {0, 0, 0, 0}};
    struct side a = {0}, b = {0};
    const char *suite = "quick", *only = NULL, *device = NULL, *keep = NULL, *junit = NULL;
    int have_a = 0, have_b = 0, record = 0, bench = 0, suite_given = 0;
    const char *bench_mode = NULL;
    int modes = 0;
    struct cli_out out = {0};
    struct cli_python py = {0};
    struct cli_args args = CLI_ARGS("ab", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        const char *optarg = args.arg;
        if (cli_out_opt(&out, c, optarg) || cli_python_opt(&py, c, optarg))
            continue;
        switch (c) {
        case 'a':
            have_a = 1;
            if (add_items(&a, (char *)optarg))
                return cli_usage("ab", "--a: too many items");
            break;
        case 'b':
            have_b = 1;
            if (add_items(&b, (char *)optarg))
                return cli_usage("ab", "--b: too many items");
            break;
        case 's': suite = optarg, suite_given = 1; break;
        case 'X': bench = 1; break;
        case 'q': bench_mode = "--quick", modes++; break;
        case 'F': bench_mode = "--full", modes++; break;
        case 'O': only = optarg; break;
        case 'd': device = optarg; break;
        case 'k': keep = optarg; break;
        case 'J': junit = optarg; break;
        case 'R': record = 1; break;
        case 'Q': cli_record_set_db(optarg), record = 1; break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    if (bench && (py.python || py.root || py.image))
        return cli_usage("ab", "--python, --python-root and --image are the numerics suite's; "
                               "not with --bench");
    if (!have_a || !have_b)
        return cli_usage("ab", "both --a SPEC and --b SPEC are required (use 'system' for no "
                               "change)");
    if (modes > 1)
        return cli_usage("ab", "--quick and --full exclude each other");
    if (modes && !bench)
        return cli_usage("ab", "--quick and --full go with --bench (the numerics suite takes "
                               "--suite)");
    if (bench && suite_given)
        return cli_usage("ab", "--suite is the numerics suite's; with --bench use --quick or "
                               "--full");
    if (bench && record)
        return cli_usage("ab", "--record and --db keep numerics results; not with --bench");
    char dir[4096];
    if (keep) {
        if (gv_mkdirs(keep, 0755) != 0)
            return cli_failf("--keep %s: cannot create the directory", keep);
        snprintf(dir, sizeof dir, "%s", keep);
    } else {
        snprintf(dir, sizeof dir, "/tmp/gpuvet-ab-XXXXXX");
        if (!mkdtemp(dir))
            return cli_failf("cannot create a temporary directory");
    }
    char fa[4200], fb[4200], oa[4200], ob[4200];
    snprintf(fa, sizeof fa, "%s/a.json", dir);
    snprintf(fb, sizeof fb, "%s/b.json", dir);
    snprintf(oa, sizeof oa, "%s/a.safetensors", dir);
    snprintf(ob, sizeof ob, "%s/b.safetensors", dir);
    record = bench ? 0 : cli_record_wanted(record);
    unsetenv("GPUVET_RECORD"); /* the sides' results are recorded here, once */
    int rc = run_side("a", &a, suite, only, device, fa, oa, bench_mode, bench, &py);
    if (!rc)
        rc = run_side("b", &b, suite, only, device, fb, ob, bench_mode, bench, &py);
    if (!rc) {
        struct cli_compare_opts co = {.a = fa, .b = fb, .junit = junit, .json = out.json,
                                      .output = out.output};
        rc = cli_compare_files(&co);
        if (record && (cli_record_file_side(fa, "a") | cli_record_file_side(fb, "b")) && !rc)
            rc = GV_EXIT_ERROR;
    }
    free(a.lib_path);
    free(b.lib_path);
    if (!keep) {
        unlink(fa);
        unlink(fb);
        unlink(oa);
        unlink(ob);
        rmdir(dir);
    } else if (cli_out_text(&out)) {
        printf("result files kept: %s, %s\n", fa, fb);
    }
    return rc;
}
