/* gpuvet history: the runs recorded in the history database. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"
#include "env/diff.h"
#include "store/history.h"

static const char usage[] =
    "usage: gpuvet history list [--machine M] [--image I] [--kind K] [--since DATE] [--limit N]\n"
    "       gpuvet history show ID [--document]\n"
    "       gpuvet history diff ID ID\n"
    "       gpuvet history good [--machine M | --image I]\n"
    "       gpuvet history import [--machine M] FILE|FLEET-DIR...\n"
    "       gpuvet history fleet [--machine NODE] [--since DATE] [--limit N]\n"
    "       gpuvet history check\n"
    "       (each also takes --db URL, --json and -o FILE)\n"
    "\n"
    "The history database holds every run recorded with --record (snapshot, check, ab,\n"
    "torch capture) or GPUVET_RECORD=1, or imported from files: the full document,\n"
    "compressed, and the columns asked about (machine, GPU, kernel, driver, ROCm/CUDA,\n"
    "PyTorch, the image's digests and tags, verdict, cases passed and failed, worst bits\n"
    "lost). See docs/history.md.\n"
    "\n"
    "  list      the runs, newest first (default 50)\n"
    "  show ID   one run's columns; --document: the document is the run's own, as\n"
    "            recorded (printed, or written by -o), e.g. for 'gpuvet compare'\n"
    "  diff A B  what differs between two runs: their columns, and the layers of their\n"
    "            snapshots as 'gpuvet diff' tells them\n"
    "  good      the newest run of this machine (or --machine M: hostname or machine id)\n"
    "            that passed: 'gpuvet plan rollback --to last-good' plans back to it;\n"
    "            --image I: the newest run of that image that passed\n"
    "  import    record existing result, snapshot and capture files; their machine is\n"
    "            this one unless --machine M names it (a file from another machine)\n"
    "            (a fleet directory: DIR/nodes/*.json and DIR/fleet.json)\n"
    "  fleet     the fleet over time: the recorded fleet comparisons, newest first,\n"
    "            with their groups and odd nodes, and per node its recorded runs\n"
    "            (stack digest, verdict, its class when odd); gpuvet.fleet-history\n"
    "  check     the database's integrity check\n"
    "\n"
    "      --db URL      a SQLite file, or postgresql://user@host/db for a team; default\n"
    "                    $GPUVET_DB, else $XDG_DATA_HOME/gpuvet/history.db\n"
    "                    (~/.local/share/gpuvet/history.db)\n"
    "      --machine M   only this machine (hostname or machine id; fleet: node name)\n"
    "      --image I     only this image: its manifest or config digest (sha256:HEX, or\n"
    "                    12 or more of HEX's first digits), or the tag asked for\n"
    "      --kind K      list: only snapshot, check, capture, probe, bench, fleet-node\n"
    "                    or fleet runs\n"
    "      --since DATE  list, fleet: runs made on or after DATE (2026-11-30 or ISO-8601)\n"
    "      --limit N     list: at most N runs; fleet: at most N comparisons\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "  -h, --help        this help\n"
    "\n"
    "Exit status: 0 ok, 1 diff found differences or good found no passing run,\n"
    "             2 usage error, 3 the database cannot be opened or read.\n";

struct hopts {
    const char *db, *machine, *image, *kind, *since;
    struct cli_out out;
    int limit, document;
};

/* argv[0] is the subcommand; its operands in *args, *nargs. */
static int parse(int argc, char **argv, struct hopts *o, char ***args, int *nargs)
{
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},      {"machine", required_argument, 0, 'm'},
        {"image", required_argument, 0, 'i'},
        {"kind", required_argument, 0, 'k'},    {"since", required_argument, 0, 's'},
        {"limit", required_argument, 0, 'l'},   CLI_OUT_OPTIONS,
        {"document", no_argument, 0, 'D'},      {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    char cmd[64];
    snprintf(cmd, sizeof cmd, "history %s", argv[0]);
    struct cli_args a = CLI_ARGS(cmd, argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&a)) != -1;) {
        const char *optarg = a.arg;
        if (cli_out_opt(&o->out, c, optarg))
            continue;
        switch (c) {
        case 'd': o->db = optarg; break;
        case 'm': o->machine = optarg; break;
        case 'i': o->image = optarg; break;
        case 'k': o->kind = optarg; break;
        case 's': o->since = optarg; break;
        case 'D': o->document = 1; break;
        case 'l': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 1000000)
                return cli_usage("history", "--limit needs a positive number, got '%s'", optarg);
            o->limit = (int)v;
            break;
        }
        case 'h': return -1;
        default: return GV_EXIT_USAGE;
        }
    }
    *args = a.ops;
    *nargs = a.nops;
    return 0;
}

