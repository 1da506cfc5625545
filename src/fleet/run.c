/* This node's document (docs/fleet.md, "The node document"): the hardware
 * from the device's description, the stack summary of a snapshot and its
 * digest, the tier's cases run through the suite runner (as gpuvet check
 * runs them) once per repeat, optionally after a hot phase, and the probe
 * fingerprint's property values and digest. Budgets are checked before every
 * case: a tier that would overrun stops with status could_not_run. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/globs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "check/runner.h"
#include "dev/backend.h"
#include "dev/cpu/cpu.h"
#include "env/probe.h"
#include "fleet/fleet_run.h"
#include "num/catalog.h"
#include "probe/probe.h"

extern char **environ;

/* ---------- tiers ---------- */

static const struct tier {
    const char *name;
    enum gv_suite suite;
    const char *cases; /* the tier's own selection within its suite (NULL: all) */
    int repeat, probe;
    double budget;     /* seconds, 0: none */
} tiers[] = {
    [GV_TIER_STANDARD] = {"standard", GV_SUITE_STANDARD, NULL, 1, 1, 0},
    [GV_TIER_PROLOG] = {"prolog", GV_SUITE_QUICK, "gemm.*,sum.*,mean.*", 1, 0, 60},
    [GV_TIER_DRAIN] = {"drain", GV_SUITE_STANDARD, NULL, 3, 1, 300},
    [GV_TIER_BURNIN] = {"burnin", GV_SUITE_FULL, NULL, 1, 1, 0},
};
#define N_TIERS (sizeof tiers / sizeof tiers[0])

int gv_fleet_tier_from_name(const char *name)
{
    for (size_t i = 0; name && i < N_TIERS; i++)
        if (!strcmp(name, tiers[i].name))
            return (int)i;
    return -1;
}

const char *gv_fleet_tier_name(enum gv_fleet_tier t) { return tiers[t].name; }

double gv_fleet_tier_budget(enum gv_fleet_tier t) { return tiers[t].budget; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------- the stack summary ---------- */

static void copy_keys(json_t *to, const json_t *from, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(from, keys[i]);
        if (v && !json_is_null(v))
            json_object_set(to, keys[i], v);
    }
}

static json_t *summary_libraries(const json_t *snap)
{
    static const char *const keys[] = {"name", "soname", "version", "sha256", "path", NULL};
    json_t *out = json_array(), *it;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(snap, "libraries"), "items"), i, it) {
        json_t *o = json_object();
        copy_keys(o, it, keys);
        json_array_append_new(out, o);
    }
    return out;
}

static json_t *summary_packages(const json_t *snap)
{
    static const char *const keys[] = {"manager", "count", "digest", "gpu_count", "gpu_digest",
                                       NULL};
    const json_t *p = json_object_get(snap, "packages");
    json_t *o = json_object(), *gpu = json_object(), *it;
    copy_keys(o, p, keys);
    size_t i;
    json_array_foreach(json_object_get(p, "items"), i, it) {
        const char *name = json_string_value(json_object_get(it, "name"));
        if (name && json_is_true(json_object_get(it, "gpu")))
            json_object_set(gpu, name, json_object_get(it, "version"));
    }
    json_object_set_new(o, "gpu", gpu);
    return o;
}

/* Each environment's prefix, Python and torch (version and build). */
static json_t *summary_python(const json_t *snap)
{
    json_t *out = json_array(), *env;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(snap, "python"), "environments"), i,
                       env) {
        static const char *const keys[] = {"prefix", "python_version", NULL};
        static const char *const tkeys[] = {"version", "git_version", "build", "cuda", "hip",
                                            NULL};
        json_t *o = json_object(), *t = json_object();
        copy_keys(o, env, keys);
        copy_keys(t, json_object_get(env, "torch"), tkeys);
        if (json_object_size(t))
            json_object_set(o, "torch", t);
        json_decref(t);
        json_array_append_new(out, o);
    }
    return out;
}

static json_t *summary_loader(const json_t *snap)
{
    const json_t *l = json_object_get(snap, "loader");
    json_t *o = json_object(), *res = json_object(), *v;
    const char *k;
    json_object_set(o, "search_dirs", json_object_get(l, "search_dirs"));
    json_object_foreach((json_t *)json_object_get(l, "resolved"), k, v) {
        const char *path = json_string_value(json_object_get(v, "path"));
        json_object_set_new(res, k, path ? json_string(path) : json_null());
    }
    json_object_set_new(o, "resolved", res);
    return o;
}

