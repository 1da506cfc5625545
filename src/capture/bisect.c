/* gv_capture_bisect: which operation changed (see capture.h, docs/capture.md).
 *
 * Each op of capture A is replayed in the other environment on A's recorded
 * inputs, so that its result there cannot have inherited anything; the same op
 * in float64 on the CPU referees both. An op whose result is less accurate there
 * is a culprit. The model's own run there (capture B) shows what only inherited
 * the difference, and the calls that changed above ATen: the first op whose
 * inputs are A's but whose operator or arguments are not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/sha256.h"
#include "base/utf8.h"
#include "capture/capture.h"
#include "capture/judge.h"
#include "dev/torch/torch.h"
#include "num/fp.h"

#define REPLAY_TIMEOUT_MS (600 * 1000)
#define MAX_REPLY ((size_t)64 << 30)

enum verdict { V_IDENTICAL, V_EQUAL, V_WORSE, V_BETTER, V_DIFFERENT, V_SKIPPED, V_FAILED, V_CLEARED };
#define N_VERDICTS 8
static const char *const verdict_names[N_VERDICTS] = {
    "identical",     "equally_accurate", "less_accurate", "more_accurate",
    "different",     "not_replayed",     "replay_failed", "cleared_with_module"};

static const char *str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_string(isnan(v) ? "nan" : "inf");
}

/* The inputs of op (args and kwargs), read from A, as request specs and parts. */
struct inputs {
    json_t *specs;
    struct gv_torch_part *parts;
    void **bufs;
    size_t n;
};

static void inputs_free(struct inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->bufs[i]);
    free(in->bufs);
    free(in->parts);
    json_decref(in->specs);
    memset(in, 0, sizeof *in);
}

/* A's recorded values of the tensors ids, as request specs and parts. */
static int read_tensors(const struct gv_cap *a, const json_t *ids, struct inputs *in, char *why,
                        size_t whysz)
{
    memset(in, 0, sizeof *in);
    size_t n = json_array_size(ids);
    in->specs = json_array();
    in->parts = calloc(n ? n : 1, sizeof *in->parts);
    in->bufs = calloc(n ? n : 1, sizeof *in->bufs);
    int rc = in->parts && in->bufs ? GV_OK : GV_E_NOMEM;
    json_t *seen = json_object();
    for (size_t i = 0; i < n && !rc; i++) {
        int64_t id = json_integer_value(json_array_get(ids, i));
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)id);
        if (json_object_get(seen, key))
            continue; /* one tensor used twice travels once */
        json_object_set_new(seen, key, json_true());
        struct gv_err e = {0};
        size_t nb = 0;
        if ((rc = gv_cap_read(a, id, &in->bufs[in->n], &nb, &e))) {
            snprintf(why, whysz, "%s", e.msg);
            break;
        }
        const json_t *t = gv_cap_tensor(a, id);
        json_t *s = json_pack("{s:I, s:O, s:O, s:I}", "key", (json_int_t)id, "dtype",
                              json_object_get(t, "dtype"), "shape", json_object_get(t, "shape"),
                              "nbytes", (json_int_t)nb);
        if (json_object_get(t, "stride"))
            json_object_set(s, "stride", json_object_get(t, "stride"));
        json_object_set_new(s, "device", json_string(str(t, "device")[0] ? str(t, "device") : "cpu"));
        json_array_append_new(in->specs, s);
        in->parts[in->n] = (struct gv_torch_part){in->bufs[in->n], nb};
        in->n++;
    }
    json_decref(seen);
    return rc;
}

static int read_inputs(const struct gv_cap *a, const json_t *op, struct inputs *in, char *why,
                       size_t whysz)
{
    json_t *ids = gv_judge_input_ids(op);
    int rc = read_tensors(a, ids, in, why, whysz);
    json_decref(ids);
    return rc;
}