static const char *s_or(const json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v && *v ? v : dflt;
}

static long long i_of(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* A run's image: its tag and the digest's first 12 hex digits, "-" for none. */
static void image_text(const json_t *r, char *out, size_t n)
{
    const char *d = s_or(r, "image_manifest_digest", NULL);
    if (!d)
        d = s_or(r, "image_config_digest", NULL);
    const char *tag = s_or(r, "image_tag", NULL);
    if (d)
        snprintf(out, n, "%s%s%.19s", tag ? tag : "", tag ? "@" : "", d);
    else
        snprintf(out, n, "-");
}

static void print_runs(const json_t *runs)
{
    printf("%s%6s  %-20s  %-20s  %-10s  %-26s  %-18s  %-26s  %-7s  %s%s\n", cli_bold(), "run",
           "created", "machine", "kind", "gpu", "torch", "image", "verdict", "cases", cli_reset());
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        const char *v = s_or(r, "verdict", "-");
        const char *col = !strcmp(v, "pass") ? cli_green() : !strcmp(v, "fail") ? cli_red() : "";
        char cases[64] = "-";
        if (json_integer_value(json_object_get(r, "cases")))
            snprintf(cases, sizeof cases, "%lld/%lld passed", i_of(r, "passed"), i_of(r, "cases"));
        char image[96];
        image_text(r, image, sizeof image);
        printf("%6lld  %-20s  %-20.20s  %-10s  %-26.26s  %-18.18s  %-26.26s  %s%-7s%s  %s\n",
               i_of(r, "id"), s_or(r, "created", "-"), s_or(r, "hostname", "?"),
               s_or(r, "kind", "?"), s_or(r, "gpu_model", "-"), s_or(r, "torch", "-"), image, col,
               v, cli_reset(), cases);
    }
    if (!json_array_size(runs))
        printf("(no runs)\n");
}

static const char *const shown[] = {
    "kind", "schema", "created", "recorded", "source", "hostname", "machine_id", "gpu_ids",
    "gpu_model", "gpu_arch", "gpu_count", "kernel", "driver", "rocm", "cuda", "torch",
    "torch_build", "device", "suite", "verdict", "cases", "passed", "failed", "errors",
    "skipped", "worst_case", "worst_bits_lost", "image_manifest_digest", "image_config_digest",
    "image_tag", "image_tags", "fleet_job", "stack_digest", "fleet_nodes", "fleet_odd",
    "node_class", "gpuvet_version"};
#define NSHOWN (sizeof shown / sizeof shown[0])

static void tags_text(const json_t *tags, char *out, size_t n)
{
    out[0] = '\0';
    size_t i, len = 0;
    const json_t *t;
    json_array_foreach(tags, i, t) {
        if (json_is_string(t) && len + 1 < n)
            snprintf(out + len, n - len, "%s%s", len ? ", " : "", json_string_value(t));
        len = strlen(out);
    }
}

static void value_text(const json_t *v, char *out, size_t n)
{
    if (json_is_string(v))
        snprintf(out, n, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(out, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, n, "%.2f", json_real_value(v));
    else if (json_array_size(v)) /* the image's tags */
        tags_text(v, out, n);
    else
        snprintf(out, n, "-");
}

static void print_run(const json_t *s)
{
    printf("%srun %lld%s\n", cli_bold(), i_of(s, "id"), cli_reset());
    for (size_t i = 0; i < NSHOWN; i++) {
        char v[1024];
        value_text(json_object_get(s, shown[i]), v, sizeof v);
        printf("  %-16s %s\n", shown[i], v);
    }
}

static json_t *run_doc(const struct gv_history *h, json_t *summary, json_t *doc)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string(GV_HISTORY_RUN_SCHEMA));
    json_object_set_new(o, "schema_version", json_integer(1));
    json_object_set_new(o, "db", json_string(gv_history_name(h)));
    json_object_set(o, "run", summary);
    if (doc)
        json_object_set(o, "document", doc);
    return o;
}

static int parse_id(const char *s, int64_t *id)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || v <= 0)
        return cli_usage("history", "a run id is a positive number, not '%s'", s);
    *id = v;
    return 0;
}

