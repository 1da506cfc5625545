/* gv_backend_torch: the suite through the user's own PyTorch (see torch.h). */
#include "dev/torch/torch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "dev/gpu.h"
#include "dev/torch/torch_proc.h"
#include "kb/kb.h"

extern char **environ;

struct gv_device {
    char torch_dev[32];      /* "cpu" or "cuda:N", as the worker is asked */
    char python[4096];       /* as given ($GPUVET_PYTHON or python3) */
    char root[4096];         /* $GPUVET_PYTHON_ROOT, or "" */
    struct gv_torch_proc p;
    json_t *desc;            /* the last description a worker gave */
    json_t *libs;            /* every library any worker of this run mapped */
    int restarts;
    char last_restart[1024];
    double timeout;          /* seconds a case may compute before the worker is killed */
    int referee;             /* bisect's referee: started clean, its canary checked */
    json_t *canary;          /* the referee's last canary: what it gave, what was expected */
};

/* ---------- libraries ---------- */

void gv_torch_file_version(const char *filename, char *out, size_t n)
{
    out[0] = '\0';
    const char *so = strstr(filename, ".so.");
    if (so)
        snprintf(out, n, "%s", so + 4);
}

json_t *gv_torch_libraries(const json_t *mapped_files)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(mapped_files, i, v) {
        const char *path = json_string_value(v);
        const char *base = path ? strrchr(path, '/') : NULL;
        char name[128], ver[64];
        if (!base || path[0] != '/' || !kb_framework_lib_name(base + 1, name, sizeof name))
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(name));
        gv_json_set_str(o, "path", path);
        gv_torch_file_version(base + 1, ver, sizeof ver);
        if (ver[0])
            json_object_set_new(o, "version", json_string(ver));
        json_array_append_new(out, o);
    }
    return out;
}

/* Adds the libraries of a description to d->libs (each path once). */
static void merge_libs(struct gv_device *d, const json_t *desc)
{
    json_t *libs = gv_torch_libraries(json_object_get(desc, "mapped_files"));
    size_t i, j;
    json_t *v, *w;
    json_array_foreach(libs, i, v) {
        const char *path = json_string_value(json_object_get(v, "path"));
        int seen = 0;
        json_array_foreach(d->libs, j, w) seen |= path && json_equal(json_object_get(w, "path"),
                                                                     json_object_get(v, "path"));
        if (!seen)
            json_array_append(d->libs, v);
    }
    json_decref(libs);
}

static void keep_desc(struct gv_device *d, json_t *desc)
{
    if (!desc)
        return;
    merge_libs(d, desc);
    json_decref(d->desc);
    d->desc = desc;
}

/* ---------- the worker ---------- */

static int map_open_failure(const char *status)
{
    if (!strcmp(status, "usage"))
        return GV_E_USAGE;
    if (!strcmp(status, "no-gpu") || !strcmp(status, "no-device"))
        return GV_E_NOTFOUND;
    if (!strcmp(status, "permission") || !strcmp(status, "device") ||
        !strcmp(status, "no-kernel-image"))
        return GV_E_DEVICE;
    return GV_E_LIB; /* no-torch, import-*, cpu-build, wrong-build */
}

/* ---------- the referee ---------- */

/* Its canary: CANARY_N float32 values k * 2^-149 (k = i % 1000 + 1, subnormal),
 * widened and summed in float64 by a multithreaded ATen op, and as many products
 * 2^-70 * 2^-70 = 2^-140 summed the same way. Every partial sum is a multiple of
 * 2^-149 below 2^53 of them, so each sum is exact in any order: a referee that
 * reads subnormal inputs as zero (DAZ) or flushes subnormal results (FTZ), on
 * any of its threads, gives less. */
#define CANARY_N (1 << 20)

static double canary_daz_sum(void)
{
    double full = CANARY_N / 1000, rest = CANARY_N % 1000;
    return ldexp(full * 500500.0 + rest * (rest + 1) / 2, -149);
}