/* Classifies B's output of one slot against A's, with the referee when there is one. */
static enum verdict judge_slot(const char *dtype, const void *xa, const void *xb, size_t nbytes,
                               const json_t *ref, size_t rbytes, const void *rdata, json_t *e)
{
    struct gv_tdiff d;
    gv_judge_bytes(dtype, xa, xb, nbytes, &d);
    json_object_set_new(e, "dtype", json_string(dtype));
    json_object_set_new(e, "differing", json_integer((json_int_t)d.ndiff));
    json_object_set_new(e, "units_apart", num(d.units));
    if (d.status == GV_JUDGE_IDENTICAL)
        return V_IDENTICAL;
    int fmt;
    gv_cap_dtype_size(dtype, &fmt);
    size_t count = d.count;
    if (!ref || fmt < 0 || strcmp(str(ref, "dtype"), "float64") != 0 ||
        rbytes != count * sizeof(double))
        return V_DIFFERENT; /* no float64 referee: different, accuracy unknown */
    double *truth = malloc(rbytes ? rbytes : 1); /* aligned: the reply packs outputs */
    if (!truth)
        return V_DIFFERENT;
    memcpy(truth, rdata, rbytes);
    double ea = gv_judge_error(dtype, xa, truth, count);
    double eb = gv_judge_error(dtype, xb, truth, count);
    free(truth);
    double u = gv_fp_unit_roundoff((enum gv_dtype)fmt);
    json_object_set_new(e, "error_a", num(ea));
    json_object_set_new(e, "error_b", num(eb));
    json_object_set_new(e, "error_a_units", num(ea / u));
    json_object_set_new(e, "error_b_units", num(eb / u));
    if (eb > 2 * ea && eb > ea + 2 * u)
        return V_WORSE;
    if (ea > 2 * eb && ea > eb + 2 * u)
        return V_BETTER;
    return V_EQUAL;
}

static enum verdict worse_of(enum verdict a, enum verdict b)
{
    /* identical < cleared < equal < better < different < worse < skipped < failed */
    static const int rank[N_VERDICTS] = {0, 2, 5, 3, 4, 6, 7, 1};
    return rank[b] > rank[a] ? b : a;
}

/* One request to a worker and its reply; rc, with why in err. */
static int ask(struct gv_device *dev, json_t *req, const struct inputs *in,
               struct gv_torch_reply *r, void **data, size_t *len, struct gv_err *err)
{
    int rc = gv_torch_request(dev, req, in->parts, (int)in->n, err);
    if (!rc)
        rc = gv_torch_reply_next(dev, REPLAY_TIMEOUT_MS, MAX_REPLY, data, len, r, err);
    return rc;
}

/* The referee's float64 values of a request's outputs: their specs ("dtype",
 * "nbytes") and bytes; specs NULL when there are none to trust. */
struct refvals {
    const json_t *specs;
    const char *data;
    size_t len;
    struct gv_torch_reply r;
    void *buf;
};

static void refvals_free(struct refvals *v)
{
    gv_torch_reply_free(&v->r);
    free(v->buf);
}

/* The same request, "mode": "referee", to the referee's own worker (NULL: none
 * to trust): its n outputs into v, or why not into e ("referee"). */
static void ask_referee(struct gv_device *ref, json_t *req, const struct inputs *in, size_t n,
                        struct refvals *v, json_t *e)
{
    memset(v, 0, sizeof *v);
    if (!ref) {
        json_object_set_new(e, "referee", json_string("no trustworthy referee (see the "
                                                      "report's \"referee\")"));
        return;
    }
    json_t *rq = json_deep_copy(req);
    json_object_set_new(rq, "mode", json_string("referee"));
    struct gv_err err = {0};
    int rc = ask(ref, rq, in, &v->r, &v->buf, &v->len, &err);
    json_decref(rq);
    const json_t *specs = rc ? NULL : json_object_get(v->r.doc, "outputs");
    size_t total = 0, k;
    json_t *s;
    json_array_foreach(specs, k, s) total += (size_t)json_integer_value(json_object_get(s, "nbytes"));
    if (rc || !v->r.ok)
        json_object_set_new(e, "referee", json_sprintf("no float64 referee: %s",
                                                       rc ? err.msg : v->r.error));
    else if (json_array_size(specs) != n || total != v->len)
        json_object_set_new(e, "referee", json_sprintf("no float64 referee: the float64 call "
                                                       "gave %zu outputs, %zu here",
                                                       json_array_size(specs), n));
    else {
        v->specs = specs;
        v->data = v->buf;
    }
}