static int do_list(struct gv_history *h, const struct hopts *o)
{
    char since[32];
    if (o->since && cli_parse_since(o->since, since, sizeof since))
        return cli_usage("history", "--since takes a date (2026-11-30) or an ISO-8601 UTC time, "
                         "not '%s'", o->since);
    struct gv_history_filter f = {.machine = o->machine, .image = o->image, .kind = o->kind,
                                  .since = o->since ? since : NULL, .limit = o->limit};
    json_t *runs = NULL;
    struct gv_err err = {0};
    if (gv_history_list(h, &f, &runs, &err))
        return cli_fail(&err);
    int rc = GV_EXIT_OK;
    if (!cli_out_text(&o->out) || o->out.output) {
        json_t *d = json_object();
        json_object_set_new(d, "schema", json_string("gpuvet.history-list"));
        json_object_set_new(d, "schema_version", json_integer(1));
        json_object_set_new(d, "db", json_string(gv_history_name(h)));
        json_object_set(d, "runs", runs);
        rc = cli_put_doc("history", d, &o->out);
        json_decref(d);
    }
    if (!rc && cli_out_text(&o->out))
        print_runs(runs);
    json_decref(runs);
    return rc;
}

/* A run's document (run_doc) as -o and --json say. */
static int show_doc(struct gv_history *h, json_t *s, json_t *doc,
                    const struct cli_out *out)
{
    json_t *d = run_doc(h, s, doc);
    int rc = cli_put_doc("history", d, out);
    json_decref(d);
    return rc;
}

static int do_show(struct gv_history *h, const struct hopts *o, int argc, char **argv)
{
    if (argc != 1)
        return cli_usage("history", "show takes one run id");
    int64_t id = 0;
    if (parse_id(argv[0], &id))
        return GV_EXIT_USAGE;
    json_t *s = NULL, *doc = NULL;
    struct gv_err err = {0};
    int want = o->out.json || o->out.output || o->document;
    if (gv_history_show(h, id, &s, want ? &doc : NULL, &err))
        return cli_fail(&err);
    int rc = GV_EXIT_OK;
    if (o->document) { /* the recorded document: on stdout unless -o writes it */
        struct cli_out d = {o->out.output, o->out.json || !o->out.output};
        rc = cli_put_doc("history", doc, &d);
    } else {
        rc = want ? show_doc(h, s, doc, &o->out) : GV_EXIT_OK;
        if (!rc && cli_out_text(&o->out))
            print_run(s);
    }
    json_decref(s);
    json_decref(doc);
    return rc;
}

static int do_good(struct gv_history *h, const struct hopts *o)
{
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    json_t *s = NULL;
    struct gv_err err = {0};
    if (o->machine && o->image)
        return cli_usage("history", "good: --machine or --image, not both");
    int rc = o->image ? gv_history_good_image(h, o->image, &s, NULL, &err)
                      : gv_history_good(h, o->machine, &id, &s, NULL, &err);
    if (rc == GV_E_NOTFOUND) {
        fprintf(stderr, "gpuvet history: %s\n", err.msg);
        return GV_EXIT_FINDINGS;
    }
    if (rc)
        return cli_fail(&err);
    rc = o->out.json || o->out.output ? show_doc(h, s, NULL, &o->out) : GV_EXIT_OK;
    if (!rc && cli_out_text(&o->out))
        print_run(s);
    json_decref(s);
    return rc;
}

static int load_snapshot_of(struct gv_history *h, int64_t id, json_t **summary, json_t **snap,
                            struct gv_err *err)
{
    json_t *doc = NULL;
    int rc = gv_history_show(h, id, summary, &doc, err);
    if (rc)
        return rc;
    const json_t *s = gv_history_doc_snapshot(doc);
    *snap = s ? json_incref((json_t *)s) : NULL;
    json_decref(doc);
    if (*snap && gv_json_check_schema(*snap, "gpuvet.snapshot", 1, "its snapshot", err)) {
        json_decref(*snap);
        *snap = NULL;
    }
    return GV_OK;
}

