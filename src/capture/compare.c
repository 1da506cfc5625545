/* gv_capture_compare: two captures of one model, aligned op by op (see
 * capture.h, docs/capture.md). Also the per-tensor difference measure that
 * bisect uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "capture/capture.h"
#include "capture/judge.h"
#include "num/fp.h"

/* ---------- alignment ---------- */

/* What must agree for two ops to be "the same op": the operator, the module
 * and the inputs' shapes and dtypes. */
static char *signature(const struct gv_cap *c, const json_t *op)
{
    size_t cap = 256, n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    n = (size_t)snprintf(s, cap, "%s|%s|", json_string_value(json_object_get(op, "name")),
                         json_string_value(json_object_get(op, "module"))
                             ? json_string_value(json_object_get(op, "module"))
                             : "");
    json_t *ids = gv_judge_tensor_ids(json_object_get(op, "args"));
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        const json_t *t = gv_cap_tensor(c, json_integer_value(v));
        char *sh = gv_json_dumps(json_object_get(t, "shape"), JSON_COMPACT);
        const char *dt = json_string_value(json_object_get(t, "dtype"));
        size_t need = n + (sh ? strlen(sh) : 0) + (dt ? strlen(dt) : 0) + 4;
        if (need >= cap) {
            cap = need * 2;
            char *ns = realloc(s, cap);
            if (!ns) {
                free(sh);
                break;
            }
            s = ns;
        }
        n += (size_t)snprintf(s + n, cap - n, "%s%s;", dt ? dt : "", sh ? sh : "");
        free(sh);
    }
    json_decref(ids);
    return s;
}

#define DP_MAX_CELLS ((size_t)16 << 20)

/* match[i] = j, the op of b aligned with op i of a, or -1: common prefix and
 * suffix, then a longest common subsequence of signatures in the middle (a
 * greedy walk when the middle is too large for the table). */
static long *align(char **sa, size_t na, char **sb, size_t nb)
{
    long *m = malloc((na ? na : 1) * sizeof *m);
    if (!m)
        return NULL;
    for (size_t i = 0; i < na; i++)
        m[i] = -1;
    size_t p = 0;
    while (p < na && p < nb && !strcmp(sa[p], sb[p])) {
        m[p] = (long)p;
        p++;
    }
    size_t s = 0;
    while (s < na - p && s < nb - p && !strcmp(sa[na - 1 - s], sb[nb - 1 - s])) {
        m[na - 1 - s] = (long)(nb - 1 - s);
        s++;
    }
    size_t ma = na - p - s, mb = nb - p - s;
    if (!ma || !mb)
        return m;
    if ((ma + 1) * (mb + 1) <= DP_MAX_CELLS) {
        unsigned *t = calloc((ma + 1) * (mb + 1), sizeof *t);
        if (t) {
#define T(i, j) t[(i) * (mb + 1) + (j)]
            for (size_t i = ma; i-- > 0;)
                for (size_t j = mb; j-- > 0;)
                    T(i, j) = !strcmp(sa[p + i], sb[p + j]) ? T(i + 1, j + 1) + 1
                              : T(i + 1, j) > T(i, j + 1) ? T(i + 1, j) : T(i, j + 1);
            size_t i = 0, j = 0;
            while (i < ma && j < mb) {
                if (!strcmp(sa[p + i], sb[p + j])) {
                    m[p + i] = (long)(p + j);
                    i++, j++;
                } else if (T(i + 1, j) >= T(i, j + 1)) {
                    i++;
                } else {
                    j++;
                }
            }
#undef T
            free(t);
            return m;
        }
    }
    for (size_t i = 0, j = 0; i < ma; i++) /* greedy: the next equal signature ahead */
        for (size_t k = j; k < mb && k < j + 64; k++)
            if (!strcmp(sa[p + i], sb[p + k])) {
                m[p + i] = (long)(p + k);
                j = k + 1;
                break;
            }
    return m;
}

/* ---------- the document ---------- */