/* Sends req (with in's tensors) to the worker of the environment judged, the
 * same to the referee, and judges the values the first returns against A's
 * tensors ids, one slot each, with the referee's, into e ("impl_b",
 * "referee", "outputs", "why"). */
static enum verdict ask_and_judge(const struct gv_cap *a, struct gv_device *dev,
                                  struct gv_device *ref, json_t *req, const struct inputs *in,
                                  const json_t *ids, json_t *e)
{
    struct gv_err err = {0};
    struct gv_torch_reply r = {0};
    void *data = NULL;
    size_t len = 0;
    int rc = ask(dev, req, in, &r, &data, &len, &err);
    if (rc || !r.ok) {
        enum verdict v = rc || strcmp(r.status, "unsupported") ? V_FAILED : V_SKIPPED;
        json_object_set_new(e, "why", json_string(rc ? err.msg : r.error));
        gv_torch_reply_free(&r);
        free(data);
        return v;
    }
    json_object_set_new(e, "impl_b", json_string(r.impl));
    const json_t *outs = json_object_get(r.doc, "outputs");
    struct refvals rv;
    ask_referee(ref, req, in, json_array_size(outs), &rv, e);
    json_t *slots = json_array();
    size_t off = 0, roff = 0;
    enum verdict v = V_IDENTICAL;
    if (json_array_size(outs) != json_array_size(ids)) {
        v = V_FAILED;
        json_object_set_new(e, "why", json_sprintf("the replay gave %zu outputs, A recorded %zu",
                                                   json_array_size(outs), json_array_size(ids)));
    }
    for (size_t k = 0; k < json_array_size(outs) && v != V_FAILED; k++) {
        const json_t *o = json_array_get(outs, k), *rs = json_array_get(rv.specs, k);
        size_t nb = (size_t)json_integer_value(json_object_get(o, "nbytes"));
        size_t rb = rs ? (size_t)json_integer_value(json_object_get(rs, "nbytes")) : 0;
        const char *rdata = rs ? rv.data + roff : NULL;
        int64_t id = json_integer_value(json_array_get(ids, k));
        json_t *se = json_pack("{s:I}", "a_tensor", (json_int_t)id);
        void *xa = NULL;
        size_t na = 0;
        struct gv_err re = {0};
        if (rs) { /* the referee's value, by digest: the same whatever the environment judged */
            char hex[65];
            gv_sha256_buf_hex(rdata, rb, hex);
            json_object_set_new(se, "referee_sha256", json_string(hex));
        }
        if (off + nb > len) {
            v = V_FAILED;
            json_object_set_new(e, "why", json_string("the replay's reply is shorter than it says"));
        } else if (gv_cap_read(a, id, &xa, &na, &re)) {
            v = worse_of(v, V_SKIPPED);
            json_object_set_new(se, "why", json_string(re.msg));
        } else if (na != nb || strcmp(str(o, "dtype"), str(gv_cap_tensor(a, id), "dtype"))) {
            v = worse_of(v, V_DIFFERENT);
            json_object_set_new(se, "why", json_sprintf("%s of %zu bytes here, %s of %zu in A",
                                                        str(o, "dtype"), nb,
                                                        str(gv_cap_tensor(a, id), "dtype"), na));
        } else {
            v = worse_of(v, judge_slot(str(o, "dtype"), xa, (const char *)data + off, nb, rs,
                                       rb, rdata, se));
        }
        free(xa);
        off += nb;
        roff += rb;
        json_array_append_new(slots, se);
    }
    json_object_set_new(e, "outputs", slots);
    refvals_free(&rv);
    gv_torch_reply_free(&r);
    free(data);
    return v;
}

static const char *const rng_why = "it draws random numbers: a replay cannot give the same result";

/* Whether op i of A names an operator (gv_cap_op_name_ok); if not, why into e:
 * "not an operator: not replayed", with the name escaped. Nothing that fails
 * this is ever sent to the worker. */