static int do_diff(struct gv_history *h, const struct hopts *o, int argc, char **argv)
{
    if (argc != 2)
        return cli_usage("history", "diff takes two run ids");
    int64_t a = 0, b = 0;
    if (parse_id(argv[0], &a) || parse_id(argv[1], &b))
        return GV_EXIT_USAGE;
    json_t *sa = NULL, *sb = NULL, *na = NULL, *nb = NULL, *sdiff = NULL;
    struct gv_err err = {0};
    int rc = load_snapshot_of(h, a, &sa, &na, &err);
    if (!rc)
        rc = load_snapshot_of(h, b, &sb, &nb, &err);
    char an[64], bn[64];
    snprintf(an, sizeof an, "run %lld", (long long)a);
    snprintf(bn, sizeof bn, "run %lld", (long long)b);
    if (!rc && na && nb)
        rc = gv_diff_snapshots(na, nb, an, bn, &sdiff, &err);
    json_t *cols = json_array();
    for (size_t i = 0; !rc && i < NSHOWN; i++) {
        const json_t *va = json_object_get(sa, shown[i]), *vb = json_object_get(sb, shown[i]);
        if (!strcmp(shown[i], "recorded") || !strcmp(shown[i], "source") ||
            json_equal((json_t *)va, (json_t *)vb) || (!va && json_is_null(vb)) ||
            (json_is_null(va) && !vb))
            continue;
        json_t *c = json_object();
        json_object_set_new(c, "column", json_string(shown[i]));
        json_object_set(c, "a", va ? (json_t *)va : json_null());
        json_object_set(c, "b", vb ? (json_t *)vb : json_null());
        json_array_append_new(cols, c);
    }
    size_t changes = 0;
    if (!rc) {
        size_t nc = 0;
        json_t *c;
        json_array_foreach(cols, nc, c) {
            if (strcmp(json_string_value(json_object_get(c, "column")), "created"))
                changes++;
        }
        changes += json_array_size(json_object_get(sdiff, "changes"));
        if (o->out.json || o->out.output) {
            json_t *d = json_object();
            json_object_set_new(d, "schema", json_string("gpuvet.history-diff"));
            json_object_set_new(d, "schema_version", json_integer(1));
            json_object_set_new(d, "db", json_string(gv_history_name(h)));
            json_object_set(d, "a", sa);
            json_object_set(d, "b", sb);
            json_object_set(d, "columns", cols);
            json_object_set(d, "snapshot_diff", sdiff ? sdiff : json_null());
            rc = cli_put_doc("history", d, &o->out);
            json_decref(d);
        }
        if (!rc && cli_out_text(&o->out)) {
            printf("%srun %lld%s -> %srun %lld%s\n", cli_bold(), (long long)a, cli_reset(),
                   cli_bold(), (long long)b, cli_reset());
            json_array_foreach(cols, nc, c) {
                char va[512], vb[512];
                value_text(json_object_get(c, "a"), va, sizeof va);
                value_text(json_object_get(c, "b"), vb, sizeof vb);
                printf("  %-16s %s -> %s\n", json_string_value(json_object_get(c, "column")), va,
                       vb);
            }
            if (sdiff) {
                printf("\n");
                cli_diff_print(sdiff);
            } else {
                printf("\n(no snapshot in %s: layers not compared)\n", na ? bn : an);
            }
        }
    }
    json_decref(cols);
    json_decref(sa);
    json_decref(sb);
    json_decref(na);
    json_decref(nb);
    json_decref(sdiff);
    if (rc && rc != GV_EXIT_ERROR && rc < 0)
        return cli_fail(&err);
    if (rc)
        return rc;
    return changes ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The node documents of DIR/nodes: regular files (links passed over) named
 * *.json, not starting with '.', in name order; *n of them, each malloc'd. */
static char **node_files(const char *dir, size_t *n)
{
    char nodes[PATH_MAX];
    snprintf(nodes, sizeof nodes, "%s/nodes", dir);
    *n = 0;
    DIR *d = opendir(nodes);
    if (!d)
        return NULL;
    char **list = NULL;
    size_t cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        char path[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json") ||
            (size_t)snprintf(path, sizeof path, "%s/%s", nodes, e->d_name) >= sizeof path ||
            lstat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        if (*n == cap) {
            char **l = realloc(list, (cap = cap ? cap * 2 : 16) * sizeof *l);
            if (!l)
                break;
            list = l;
        }
        list[(*n)++] = strdup(path);
    }
    closedir(d);
    if (*n)
        qsort(list, *n, sizeof *list, by_name);
    return list;
}

/* DIR/fleet.json, marked with its nodes' job when it has none (docs/history.md). */
static int import_fleet_doc(struct gv_history *h, const char *path, const char *job,
                            const struct gv_history_ident *id)
{
    json_t *doc = NULL;
    struct gv_err err = {0};
    int64_t run = 0;
    int is_new = 0;
    char src[PATH_MAX], real[PATH_MAX];
    snprintf(src, sizeof src, "%s", realpath(path, real) ? real : path);
    if (gv_json_read_file(path, (size_t)256 << 20, &doc, &err) ||
        (!json_object_get(doc, "job") && gv_history_mark_fleet_job(doc, job, &err)) ||
        gv_history_record(h, doc, src, id, &run, &is_new, &err)) {
        fprintf(stderr, "gpuvet: error: %s: not recorded: %s\n", path, err.msg);
        json_decref(doc);
        return GV_EXIT_ERROR;
    }
    fprintf(stderr, "gpuvet: %s: %s as run %lld in %s\n", src,
            is_new ? "recorded" : "already recorded", (long long)run, gv_history_name(h));
    json_decref(doc);
    return GV_EXIT_OK;
}

/* A fleet directory: every node document, then the comparison; returns the
 * number not recorded, *count the number tried. */
static int import_fleet_dir(struct gv_history *h, const char *dir,
                            const struct gv_history_ident *id, int *count)
{
    size_t n = 0;
    char **files = node_files(dir, &n), job[160] = "";
    int bad = 0, job_read = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *doc = NULL;
        struct gv_err err = {0};
        /* the job from the first node document that reads ("" with no launcher: the
         * others' is the same, they are not read for it again) */
        if (!job_read && !gv_json_read_file(files[i], (size_t)16 << 20, &doc, &err)) {
            job_read = 1;
            snprintf(job, sizeof job, "%s", json_string_value(json_object_get(doc, "job"))
                                                ? json_string_value(json_object_get(doc, "job"))
                                                : "");
        }
        json_decref(doc);
        bad += cli_record_file_into(h, files[i], id) != GV_EXIT_OK;
        free(files[i]);
    }
    free(files);
    char fleet[PATH_MAX];
    snprintf(fleet, sizeof fleet, "%s/fleet.json", dir);
    struct stat st;
    *count = (int)n;
    if (!lstat(fleet, &st) && S_ISREG(st.st_mode)) {
        bad += import_fleet_doc(h, fleet, job, id) != GV_EXIT_OK;
        ++*count;
    }
    if (!*count) {
        fprintf(stderr, "gpuvet: error: %s: a directory without nodes/*.json or fleet.json\n",
                dir);
        *count = 1;
        return 1;
    }
    return bad;
}