/* The canary's verdict into why ("" when it holds); its values into d->canary. */
static void check_canary(struct gv_device *d, const json_t *doc, char *why, size_t n)
{
    const char *daz = json_string_value(json_object_get(doc, "daz_sum"));
    const char *ftz = json_string_value(json_object_get(doc, "ftz_sum"));
    double got_daz = daz ? strtod(daz, NULL) : NAN, got_ftz = ftz ? strtod(ftz, NULL) : NAN;
    double want_daz = canary_daz_sum(), want_ftz = ldexp(CANARY_N, -140);
    json_int_t threads = json_integer_value(json_object_get(doc, "threads"));
    json_decref(d->canary);
    d->canary = json_pack("{s:i, s:I, s:I, s:f, s:f, s:f, s:f}", "elements", CANARY_N,
                          "threads_asked", (json_int_t)GV_TORCH_REFEREE_THREADS, "threads",
                          threads, "subnormal_sum", isfinite(got_daz) ? got_daz : -1.0,
                          "subnormal_sum_expected", want_daz, "product_sum",
                          isfinite(got_ftz) ? got_ftz : -1.0, "product_sum_expected", want_ftz);
    json_object_set(d->canary, "fp_mode", json_object_get(doc, "fp_mode"));
    why[0] = '\0';
    if (got_daz != want_daz)
        snprintf(why, n, "float32 subnormals widened to float64 and summed on %lld threads "
                 "gave %.17g, not %.17g: subnormal inputs read as zero (DAZ)",
                 (long long)threads, got_daz, want_daz);
    else if (got_ftz != want_ftz)
        snprintf(why, n, "float32 products 2^-70 * 2^-70 summed in float64 on %lld threads "
                 "gave %.17g, not %.17g: subnormal results flushed to zero (FTZ)",
                 (long long)threads, got_ftz, want_ftz);
    else if (threads != GV_TORCH_REFEREE_THREADS)
        snprintf(why, n, "asked for %d threads, it runs %lld", GV_TORCH_REFEREE_THREADS,
                 (long long)threads);
}

/* The check of an open reply: a referee's canary must hold (GV_E_DEVICE when
 * not, with why). */
static int open_reply(struct gv_device *d, struct gv_torch_reply *r, struct gv_err *err)
{
    if (!d->referee)
        return GV_OK;
    char why[512];
    check_canary(d, r->doc, why, sizeof why);
    return why[0] ? gv_err_set(err, GV_E_DEVICE, "%s", why) : GV_OK;
}

static int start(struct gv_device *d, struct gv_err *err)
{
    int rc = d->referee ? gv_torch_proc_start_clean(&d->p, d->python, d->root,
                                                    GV_TORCH_REFEREE_THREADS, err)
                        : gv_torch_proc_start(&d->p, d->python, d->root, err);
    if (rc)
        return rc;
    json_t *req = json_object();
    json_object_set_new(req, "op", json_string(d->referee ? "referee_open" : "open"));
    json_object_set_new(req, "device", json_string(d->torch_dev));
    if (d->referee) {
        json_object_set_new(req, "threads", json_integer(GV_TORCH_REFEREE_THREADS));
        json_object_set_new(req, "n", json_integer(CANARY_N));
    }
    rc = gv_torch_send(&d->p, req, NULL, 0, err);
    json_decref(req);
    struct gv_torch_reply r = {0};
    if (!rc) /* importing torch and starting the GPU can take long on a cold disk */
        rc = gv_torch_recv(&d->p, 300 * 1000, NULL, 0, &r, err);
    if (rc) {
        gv_err_prefix(err, "opening torch:%s with %s", d->torch_dev, d->p.python);
        gv_torch_proc_stop(&d->p);
        return rc;
    }
    if (!r.ok || open_reply(d, &r, err)) {
        rc = r.ok ? err->code
                  : gv_err_set(err, map_open_failure(r.status), "%s",
                               r.error[0] ? r.error : r.status);
        gv_torch_reply_free(&r);
        gv_torch_proc_stop(&d->p);
        return rc;
    }
    keep_desc(d, json_incref(r.describe));
    gv_torch_reply_free(&r);
    return GV_OK;
}

static int ensure(struct gv_device *d, struct gv_err *err)
{
    if (d->p.pid > 0 && d->p.fd >= 0)
        return GV_OK;
    d->restarts++;
    int rc = start(d, err);
    if (rc)
        gv_err_prefix(err, "restarting the PyTorch worker");
    return rc;
}

static void retire(struct gv_device *d, const struct gv_case *c, const struct gv_err *err)
{
    snprintf(d->last_restart, sizeof d->last_restart, "after %s: %s", c->id ? c->id : "?",
             err->msg);
    gv_torch_proc_stop(&d->p);
}