static int is_operator(const json_t *op, json_t *e)
{
    const char *name = json_string_value(json_object_get(op, "name"));
    if (gv_cap_op_name_ok(name))
        return 1;
    char esc[300];
    gv_escape(name, esc, sizeof esc);
    json_object_set_new(e, "why", json_sprintf("not an operator: not replayed ('%s' is not "
                                               "NAMESPACE.NAME.OVERLOAD)", esc));
    json_object_set_new(e, "not_an_operator", json_true());
    return 0;
}

/* One op replayed: its record in the report. */
static json_t *replay(const struct gv_cap *a, size_t i, struct gv_device *dev,
                      struct gv_device *ref, enum verdict *v)
{
    const json_t *op = json_array_get(a->ops, i);
    json_t *e = json_pack("{s:I, s:s, s:s}", "op", (json_int_t)i, "name", str(op, "name"),
                          "module", str(op, "module"));
    json_object_set(e, "devices_a", json_object_get(op, "devices"));
    *v = V_SKIPPED;
    if (!is_operator(op, e))
        return e;
    if (json_is_true(json_object_get(op, "rng"))) {
        json_object_set_new(e, "why", json_string(rng_why));
        return e;
    }
    char why[1024] = "";
    struct inputs in;
    if (read_inputs(a, op, &in, why, sizeof why)) {
        json_object_set_new(e, "why", json_string(why[0] ? why : "its inputs cannot be read"));
        inputs_free(&in);
        return e;
    }
    json_t *req = json_pack("{s:s, s:s, s:O, s:O?, s:O}", "op", "replay", "name", str(op, "name"),
                            "args", json_object_get(op, "args"), "kwargs",
                            json_object_get(op, "kwargs"), "tensors", in.specs);
    json_t *ids = gv_judge_tensor_ids(json_object_get(op, "outputs"));
    *v = ask_and_judge(a, dev, ref, req, &in, ids, e);
    json_decref(ids);
    json_decref(req);
    inputs_free(&in);
    return e;
}

/* ---------- bisection over module boundaries ---------- */

/* A walk over A's module tree: a module's stretch of ops is replayed as one
 * chain (each op fed what the ones before it computed here; A's values only
 * for what enters the stretch), judged at its boundary, and opened up into its
 * children only when its outputs are not identical or equally accurate. */
struct walk {
    const struct gv_cap *a;
    struct gv_device *dev;
    struct gv_device *ref; /* the referee's worker, NULL when none can be trusted */
    json_t **entry;        /* per op: its record, once decided */
    enum verdict *verdict; /* per op */
    long *last_read;       /* per tensor: the last op that reads it, -1 if none */
    char *is_output;       /* per tensor: one of the model's outputs */
    size_t ntensors;
    json_t *spans;
    size_t replays;
};

/* The first depth+1 components of a module path ("layer1.0" of "layer1.0.conv1"
 * at depth 1), or "" when it has no more than depth components. */
static void child_of(const char *module, int depth, char *out, size_t outsz)
{
    const char *p = module;
    out[0] = '\0';
    if (!*p)
        return;
    for (int d = 0; d < depth; d++) {
        p = strchr(p, '.');
        if (!p)
            return;
        p++;
    }
    const char *end = strchr(p, '.');
    size_t n = end ? (size_t)(end - module) : strlen(module);
    snprintf(out, outsz, "%.*s", (int)n, module);
}

static int walk_init(struct walk *w, const struct gv_cap *a, struct gv_device *dev)
{
    memset(w, 0, sizeof *w);
    size_t n = json_array_size(a->ops), nt = json_array_size(a->tensors);
    w->a = a;
    w->dev = dev;
    w->ntensors = nt;
    w->entry = calloc(n ? n : 1, sizeof *w->entry);
    w->verdict = calloc(n ? n : 1, sizeof *w->verdict);
    w->last_read = malloc((nt ? nt : 1) * sizeof *w->last_read);
    w->is_output = calloc(nt ? nt : 1, 1);
    w->spans = json_array();
    if (!w->entry || !w->verdict || !w->last_read || !w->is_output)
        return GV_E_NOMEM;
    for (size_t t = 0; t < nt; t++)
        w->last_read[t] = -1;
    for (size_t i = 0; i < n; i++) {
        json_t *ids = gv_judge_input_ids(json_array_get(a->ops, i));
        for (size_t k = 0; k < json_array_size(ids); k++) {
            json_int_t id = json_integer_value(json_array_get(ids, k));
            if (id >= 0 && (size_t)id < nt)
                w->last_read[id] = (long)i;
        }
        json_decref(ids);
    }
    json_t *outs = gv_judge_tensor_ids(json_object_get(a->header, "outputs"));
    for (size_t k = 0; k < json_array_size(outs); k++) {
        json_int_t id = json_integer_value(json_array_get(outs, k));
        if (id >= 0 && (size_t)id < nt)
            w->is_output[id] = 1;
    }
    json_decref(outs);
    return GV_OK;
}