static int do_import(struct gv_history *h, const struct hopts *o, int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("history", "import needs at least one file");
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    if (o->machine) {
        memset(&id, 0, sizeof id);
        snprintf(id.hostname, sizeof id.hostname, "%s", o->machine);
    }
    int bad = 0, files = 0;
    for (int i = 0; i < argc; i++) {
        int n = 1;
        if (gv_is_dir(argv[i]))
            bad += import_fleet_dir(h, argv[i], &id, &n);
        else
            bad += cli_record_file_into(h, argv[i], &id) != GV_EXIT_OK;
        files += n;
    }
    if (bad)
        fprintf(stderr, "gpuvet history: %d of %d file(s) not recorded\n", bad, files);
    return bad ? GV_EXIT_ERROR : GV_EXIT_OK;
}

/* ---------- history fleet ---------- */

static void print_round(const json_t *r)
{
    const char *v = s_or(r, "verdict", "-");
    printf("  run %-6lld %s  job %-12s %s%-4s%s %lld node(s)", i_of(r, "run"), s_or(r, "time", "?"),
           s_or(r, "job", "-"), !strcmp(v, "pass") ? cli_green() : cli_red(), v, cli_reset(),
           i_of(r, "nodes"));
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(r, "odd"), i, e)
        printf("%s %s %s", i ? "," : "; odd:", s_or(e, "node", "?"), s_or(e, "class", "?"));
    if (i_of(r, "missing"))
        printf("; %lld rank(s) missing", i_of(r, "missing"));
    printf("\n");
    json_array_foreach(json_object_get(r, "groups"), i, e)
        printf("      %s, driver %s, stack %.19s: %lld node(s)\n",
               s_or(e, "gpu_model", "hardware unknown"), s_or(e, "driver", "?"),
               s_or(e, "stack_digest", "-"), i_of(e, "nodes"));
}

