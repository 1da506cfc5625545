/* Comparing two gpuvet.bench documents: see compare.h and docs/bench-compare.md. */
#include "bench/compare.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "bench/bench.h"

static const char *const change_names[GV_BC_COUNT] = {
    "regressed", "newly_failing", "improved",  "newly_ok",   "within_noise",
    "not_comparable", "not_run",  "only_before", "only_after",
};

const char *gv_bcmp_change_name(enum gv_bcmp_change c)
{
    return c >= 0 && c < GV_BC_COUNT ? change_names[c] : "?";
}

int gv_bcmp_flagged(enum gv_bcmp_change c)
{
    return c == GV_BC_REGRESSED || c == GV_BC_NEWLY_FAILING;
}

/* ---------- reading ---------- */

int gv_bench_is_bench_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    char head[513];
    ssize_t n = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n <= 0)
        return 0;
    head[n] = '\0';
    const char *s = strstr(head, "\"schema\"");
    if (!s)
        return 0;
    s += 8;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == ':')
        s++;
    return strncmp(s, "\"" GV_BENCH_SCHEMA "\"", strlen(GV_BENCH_SCHEMA) + 2) == 0;
}

static int num_or_absent(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(r, key);
    return !v || (json_is_number(v) && isfinite(json_number_value(v)));
}

/* What the comparison reads beyond gv_bench_validate: min, max and spread
 * finite numbers, samples an array of numbers, ids unique, device and mode of
 * the right types. */
static int check_more(const json_t *doc, const char *path, struct gv_err *err)
{
    const json_t *dev = json_object_get(doc, "device");
    if (dev && !json_is_object(dev))
        return gv_err_set(err, GV_E_FORMAT, "%s: device is not an object", path);
    const json_t *mode = json_object_get(doc, "mode");
    if (mode && !json_is_string(mode))
        return gv_err_set(err, GV_E_FORMAT, "%s: mode is not a string", path);
    const json_t *snap = json_object_get(doc, "snapshot");
    if (snap && !json_is_object(snap))
        return gv_err_set(err, GV_E_FORMAT, "%s: snapshot is not an object", path);
    const json_t *results = json_object_get(doc, "results");
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *id = json_string_value(json_object_get(r, "id"));
        static const char *const keys[] = {"min", "max", "spread"};
        for (int k = 0; k < 3; k++)
            if (!strcmp(json_string_value(json_object_get(r, "status")), "ok") &&
                !num_or_absent(r, keys[k]))
                return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] (%s): %s is not a finite "
                                  "number", path, i, id, keys[k]);
        const json_t *sm = json_object_get(r, "samples");
        if (sm && !json_is_array(sm))
            return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] (%s): samples is not an array",
                              path, i, id);
        size_t k;
        json_t *x;
        json_array_foreach(sm, k, x)
            if (!json_is_number(x) || !isfinite(json_number_value(x)))
                return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] (%s): samples[%zu] is not "
                                  "a finite number", path, i, id, k);
        const json_t *pa = json_object_get(r, "params");
        if (pa && !json_is_object(pa))
            return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu] (%s): params is not an object",
                              path, i, id);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(results, j), "id")), id))
                return gv_err_set(err, GV_E_FORMAT, "%s: results[%zu]: id %s appears twice "
                                  "(also results[%zu])", path, i, id, j);
    }
    return GV_OK;
}

static int check_doc(json_t *d, const char *path, json_t **doc, struct gv_err *err)
{
    int rc = GV_OK;
    if (!json_is_object(d))
        rc = gv_err_set(err, GV_E_FORMAT, "%s: not a JSON object", path);
    if (!rc)
        rc = gv_bench_validate(d, path, err);
    if (!rc)
        rc = check_more(d, path, err);
    if (rc) {
        json_decref(d);
        return rc;
    }
    *doc = d;
    return GV_OK;
}

int gv_bench_load(const char *path, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    json_t *d = NULL;
    int rc = gv_json_read_file(path, (size_t)256 << 20, &d, err);
    if (rc)
        return rc;
    return check_doc(d, path, doc, err);
}

int gv_bench_parse(const char *data, size_t n, const char *name, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    json_error_t je;
    json_t *d;
    int prc = gv_json_parse(data, n, name, &d, &je, err);
    if (prc == GV_E_NOMEM)
        return prc;
    if (!d)
        return gv_err_set(err, GV_E_FORMAT, "%s: not valid JSON (line %d, column %d: %s)", name,
                          je.line, je.column, je.text);
    return check_doc(d, name, doc, err);
}