static void walk_free(struct walk *w)
{
    gv_torch_referee_close(w->ref);
    w->ref = NULL;
    free(w->entry);
    free(w->verdict);
    free(w->last_read);
    free(w->is_output);
    json_decref(w->spans);
}

/* What a stretch needs and gives: the tensors entering it from outside (A's
 * values), the ones it computes that are read after it or are model outputs,
 * and its calls. NULL when it cannot be chained, with why. */
static const char *plan_span(const struct walk *w, size_t s, size_t e, json_t *ext, json_t *want,
                             json_t *calls)
{
    const struct gv_cap *a = w->a;
    char *made = calloc(w->ntensors ? w->ntensors : 1, 2);
    if (!made)
        return "out of memory";
    char *entering = made + w->ntensors;
    const char *why = NULL;
    json_int_t first_made = -1;
    for (size_t i = s; i < e && !why; i++) {
        const json_t *op = json_array_get(a->ops, i);
        if (!gv_cap_op_name_ok(json_string_value(json_object_get(op, "name")))) {
            why = "it holds an op that is not an operator";
            break;
        }
        if (json_is_true(json_object_get(op, "rng"))) {
            why = rng_why;
            break;
        }
        json_t *in = gv_judge_input_ids(op);
        for (size_t k = 0; k < json_array_size(in) && !why; k++) {
            json_int_t id = json_integer_value(json_array_get(in, k));
            if (id < 0 || (size_t)id >= w->ntensors)
                why = "an op reads a tensor the capture does not have";
            else if (!made[id] && !entering[id]) {
                /* a value recorded apart from the op that wrote it (a write through a
                 * view): the chain would take A's value instead of its own */
                if (first_made >= 0 && id > first_made &&
                    !strcmp(str(gv_cap_tensor(a, id), "role"), "leaf"))
                    why = "it reads a value written through a view inside it, which the "
                          "capture recorded apart from the op that wrote it";
                entering[id] = 1;
                json_array_append_new(ext, json_integer(id));
            }
        }
        json_decref(in);
        json_t *both = json_pack("[O?, O?]", json_object_get(op, "outputs"),
                                 json_object_get(op, "mutated"));
        json_t *out = gv_judge_tensor_ids(both);
        for (size_t k = 0; k < json_array_size(out); k++) {
            json_int_t id = json_integer_value(json_array_get(out, k));
            if (id >= 0 && (size_t)id < w->ntensors) {
                made[id] = 1;
                if (first_made < 0 || id < first_made)
                    first_made = id;
            }
        }
        json_decref(out);
        json_decref(both);
        json_t *c = json_pack("{s:s, s:O?, s:O?, s:O?, s:O?}", "name", str(op, "name"), "args",
                              json_object_get(op, "args"), "kwargs", json_object_get(op, "kwargs"),
                              "outputs", json_object_get(op, "outputs"), "mutated",
                              json_object_get(op, "mutated"));
        json_array_append_new(calls, c);
    }
    for (size_t t = 0; t < w->ntensors && !why; t++)
        if (made[t] && (w->last_read[t] >= (long)e || w->is_output[t]))
            json_array_append_new(want, json_integer((json_int_t)t));
    if (!why && !json_array_size(want))
        why = "nothing it computes is read after it";
    free(made);
    return why;
}