json_t *gv_fleet_stack_summary(const json_t *snap)
{
    json_t *s = json_object();
    json_object_set_new(s, "libraries", summary_libraries(snap));
    json_object_set_new(s, "packages", summary_packages(snap));
    json_object_set_new(s, "python", summary_python(snap));
    json_object_set_new(s, "loader", summary_loader(snap));
    const json_t *vars = json_object_get(json_object_get(snap, "environment"), "variables");
    json_object_set_new(s, "environment", vars ? json_deep_copy(vars) : json_object());
    return s;
}

/* The snapshot is collected in a thread while the device opens and the cases
 * run (as gpuvet check does): it reads files only. */
static void *collect_snapshot(void *unused)
{
    (void)unused;
    struct gv_probe_ctx ctx = {.root = "/", .live = 1, .pid = 0, .envp = environ,
                               .hash_files = 1};
    json_t *doc = NULL;
    struct gv_err err = {0};
    if (gv_snapshot_collect(&ctx, &doc, &err))
        return NULL;
    return doc;
}

/* ---------- the hardware ---------- */

static json_t *hardware_of(const char *spec, const json_t *desc)
{
    json_t *h = json_object();
    gv_json_set_str(h, "device", spec);
    gv_json_set_str(h, "model", json_string_value(json_object_get(desc, "name")));
    json_t *cu = json_object_get(desc, "multiprocessors");
    if (!cu)
        cu = json_object_get(desc, "compute_units");
    if (!cu)
        cu = json_object_get(desc, "threads"); /* the CPU backend's "units" */
    json_object_set_new(h, "compute_units", json_integer(json_is_integer(cu)
                                                             ? json_integer_value(cu)
                                                             : 0)); /* 0: not reported */
    const json_t *drv = json_object_get(desc, "driver_api_version");
    if (!drv)
        drv = json_object_get(desc, "hip_runtime");
    char buf[64] = "none";
    if (json_is_integer(drv))
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(drv));
    else if (json_is_string(drv))
        snprintf(buf, sizeof buf, "%s", json_string_value(drv));
    gv_json_set_str(h, "driver", buf);
    const char *uuid = json_string_value(json_object_get(desc, "uuid"));
    json_object_set_new(h, "uuid", uuid ? json_string(uuid) : json_null()); /* CPU: none */
    if (json_is_true(json_object_get(desc, "testing_aid")))
        json_object_set_new(h, "testing_aid", json_true());
    json_object_set(h, "description", (json_t *)desc);
    return h;
}

/* ---------- the probe ---------- */

static const char *str_or(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "?";
}

/* "route/op/precision" -> {property: value}, and its digest. */
static json_t *probe_values(const json_t *fp)
{
    json_t *out = json_object(), *route, *prec, *prop;
    size_t i, j;
    const char *pname;
    json_array_foreach(json_object_get(fp, "routes"), i, route) {
        json_array_foreach(json_object_get(route, "precisions"), j, prec) {
            char key[200];
            snprintf(key, sizeof key, "%s/%s/%s",
                     str_or(route, "route"), str_or(prec, "op"), str_or(prec, "precision"));
            json_t *vals = json_object();
            json_object_foreach(json_object_get(prec, "properties"), pname, prop)
                json_object_set(vals, pname, json_object_get(prop, "value"));
            json_object_set_new(out, key, vals);
        }
    }
    return out;
}

static void digest_json(const json_t *v, char out[72])
{
    char *s = gv_json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT);
    char hex[65];
    gv_sha256_buf_hex(s ? s : "", s ? strlen(s) : 0, hex);
    free(s);
    snprintf(out, 72, "sha256:%s", hex);
}

static void add_probe(json_t *run, const char *spec)
{
    struct gv_probe_opts po = {spec, NULL, NULL, NULL};
    json_t *fp = NULL;
    struct gv_err e = {0};
    if (gv_probe_run(&po, &fp, &e)) {
        gv_json_set_str(run, "probe_error", e.msg);
        return;
    }
    json_t *vals = probe_values(fp);
    char d[72];
    digest_json(vals, d);
    json_object_set_new(run, "probe_digest", json_string(d));
    json_object_set_new(run, "probe", vals);
    json_decref(fp);
}