static int parse_spec(const char *spec, char *out, size_t n, struct gv_err *err)
{
    if (!spec || !*spec || !strcmp(spec, "cuda")) {
        snprintf(out, n, "cuda:0");
        return GV_OK;
    }
    if (!strcmp(spec, "cpu") || !strcmp(spec, "cpu:0")) {
        snprintf(out, n, "cpu");
        return GV_OK;
    }
    char *end;
    if (!strncmp(spec, "cuda:", 5) && spec[5] >= '0' && spec[5] <= '9' &&
        strtol(spec + 5, &end, 10) < 1024 && *end == '\0') {
        snprintf(out, n, "%s", spec);
        return GV_OK;
    }
    return gv_err_set(err, GV_E_USAGE, "--device torch:%s: expected torch:cpu or torch:cuda:N "
                      "(on ROCm PyTorch the device is still called cuda)", spec);
}

static int open_dev(const char *spec, struct gv_device **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_device *d = calloc(1, sizeof *d);
    if (!d)
        return gv_err_set(err, GV_E_NOMEM, "torch backend");
    int rc = parse_spec(spec, d->torch_dev, sizeof d->torch_dev, err);
    if (rc) {
        free(d);
        return rc;
    }
    const char *py = getenv("GPUVET_PYTHON"), *root = getenv("GPUVET_PYTHON_ROOT");
    snprintf(d->python, sizeof d->python, "%s", py && *py ? py : "python3");
    snprintf(d->root, sizeof d->root, "%s", root ? root : "");
    d->p.pid = -1;
    d->p.fd = d->p.out = -1;
    d->libs = json_array();
    d->timeout = gv_gpu_case_timeout();
    rc = start(d, err);
    if (rc) {
        json_decref(d->libs);
        json_decref(d->desc);
        free(d);
        return rc;
    }
    *out = d;
    return GV_OK;
}

static void close_dev(struct gv_device *d)
{
    if (!d)
        return;
    gv_torch_proc_stop(&d->p);
    json_decref(d->desc);
    json_decref(d->libs);
    json_decref(d->canary);
    free(d);
}

/* The names (never the values) of our variables the referee does without that
 * are known to change numerics or kernels (kb's table) or to load code. */
static json_t *dropped_variables(void)
{
    json_t *out = json_array();
    for (size_t i = 0; environ && environ[i]; i++) {
        char name[128];
        size_t n = strcspn(environ[i], "=");
        if (n >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)n, environ[i]);
        const struct kb_env *e = kb_env(name);
        if (!strcmp(name, "LD_PRELOAD") || !strncmp(name, "PYTHON", 6) ||
            (e && (e->kind == KB_ENV_NUMERICS || e->kind == KB_ENV_KERNELS)))
            json_array_append_new(out, json_string(name));
    }
    return out;
}

int gv_torch_referee_open(const struct gv_device *b, struct gv_device **ref, json_t **facts,
                          struct gv_err *err)
{
    *ref = NULL;
    struct gv_device *d = calloc(1, sizeof *d);
    *facts = json_object();
    if (!d || !*facts) {
        free(d);
        return gv_err_set(err, GV_E_NOMEM, "the referee");
    }
    snprintf(d->torch_dev, sizeof d->torch_dev, "cpu");
    snprintf(d->python, sizeof d->python, "%s", b->python);
    snprintf(d->root, sizeof d->root, "%s", b->root);
    d->p.pid = -1;
    d->p.fd = d->p.out = -1;
    d->libs = json_array();
    d->timeout = b->timeout;
    d->referee = 1;
    struct gv_err e = {0};
    int rc = start(d, &e);
    json_object_set_new(*facts, "trusted", json_boolean(!rc));
    if (rc)
        json_object_set_new(*facts, "why", json_string(e.msg));
    json_object_set_new(*facts, "interpreter", json_string(d->python));
    if (d->root[0])
        json_object_set_new(*facts, "python_root", json_string(d->root));
    json_object_set_new(*facts, "start", json_string("python -I -S, site-packages as plain "
                                                     "directories, environment scrubbed"));
    json_object_set_new(*facts, "threads", json_integer(GV_TORCH_REFEREE_THREADS));
    json_object_set_new(*facts, "dropped_variables", dropped_variables());
    if (d->canary)
        json_object_set(*facts, "canary", d->canary);
    if (d->desc)
        json_object_set(*facts, "torch", json_object_get(d->desc, "torch"));
    if (rc) {
        close_dev(d);
        return GV_OK;
    }
    *ref = d;
    return GV_OK;
}

