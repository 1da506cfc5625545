/* gpuvet probe: routes, precisions and the fingerprint document (probe.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "dev/kind.h"
#include "probe/exec.h"

static const struct gv_probe_prec precs[] = {
    {"f64", "gemm", GV_F64, GV_F64, GV_F64, "fp64 GEMM"},
    {"f32", "gemm", GV_F32, GV_F32, GV_F32, "fp32 GEMM, fp32 compute (no TF32 asked for)"},
    {"tf32", "gemm", GV_F32, GV_TF32, GV_F32, "fp32 GEMM with TF32 compute asked for"},
    {"f16", "gemm", GV_F16, GV_F32, GV_F32, "fp16 inputs, fp32 accumulation, fp32 output"},
    {"f16.out16", "gemm", GV_F16, GV_F32, GV_F16, "fp16 inputs, fp32 accumulation, fp16 output"},
    {"f16acc16", "gemm", GV_F16, GV_F16, GV_F16, "fp16 inputs, fp16 accumulation, fp16 output"},
    {"bf16", "gemm", GV_BF16, GV_F32, GV_F32, "bf16 inputs, fp32 accumulation, fp32 output"},
    {"bf16.out16", "gemm", GV_BF16, GV_F32, GV_BF16, "bf16 inputs, fp32 accumulation, bf16 output"},
    {"f8e4m3", "gemm", GV_F8E4M3, GV_F32, GV_F32, "fp8 e4m3 inputs, fp32 accumulation"},
    {"f8e5m2", "gemm", GV_F8E5M2, GV_F32, GV_F32, "fp8 e5m2 inputs, fp32 accumulation"},
    {"f32", "sum", GV_F32, GV_F32, GV_F32, "row sums of fp32"},
    {"f64", "sum", GV_F64, GV_F64, GV_F64, "row sums of fp64"},
};
#define N_PRECS (sizeof precs / sizeof precs[0])

const struct gv_probe_prec *gv_probe_precs(size_t *n)
{
    *n = N_PRECS;
    return precs;
}

/* ---------- routes ---------- */

static void route(struct gv_probe_route *r, const char *name, const char *device,
                  const char *blas, enum gv_call call, const char *what, const char *sums_on)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->device, sizeof r->device, "%s", device);
    snprintf(r->blas, sizeof r->blas, "%s", blas);
    r->call = call;
    snprintf(r->what, sizeof r->what, "%s", what);
    snprintf(r->sums_on, sizeof r->sums_on, "%s", sums_on ? sums_on : "");
}

size_t gv_probe_routes(const char *device, struct gv_probe_route *out, size_t max)
{
    const char *d = device ? device : "cpu";
    /* an unknown kind gets the CPU's route: opening it says what is wrong */
    const struct gv_dev_kind *k = gv_dev_kind_of(d);
    if (!k)
        k = &gv_kind_cpu;
    size_t n = 0;
    for (; n < k->n_probe_routes && n < max; n++) {
        const struct gv_probe_route_def *r = &k->probe_routes[n];
        route(&out[n], r->name, d, r->blas, r->call, r->what, r->sums_on);
    }
    return n;
}

/* ---------- one route ---------- */

static int wanted(const struct gv_probe_prec *p, const char *dtype)
{
    if (!dtype || !*dtype)
        return 1;
    char full[40];
    snprintf(full, sizeof full, "%s.%s", p->op, p->name);
    return !strcmp(dtype, p->name) || !strcmp(dtype, full) || !strcmp(dtype, p->op);
}

static json_t *prec_json(const struct gv_backend *be, struct gv_device *dev, enum gv_call call,
                         const struct gv_probe_prec *p, const struct gv_probe_fit_ks *fit)
{
    json_t *o = json_object();
    json_object_set_new(o, "op", json_string(p->op));
    json_object_set_new(o, "precision", json_string(p->name));
    json_object_set_new(o, "in", json_string(gv_dtype_name(p->in)));
    json_object_set_new(o, "compute", json_string(gv_dtype_name(p->compute)));
    json_object_set_new(o, "out", json_string(gv_dtype_name(p->out)));
    json_object_set_new(o, "what", json_string(p->what));
    struct px x = {be, dev, call, p, json_array(), 0, 0, ""};
    struct gv_case c;
    px_case(&x, PX_DIM, PX_DIM, 32, &c);
    struct gv_err e = {0};
    json_t *props = json_object();
    int rc = be->supports(dev, &c, &e);
    if (!rc)
        rc = gv_probe_props(&x, props, &e);
    if (!rc)
        rc = gv_probe_fit(&x, props, fit, &e);
    const char *status = !rc ? "probed" : rc == GV_E_UNSUPPORTED ? "unsupported" : "error";
    json_object_set_new(o, "status", json_string(status));
    if (rc)
        gv_json_set_str(o, "reason", e.msg[0] ? e.msg : gv_status_name(rc));
    json_object_set_new(o, "impl", x.impls);
    json_object_set_new(o, "calls", json_integer(x.calls));
    json_object_set_new(o, "seconds", json_real(x.seconds));
    json_object_set_new(o, "properties", props);
    return o;
}

