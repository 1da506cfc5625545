/* gpuvet fleet: run the same deterministic work on every node of a job and
 * gather it (run), compare the nodes (compare: fleet_out.c), judge one node
 * for a scheduler (gate). docs/fleet.md. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "bench/bench.h"
#include "cli/cli.h"
#include "fleet/fleet_run.h"
#include "store/history.h"

static const char usage[] =
    "usage: gpuvet fleet run     [--tier prolog|drain|burnin|standard] [--device D]\n"
    "                            [--repeat K] [--hot DURATION] [--only PATTERN]\n"
    "                            [--bench] [--dir DIR] [--record [--db URL]] [--json]\n"
    "       gpuvet fleet compare DIR|FILE... [--json] [-o FILE] [--write-reference REF.json]\n"
    "       gpuvet fleet gate    --tier prolog|drain|burnin [--reference REF.json]\n"
    "                            [--device D] [--repeat K] [--hot DURATION]\n"
    "                            [--only PATTERN] [--bench] [--history [--db URL]]\n"
    "                            [--json] [-o FILE]\n"
    "\n"
    "The same deterministic work on every node of a job, the nodes compared with each\n"
    "other: a node whose stack drifted, a node whose GPU computes other bits than its\n"
    "identical neighbours, a node that could not run (docs/fleet.md).\n"
    "\n"
    "run      started once per node by the launcher (srun, mpirun); each rank finds its\n"
    "         rank, size and node from the launcher's variables (SLURM_PROCID,\n"
    "         OMPI_COMM_WORLD_RANK, PMIX_RANK; GPUVET_FLEET_NODE names the node), runs\n"
    "         the tier and writes its node document to DIR/nodes/NODE.rRANK.json and\n"
    "         its outputs to DIR/outputs/. Under Open MPI the documents also travel\n"
    "         to rank 0 through MPI (opened at run time), which writes them all and\n"
    "         compares; elsewhere (or GPUVET_FLEET_GATHER=dir) nobody waits: run\n"
    "         'gpuvet fleet compare DIR' after the job step.\n"
    "compare  the fleet document of a gathered directory or of node documents:\n"
    "         exit 0 no odd node, 1 odd nodes, 3 bad input\n"
    "gate     the tier on this node alone, judged: exit 0 keep, 1 drain, 2 cannot\n"
    "         assess (no GPU, timeout, a tool error); one line on stderr,\n"
    "         'gpuvet: drain: ...', at most 200 bytes, fit for a Slurm drain reason\n"
    "\n"
    "The document is gpuvet.fleet.node: run's is this node's, gate's the node's with\n"
    "the decision under \"gate\"; -o is gate's (run writes into --dir).\n"
    "\n"
    "Options:\n"
    "      --tier T          prolog (at most 60 s: GEMM and reduction cases, once),\n"
    "                        drain (at most 5 minutes: the standard suite, the probe,\n"
    "                        3 repeats), burnin (the full suite, under --hot load),\n"
    "                        standard (run's default: the standard suite and probe)\n"
    "      --device D        cpu, cuda:N or hip:N (default: the first GPU, else the CPU)\n"
    "      --repeat K        run the tier's cases K times (intermittent faults)\n"
    "      --hot DURATION    keep the device busy with the tier's GEMMs this long\n"
    "                        first (90, 30s, 10m, 1h), then check\n"
    "      --only PATTERN    only the tier's cases whose id matches the glob(s)\n"
    "      --bench           a short GEMM bench per run (TFLOP/s; GFLOP/s on the CPU),\n"
    "                        counted in the budget; compare calls a node slow by it\n"
    "      --dir DIR         the shared directory of the job (needed with several ranks)\n"
    "      --reference F     gate: judge against a reference (fleet compare\n"
    "                        --write-reference): the majority's digests per group\n"
    "      --history         gate: also against this machine's last passing run in\n"
    "                        the history database ($GPUVET_DB or --db URL)\n"
    "      --record          run: also record this node's document in the history\n"
    "                        database ($GPUVET_DB or --db URL; docs/history.md)\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "  -h, --help            this help\n"
    "\n"
    "GPUVET_FLEET_BUDGET=SECONDS replaces the tier's budget. GPUVET_TEST_FLIP=GLOB is a\n"
    "TESTING AID of --device cpu (an intermittent one-bit fault; results say so).\n"
    "Exit status of run: 0 ran and every case passed, 1 a case failed or the node\n"
    "could not run, 2 usage error, 3 error. Under the MPI gather: rank 0 exits with\n"
    "compare's status, the other ranks 0 once their document is sent.\n";

struct fleet_opts {
    const char *sub, *device, *only, *dir, *reference, *db;
    struct cli_out out;
    int tier, repeat, history, record, bench;
    double hot;
};

/* "90", "30s", "10m", "1h": seconds; -1 when it is none of those. */
static double parse_duration(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || v > 7 * 86400.0)
        return -1;
    double unit = !*end || !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60
                  : !strcmp(end, "h") ? 3600 : -1;
    return unit < 0 ? -1 : v * unit;
}