/* ---------- judging ---------- */

static double num(const json_t *r, const char *key, double dflt)
{
    const json_t *v = json_object_get(r, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static const char *str(const json_t *r, const char *key)
{
    return json_string_value(json_object_get(r, key));
}

/* The sample range: min and max, else the samples, else the value. */
static void range(const json_t *r, double v, double *lo, double *hi)
{
    *lo = num(r, "min", NAN), *hi = num(r, "max", NAN);
    if (isfinite(*lo) && isfinite(*hi))
        return;
    *lo = *hi = v;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(r, "samples"), i, x) {
        double s = json_number_value(x);
        *lo = fmin(*lo, s), *hi = fmax(*hi, s);
    }
}

static double spread_of(const json_t *r, double v, double lo, double hi)
{
    double s = num(r, "spread", NAN);
    if (isfinite(s) && s >= 0)
        return s;
    return v > 0 ? (hi - lo) / v : 0;
}

double gv_bcmp_noise_floor(const char *group, const char *id)
{
    if (group && !strcmp(group, "latency"))
        return GV_BCMP_NOISE_LATENCY;
    if (id && strstr(id, ".pageable."))
        return GV_BCMP_NOISE_PAGEABLE;
    return GV_BCMP_NOISE_FLOOR;
}

static void judge_both_ok(struct gv_bcmp_case *c)
{
    c->va = num(c->a, "value", NAN), c->vb = num(c->b, "value", NAN);
    double la, ha, lb, hb;
    range(c->a, c->va, &la, &ha);
    range(c->b, c->vb, &lb, &hb);
    c->noise = fmax(gv_bcmp_noise_floor(c->group, c->id), fmax(spread_of(c->a, c->va, la, ha),
                                              spread_of(c->b, c->vb, lb, hb)));
    c->apart = lb > ha || hb < la;
    if (!(c->va > 0) || !(c->vb > 0)) {
        c->ratio = NAN;
        c->change = GV_BC_NOT_COMPARABLE;
        snprintf(c->why, sizeof c->why, "a value of zero (%g in A, %g in B): no ratio", c->va,
                 c->vb);
        return;
    }
    c->ratio = c->lower_better ? c->va / c->vb : c->vb / c->va;
    int beyond = fabs(c->ratio - 1) > c->noise;
    if (beyond && c->apart)
        c->change = c->ratio < 1 ? GV_BC_REGRESSED : GV_BC_IMPROVED;
    else
        c->change = GV_BC_WITHIN_NOISE;
}

static void status_why(struct gv_bcmp_case *c)
{
    const char *rb = str(c->b, "reason");
    const char *st = c->status_b;
    if (!strcmp(st, "failed"))
        snprintf(c->why, sizeof c->why, "B's result is wrong%s%s", rb ? ": " : "", rb ? rb : "");
    else if (!strcmp(st, "unsupported"))
        snprintf(c->why, sizeof c->why, "B cannot run it%s%s", rb ? ": " : "", rb ? rb : "");
    else
        snprintf(c->why, sizeof c->why, "%s in B%s%s", st, rb ? ": " : "", rb ? rb : "");
}

/* Whether a params member is a measurement, not a parameter: timings and rates
 * (*_us, *_gbps, *_tflops: a collective's time and bandwidths, also of its batch),
 * whether a sample fitted its gate, and the algorithm a GEMM's trial chose with
 * its figures (impl and the route causes say what ran). */
static int measured_param(const char *key)
{
    static const char *const suffix[] = {"_us", "_gbps", "_tflops"};
    size_t n = strlen(key);
    for (int i = 0; i < 3; i++) {
        size_t m = strlen(suffix[i]);
        if (n > m && !strcmp(key + n - m, suffix[i]))
            return 1;
    }
    return !strcmp(key, "gated") || !strcmp(key, "algorithm");
}

/* A copy of params without its measurements (an empty object for none). */
static json_t *params_only(const json_t *params)
{
    json_t *o = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)params, k, v) {
        if (!measured_param(k))
            json_object_set(o, k, v);
    }
    return o;
}

/* The name of the first member that differs between two objects, or is in one
 * only, into name; 0 when they are equal. */