json_t *gv_probe_device(const struct gv_backend *be, struct gv_device *dev, enum gv_call call,
                        const char *dtype, int sums, const struct gv_probe_fit_ks *fit)
{
    struct gv_probe_fit_ks grid;
    if (!fit) {
        gv_probe_fit_parse(NULL, &grid, NULL);
        fit = &grid;
    }
    json_t *a = json_array();
    for (size_t i = 0; i < N_PRECS; i++)
        if (wanted(&precs[i], dtype) && (sums || strcmp(precs[i].op, "sum")))
            json_array_append_new(a, prec_json(be, dev, call, &precs[i], fit));
    return a;
}

/* ---------- all routes ---------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* $GPUVET_BLAS as the route says, for as long as its device is open (the GPU
 * backends read it when they open, in their worker process too, and again
 * when a worker is replaced after a fault). */
static char *route_env_set(const struct gv_probe_route *r)
{
    const char *old = getenv("GPUVET_BLAS");
    char *keep = old ? strdup(old) : NULL;
    if (r->blas[0])
        setenv("GPUVET_BLAS", r->blas, 1);
    return keep;
}

static void route_env_restore(char *keep)
{
    if (keep)
        setenv("GPUVET_BLAS", keep, 1);
    else
        unsetenv("GPUVET_BLAS");
    free(keep);
}

static json_t *route_json(const struct gv_probe_route *r, const char *dtype,
                          const struct gv_probe_fit_ks *fit, json_t **desc,
                          int *usage, struct gv_err *uerr)
{
    json_t *o = json_object();
    json_object_set_new(o, "route", json_string(r->name));
    json_object_set_new(o, "device", json_string(r->device));
    json_object_set_new(o, "blas", r->blas[0] ? json_string(r->blas) : json_null());
    json_object_set_new(o, "call", json_string(gv_call_name(r->call)));
    json_object_set_new(o, "what", json_string(r->what));
    if (r->sums_on[0])
        json_object_set_new(o, "sums_on", json_string(r->sums_on));
    const struct gv_backend *be = NULL;
    struct gv_device *dev = NULL;
    struct gv_err e = {0};
    double t0 = now_s();
    char *keep = route_env_set(r);
    char note[256];
    if (gv_device_open(r->device, &be, &dev, note, sizeof note, &e)) {
        route_env_restore(keep);
        if (e.code == GV_E_USAGE) {
            *usage = 1;
            *uerr = e;
        }
        json_object_set_new(o, "status", json_string("unavailable"));
        gv_json_set_str(o, "reason", e.msg);
        json_object_set_new(o, "precisions", json_array());
        return o;
    }
    json_t *d = be->describe(dev);
    if (!*desc)
        *desc = json_incref(d);
    json_t *gemm = json_object_get(d, "gemm");
    if (gemm)
        json_object_set(o, "gemm", gemm);
    json_decref(d);
    json_object_set_new(o, "status", json_string("probed"));
    json_object_set_new(o, "precisions",
                        gv_probe_device(be, dev, r->call, dtype, !r->sums_on[0], fit));
    be->close(dev);
    route_env_restore(keep);
    json_object_set_new(o, "seconds", json_real(now_s() - t0));
    return o;
}

int gv_probe_run(const struct gv_probe_opts *o, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    struct gv_probe_route r[8];
    size_t n = gv_probe_routes(o->device, r, 8), used = 0;
    if (o->dtype && *o->dtype) {
        int any = 0;
        for (size_t i = 0; i < N_PRECS; i++)
            any |= wanted(&precs[i], o->dtype);
        if (!any)
            return gv_err_set(err, GV_E_USAGE, "--dtype %s: no such precision (f64, f32, tf32, "
                              "f16, f16.out16, f16acc16, bf16, bf16.out16, f8e4m3, f8e5m2, "
                              "gemm, sum, sum.f32, sum.f64)", o->dtype);
    }
    struct gv_probe_fit_ks fit;
    int frc = gv_probe_fit_parse(o->fit_k, &fit, err);
    if (frc)
        return frc;
    json_t *routes = json_array(), *desc = NULL;
    double t0 = now_s();
    int usage = 0;
    struct gv_err uerr = {0};
    for (size_t i = 0; i < n && !usage; i++) {
        if (o->route && strcmp(o->route, r[i].name))
            continue;
        used++;
        json_array_append_new(routes, route_json(&r[i], o->dtype, &fit, &desc, &usage, &uerr));
    }
    if (usage || !used) {
        json_decref(routes);
        json_decref(desc);
        if (usage) {
            *err = uerr;
            return uerr.code;
        }
        char names[256] = "";
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            k += (size_t)snprintf(names + k, k < sizeof names ? sizeof names - k : 0, "%s%s",
                                  i ? ", " : "", r[i].name);
        return gv_err_set(err, GV_E_USAGE, "--route %s: %s offers %s", o->route,
                          o->device ? o->device : "cpu", names);
    }
    json_t *d = json_object();
    json_object_set_new(d, "schema", json_string(GV_PROBE_SCHEMA));
    json_object_set_new(d, "schema_version", json_integer(GV_PROBE_SCHEMA_VERSION));
    gv_json_set_utc_now(d, "created");
    json_object_set_new(d, "device_spec", json_string(o->device ? o->device : "cpu"));
    json_object_set_new(d, "device", desc ? desc : json_null());
    json_object_set_new(d, "seconds", json_real(now_s() - t0));
    json_object_set_new(d, "routes", routes);
    *doc = d;
    return GV_OK;
}
