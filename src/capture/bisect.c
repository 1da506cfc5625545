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
#include "capture/capture.h"
#include "capture/judge.h"
#include "dev/torch.h"
#include "num/fp.h"

#define REPLAY_TIMEOUT_MS (600 * 1000)
#define MAX_REPLY ((size_t)64 << 30)

enum verdict { V_IDENTICAL, V_EQUAL, V_WORSE, V_BETTER, V_DIFFERENT, V_SKIPPED, V_FAILED };
static const char *const verdict_names[] = {"identical",       "equally_accurate", "less_accurate",
                                            "more_accurate",   "different",        "not_replayed",
                                            "replay_failed"};

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

static int read_inputs(const struct gv_cap *a, const json_t *op, struct inputs *in, char *why,
                       size_t whysz)
{
    memset(in, 0, sizeof *in);
    json_t *ids = gv_judge_input_ids(op);
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
    json_decref(ids);
    return rc;
}

/* Classifies B's output of one slot against A's, with the referee when there is one. */
static enum verdict judge_slot(const char *dtype, const void *xa, const void *xb, size_t nbytes,
                               const json_t *ref, const void *rdata, json_t *e)
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
    if (!ref || fmt < 0 || strcmp(str(ref, "dtype"), "float64") != 0)
        return V_DIFFERENT; /* no float64 referee: different, accuracy unknown */
    size_t count = d.count;
    double ea = gv_judge_error(dtype, xa, rdata, count);
    double eb = gv_judge_error(dtype, xb, rdata, count);
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
    static const int rank[] = {0, 1, 4, 2, 3, 5, 6}; /* identical < equal < better < different < worse */
    return rank[b] > rank[a] ? b : a;
}

/* One op replayed: its record in the report. */
static json_t *replay(const struct gv_cap *a, size_t i, struct gv_device *dev, enum verdict *v)
{
    const json_t *op = json_array_get(a->ops, i);
    json_t *e = json_pack("{s:I, s:s, s:s}", "op", (json_int_t)i, "name", str(op, "name"),
                          "module", str(op, "module"));
    json_object_set(e, "devices_a", json_object_get(op, "devices"));
    *v = V_SKIPPED;
    if (json_is_true(json_object_get(op, "rng"))) {
        json_object_set_new(e, "why", json_string("it draws random numbers: a replay cannot give "
                                                  "the same result"));
        return e;
    }
    char why[1024] = "";
    struct inputs in;
    if (read_inputs(a, op, &in, why, sizeof why)) {
        json_object_set_new(e, "why", json_string(why[0] ? why : "its inputs cannot be read"));
        inputs_free(&in);
        return e;
    }
    json_t *req = json_pack("{s:s, s:s, s:O, s:O, s:O}", "op", "replay", "name", str(op, "name"),
                            "args", json_object_get(op, "args"), "kwargs",
                            json_object_get(op, "kwargs") ? json_object_get(op, "kwargs")
                                                          : json_object(),
                            "tensors", in.specs);
    struct gv_err err = {0};
    int rc = gv_torch_request(dev, req, in.parts, (int)in.n, &err);
    json_decref(req);
    inputs_free(&in);
    struct gv_torch_reply r = {0};
    void *data = NULL;
    size_t len = 0;
    if (!rc)
        rc = gv_torch_reply_next(dev, REPLAY_TIMEOUT_MS, MAX_REPLY, &data, &len, &r, &err);
    if (rc || !r.ok) {
        *v = rc || strcmp(r.status, "unsupported") ? V_FAILED : V_SKIPPED;
        json_object_set_new(e, "why", json_string(rc ? err.msg : r.error));
        gv_torch_reply_free(&r);
        free(data);
        return e;
    }
    json_object_set_new(e, "impl_b", json_string(r.impl));
    if (json_string_value(json_object_get(r.doc, "referee"))[0])
        json_object_set(e, "referee", json_object_get(r.doc, "referee"));
    json_t *ids = gv_judge_tensor_ids(json_object_get(op, "outputs"));
    const json_t *outs = json_object_get(r.doc, "outputs");
    json_t *slots = json_array();
    size_t off = 0;
    *v = V_IDENTICAL;
    if (json_array_size(outs) != json_array_size(ids)) {
        *v = V_FAILED;
        json_object_set_new(e, "why", json_sprintf("the replay gave %zu outputs, A recorded %zu",
                                                   json_array_size(outs), json_array_size(ids)));
    }
    for (size_t k = 0; k < json_array_size(outs) && *v != V_FAILED; k++) {
        const json_t *o = json_array_get(outs, k), *ref = json_object_get(o, "ref");
        size_t nb = (size_t)json_integer_value(json_object_get(o, "nbytes"));
        size_t rb = ref ? (size_t)json_integer_value(json_object_get(ref, "nbytes")) : 0;
        int64_t id = json_integer_value(json_array_get(ids, k));
        json_t *se = json_pack("{s:I}", "a_tensor", (json_int_t)id);
        void *xa = NULL;
        size_t na = 0;
        struct gv_err re = {0};
        if (off + nb + rb > len) {
            *v = V_FAILED;
            json_object_set_new(e, "why", json_string("the replay's reply is shorter than it says"));
        } else if (gv_cap_read(a, id, &xa, &na, &re)) {
            *v = worse_of(*v, V_SKIPPED);
            json_object_set_new(se, "why", json_string(re.msg));
        } else if (na != nb || strcmp(str(o, "dtype"), str(gv_cap_tensor(a, id), "dtype"))) {
            *v = worse_of(*v, V_DIFFERENT);
            json_object_set_new(se, "why", json_sprintf("%s of %zu bytes here, %s of %zu in A",
                                                        str(o, "dtype"), nb,
                                                        str(gv_cap_tensor(a, id), "dtype"), na));
        } else {
            *v = worse_of(*v, judge_slot(str(o, "dtype"), xa, (const char *)data + off, nb, ref,
                                         ref ? (const char *)data + off + nb : NULL, se));
        }
        free(xa);
        off += nb + rb;
        json_array_append_new(slots, se);
    }
    json_object_set_new(e, "outputs", slots);
    json_decref(ids);
    gv_torch_reply_free(&r);
    free(data);
    return e;
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
    char *s = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
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

int gv_capture_bisect(const struct gv_cap *a, const struct gv_cap *b, struct gv_device *dev,
                      json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    size_t n = json_array_size(a->ops);
    json_t *ops = json_array(), *culprits = json_array();
    size_t count[7] = {0};
    for (size_t i = 0; i < n; i++) {
        enum verdict v;
        json_t *e = replay(a, i, dev, &v);
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
    for (int k = 0; k < 7; k++)
        json_object_set_new(s, verdict_names[k], json_integer((json_int_t)count[k]));
    json_object_set_new(d, "summary", s);
    json_object_set_new(d, "culprits", culprits);
    if (b) {
        json_t *calls = call_changes(a, b);
        json_object_set_new(d, "call_changes", calls);
        struct gv_judge_outputs fo;
        if (!gv_judge_outputs(a, json_object_get(a->header, "outputs"), b,
                              json_object_get(b->header, "outputs"), &fo, err)) {
            json_object_set_new(d, "outputs_status", json_string(gv_judge_status_name(fo.worst)));
            json_object_set_new(d, "outputs_units", num(fo.units));
            json_decref(fo.list);
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