/* The stretch [s, e) of module replayed as one chain: its entry in "spans". */
static enum verdict replay_span(struct walk *w, size_t s, size_t e, const char *module)
{
    json_t *span = json_pack("{s:s, s:I, s:I}", "module", module, "first_op", (json_int_t)s,
                             "last_op", (json_int_t)(e - 1));
    json_t *ext = json_array(), *want = json_array(), *calls = json_array();
    const char *why = plan_span(w, s, e, ext, want, calls);
    enum verdict v = V_SKIPPED;
    char buf[1024] = "";
    struct inputs in = {0};
    if (!why && read_tensors(w->a, ext, &in, buf, sizeof buf))
        why = buf[0] ? buf : "its inputs cannot be read";
    if (why) {
        json_object_set_new(span, "why", json_string(why));
    } else {
        json_t *req = json_pack("{s:s, s:O, s:O, s:O}", "op", "replay_span", "ops", calls,
                                "tensors", in.specs, "want", want);
        v = ask_and_judge(w->a, w->dev, w->ref, req, &in, want, span);
        json_decref(req);
        w->replays++;
    }
    inputs_free(&in);
    json_object_set_new(span, "verdict", json_string(verdict_names[v]));
    json_array_append_new(w->spans, span);
    json_decref(ext);
    json_decref(want);
    json_decref(calls);
    return v;
}

static void decide_op(struct walk *w, size_t i)
{
    w->entry[i] = replay(w->a, i, w->dev, w->ref, &w->verdict[i]);
    w->replays++;
}

static void clear_ops(struct walk *w, size_t s, size_t e, const char *module, enum verdict v)
{
    for (size_t i = s; i < e; i++) {
        const json_t *op = json_array_get(w->a->ops, i);
        json_t *en = json_pack("{s:I, s:s, s:s, s:s, s:s}", "op", (json_int_t)i, "name",
                               str(op, "name"), "module", str(op, "module"), "cleared_with",
                               module, "module_verdict", verdict_names[v]);
        json_object_set(en, "devices_a", json_object_get(op, "devices"));
        w->entry[i] = en;
        w->verdict[i] = V_CLEARED;
    }
}

/* The ops [s, e), all inside the module at depth-1 (the whole model at 0). */
static void walk_range(struct walk *w, size_t s, size_t e, int depth)
{
    size_t i = s;
    while (i < e) {
        char key[512], k2[512];
        child_of(str(json_array_get(w->a->ops, i), "module"), depth, key, sizeof key);
        size_t j = i + 1;
        while (j < e) {
            child_of(str(json_array_get(w->a->ops, j), "module"), depth, k2, sizeof k2);
            if (strcmp(k2, key) != 0)
                break;
            j++;
        }
        if (!key[0] || j - i == 1) {
            for (size_t k = i; k < j; k++)
                decide_op(w, k); /* ops of this module itself, or a child of one op */
        } else {
            enum verdict v = replay_span(w, i, j, key);
            if (v == V_IDENTICAL || v == V_EQUAL || v == V_BETTER)
                clear_ops(w, i, j, key, v);
            else
                walk_range(w, i, j, depth + 1);
        }
        i = j;
    }
}

/* ---------- the model's own run in B ---------- */

/* Digests of an op's input tensors, joined. */
static char *input_key(const struct gv_cap *c, const json_t *op)
{
    json_t *ids = gv_judge_input_ids(op);
    size_t n = json_array_size(ids);
    char *k = malloc(n * 65 + 1);
    if (k) {
        k[0] = '\0';
        for (size_t i = 0; i < n; i++)
            strcat(k, str(gv_cap_tensor(c, json_integer_value(json_array_get(ids, i))), "sha256"));
    }
    json_decref(ids);
    return k;
}

/* The call without its tensors: the operator and every other argument. */
static char *call_text(const json_t *op)
{
    json_t *c = json_pack("{s:O, s:O, s:O}", "name", json_object_get(op, "name"), "args",
                          json_object_get(op, "args") ? json_object_get(op, "args") : json_null(),
                          "kwargs", json_object_get(op, "kwargs") ? json_object_get(op, "kwargs")
                                                                   : json_null());
    char *s = gv_json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(c);
    /* tensor references differ between captures: each {"$t":N} becomes T */
    if (s) {
        char *w = s;
        for (const char *r = s; *r;) {
            if (!strncmp(r, "{\"$t\":", 6) && strchr(r, '}')) {
                *w++ = 'T';
                r = strchr(r, '}') + 1;
            } else {
                *w++ = *r++;
            }
        }
        *w = '\0';
    }
    return s;
}