static void print_node(const json_t *n)
{
    const json_t *runs = json_object_get(n, "runs");
    printf("  %s%s%s: %zu run(s), odd in %lld of them", cli_bold(), s_or(n, "node", "?"), cli_reset(),
           json_array_size(runs), i_of(n, "odd_runs"));
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(n, "classes"), i, e)
        printf("%s%s", i ? ", " : " (", json_string_value(e));
    printf("%s\n", json_array_size(json_object_get(n, "classes")) ? ")" : "");
    json_array_foreach(json_object_get(n, "stack_changes"), i, e)
        printf("      stack changed %s: %.19s… → %.19s…\n", s_or(e, "time", "?"),
               s_or(e, "from", "?"), s_or(e, "to", "?"));
    json_array_foreach(runs, i, e) {
        const char *cls = s_or(e, "class", NULL);
        printf("      %s  job %-12s %-4s  %.19s  %s\n", s_or(e, "time", "?"), s_or(e, "job", "-"),
               s_or(e, "verdict", "-"), s_or(e, "stack_digest", "-"),
               cls ? cls : json_is_null(json_object_get(e, "round")) ? "(not compared)" : "ok");
    }
}

static int do_fleet(struct gv_history *h, const struct hopts *o)
{
    char since[32];
    if (o->since && cli_parse_since(o->since, since, sizeof since))
        return cli_usage("history", "--since takes a date (2026-11-30) or an ISO-8601 UTC time, "
                         "not '%s'", o->since);
    struct gv_history_filter f = {.machine = o->machine, .since = o->since ? since : NULL,
                                  .limit = o->limit};
    json_t *doc = NULL;
    struct gv_err err = {0};
    if (gv_history_fleet(h, &f, &doc, &err))
        return cli_fail(&err);
    int rc = !cli_out_text(&o->out) || o->out.output ? cli_put_doc("history", doc, &o->out)
                                                      : GV_EXIT_OK;
    if (!rc && cli_out_text(&o->out)) {
        const json_t *rounds = json_object_get(doc, "rounds"), *e;
        size_t i;
        printf("%sfleet comparisons%s (%zu, newest first)\n", cli_bold(), cli_reset(),
               json_array_size(rounds));
        json_array_foreach(rounds, i, e) print_round(e);
        printf("\n%snodes%s (%zu)\n", cli_bold(), cli_reset(),
               json_array_size(json_object_get(doc, "nodes")));
        json_array_foreach(json_object_get(doc, "nodes"), i, e) print_node(e);
    }
    json_decref(doc);
    return rc;
}

static int do_check(struct gv_history *h, const struct hopts *o)
{
    struct gv_err err = {0};
    if (gv_history_integrity(h, &err))
        return cli_fail(&err);
    if (o->out.json || o->out.output) {
        json_t *d = json_object();
        json_object_set_new(d, "db", json_string(gv_history_name(h)));
        json_object_set_new(d, "integrity", json_string("ok"));
        int rc = cli_put_doc("history", d, &o->out);
        json_decref(d);
        return rc;
    }
    printf("%s: integrity ok\n", gv_history_name(h));
    return GV_EXIT_OK;
}

int cmd_history(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return argc < 2 ? cli_usage("history", "list, show, diff, good, import, fleet or check?")
                        : cli_help(usage);
    const char *sub = argv[1];
    static const char *const subs[] = {"list", "show", "diff", "good", "import", "fleet", "check"};
    int known = 0;
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
        known |= !strcmp(sub, subs[i]);
    if (!known)
        return cli_usage("history", "unknown subcommand '%s' (list, show, diff, good, import, "
                         "fleet, check)", sub);
    struct hopts o = {0};
    char **args = NULL;
    int nargs = 0;
    int rc = parse(argc - 1, argv + 1, &o, &args, &nargs);
    if (rc < 0)
        return cli_help(usage);
    if (rc)
        return rc;
    if ((!strcmp(sub, "list") || !strcmp(sub, "good") || !strcmp(sub, "check") ||
         !strcmp(sub, "fleet")) && nargs)
        return cli_usage("history", "%s: unexpected argument '%s'", sub, args[0]);
    struct gv_history *h = NULL;
    if (cli_history_open(o.db, !strcmp(sub, "import"), &h))
        return GV_EXIT_ERROR;
    if (!strcmp(sub, "list"))
        rc = do_list(h, &o);
    else if (!strcmp(sub, "show"))
        rc = do_show(h, &o, nargs, args);
    else if (!strcmp(sub, "diff"))
        rc = do_diff(h, &o, nargs, args);
    else if (!strcmp(sub, "good"))
        rc = do_good(h, &o);
    else if (!strcmp(sub, "import"))
        rc = do_import(h, &o, nargs, args);
    else if (!strcmp(sub, "fleet"))
        rc = do_fleet(h, &o);
    else
        rc = do_check(h, &o);
    gv_history_close(h);
    return rc;
}
