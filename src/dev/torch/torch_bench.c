/* gpuvet bench through the user's PyTorch (--device torch:cuda:N, torch:cpu):
 * GEMMs only, torch.mm(a, w.t()) and torch._scaled_mm, timed and checked by
 * the worker (python/gpuvet_bench.py) with the method of gpuvet's own routes.
 * Memory, copies, launches and peers are the device's own and measured with
 * --device cuda:N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/bench_dev.h"
#include "dev/gpu.h"
#include "dev/torch/torch.h"

#define REPLY_MAX (1u << 20)

struct gv_bdev {
    struct gv_device *t;
    int next_key;
    int gpu;
};

struct gv_bw {
    struct gv_bw_spec s;
    int key;
};

static int t_open(const char *spec, struct gv_bdev **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_bdev *b = calloc(1, sizeof *b);
    if (!b)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    int rc = gv_backend_torch.open(spec, &b->t, err);
    if (rc) {
        free(b);
        return rc;
    }
    b->gpu = spec && strncmp(spec, "cpu", 3) != 0;
    *out = b;
    return GV_OK;
}

static void t_close(struct gv_bdev *b)
{
    if (!b)
        return;
    gv_backend_torch.close(b->t);
    free(b);
}

static json_t *t_describe(struct gv_bdev *b)
{
    json_t *o = gv_backend_torch.describe(b->t);
    json_object_set_new(o, "torch_device", json_string(b->gpu ? "cuda" : "cpu"));
    json_object_set_new(o, "bench_timer",
                        json_string(b->gpu ? "CUDA events through torch.cuda.Event, behind "
                                             "torch.cuda._sleep while the work is enqueued"
                                           : "time.perf_counter around the repetitions"));
    return o;
}

static json_t *t_conditions(struct gv_bdev *b)
{
    (void)b;
    return json_pack("{s:s}", "not_collected", "through PyTorch: run bench --device cuda:N for "
                     "clocks, power and temperature");
}

/* One request to the worker and its reply; *doc gets the reply's header (owned). */
static int ask(struct gv_bdev *b, json_t *req, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    int rc = gv_torch_request(b->t, req, NULL, 0, err);
    json_decref(req);
    if (rc)
        return rc;
    struct gv_torch_reply r = {0};
    void *payload = NULL;
    size_t len = 0;
    double timeout = gv_gpu_case_timeout() * 4;
    rc = gv_torch_reply_next(b->t, (int)(timeout * 1000), REPLY_MAX, &payload, &len, &r, err);
    free(payload);
    if (rc)
        return rc;
    if (!r.ok) {
        rc = gv_err_set(err, strcmp(r.status, "unsupported") == 0 ? GV_E_UNSUPPORTED
                             : strcmp(r.status, "oom") == 0       ? GV_E_NOMEM
                                                                  : GV_E_DEVICE,
                        "%s", r.error);
        gv_torch_reply_free(&r);
        return rc;
    }
    *doc = json_incref(r.doc);
    gv_torch_reply_free(&r);
    return GV_OK;
}

static json_t *request(const char *action, int key)
{
    return json_pack("{s:s,s:s,s:i}", "op", "bench_gemm", "action", action, "key", key);
}

static void t_release(struct gv_bdev *b, struct gv_bw *w)
{
    if (!w)
        return;
    json_t *doc = NULL;
    struct gv_err e = {0};
    if (ask(b, request("release", w->key), &doc, &e) == GV_OK)
        json_decref(doc);
    free(w);
}

static int t_prepare(struct gv_bdev *b, const struct gv_bw_spec *s, struct gv_bw **out,
                     char *impl, size_t implsz, struct gv_err *err)
{
    *out = NULL;
    if (s->kind != GV_BW_GEMM)
        return gv_err_set(err, GV_E_UNSUPPORTED, "through PyTorch only GEMMs are measured; the "
                          "rest with --device cuda:N");
    if (strcmp(s->route, "torch_mm") != 0)
        return gv_err_set(err, GV_E_UNSUPPORTED, "route %s is not PyTorch's", s->route);
    struct gv_bw *w = calloc(1, sizeof *w);
    if (!w)
        return gv_err_set(err, GV_E_NOMEM, "bench: out of memory");
    w->s = *s;
    w->key = ++b->next_key;
    json_t *req = request("prepare", w->key);
    json_object_set_new(req, "dtype", json_string(gv_dtype_name(s->dtype)));
    json_object_set_new(req, "m", json_integer(s->m));
    json_object_set_new(req, "n", json_integer(s->n));
    json_object_set_new(req, "k", json_integer(s->k));
    json_object_set_new(req, "rotate_bytes", json_real(s->rotate_bytes));
    json_t *doc = NULL;
    int rc = ask(b, req, &doc, err);
    if (rc) {
        free(w);
        return rc;
    }
    snprintf(impl, implsz, "%s", json_string_value(json_object_get(doc, "impl")) ?: "torch_mm");
    json_decref(doc);
    *out = w;
    return GV_OK;
}

static int t_time(struct gv_bdev *b, struct gv_bw *w, int iters, double *sec, struct gv_err *err)
{
    json_t *req = request("time", w->key), *doc = NULL;
    json_object_set_new(req, "iters", json_integer(iters));
    int rc = ask(b, req, &doc, err);
    if (rc)
        return rc;
    json_t *s = json_object_get(doc, "seconds");
    *sec = json_is_number(s) ? json_number_value(s) : -1;
    json_decref(doc);
    if (!(*sec > 0))
        return gv_err_set(err, GV_E_FORMAT, "the PyTorch worker's time reply has no positive "
                          "seconds");
    return GV_OK;
}

static int t_check(struct gv_bdev *b, struct gv_bw *w, int *ok, char *what, size_t whatsz,
                   struct gv_err *err)
{
    json_t *doc = NULL, *req = request("check", w->key);
    const char *corrupt = getenv("GPUVET_TEST_BENCH_CORRUPT");
    if (corrupt && strcmp(corrupt, "1") == 0) /* tests: the worker spoils one element first */
        json_object_set_new(req, "corrupt", json_true());
    int rc = ask(b, req, &doc, err);
    if (rc)
        return rc;
    *ok = json_is_true(json_object_get(doc, "good"));
    snprintf(what, whatsz, "%s", json_string_value(json_object_get(doc, "what")) ?: "");
    json_decref(doc);
    return GV_OK;
}

static int t_count(struct gv_bdev *b)
{
    (void)b;
    return 0;
}

static int t_peer_access(struct gv_bdev *b, int s, int d, char *why, size_t whysz)
{
    (void)b, (void)s, (void)d;
    snprintf(why, whysz, "not measured through PyTorch");
    return -1;
}

static int t_pci_address(struct gv_bdev *b, int i, char *buf, size_t bufsz)
{
    (void)b, (void)i, (void)buf, (void)bufsz;
    return -1;
}

const struct gv_bench_backend gv_bench_torch = {
    "torch", t_open, t_close, t_describe, t_conditions, t_prepare, t_time, t_check, t_release,
    t_count, t_peer_access, t_pci_address, NULL,
};