static json_t *call_change(const struct gv_cap *a, size_t i, const struct gv_cap *b, size_t j)
{
    const json_t *oa = json_array_get(a->ops, i), *ob = json_array_get(b->ops, j);
    char *ka = input_key(a, oa), *kb = input_key(b, ob), *ca = call_text(oa), *cb = call_text(ob);
    json_t *e = NULL;
    if (ka && kb && ca && cb && !strcmp(ka, kb) && strcmp(ca, cb) != 0)
        e = json_pack("{s:I, s:I, s:s, s:s, s:s, s:s}", "op_a", (json_int_t)i, "op_b",
                      (json_int_t)j, "name", str(ob, "name"), "module", str(ob, "module"), "call_a",
                      ca, "call_b", cb);
    free(ka);
    free(kb);
    free(ca);
    free(cb);
    return e;
}

/* In B's own run, the ops whose inputs are A's but whose call is not: among
 * ops aligned with A's (same operator, module and shapes: another argument),
 * and where the sequences part (another operator on the same inputs). */
static json_t *call_changes(const struct gv_cap *a, const struct gv_cap *b)
{
    json_t *out = json_array();
    size_t na = json_array_size(a->ops), nb = json_array_size(b->ops);
    long *m = gv_capture_align(a, b);
    if (!m)
        return out;
    size_t next_b = 0; /* the first op of b after the last aligned pair */
    for (size_t i = 0; i < na; i++) {
        json_t *e = NULL;
        if (m[i] >= 0) {
            e = call_change(a, i, b, (size_t)m[i]);
            next_b = (size_t)m[i] + 1;
        } else if (next_b < nb && (i == 0 || m[i - 1] >= 0)) {
            /* the start of a stretch of A's ops that B does not have: what did B do instead? */
            size_t end = nb;
            for (size_t k = i + 1; k < na; k++)
                if (m[k] >= 0) {
                    end = (size_t)m[k];
                    break;
                }
            if (next_b < end)
                e = call_change(a, i, b, next_b);
        }
        if (e)
            json_array_append_new(out, e);
    }
    free(m);
    return out;
}

/* The environment judged, as its worker describes itself now (its
 * floating-point mode included); NULL when it cannot say. */
static json_t *describe_here(struct gv_device *dev)
{
    json_t *req = json_pack("{s:s}", "op", "describe");
    struct inputs none = {0};
    struct gv_torch_reply r = {0};
    struct gv_err err = {0};
    void *data = NULL;
    size_t len = 0;
    json_t *d = NULL;
    if (!ask(dev, req, &none, &r, &data, &len, &err) && r.ok && json_is_object(r.describe))
        d = json_incref(r.describe);
    gv_torch_reply_free(&r);
    free(data);
    json_decref(req);
    return d;
}

/* The referee's facts in d: "referee", and "cannot_judge" when it is not
 * trusted (no op is then judged more or less accurate). */
static void note_referee(json_t *d, json_t *facts)
{
    if (!json_is_true(json_object_get(facts, "trusted")))
        json_object_set_new(d, "cannot_judge", json_sprintf("no trustworthy referee: %s",
                                                            str(facts, "why")));
    json_object_set_new(d, "referee", facts);
}