static int parse_args(int argc, char **argv, struct fleet_opts *o)
{
    static const struct option opts[] = {
        {"tier", required_argument, 0, 't'},      {"device", required_argument, 0, 'd'},
        {"repeat", required_argument, 0, 'k'},    {"hot", required_argument, 0, 'H'},
        {"only", required_argument, 0, 'O'},      {"dir", required_argument, 0, 'D'},
        {"reference", required_argument, 0, 'R'}, {"history", no_argument, 0, 'y'},
        {"db", required_argument, 0, 'Q'},        {"record", no_argument, 0, 'r'},
        {"bench", no_argument, 0, 'B'},
        CLI_OUT_OPTIONS,
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    const char *cmd = !strcmp(o->sub, "gate") ? "fleet gate" : "fleet run";
    char *end;
    struct cli_args args = CLI_ARGS(cmd, argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        const char *optarg = args.arg;
        if (cli_out_opt(&o->out, c, optarg))
            continue;
        switch (c) {
        case 't':
            if ((o->tier = gv_fleet_tier_from_name(optarg)) < 0)
                return cli_usage(cmd, "--tier takes prolog, drain, burnin or standard, not "
                                 "'%s'", optarg);
            break;
        case 'd': o->device = optarg; break;
        case 'k':
            o->repeat = (int)strtol(optarg, &end, 10);
            if (*end || o->repeat < 1 || o->repeat > 1000)
                return cli_usage(cmd, "--repeat takes 1..1000, not '%s'", optarg);
            break;
        case 'H':
            if ((o->hot = parse_duration(optarg)) < 0)
                return cli_usage(cmd, "--hot takes a duration (90, 30s, 10m, 1h), not '%s'",
                                 optarg);
            break;
        case 'O': o->only = optarg; break;
        case 'D': o->dir = optarg; break;
        case 'R': o->reference = optarg; break;
        case 'y': o->history = 1; break;
        case 'Q': /* gate: the history to read; run: the one to record into */
            o->db = optarg;
            *(strcmp(o->sub, "gate") ? &o->record : &o->history) = 1;
            break;
        case 'r': o->record = 1; break;
        case 'B': o->bench = 1; break;
        case 'h': return -1;
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    return GV_EXIT_OK;
}

/* ---------- progress and the test's stop point ---------- */

/* Tests only: GPUVET_TEST_STOP_AT=case-N stops this process (SIGSTOP) as its
 * N-th case (counted over repeats, from 0) starts, so that a test can kill it
 * there (tests/cli/fleet_mpi.sh), as check's does. */
static void progress(void *ud, size_t i, size_t n, const struct gv_catalog_entry *e,
                     const struct gv_case_result *r)
{
    static size_t count;
    (void)ud, (void)i, (void)n, (void)e;
    if (r)
        return;
    const char *at = getenv("GPUVET_TEST_STOP_AT");
    char want[32];
    snprintf(want, sizeof want, "case-%zu", count++);
    if (at && !strcmp(at, want))
        raise(SIGSTOP);
}

static double budget_env(void)
{
    const char *b = getenv("GPUVET_FLEET_BUDGET");
    double v = b ? parse_duration(b) : 0;
    return v > 0 ? v : 0;
}

static int run_node(const struct fleet_opts *o, const struct gv_fleet_rank *r, double budget,
                    json_t **node, struct gv_fleet_outputs *outs)
{
    struct gv_fleet_run_opts ro = {(enum gv_fleet_tier)o->tier, o->device, o->only, o->repeat,
                                   o->hot, o->bench, budget, o->dir != NULL, progress, NULL,
                                   gv_bench_figures};
    struct gv_err err = {0};
    if (gv_fleet_run_node(&ro, r, node, outs, &err))
        return err.code == GV_E_USAGE ? cli_usage("fleet", "%s", err.msg) : cli_fail(&err);
    return GV_EXIT_OK;
}

/* 0 the node ran and every case passed, 1 otherwise. */
static int node_exit(const json_t *node)
{
    if (strcmp(json_string_value(json_object_get(node, "status")), "ran"))
        return GV_EXIT_FINDINGS;
    size_t i, j;
    json_t *run, *c;
    json_array_foreach(json_object_get(node, "runs"), i, run)
        json_array_foreach(json_object_get(run, "cases"), j, c)
            if (strcmp(json_string_value(json_object_get(c, "verdict")), "pass"))
                return GV_EXIT_FINDINGS;
    return GV_EXIT_OK;
}

static void say_node(const struct gv_fleet_rank *r, const json_t *node)
{
    const char *reason = json_string_value(json_object_get(node, "reason"));
    const json_t *runs = json_object_get(node, "runs");
    fprintf(stderr, "gpuvet fleet: %s (rank %d of %d, %s): %s%s, %zu repeat(s)\n", r->node,
            r->rank, r->size, gv_fleet_launcher_name(r->launcher),
            reason ? "could not run: " : "ran", reason ? reason : "", json_array_size(runs));
}

/* ---------- run ---------- */

static int compare_dir(const char *dir)
{
    char out[4096], sub[] = "compare", opt[] = "-o", in[4096];
    snprintf(out, sizeof out, "%s/fleet.json", dir);
    snprintf(in, sizeof in, "%s", dir);
    char *argv[] = {sub, in, opt, out, NULL};
    return cli_fleet_compare(4, argv);
}

/* Rank 0 under MPI: every rank's document, checked and written (its file
 * name from the validated node name and the rank it came from). */
static size_t write_gathered(const char *dir, const json_t *all)
{
    size_t i, written = 0;
    json_t *s;
    json_array_foreach(all, i, s) {
        const char *bytes = json_string_value(s);
        size_t len = json_string_length(s);
        char what[64];
        snprintf(what, sizeof what, "the document of rank %zu", i);
        if (!len) {
            fprintf(stderr, "gpuvet fleet: rank %zu sent no document\n", i);
            continue;
        }
        json_t *doc = NULL;
        json_error_t je;
        struct gv_err err = {0};
        if (gv_json_parse(bytes, len, what, &doc, &je, &err)) {
            fprintf(stderr, "gpuvet fleet: %s is not JSON: %s\n", what, err.msg[0] ? err.msg
                                                                                    : je.text);
            continue;
        }
        const char *node = json_string_value(json_object_get(doc, "node"));
        int rc = gv_fleet_node_check(doc, what, &err);
        if (rc && rc != GV_E_UNSUPPORTED)
            fprintf(stderr, "gpuvet fleet: %s\n", err.msg);
        else if (json_integer_value(json_object_get(doc, "rank")) != (json_int_t)i)
            fprintf(stderr, "gpuvet fleet: %s says it is rank %lld\n", what,
                    (long long)json_integer_value(json_object_get(doc, "rank")));
        else if (gv_fleet_dir_write_node(dir, node ? node : "", (int)i, doc, &err))
            fprintf(stderr, "gpuvet fleet: %s\n", err.msg);
        else
            written++;
        json_decref(doc);
    }
    return written;
}

/* This rank's document (NULL: it has none, rank 0 will name it missing) to
 * rank 0; there, every document written and compared. */
static int gather_mpi(const char *dir, const struct gv_fleet_rank *r, const json_t *node)
{
    char *s = node ? gv_json_dumps(node, JSON_COMPACT) : NULL;
    json_t *all = NULL;
    struct gv_err err = {0};
    int rc = gv_fleet_mpi_gather(s ? s : "", s ? strlen(s) : 0, &all, &err);
    free(s);
    gv_fleet_mpi_finalize();
    if (rc)
        return cli_fail(&err);
    /* the others' part is done: rank 0 holds their documents now, and mpirun
     * would end the job (rank 0's compare too) on any other rank's non-zero exit */
    if (r->rank != 0)
        return GV_EXIT_OK;
    size_t n = write_gathered(dir, all);
    fprintf(stderr, "gpuvet fleet: gathered %zu of %d node documents through MPI into %s/nodes\n",
            n, r->size, dir);
    json_decref(all);
    return compare_dir(dir);
}

/* MPI when the launcher is Open MPI: its absence is said, then the directory. */
static enum gv_fleet_gather start_gather(const struct gv_fleet_rank *r)
{
    if (gv_fleet_gather_mode(r) != GV_GATHER_MPI)
        return GV_GATHER_DIR;
    struct gv_err err = {0};
    if (gv_fleet_mpi_init(r, &err) == GV_OK)
        return GV_GATHER_MPI;
    fprintf(stderr, "gpuvet fleet: %s; gathering through the directory: run 'gpuvet fleet "
            "compare' afterwards\n", err.msg);
    return GV_GATHER_DIR;
}

/* --record: this node's document into the history (named by its file in --dir). */
static int record_node(const struct fleet_opts *o, const struct gv_fleet_rank *r,
                       const json_t *node)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/nodes/%s.r%d.json", o->dir ? o->dir : "", r->node, r->rank);
    cli_record_set_db(o->db);
    return cli_record(node, o->dir ? path : NULL);
}

static int fleet_run(struct fleet_opts *o)
{
    struct gv_fleet_rank r;
    struct gv_err err = {0};
    if (gv_fleet_rank_find(&r, &err))
        return cli_fail(&err);
    if (r.note[0])
        fprintf(stderr, "gpuvet fleet: %s\n", r.note);
    if (!o->dir && r.size != 1)
        return cli_usage("fleet run", "rank %d of %d: --dir DIR (shared by the job) is needed "
                         "with several ranks", r.rank, r.size);
    if (o->dir && gv_fleet_dir_prepare(o->dir, &err))
        return cli_fail(&err);
    enum gv_fleet_gather mode = o->dir ? start_gather(&r) : GV_GATHER_DIR;
    json_t *node = NULL;
    struct gv_fleet_outputs outs = {0};
    int recorded = GV_EXIT_OK;
    int rc = run_node(o, &r, budget_env(), &node, &outs);
    if (!rc) {
        if (o->dir && outs.n && gv_fleet_dir_write_outputs(o->dir, r.node, r.rank, &outs, &err))
            fprintf(stderr, "gpuvet fleet: %s\n", err.msg);
        if (o->dir && gv_fleet_dir_write_node(o->dir, r.node, r.rank, node, &err))
            rc = cli_fail(&err);
        say_node(&r, node);
        if (o->out.json)
            cli_emit_json(node, NULL);
        if (!rc && cli_record_wanted(o->record)) /* each rank records its own */
            recorded = record_node(o, &r, node);
    }
    gv_fleet_outputs_free(&outs);
    if (mode == GV_GATHER_MPI) { /* the others wait in the gather: always take part */
        int grc = gather_mpi(o->dir, &r, node);
        rc = r.rank == 0 && !grc ? rc : grc; /* rank 0: compare's, else its own error */
    } else if (!rc) {
        rc = node_exit(node);
    }
    json_decref(node);
    return rc ? rc : recorded;
}

/* ---------- gate ---------- */

static const char *decision_words(const char *d)
{
    return !strcmp(d, "cannot_assess") ? "cannot assess" : d;
}

static void say_alarm(const char *msg)
{
    ssize_t w = write(STDERR_FILENO, msg, strlen(msg));
    (void)w;
}

static char alarm_line[256];

/* The budget's last guard: a case that hangs the device is cut off here. */
static void on_alarm(int sig)
{
    (void)sig;
    say_alarm(alarm_line);
    _exit(2);
}

static void arm_alarm(const struct fleet_opts *o, double budget)
{
    if (budget <= 0)
        return;
    snprintf(alarm_line, sizeof alarm_line, "gpuvet: cannot assess: timeout: the %s tier ran "
             "past its budget of %.3g s\n", gv_fleet_tier_name((enum gv_fleet_tier)o->tier),
             budget);
    signal(SIGALRM, on_alarm);
    double at = floor(budget * 0.97); /* before the scheduler's own kill at the budget */
    alarm(at >= 1 ? (unsigned)at : 1);
}

/* A cannot-assess decision of the gate itself (a tool error). */
static int cannot(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int cannot(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    msg[200] = '\0';
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\'')
            *p = ' ';
    fprintf(stderr, "gpuvet: cannot assess: %s\n", msg);
    return 2;
}

static int load_reference(const char *path, json_t **ref, struct gv_err *err)
{
    if (gv_json_read_file(path, (size_t)256 << 20, ref, err))
        return err->code;
    int rc = gv_json_check_schema(*ref, GV_FLEET_REFERENCE_SCHEMA, GV_FLEET_SCHEMA_VERSION, path,
                                  err);
    if (rc) {
        json_decref(*ref);
        *ref = NULL;
    }
    return rc;
}

/* This machine's last passing run: *good NULL when there is none. */
static int last_good(const char *db, json_t **good, char *what, size_t whatsz,
                     struct gv_err *err)
{
    struct gv_history *h = NULL;
    *good = NULL;
    if (gv_history_open(db, 0, &h, err))
        return err->code;
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    struct gv_fleet_rank r;
    struct gv_err rerr = {0};
    if (!gv_fleet_rank_find(&r, &rerr)) /* fleet runs are recorded under their node's name */
        snprintf(id.hostname, sizeof id.hostname, "%s", r.node);
    json_t *s = NULL;
    int rc = gv_history_good(h, NULL, &id, &s, good, err);
    if (rc == GV_OK)
        snprintf(what, whatsz, "run %lld of %s",
                 (long long)json_integer_value(json_object_get(s, "id")),
                 json_object_get(s, "created") ? json_string_value(json_object_get(s, "created")) : "?");
    else if (rc == GV_E_NOTFOUND)
        rc = GV_OK, gv_err_clear(err);
    json_decref(s);
    gv_history_close(h);
    return rc;
}

static int fleet_gate(struct fleet_opts *o)
{
    if (o->tier < 0 || o->tier == GV_TIER_STANDARD)
        return cli_usage("fleet gate", "--tier prolog, drain or burnin is needed");
    double budget = budget_env() > 0 ? budget_env() : gv_fleet_tier_budget(o->tier);
    arm_alarm(o, budget);
    struct gv_err err = {0};
    json_t *ref = NULL, *good = NULL;
    char good_what[160] = "";
    if (o->reference && load_reference(o->reference, &ref, &err))
        return cannot("reference %s", err.msg);
    if (o->history && last_good(o->db, &good, good_what, sizeof good_what, &err)) {
        json_decref(ref);
        return cannot("history: %s", err.msg);
    }
    struct gv_fleet_rank r;
    if (gv_fleet_rank_find(&r, &err)) { /* the gate judges this node whatever the launcher */
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        r = (struct gv_fleet_rank){.size = 1};
        gv_fleet_node_name_map(host[0] ? host : "unknown", r.node);
    }
    json_t *node = NULL;
    /* the run stops itself before the budget; the alarm is for a hung device */
    int rc = run_node(o, &r, budget * 0.9, &node, NULL);
    json_t *verdict = NULL;
    if (!rc && gv_fleet_gate(&(struct gv_fleet_gate_in){node, ref, good, good_what}, &verdict,
                             &err))
        rc = cannot("%s", err.msg);
    else if (rc)
        rc = 2;
    alarm(0);
    json_decref(ref);
    json_decref(good);
    if (!verdict) {
        json_decref(node);
        return rc ? rc : 2;
    }
    json_object_set(node, "gate", verdict);
    const char *d = json_string_value(json_object_get(verdict, "decision"));
    fprintf(stderr, "gpuvet: %s: %s\n", decision_words(d),
            json_string_value(json_object_get(verdict, "reason")));
    if (cli_put_doc("fleet gate", node, &o->out))
        rc = 2;
    rc = rc ? rc : gv_fleet_gate_exit(verdict);
    json_decref(verdict);
    json_decref(node);
    return rc;
}

int cmd_fleet(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return argc < 2 ? cli_usage("fleet", "run, compare or gate?") : cli_help(usage);
    struct fleet_opts o = {.sub = argv[1], .tier = -1};
    if (!strcmp(argv[1], "compare"))
        return cli_fleet_compare(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") && strcmp(argv[1], "gate"))
        return cli_usage("fleet", "unknown subcommand '%s' (run, compare, gate)", argv[1]);
    int rc = parse_args(argc - 1, argv + 1, &o);
    if (rc < 0)
        return cli_help(usage);
    if (rc)
        return rc;
    if (!strcmp(argv[1], "gate"))
        return fleet_gate(&o);
    if (o.tier < 0)
        o.tier = GV_TIER_STANDARD;
    if (o.reference || o.history || o.out.output)
        return cli_usage("fleet run", "--reference, --history and -o are gate's");
    return fleet_run(&o);
}