void gv_torch_referee_close(struct gv_device *ref)
{
    close_dev(ref);
}

static json_t *describe(struct gv_device *d)
{
    if (d->p.pid > 0) { /* libraries are loaded lazily: ask again at the end */
        json_t *req = json_object();
        json_object_set_new(req, "op", json_string("describe"));
        struct gv_err e = {0};
        struct gv_torch_reply r = {0};
        if (gv_torch_send(&d->p, req, NULL, 0, &e) == GV_OK &&
            gv_torch_recv(&d->p, 60 * 1000, NULL, 0, &r, &e) == GV_OK && r.ok)
            keep_desc(d, json_incref(r.describe));
        gv_torch_reply_free(&r);
        json_decref(req);
    }
    json_t *o = d->desc ? json_deep_copy(d->desc) : json_object();
    json_object_del(o, "mapped_files");
    json_object_set_new(o, "libraries", json_deep_copy(d->libs));
    json_object_set_new(o, "interpreter", json_string(d->python));
    if (d->root[0])
        json_object_set_new(o, "python_root", json_string(d->root));
    json_object_set_new(o, "case_timeout_s", json_real(d->timeout));
    json_t *k = json_object();
    json_object_set_new(k, "pid", json_integer(d->p.pid));
    json_object_set_new(k, "restarts", json_integer(d->restarts));
    if (d->last_restart[0])
        json_object_set_new(k, "last_restart_reason", json_string(d->last_restart));
    json_object_set_new(o, "worker", k);
    return o;
}

/* ---------- cases ---------- */

/* The catalog's precision token, from the case's formats (catalog.h). */
static const char *prec_of(const struct gv_case *c)
{
    if (c->op == GV_OP_MLP)
        return gv_dtype_name(c->compute_dtype);
    if (c->op == GV_OP_GEMM || c->op == GV_OP_CONV2D) {
        if (c->compute_dtype == GV_TF32)
            return "tf32";
        if (c->in_dtype == GV_F16)
            return c->op == GV_OP_CONV2D ? "f16"
                   : c->compute_dtype == GV_F32 ? "f16acc32"
                   : c->call == GV_CALL_DEFAULTS ? "f16" : "f16acc16";
        if (c->in_dtype == GV_BF16)
            return c->op == GV_OP_CONV2D ? "bf16"
                   : c->compute_dtype == GV_F32 ? "bf16acc32" : "bf16";
    }
    return gv_dtype_name(c->in_dtype);
}

static json_t *case_json(const struct gv_case *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(c->id ? c->id : ""));
    json_object_set_new(o, "op", json_string(gv_op_name(c->op)));
    json_object_set_new(o, "prec", json_string(prec_of(c)));
    json_object_set_new(o, "call", json_string(gv_call_name(c->call)));
    json_object_set_new(o, "in", json_string(gv_dtype_name(c->in_dtype)));
    json_object_set_new(o, "compute", json_string(gv_dtype_name(c->compute_dtype)));
    json_object_set_new(o, "out", json_string(gv_dtype_name(c->out_dtype)));
    json_object_set_new(o, "unary", json_string(gv_unary_name(c->unary)));
#define I(name, v) json_object_set_new(o, name, json_integer((json_int_t)(v)))
    I("batch", c->batch);
    I("m", c->m);
    I("n", c->n);
    I("k", c->k);
    I("c", c->c);
    I("h", c->h);
    I("w", c->w);
    I("r", c->r);
    I("s", c->s);
    I("stride", c->stride);
    I("pad", c->pad);
    I("rows", c->rows);
    I("len", c->len);
    I("bh", c->bh);
    I("seq", c->seq);
    I("d", c->d);
    I("causal", c->causal);
#undef I
    json_object_set_new(o, "eps", json_real(c->eps));
    return o;
}