/* ---------- the cases ---------- */

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *case_json(const struct gv_case_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(r->entry->id));
    json_object_set_new(o, "verdict", json_string(gv_verdict_name(r->verdict)));
    json_object_set_new(o, "output_digest",
                        r->measured ? json_string(r->m.out_digest) : json_null());
    json_object_set_new(o, "effective_bits", r->measured ? num_or_null(r->m.eff_bits)
                                                         : json_null());
    json_object_set_new(o, "max_abs", r->measured ? num_or_null(r->m.max_abs) : json_null());
    json_object_set_new(o, "nan_count", json_integer((json_int_t)r->m.nan_count));
    json_object_set_new(o, "inf_count", json_integer((json_int_t)r->m.inf_count));
    if (r->det_checked) /* absent: not checked */
        json_object_set_new(o, "deterministic", json_boolean(r->det_identical));
    if (r->status)
        gv_json_set_str(o, "error", r->error);
    return o;
}

struct node_run {
    const struct gv_fleet_run_opts *o;
    const struct gv_backend *be;
    struct gv_device *dev;
    const struct gv_catalog_entry **sel;
    size_t n;
    double t0, budget, slowest;
    double bench_est; /* seconds the next bench is expected to take */
    char stop[512]; /* why the tier stopped ("" when it did not) */
};

/* The bench's first estimate, before one has run: a GPU's quick GEMM bench
 * (six precisions at 4096^3 on one route) and the device opened for it. */
#define BENCH_FIRST_EST_S 10.0

/* Whether the next piece of work (expected to take about est seconds) still
 * fits the budget; otherwise the reason is noted. */
static int fits(struct node_run *nr, double est, const char *what)
{
    double used = now_s() - nr->t0;
    if (nr->budget <= 0 || used + est <= nr->budget)
        return 1;
    snprintf(nr->stop, sizeof nr->stop, "budget: %.1f s of %.3g s used, %s would overrun it",
             used, nr->budget, what);
    return 0;
}

/* --bench: the run's bench figures (the callback src/cli filled in), sized for
 * the budget left; the budget is checked first, the last bench's time is the
 * next one's estimate. */
static void add_bench(struct node_run *nr, json_t *run)
{
    if (!fits(nr, nr->bench_est, "the bench"))
        return;
    if (!nr->o->bench_fn) {
        gv_json_set_str(run, "bench_error", "this gpuvet was built without a bench for fleet");
        return;
    }
    double left = nr->budget > 0 ? nr->budget - (now_s() - nr->t0) : 0;
    double t = now_s();
    json_t *figs = NULL;
    struct gv_err e = {0};
    if (nr->o->bench_fn(nr->o->device, left, &figs, &e)) {
        gv_json_set_str(run, "bench_error", e.msg);
        figs = json_array();
    }
    nr->bench_est = now_s() - t;
    json_object_set_new(run, "bench", figs);
}

/* The hot phase: the selection's GEMMs back to back for o->hot_seconds. */
static double hot_phase(struct node_run *nr)
{
    double t0 = now_s(), end = t0 + nr->o->hot_seconds;
    size_t gemms = 0;
    for (size_t i = 0; i < nr->n; i++)
        gemms += nr->sel[i]->c.op == GV_OP_GEMM;
    if (!gemms)
        return 0;
    while (now_s() < end && fits(nr, nr->slowest, "the hot phase")) {
        for (size_t i = 0; i < nr->n && now_s() < end; i++) {
            const struct gv_case *c = &nr->sel[i]->c;
            if (c->op != GV_OP_GEMM)
                continue;
            struct gv_buffer in[4] = {{0}}, out = {0};
            int nin = 0;
            struct gv_err e = {0};
            if (gv_make_inputs(c, in, &nin, &e) == GV_OK && !nr->be->supports(nr->dev, c, &e)) {
                out.dtype = c->out_dtype;
                out.count = gv_case_out_count(c);
                out.data = calloc(out.count ? out.count : 1, gv_dtype_size(c->out_dtype));
                if (out.data)
                    nr->be->run(nr->dev, c, in, nin, &out, NULL, &e);
                free(out.data);
            }
            gv_inputs_free(in, nin);
        }
    }
    return now_s() - t0;
}

/* One repeat: every case of the selection, the budget checked before each. */
static int one_repeat(struct node_run *nr, int repeat, struct gv_case_result *res,
                      size_t *done, struct gv_err *err)
{
    struct gv_run_opts ro = {nr->be, nr->dev, GV_DET_QUICK, nr->o->keep_outputs,
                             nr->o->progress, nr->o->progress_ud};
    gv_cpu_test_pass(repeat);
    for (*done = 0; *done < nr->n; (*done)++) {
        char what[160];
        snprintf(what, sizeof what, "repeat %d, case %s", repeat, nr->sel[*done]->id);
        if (!fits(nr, nr->slowest, what))
            return GV_OK;
        double t = now_s();
        int rc = gv_run_cases(&nr->sel[*done], 1, &ro, &res[*done], err);
        if (rc)
            return rc;
        if (now_s() - t > nr->slowest)
            nr->slowest = now_s() - t;
    }
    return GV_OK;
}