int gv_capture_bisect(const struct gv_cap *a, const struct gv_cap *b, struct gv_device *dev,
                      int by_module, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    size_t n = json_array_size(a->ops);
    if (by_module < 0)
        by_module = n > GV_CAP_BISECT_MODULES_ABOVE;
    struct walk w;
    json_t *facts = NULL;
    int own = gv_judge_fp_default(); /* before anything is judged here */
    if (walk_init(&w, a, dev) || gv_torch_referee_open(dev, &w.ref, &facts, err)) {
        walk_free(&w);
        json_decref(facts);
        return gv_err_set(err, GV_E_NOMEM, "bisect: out of memory for %zu ops", n);
    }
    if (!own && w.ref) {
        gv_torch_referee_close(w.ref);
        w.ref = NULL;
        json_object_set_new(facts, "trusted", json_false());
        json_object_set_new(facts, "why", json_string("gpuvet itself computes with subnormals "
                                                      "flushed to zero, and cannot reset it"));
    }
    if (by_module)
        walk_range(&w, 0, n, 0);
    else
        for (size_t i = 0; i < n; i++)
            decide_op(&w, i);
    json_t *ops = json_array(), *culprits = json_array();
    size_t count[N_VERDICTS] = {0};
    for (size_t i = 0; i < n; i++) {
        enum verdict v = w.verdict[i];
        json_t *e = w.entry[i];
        json_object_set_new(e, "verdict", json_string(verdict_names[v]));
        count[v]++;
        if (v == V_WORSE)
            json_array_append(culprits, e);
        json_array_append_new(ops, e);
    }
    json_t *d = json_object();
    json_object_set_new(d, "schema", json_string("gpuvet.bisect"));
    json_object_set_new(d, "schema_version", json_integer(1));
    json_object_set_new(d, "capture", json_string(a->path));
    json_object_set(d, "model", json_object_get(a->header, "model"));
    json_object_set(d, "device_a", json_object_get(a->header, "device"));
    json_t *s = json_object();
    for (int k = 0; k < N_VERDICTS; k++)
        json_object_set_new(s, verdict_names[k], json_integer((json_int_t)count[k]));
    json_object_set_new(d, "summary", s);
    json_object_set_new(d, "strategy", json_string(by_module ? "modules" : "ops"));
    note_referee(d, facts);
    json_t *here = describe_here(dev);
    json_object_set_new(d, "causes", gv_judge_env_causes(json_object_get(a->header, "device"),
                                                         here));
    json_decref(here);
    json_object_set_new(d, "replays", json_integer((json_int_t)w.replays));
    if (by_module)
        json_object_set(d, "spans", w.spans);
    walk_free(&w);
    json_object_set_new(d, "culprits", culprits);
    if (b) {
        json_t *calls = call_changes(a, b);
        json_object_set_new(d, "call_changes", calls);
        struct gv_judge_outputs fo;
        if (!gv_judge_outputs(a, json_object_get(a->header, "outputs"), b,
                              json_object_get(b->header, "outputs"), &fo, err)) {
            json_object_set_new(d, "outputs_status", json_string(gv_judge_status_name(fo.worst)));
            json_object_set_new(d, "outputs_units", num(fo.units));
            json_object_set_new(d, "outputs", fo.list);
        }
        /* ops that differ in B's own run but not on their own: inherited */
        json_t *inherited = json_array();
        json_t *cmp = NULL;
        struct gv_err ce = {0};
        if (!gv_capture_compare(a, b, &cmp, &ce)) {
            size_t i;
            json_t *e;
            json_array_foreach(json_object_get(cmp, "ops"), i, e) {
                if (!strcmp(str(e, "status"), "identical"))
                    continue;
                json_int_t ia = json_integer_value(json_object_get(e, "a"));
                const json_t *r = json_array_get(ops, (size_t)ia);
                const char *v = str(r, "verdict");
                int changed = 0; /* a call that changed is the cause, not an heir */
                size_t k;
                json_t *cc;
                json_array_foreach(calls, k, cc) changed |= json_integer_value(json_object_get(cc, "op_a")) == ia;
                if (!changed && (!strcmp(v, "identical") || !strcmp(v, "equally_accurate")))
                    json_array_append_new(inherited, json_pack("{s:O, s:s, s:s, s:O}", "op",
                                                               json_object_get(e, "a"), "name",
                                                               str(e, "name"), "module",
                                                               str(e, "module"), "units",
                                                               json_object_get(e, "units")));
            }
            json_object_set(d, "model_run", json_object_get(cmp, "summary"));
            json_decref(cmp);
        } else {
            json_object_set_new(d, "model_run_note", json_string(ce.msg));
        }
        json_object_set_new(d, "inherited", inherited);
    }
    json_object_set_new(d, "ops", ops);
    size_t ncalls = json_array_size(json_object_get(d, "call_changes"));
    json_object_set_new(d, "flagged", json_boolean(count[V_WORSE] || ncalls));
    *doc = d;
    return GV_OK;
}