static int supports(struct gv_device *d, const struct gv_case *c, struct gv_err *why)
{
    int rc = ensure(d, why);
    if (rc)
        return rc;
    json_t *req = json_object();
    json_object_set_new(req, "op", json_string("supports"));
    json_object_set_new(req, "case", case_json(c));
    struct gv_torch_reply r = {0};
    rc = gv_torch_send(&d->p, req, NULL, 0, why);
    json_decref(req);
    if (!rc)
        rc = gv_torch_recv(&d->p, 60 * 1000, NULL, 0, &r, why);
    if (!rc && !r.ok)
        rc = gv_err_set(why, strcmp(r.status, "unsupported") ? GV_E_DEVICE : GV_E_UNSUPPORTED,
                        "%s", r.error);
    gv_torch_reply_free(&r);
    return rc;
}

static int run(struct gv_device *d, const struct gv_case *c, const struct gv_buffer *in, int nin,
               struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err)
{
    if (nin < 0 || nin > 4)
        return gv_err_set(err, GV_E_USAGE, "%s: %d inputs", c->id, nin);
    int rc = ensure(d, err);
    if (rc)
        return rc;
    json_t *req = json_object(), *ins = json_array(), *o = json_object();
    struct gv_torch_part parts[4];
    for (int i = 0; i < nin; i++) {
        json_t *s = json_object();
        size_t bytes = in[i].count * gv_dtype_size(in[i].dtype);
        json_object_set_new(s, "dtype", json_string(gv_dtype_name(in[i].dtype)));
        json_object_set_new(s, "count", json_integer((json_int_t)in[i].count));
        json_object_set_new(s, "bytes", json_integer((json_int_t)bytes));
        json_array_append_new(ins, s);
        parts[i] = (struct gv_torch_part){in[i].data, bytes};
    }
    json_object_set_new(o, "dtype", json_string(gv_dtype_name(out->dtype)));
    json_object_set_new(o, "count", json_integer((json_int_t)out->count));
    json_object_set_new(req, "op", json_string("run"));
    json_object_set_new(req, "case", case_json(c));
    json_object_set_new(req, "inputs", ins);
    json_object_set_new(req, "out", o);
    rc = gv_torch_send(&d->p, req, parts, nin, err);
    json_decref(req);
    struct gv_torch_reply r = {0};
    size_t obytes = out->count * gv_dtype_size(out->dtype), moved = obytes;
    for (int i = 0; i < nin; i++)
        moved += parts[i].bytes;
    /* the case's time, plus moving its data at a pessimistic 50 MB/s */
    double limit = d->timeout + 5 + (double)moved / 50e6;
    if (!rc)
        rc = gv_torch_recv(&d->p, (int)(limit * 1000), out->data, obytes, &r, err);
    if (rc) { /* dead, hung or talking nonsense: the next case gets a new worker */
        gv_err_prefix(err, "%s", c->id);
        retire(d, c, err);
        gv_torch_reply_free(&r);
        return rc == GV_E_TIMEOUT ? rc : GV_E_DEVICE;
    }
    if (info) {
        info->seconds = r.seconds;
        snprintf(info->impl, sizeof info->impl, "%s", r.impl);
    }
    if (!r.ok) {
        int unsupported = !strcmp(r.status, "unsupported");
        rc = gv_err_set(err, unsupported ? GV_E_UNSUPPORTED : !strcmp(r.status, "oom")
                                                                ? GV_E_NOMEM : GV_E_DEVICE,
                        "%s%s", unsupported ? "" : "torch: ", r.error);
        if (!strcmp(r.status, "device")) /* a sticky GPU error: this process is done */
            retire(d, c, err);
    }
    gv_torch_reply_free(&r);
    return rc;
}

int gv_torch_request(struct gv_device *d, json_t *req, const struct gv_torch_part *parts,
                     int nparts, struct gv_err *err)
{
    int rc = ensure(d, err);
    return rc ? rc : gv_torch_send(&d->p, req, parts, nparts, err);
}

int gv_torch_reply_next(struct gv_device *d, int timeout_ms, size_t max, void **payload,
                        size_t *len, struct gv_torch_reply *r, struct gv_err *err)
{
    int rc = gv_torch_recv_any(&d->p, timeout_ms, max, payload, len, r, err);
    if (rc == GV_OK && r->describe && json_is_object(r->describe))
        keep_desc(d, json_incref(r->describe));
    if (rc && d->p.pid > 0)
        gv_torch_proc_stop(&d->p);
    return rc;
}

const struct gv_backend gv_backend_torch = {"torch", open_dev, close_dev, describe, supports, run};