static void keep_outputs(struct gv_case_result *res, size_t n, struct gv_fleet_outputs *outs)
{
    outs->t = calloc(n ? n : 1, sizeof *outs->t);
    if (!outs->t)
        return;
    for (size_t i = 0; i < n; i++) {
        if (!res[i].output.data)
            continue;
        const struct gv_case *c = &res[i].entry->c;
        struct gv_st_tensor *t = &outs->t[outs->n++];
        t->name = c->id;
        t->dtype = c->out_dtype;
        t->ndim = gv_case_out_shape(c, t->dims);
        t->data = res[i].output.data;
        t->nbytes = res[i].output.count * gv_dtype_size(c->out_dtype);
        res[i].output.data = NULL; /* owned by outs now */
    }
}

void gv_fleet_outputs_free(struct gv_fleet_outputs *o)
{
    for (size_t i = 0; o && i < o->n; i++)
        free((void *)o->t[i].data);
    if (o) {
        free(o->t);
        o->t = NULL;
        o->n = 0;
    }
}

/* The runs array; nr->stop says why it ended early. */
static int run_all(struct node_run *nr, json_t *runs, struct gv_fleet_outputs *outs,
                   const char *spec, size_t *errors, size_t *ran, struct gv_err *err)
{
    const struct tier *t = &tiers[nr->o->tier];
    int repeats = nr->o->repeat > 0 ? nr->o->repeat : t->repeat;
    struct gv_case_result *res = calloc(nr->n, sizeof *res);
    if (!res)
        return gv_err_set(err, GV_E_NOMEM, "out of memory for %zu results", nr->n);
    int rc = GV_OK;
    for (int k = 1; k <= repeats && !nr->stop[0]; k++) {
        json_t *run = json_object(), *cases = json_array();
        json_object_set_new(run, "repeat", json_integer(k));
        double hot = k == 1 && nr->o->hot_seconds > 0 ? hot_phase(nr) : 0;
        json_object_set_new(run, "hot_seconds", json_real(hot));
        size_t done = 0;
        rc = nr->stop[0] ? GV_OK : one_repeat(nr, k, res, &done, err);
        for (size_t i = 0; i < done; i++) {
            json_array_append_new(cases, case_json(&res[i]));
            *errors += res[i].verdict == GV_ERROR;
            (*ran)++;
        }
        json_object_set_new(run, "cases", cases);
        if (!rc && !nr->stop[0] && t->probe && k == 1 && fits(nr, nr->slowest, "the probe"))
            add_probe(run, spec);
        if (!rc && !nr->stop[0] && nr->o->bench)
            add_bench(nr, run);
        json_array_append_new(runs, run);
        if (outs && k == repeats && !nr->stop[0])
            keep_outputs(res, done, outs);
        gv_run_results_free(res, done);
        if (rc)
            break;
    }
    free(res);
    return rc;
}

/* ---------- the document ---------- */

static json_t *doc_begin(const struct gv_fleet_run_opts *o, const struct gv_fleet_rank *r)
{
    json_t *d = json_object();
    json_object_set_new(d, "schema", json_string(GV_FLEET_NODE_SCHEMA));
    json_object_set_new(d, "schema_version", json_integer(GV_FLEET_SCHEMA_VERSION));
    json_object_set_new(d, "gpuvet_version", json_string(GPUVET_VERSION));
    gv_json_set_str(d, "node", r->node);
    json_object_set_new(d, "rank", json_integer(r->rank));
    json_object_set_new(d, "size", json_integer(r->size));
    json_object_set_new(d, "launcher", json_string(gv_fleet_launcher_name(r->launcher)));
    gv_json_set_str(d, "job", r->job);
    json_object_set_new(d, "tier", json_string(tiers[o->tier].name));
    gv_json_set_utc_now(d, "started");
    return d;
}