static int same_model(const struct gv_cap *a, const struct gv_cap *b, struct gv_err *err)
{
    const char *fields[] = {"model.parameters_digest", "model.inputs_digest"};
    const char *what[] = {"parameters (weights and buffers)", "example inputs"};
    for (int k = 0; k < 2; k++) {
        const char *x = json_string_value(gv_json_path(a->header, fields[k]));
        const char *y = json_string_value(gv_json_path(b->header, fields[k]));
        if (!x || !y || strcmp(x, y))
            return gv_err_set(err, GV_E_FORMAT, "%s and %s are not captures of the same model "
                              "and inputs: their %s differ (digest %.12s vs %.12s); compare "
                              "captures of one model with one seed", a->path, b->path, what[k],
                              x ? x : "?", y ? y : "?");
    }
    /* the call: where the input tensors go, and the arguments that are not tensors
     * (captures written before gpuvet recorded it have none) */
    const json_t *ca = json_object_get(a->header, "call"), *cb = json_object_get(b->header, "call");
    if (ca && cb && !json_equal(ca, cb))
        return gv_err_set(err, GV_E_FORMAT, "%s and %s are not captures of the same model "
                          "and inputs: the model was called differently (its arguments other "
                          "than tensors, or where the tensors go, differ: header.call); compare "
                          "captures of one model with one seed", a->path, b->path);
    return GV_OK;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static json_t *op_brief(const json_t *op, size_t i)
{
    return json_pack("{s:I, s:s, s:s}", "op", (json_int_t)i, "name", str(op, "name"), "module",
                     str(op, "module"));
}

long *gv_capture_align(const struct gv_cap *a, const struct gv_cap *b)
{
    size_t na = json_array_size(a->ops), nb = json_array_size(b->ops);
    char **sa = calloc(na ? na : 1, sizeof *sa), **sb = calloc(nb ? nb : 1, sizeof *sb);
    long *m = NULL;
    int ok = sa && sb;
    for (size_t i = 0; ok && i < na; i++)
        ok = (sa[i] = signature(a, json_array_get(a->ops, i))) != NULL;
    for (size_t i = 0; ok && i < nb; i++)
        ok = (sb[i] = signature(b, json_array_get(b->ops, i))) != NULL;
    if (ok)
        m = align(sa, na, sb, nb);
    for (size_t i = 0; sa && i < na; i++)
        free(sa[i]);
    for (size_t i = 0; sb && i < nb; i++)
        free(sb[i]);
    free(sa);
    free(sb);
    return m;
}

int gv_capture_compare(const struct gv_cap *a, const struct gv_cap *b, json_t **doc,
                       struct gv_err *err)
{
    *doc = NULL;
    int rc = same_model(a, b, err);
    if (rc)
        return rc;
    size_t na = json_array_size(a->ops), nb = json_array_size(b->ops);
    long *m = gv_capture_align(a, b);
    if (!m)
        return gv_err_set(err, GV_E_NOMEM, "compare: out of memory aligning the ops");
    json_t *d = json_object(), *ops = json_array(), *only_a = json_array(), *only_b = json_array();
    json_object_set_new(d, "schema", json_string("gpuvet.capture-compare"));
    json_object_set_new(d, "schema_version", json_integer(1));
    json_object_set_new(d, "before", json_string(a->path));
    json_object_set_new(d, "after", json_string(b->path));
    char *seen = calloc(nb ? nb : 1, 1);
    long first_diff = -1, first_noise = -1;
    size_t aligned = 0, identical = 0, beyond = 0;
    for (size_t i = 0; i < na && !rc; i++) {
        const json_t *oa = json_array_get(a->ops, i);
        if (m[i] < 0) {
            json_array_append_new(only_a, op_brief(oa, i));
            continue;
        }
        const json_t *ob = json_array_get(b->ops, (size_t)m[i]);
        seen[m[i]] = 1;
        aligned++;
        json_t *e = json_pack("{s:I, s:I, s:s, s:s}", "a", (json_int_t)i, "b", (json_int_t)m[i],
                              "name", str(oa, "name"), "module", str(oa, "module"));
        struct gv_judge_outputs jo;
        rc = gv_judge_outputs(a, json_object_get(oa, "outputs"), b, json_object_get(ob, "outputs"),
                              &jo, err);
        if (rc) {
            json_decref(e);
            break;
        }
        json_object_set_new(e, "outputs", jo.list);
        json_object_set_new(e, "status", json_string(gv_judge_status_name(jo.worst)));
        json_object_set_new(e, "units", json_real(jo.units));
        if (jo.worst == GV_JUDGE_IDENTICAL)
            identical++;
        else if (first_diff < 0)
            first_diff = (long)i;
        if (jo.worst == GV_JUDGE_BEYOND_NOISE) {
            beyond++;
            if (first_noise < 0)
                first_noise = (long)i;
        }
        json_array_append_new(ops, e);
    }
    for (size_t j = 0; j < nb; j++)
        if (!seen[j])
            json_array_append_new(only_b, op_brief(json_array_get(b->ops, j), j));
    free(seen);
    free(m);
    /* the model's outputs */
    struct gv_judge_outputs fo;
    if (!rc)
        rc = gv_judge_outputs(a, json_object_get(a->header, "outputs"), b,
                              json_object_get(b->header, "outputs"), &fo, err);
    if (rc) {
        json_decref(d);
        json_decref(ops);
        json_decref(only_a);
        json_decref(only_b);
        return rc;
    }
    json_t *s = json_object();
    json_object_set_new(s, "ops_before", json_integer((json_int_t)na));
    json_object_set_new(s, "ops_after", json_integer((json_int_t)nb));
    json_object_set_new(s, "aligned", json_integer((json_int_t)aligned));
    json_object_set_new(s, "identical", json_integer((json_int_t)identical));
    json_object_set_new(s, "beyond_noise", json_integer((json_int_t)beyond));
    json_object_set_new(s, "first_difference", first_diff < 0 ? json_null()
                                                               : op_brief(json_array_get(a->ops, (size_t)first_diff),
                                                                          (size_t)first_diff));
    json_object_set_new(s, "first_beyond_noise", first_noise < 0 ? json_null()
                                                                  : op_brief(json_array_get(a->ops, (size_t)first_noise),
                                                                             (size_t)first_noise));
    json_object_set_new(s, "outputs_status", json_string(gv_judge_status_name(fo.worst)));
    json_object_set_new(s, "outputs_units", json_real(fo.units));
    json_object_set_new(d, "summary", s);
    json_object_set_new(d, "outputs", fo.list);
    json_object_set_new(d, "ops", ops);
    json_object_set_new(d, "only_before", only_a);
    json_object_set_new(d, "only_after", only_b);
    json_object_set_new(d, "causes", gv_judge_env_causes(json_object_get(a->header, "device"),
                                                         json_object_get(b->header, "device")));
    json_object_set_new(d, "flagged", json_boolean(beyond || json_array_size(only_a) ||
                                                   json_array_size(only_b) ||
                                                   fo.worst == GV_JUDGE_BEYOND_NOISE));
    *doc = d;
    return GV_OK;
}