static int first_difference(const json_t *x, const json_t *y, char *name, size_t namesz)
{
    const char *k;
    json_t *v;
    const json_t *sides[2][2] = {{x, y}, {y, x}};
    for (int s = 0; s < 2; s++)
        json_object_foreach((json_t *)sides[s][0], k, v) {
            if (!json_equal(v, json_object_get(sides[s][1], k))) {
                snprintf(name, namesz, "%s", k);
                return 1;
            }
        }
    return 0;
}

static void judge(struct gv_bcmp_case *c)
{
    c->va = c->vb = c->ratio = c->noise = NAN;
    if (!c->a || !c->b) {
        c->change = c->a ? GV_BC_ONLY_A : GV_BC_ONLY_B;
        return;
    }
    const char *ba = str(c->a, "better"), *bb = str(c->b, "better");
    c->lower_better = !strcmp(ba, "lower");
    const char *ua = str(c->a, "unit"), *ub = str(c->b, "unit");
    const json_t *pa = json_object_get(c->a, "params"), *pb = json_object_get(c->b, "params");
    int oka = !strcmp(c->status_a, "ok"), okb = !strcmp(c->status_b, "ok");
    if (strcmp(ba, bb) || (ua && ub && strcmp(ua, ub))) {
        c->change = GV_BC_NOT_COMPARABLE;
        snprintf(c->why, sizeof c->why, "measured differently: %s (%s is better) in A, %s (%s) "
                 "in B", ua ? ua : "?", ba, ub ? ub : "?", bb);
    } else if (oka && okb) {
        json_t *x = params_only(pa), *y = params_only(pb);
        char key[96];
        int differ = first_difference(x, y, key, sizeof key);
        if (differ) {
            c->change = GV_BC_NOT_COMPARABLE;
            snprintf(c->why, sizeof c->why, "the parameters differ (params.%s of A and B)", key);
        }
        json_decref(x);
        json_decref(y);
        if (!differ) {
            judge_both_ok(c);
        }
    } else if (oka) {
        c->va = num(c->a, "value", NAN);
        c->change = GV_BC_NEWLY_FAILING;
        status_why(c);
    } else if (okb) {
        c->vb = num(c->b, "value", NAN);
        c->change = GV_BC_NEWLY_OK;
        snprintf(c->why, sizeof c->why, "%s in A%s%s", c->status_a,
                 str(c->a, "reason") ? ": " : "", str(c->a, "reason") ?: "");
    } else {
        c->change = GV_BC_NOT_RUN;
        snprintf(c->why, sizeof c->why, "%s in A, %s in B", c->status_a, c->status_b);
    }
}

static const json_t *find_id(const json_t *results, const char *id)
{
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r)
        if (!strcmp(str(r, "id"), id))
            return r;
    return NULL;
}

static void fill(struct gv_bcmp_case *c, const json_t *a, const json_t *b)
{
    memset(c, 0, sizeof *c);
    const json_t *r = a ? a : b;
    c->a = a, c->b = b;
    c->id = str(r, "id");
    c->group = str(r, "group") ?: "";
    c->name = str(r, "name") ?: "";
    c->unit = str(r, "unit") ?: "";
    c->status_a = a ? str(a, "status") : NULL;
    c->status_b = b ? str(b, "status") : NULL;
    judge(c);
}

/* ---------- notes ---------- */