/* A reason is one line of at most REASON_MAX bytes (the documents' limit). */
#define REASON_MAX 1000
static void clean_reason(char *s)
{
    size_t n = strlen(s);
    if (n > REASON_MAX) {
        n = REASON_MAX;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        s[n] = '\0';
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            s[i] = ' ';
}

static void set_status(json_t *d, char *reason)
{
    if (reason)
        clean_reason(reason);
    json_object_set_new(d, "status", json_string(reason ? "could_not_run" : "ran"));
    json_object_set_new(d, "reason", reason ? json_string(reason) : json_null());
}

/* The selection: the tier's suite and cases, narrowed by --only. */
static int select_cases(const struct gv_fleet_run_opts *o, const struct gv_catalog_entry ***sel,
                        size_t *n, struct gv_err *err)
{
    size_t total;
    gv_catalog(&total);
    const struct tier *t = &tiers[o->tier];
    *sel = calloc(total ? total : 1, sizeof **sel);
    if (!*sel)
        return gv_err_set(err, GV_E_NOMEM, "out of memory");
    size_t k = gv_catalog_select(t->suite, GV_TARGET_KERNEL, t->cases, *sel, total), m = 0;
    for (size_t i = 0; i < k; i++)
        if (!o->only || gv_globs_match(o->only, (*sel)[i]->id))
            (*sel)[m++] = (*sel)[i];
    *n = m;
    if (!m)
        return gv_err_set(err, GV_E_USAGE, "no case of tier %s matches --only '%s'", t->name,
                          o->only ? o->only : "");
    return GV_OK;
}

static void add_stack(json_t *d, pthread_t *th, int started)
{
    void *snap = NULL;
    if (started)
        pthread_join(*th, &snap);
    else
        snap = collect_snapshot(NULL);
    json_t *stack = snap ? gv_fleet_stack_summary(snap) : json_object();
    char digest[72] = "";
    struct gv_err e = {0};
    json_object_set_new(d, "stack_digest",
                        gv_fleet_stack_digest(stack, digest, &e) ? json_null()
                                                                 : json_string(digest));
    json_object_set_new(d, "stack", stack);
    json_decref(snap);
}

static const char *open_failure(int code)
{
    return code == GV_E_LIB || code == GV_E_NOTFOUND ? "no GPU" : "tool error";
}

int gv_fleet_run_node(const struct gv_fleet_run_opts *o, const struct gv_fleet_rank *r,
                      json_t **node, struct gv_fleet_outputs *outs, struct gv_err *err)
{
    struct node_run nr = {.o = o, .t0 = now_s(), .bench_est = BENCH_FIRST_EST_S};
    nr.budget = o->budget > 0 ? o->budget : tiers[o->tier].budget;
    json_t *d = doc_begin(o, r);
    pthread_t th;
    int started = pthread_create(&th, NULL, collect_snapshot, NULL) == 0;
    char reason[1200] = "", note[1200] = "";
    struct gv_err e = {0};
    int rc = select_cases(o, &nr.sel, &nr.n, err);
    if (rc == GV_OK && gv_device_open(o->device, &nr.be, &nr.dev, note, sizeof note, &e))
        snprintf(reason, sizeof reason, "%s: %s", open_failure(e.code), e.msg);
    const char *spec = o->device ? o->device : nr.be ? nr.be->name : "";
    if (nr.dev) { /* a device that did not open has no hardware to tell */
        json_t *desc = nr.be->describe(nr.dev);
        json_object_set_new(d, "hardware", hardware_of(spec, desc));
        json_decref(desc);
    }
    json_object_set_new(d, "stack_digest", json_null()); /* after the cases: the snapshot */
    json_object_set_new(d, "stack", json_null());        /* is collected while they run */
    json_t *runs = json_array();
    size_t errors = 0, ran = 0;
    if (rc == GV_OK && nr.dev) {
        rc = run_all(&nr, runs, outs, spec, &errors, &ran, err);
        if (nr.stop[0])
            snprintf(reason, sizeof reason, "%s", nr.stop);
        else if (ran && errors == ran)
            snprintf(reason, sizeof reason, "tool error: no case could run on %s", spec);
        nr.be->close(nr.dev);
    }
    free(nr.sel);
    add_stack(d, &th, started);
    set_status(d, reason[0] ? reason : NULL);
    json_object_set_new(d, "seconds", json_real(now_s() - nr.t0));
    json_object_set_new(d, "runs", runs);
    json_object_set_new(d, "outputs", json_string(outs && outs->n ? "present" : "absent"));
    if (note[0])
        gv_json_set_str(d, "device_note", note);
    if (r->note[0])
        gv_json_set_str(d, "node_note", r->note);
    if (rc) {
        json_decref(d);
        gv_fleet_outputs_free(outs);
        return rc;
    }
    *node = d;
    return GV_OK;
}