static void note(struct gv_bench_compare *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct gv_bench_compare *o, const char *fmt, ...)
{
    if (o->nnotes >= sizeof o->notes / sizeof o->notes[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->notes[o->nnotes++], sizeof o->notes[0], fmt, ap);
    va_end(ap);
}

static void notes(const json_t *a, const json_t *b, struct gv_bench_compare *o)
{
    const json_t *da = json_object_get(a, "device"), *db = json_object_get(b, "device");
    o->device_a = str(da, "name") ?: "?";
    o->device_b = str(db, "name") ?: "?";
    o->mode_a = str(a, "mode") ?: "?";
    o->mode_b = str(b, "mode") ?: "?";
    o->created_a = str(a, "created") ?: "?";
    o->created_b = str(b, "created") ?: "?";
    const char *ka = str(da, "backend") ?: "?", *kb = str(db, "backend") ?: "?";
    if (strcmp(ka, kb))
        note(o, "different kinds of device: %s in A, %s in B; the same ids measure different "
             "hardware", ka, kb);
    if (strcmp(o->device_a, o->device_b))
        note(o, "different devices: %s in A, %s in B", o->device_a, o->device_b);
    if (strcmp(o->mode_a, o->mode_b))
        note(o, "different modes: %s in A, %s in B; sizes and sample counts differ, so fewer "
             "ids match", o->mode_a, o->mode_b);
    const char *oa = str(a, "only"), *ob = str(b, "only");
    if ((oa || ob) && (!oa || !ob || strcmp(oa, ob)))
        note(o, "different selections (--only): %s in A, %s in B", oa ? oa : "all",
             ob ? ob : "all");
    int sa = json_is_object(json_object_get(a, "snapshot"));
    int sb = json_is_object(json_object_get(b, "snapshot"));
    if (!sa || !sb)
        note(o, "%s%s: no embedded snapshot (bench --no-snapshot): environment and libraries "
             "not compared", !sa ? "A" : "", !sa && !sb ? " and B" : !sb ? "B" : "");
}

/* ---------- causes ---------- */

static void add_cause(struct gv_bench_compare *o, const char *kind, const char *name,
                      const char *before, const char *after, const char *change,
                      const char *note_)
{
    for (size_t i = 0; i < o->ncauses; i++)
        if (!strcmp(o->causes[i].kind, kind) && !strcmp(o->causes[i].name, name))
            return;
    gv_cmp_cause_add(&o->causes, &o->ncauses, kind, name, before, after, change, note_);
}

static void lower(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < n; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

static int has_prefix(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

/* Conditions (clocks, power, temperature, load) of A and B before the run:
 * a leaf whose value is worse in B is a cause, with what it touches. */
static void condition_causes(const json_t *a, const json_t *b, struct gv_bench_compare *o)
{
    const json_t *ca = json_object_get(json_object_get(a, "conditions"), "before");
    const json_t *cb = json_object_get(json_object_get(b, "conditions"), "before");
    if (!json_is_object(ca) || !json_is_object(cb))
        return;
    const char *k;
    json_t *va;
    json_object_foreach((json_t *)ca, k, va) {
        const json_t *vb = json_object_get(cb, k);
        char key[128], x[64], y[64];
        lower(k, key, sizeof key);
        snprintf(x, sizeof x, "%g", json_number_value(va));
        snprintf(y, sizeof y, "%g", json_number_value(vb));
        if (json_is_number(va) && json_is_number(vb)) {
            double p = json_number_value(va), q = json_number_value(vb);
            int lower_b = q < p * 0.98, higher_b = q > p * 1.02;
            if (strstr(key, "loadavg")) {
                if (q > p + 0.5 && q > 1.5 * p)
                    add_cause(o, "conditions", k, x, y, "more load in B",
                              "other work on the machine takes time from the benchmarks");
            } else if (strstr(key, "clock") || strstr(key, "power_limit") || strstr(key, "cap")) {
                if (lower_b)
                    add_cause(o, "conditions", k, x, y, "lower in B",
                              "a lower clock or power cap slows compute-bound work (GEMM)");
                else if (higher_b)
                    add_cause(o, "conditions", k, x, y, "higher in B", NULL);
            } else if (strstr(key, "temp")) {
                if (q > p + 5)
                    add_cause(o, "conditions", k, x, y, "hotter in B",
                              "a hot device lowers its clocks");
            } else if (lower_b || higher_b) {
                add_cause(o, "conditions", k, x, y, NULL, NULL);
            }
        } else if (vb && !json_equal(va, vb)) {
            char *p = gv_json_dumps(va, JSON_ENCODE_ANY | JSON_COMPACT);
            char *q = gv_json_dumps(vb, JSON_ENCODE_ANY | JSON_COMPACT);
            int throttle = strstr(key, "throttle") != NULL;
            add_cause(o, "conditions", k, p, q, NULL,
                      throttle ? "the device was throttling differently" : NULL);
            free(p);
            free(q);
        }
    }
}

/* The NCCL/RCCL library the collectives loaded, and NCCL_* settings they saw. */
static void collective_causes(const json_t *a, const json_t *b, struct gv_bench_compare *o)
{
    const json_t *ca = json_object_get(a, "collectives"), *cb = json_object_get(b, "collectives");
    if (!json_is_object(ca) || !json_is_object(cb))
        return;
    const json_t *la = json_object_get(ca, "library"), *lb = json_object_get(cb, "library");
    const char *va = str(ca, "version"), *vb = str(cb, "version");
    const char *pa = str(la, "path"), *pb = str(lb, "path");
    const char *name = str(la, "name") ?: str(lb, "name") ?: "nccl";
    if ((va || vb) && (!va || !vb || strcmp(va, vb))) {
        char x[512], y[512];
        snprintf(x, sizeof x, "%s %s", pa ? pa : "?", va ? va : "(not loaded)");
        snprintf(y, sizeof y, "%s %s", pb ? pb : "?", vb ? vb : "(not loaded)");
        add_cause(o, "library", name, x, y, "version changed (loaded by the collectives)", NULL);
    } else if (pa && pb && strcmp(pa, pb)) {
        add_cause(o, "library", name, pa, pb, "same version, other path (loaded by the "
                  "collectives)", NULL);
    }
    const json_t *ea = json_object_get(ca, "env"), *eb = json_object_get(cb, "env");
    const json_t *sides[2] = {ea, eb};
    for (int s = 0; s < 2; s++) {
        const char *k;
        json_t *v;
        if (!json_is_object(sides[s]))
            continue;
        json_object_foreach((json_t *)sides[s], k, v) {
            const char *x = str(ea, k), *y = str(eb, k);
            if ((x || y) && (!x || !y || strcmp(x, y)))
                add_cause(o, "environment", k, x, y, NULL, NULL);
        }
    }
}

#define ALGO_TIE 0.97 /* an algorithm within 3% of the trial's fastest is a near-tie */

/* A trial's figure (TFLOP/s) for the heuristic's rank-th algorithm; 0 when not tried. */
static double trial_figure(const json_t *algo, json_int_t rank)
{
    const json_t *v = json_array_get(json_object_get(algo, "trial_tflops"), (size_t)(rank - 1));
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* Whether a GEMM whose trial chose another algorithm in B chose between near-equals:
 * each side's trial measured the other's pick within ALGO_TIE of its own. The
 * note gives the figures. */
static int algorithm_tie(const json_t *a, const json_t *b, char *note, size_t notesz)
{
    const json_t *ga = json_object_get(json_object_get(a, "params"), "algorithm");
    const json_t *gb = json_object_get(json_object_get(b, "params"), "algorithm");
    json_t *xa = json_object_get(ga, "heuristic_rank"), *xb = json_object_get(gb, "heuristic_rank");
    if (!json_is_integer(xa) || !json_is_integer(xb))
        return 0;
    json_int_t ra = json_integer_value(xa), rb = json_integer_value(xb);
    if (ra < 1 || rb < 1 || ra == rb)
        return 0;
    double aa = trial_figure(ga, ra), ab = trial_figure(ga, rb);
    double bb = trial_figure(gb, rb), ba = trial_figure(gb, ra);
    if (!(aa > 0 && ab > 0 && bb > 0 && ba > 0))
        return 0;
    if (ab < ALGO_TIE * aa || ba < ALGO_TIE * bb)
        return 0;
    snprintf(note, notesz, "near-tie in the algorithm trial: A ran #%lld, B #%lld; A's trial "
             "%.4g and %.4g TFLOP/s, B's %.4g and %.4g (within %.0f%%): explains no larger change",
             (long long)ra, (long long)rb, aa, ab, ba, bb, (1 - ALGO_TIE) * 100);
    return 1;
}

/* Results whose impl (what computed them) differs, for flagged ones. A GEMM
 * trial's choice between near-equal algorithms is kind "algorithm", which
 * touches no result (a known effect, ranked below the causes that do). */
static void route_causes(struct gv_bench_compare *o)
{
    for (size_t i = 0; i < o->n; i++) {
        const struct gv_bcmp_case *c = &o->cases[i];
        if (!gv_bcmp_flagged(c->change))
            continue;
        const char *ia = str(c->a, "impl"), *ib = str(c->b, "impl");
        if (!ia || !ib || !strcmp(ia, ib))
            continue;
        char note[512];
        if (algorithm_tie(c->a, c->b, note, sizeof note))
            add_cause(o, "algorithm", c->id, ia, ib, NULL, note);
        else
            add_cause(o, "route", c->id, ia, ib, NULL, NULL);
    }
}

/* Known effects of environment variables on benchmarks: a note, or NULL. */
static const char *env_note(const char *name)
{
    if (has_prefix(name, "NCCL_") || has_prefix(name, "RCCL_"))
        return "NCCL/RCCL setting: algorithm, protocol, transport or channels of collectives";
    if (!strcmp(name, "OMP_NUM_THREADS") || !strcmp(name, "OPENBLAS_NUM_THREADS") ||
        !strcmp(name, "GOTO_NUM_THREADS") || !strcmp(name, "MKL_NUM_THREADS") ||
        !strcmp(name, "GPUVET_THREADS"))
        return "how many threads the CPU kernels use";
    if (has_prefix(name, "OPENBLAS_") || has_prefix(name, "OMP_") || has_prefix(name, "GOMP_"))
        return "OpenBLAS/OpenMP setting: kernels and threads of the CPU GEMM";
    if (has_prefix(name, "CUBLAS") || has_prefix(name, "HIPBLASLT") || has_prefix(name, "ROCBLAS") ||
        !strcmp(name, "NVIDIA_TF32_OVERRIDE") || !strcmp(name, "GPUVET_BLAS"))
        return "BLAS setting: which GEMM kernels run";
    if (has_prefix(name, "CUDA_") || has_prefix(name, "HIP_") || has_prefix(name, "HSA_") ||
        has_prefix(name, "GPU_") || !strcmp(name, "LD_PRELOAD") || !strcmp(name, "LD_LIBRARY_PATH"))
        return "runtime setting: devices, libraries or scheduling of all GPU work";
    return NULL;
}

/* Whether impl mentions the library lib ("cublas" in "cublasgemmex", not in
 * "cublasltmatmul"), both lower case. */
static int mentions(const char *impl, const char *lib)
{
    size_t n = strlen(lib);
    int lt = n >= 2 && !strcmp(lib + n - 2, "lt");
    for (const char *p = strstr(impl, lib); p; p = strstr(p + 1, lib))
        if (lt || strncmp(p + n, "lt", 2) != 0)
            return 1;
    return 0;
}

/* Whether cause k can explain result c (by group, impl and route). */
static int touches(const struct gv_cmp_cause *k, const struct gv_bcmp_case *c)
{
    char impl[512], lname[128];
    const json_t *r = c->b ? c->b : c->a;
    const char *route = str(json_object_get(r, "params"), "route");
    snprintf(impl, sizeof impl, "%s %s", str(r, "impl") ?: "", route ? route : "");
    lower(impl, impl, sizeof impl);
    lower(k->name, lname, sizeof lname);
    int gemm = !strcmp(c->group, "gemm"), coll = !strcmp(c->group, "collective");
    if (!strcmp(k->kind, "route"))
        return !strcmp(k->name, c->id);
    if (!strcmp(k->kind, "library")) {
        if (strstr(lname, "nccl") || strstr(lname, "rccl"))
            return coll;
        if (strstr(lname, "blas")) {
            if (!gemm)
                return 0;
            if (route) { /* the GEMM's route names its library: cublas, cublaslt, openblas */
                char rl[64];
                lower(route, rl, sizeof rl);
                return !strcmp(rl, lname);
            }
            return mentions(impl, lname);
        }
        /* the runtime and the driver under all GPU work */
        return strstr(lname, "cudart") || !strcmp(lname, "cuda") || strstr(lname, "amdhip") ||
               strstr(lname, "hsa") || strstr(lname, "hip");
    }
    if (!strcmp(k->kind, "environment")) {
        const char *n = k->name;
        if (has_prefix(n, "NCCL_") || has_prefix(n, "RCCL_"))
            return coll;
        if (has_prefix(n, "CUBLAS") || has_prefix(n, "HIPBLASLT") || has_prefix(n, "ROCBLAS") ||
            !strcmp(n, "NVIDIA_TF32_OVERRIDE") || !strcmp(n, "GPUVET_BLAS"))
            return gemm;
        if (has_prefix(n, "OPENBLAS_") || has_prefix(n, "GOTO_") || has_prefix(n, "MKL_"))
            return gemm;
        if (has_prefix(n, "OMP_") || has_prefix(n, "GOMP_") || !strcmp(n, "GPUVET_THREADS"))
            return gemm || !strcmp(c->group, "memory");
        return env_note(n) != NULL;
    }
    if (!strcmp(k->kind, "device")) {
        if (strstr(lname, "bench_gemm"))
            return gemm;
        return 1;
    }
    if (!strcmp(k->kind, "driver"))
        return 1;
    if (!strcmp(k->kind, "conditions")) {
        if (!k->note[0])
            return 0;
        if (strstr(lname, "loadavg") || strstr(lname, "temp") || strstr(lname, "throttle"))
            return 1;
        if (strstr(lname, "mem"))
            return !strcmp(c->group, "memory") || !strcmp(c->group, "copy");
        return gemm;
    }
    return 0;
}

static int kind_order(const char *kind)
{
    static const char *const order[] = {"conditions", "route", "library", "environment", "device",
                                        "driver"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(kind, order[i]))
            return i;
    return 6;
}

static int by_rank(const void *x, const void *y)
{
    const struct gv_cmp_cause *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    if (!a->note[0] != !b->note[0])
        return !a->note[0] - !b->note[0];
    if (kind_order(a->kind) != kind_order(b->kind))
        return kind_order(a->kind) - kind_order(b->kind);
    return a->found - b->found;
}

static void rank_causes(struct gv_bench_compare *o)
{
    size_t nflag = 0;
    for (size_t j = 0; j < o->n; j++)
        nflag += gv_bcmp_flagged(o->cases[j].change) != 0;
    for (size_t i = 0; i < o->ncauses; i++) {
        struct gv_cmp_cause *k = &o->causes[i];
        k->found = (int)i;
        if (!strcmp(k->kind, "environment") && !k->note[0] && env_note(k->name))
            snprintf(k->note, sizeof k->note, "%s", env_note(k->name));
        for (size_t j = 0; j < o->n; j++)
            if (gv_bcmp_flagged(o->cases[j].change) && touches(k, &o->cases[j]))
                gv_cmp_cause_touch(k, o->cases[j].id);
        int known = k->note[0] != 0;
        k->rank = k->touched && (size_t)k->touched == nflag ? 0 : k->touched ? 1 : known ? 2 : 3;
    }
    if (o->ncauses > 1)
        qsort(o->causes, o->ncauses, sizeof *o->causes, by_rank);
}

/* Device leaves that are descriptions of the run, not of the stack. */
static json_t *device_for_causes(const json_t *d)
{
    if (!json_is_object(d))
        return NULL;
    json_t *c = json_deep_copy(d);
    json_object_del(c, "bench_timer");
    return c;
}

static void find_causes(const json_t *a, const json_t *b, struct gv_bench_compare *o)
{
    condition_causes(a, b, o);
    route_causes(o);
    collective_causes(a, b, o);
    const json_t *sa = json_object_get(a, "snapshot"), *sb = json_object_get(b, "snapshot");
    json_t *da = device_for_causes(json_object_get(a, "device"));
    json_t *db = device_for_causes(json_object_get(b, "device"));
    struct gv_cmp_cause *st = NULL;
    size_t n = 0;
    gv_compare_stack_causes(da, db, json_is_object(sa) ? sa : NULL, json_is_object(sb) ? sb : NULL,
                            &st, &n);
    for (size_t i = 0; i < n; i++) {
        add_cause(o, st[i].kind, st[i].name, st[i].before, st[i].after, st[i].change,
                  st[i].note);
    }
    free(st);
    json_decref(da);
    json_decref(db);
    rank_causes(o);
}

/* ---------- all ---------- */

int gv_bench_compare_docs(const json_t *a, const json_t *b, struct gv_bench_compare *out,
                          struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    const json_t *ra = json_object_get(a, "results"), *rb = json_object_get(b, "results");
    size_t na = json_array_size(ra), nb = json_array_size(rb);
    out->cases = calloc(na + nb + 1, sizeof *out->cases);
    if (!out->cases)
        return gv_err_set(err, GV_E_NOMEM, "out of memory comparing bench results");
    size_t i;
    json_t *r;
    json_array_foreach(ra, i, r)
        fill(&out->cases[out->n++], r, find_id(rb, str(r, "id")));
    json_array_foreach(rb, i, r)
        if (!find_id(ra, str(r, "id")))
            fill(&out->cases[out->n++], NULL, r);
    for (i = 0; i < out->n; i++) {
        out->count[out->cases[i].change]++;
        out->flagged |= gv_bcmp_flagged(out->cases[i].change);
    }
    notes(a, b, out);
    find_causes(a, b, out);
    return GV_OK;
}

void gv_bench_compare_free(struct gv_bench_compare *c)
{
    free(c->cases);
    free(c->causes);
    memset(c, 0, sizeof *c);
}

/* ---------- the document ---------- */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *side_json(const json_t *r, const char *status)
{
    if (!r)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(status));
    static const char *const keys[] = {"value", "min", "max", "spread"};
    for (int k = 0; k < 4; k++)
        if (json_is_number(json_object_get(r, keys[k])))
            json_object_set(o, keys[k], json_object_get(r, keys[k]));
    if (json_is_string(json_object_get(r, "reason")))
        json_object_set(o, "reason", json_object_get(r, "reason"));
    if (json_is_string(json_object_get(r, "impl")))
        json_object_set(o, "impl", json_object_get(r, "impl"));
    return o;
}

json_t *gv_bench_compare_json(const struct gv_bench_compare *c, const char *path_a,
                              const char *path_b)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("gpuvet.compare"));
    json_object_set_new(doc, "schema_version", json_integer(1));
    json_object_set_new(doc, "kind", json_string("bench"));
    json_object_set_new(doc, "before", json_pack("{s:s,s:s,s:s,s:s}", "file", path_a, "device",
                                                 c->device_a, "mode", c->mode_a, "created",
                                                 c->created_a));
    json_object_set_new(doc, "after", json_pack("{s:s,s:s,s:s,s:s}", "file", path_b, "device",
                                                c->device_b, "mode", c->mode_b, "created",
                                                c->created_b));
    json_object_set_new(doc, "flagged", json_boolean(c->flagged));
    json_object_set_new(doc, "noise_floor", json_real(GV_BCMP_NOISE_FLOOR));
    json_object_set_new(doc, "noise_floors",
                        json_pack("{s:f,s:f}", "latency", GV_BCMP_NOISE_LATENCY, "pageable",
                                  GV_BCMP_NOISE_PAGEABLE));
    json_t *s = json_object();
    for (int i = 0; i < GV_BC_COUNT; i++)
        json_object_set_new(s, gv_bcmp_change_name((enum gv_bcmp_change)i),
                            json_integer((json_int_t)c->count[i]));
    json_object_set_new(doc, "summary", s);
    json_t *notes_ = json_array();
    for (size_t i = 0; i < c->nnotes; i++)
        json_array_append_new(notes_, json_string(c->notes[i]));
    json_object_set_new(doc, "notes", notes_);
    json_t *res = json_array();
    for (size_t i = 0; i < c->n; i++) {
        const struct gv_bcmp_case *x = &c->cases[i];
        json_t *e = json_object();
        json_object_set_new(e, "id", json_string(x->id));
        json_object_set_new(e, "group", json_string(x->group));
        json_object_set_new(e, "name", json_string(x->name));
        json_object_set_new(e, "unit", json_string(x->unit));
        json_object_set_new(e, "better", json_string(x->lower_better ? "lower" : "higher"));
        json_object_set_new(e, "change", json_string(gv_bcmp_change_name(x->change)));
        json_object_set_new(e, "flagged", json_boolean(gv_bcmp_flagged(x->change)));
        json_object_set_new(e, "ratio", jnum(x->ratio));
        json_object_set_new(e, "noise", jnum(x->noise));
        if (x->a && x->b && isfinite(x->ratio))
            json_object_set_new(e, "ranges_apart", json_boolean(x->apart));
        if (x->why[0])
            json_object_set_new(e, "why", json_string(x->why));
        json_object_set_new(e, "before", side_json(x->a, x->status_a));
        json_object_set_new(e, "after", side_json(x->b, x->status_b));
        json_array_append_new(res, e);
    }
    json_object_set_new(doc, "results", res);
    json_t *causes = json_array();
    for (size_t i = 0; i < c->ncauses; i++) {
        const struct gv_cmp_cause *x = &c->causes[i];
        json_t *e = json_object();
        json_object_set_new(e, "kind", json_string(x->kind));
        json_object_set_new(e, "name", json_string(x->name));
        json_object_set_new(e, "before", x->before[0] ? json_string(x->before) : json_null());
        json_object_set_new(e, "after", x->after[0] ? json_string(x->after) : json_null());
        if (x->change[0])
            json_object_set_new(e, "change", json_string(x->change));
        if (x->note[0])
            json_object_set_new(e, "note", json_string(x->note));
        json_object_set_new(e, "rank", json_integer(x->rank));
        json_object_set_new(e, "touches", json_integer(x->touched));
        json_object_set_new(e, "touched_results", json_string(x->touches));
        json_array_append_new(causes, e);
    }
    json_object_set_new(doc, "causes", causes);
    return doc;
}
