/* Tensor differences in units of the format (see judge.h). */
#include "capture/judge.h"

#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "kb/fpmode.h"
#include "num/fp.h"

static const char *const status_names[] = {"identical", "rounding", "beyond_rounding",
                                           "differs_not_kept", "mismatch"};

const char *gv_judge_status_name(enum gv_judge_status s)
{
    return (unsigned)s < 5 ? status_names[s] : "?";
}

void gv_judge_bytes(const char *dtype, const void *a, const void *b, size_t nbytes,
                    struct gv_tdiff *d)
{
    memset(d, 0, sizeof *d);
    int num;
    size_t esz = gv_cap_dtype_size(dtype, &num);
    d->count = esz ? nbytes / esz : 0;
    d->rel = d->units = NAN;
    if (!nbytes || !memcmp(a, b, nbytes)) {
        d->status = GV_JUDGE_IDENTICAL;
        d->rel = d->units = 0;
        return;
    }
    if (num < 0) { /* integers, bools: exact or wrong */
        for (size_t i = 0; i < d->count; i++)
            d->ndiff += memcmp((const char *)a + i * esz, (const char *)b + i * esz, esz) != 0;
        d->status = GV_JUDGE_BEYOND_NOISE;
        return;
    }
    enum gv_dtype t = (enum gv_dtype)num;
    double s2 = 0, d2 = 0;
    int nonfinite = 0;
    for (size_t i = 0; i < d->count; i++) {
        double x = gv_fp_load(a, t, i), y = gv_fp_load(b, t, i);
        if (memcmp((const char *)a + i * esz, (const char *)b + i * esz, esz))
            d->ndiff++;
        uint64_t u = gv_fp_ulp_distance(x, y, t);
        if (u > d->max_ulp)
            d->max_ulp = u;
        if (!isfinite(x) || !isfinite(y)) {
            nonfinite |= !(isnan(x) && isnan(y)) && x != y;
            continue;
        }
        s2 += x * x;
        d2 += (y - x) * (y - x);
    }
    d->rel = nonfinite ? INFINITY : s2 > 0 ? sqrt(d2 / s2) : d2 > 0 ? INFINITY : 0;
    d->units = d->rel / gv_fp_unit_roundoff(t);
    d->status = d->units <= GV_CAP_NOISE_UNITS ? GV_JUDGE_NOISE : GV_JUDGE_BEYOND_NOISE;
}

double gv_judge_error(const char *dtype, const void *x, const double *ref, size_t count)
{
    int num;
    if (!gv_cap_dtype_size(dtype, &num) || num < 0)
        return NAN;
    double s2 = 0, d2 = 0;
    for (size_t i = 0; i < count; i++) {
        double v = gv_fp_load(x, (enum gv_dtype)num, i), r = ref[i];
        if (!isfinite(r))
            continue;
        if (!isfinite(v))
            return INFINITY;
        s2 += r * r;
        d2 += (v - r) * (v - r);
    }
    return s2 > 0 ? sqrt(d2 / s2) : d2 > 0 ? INFINITY : 0;
}

static void collect(const json_t *v, json_t *out, int depth)
{
    if (depth > 16)
        return;
    if (json_is_object(v)) {
        const json_t *t = json_object_get(v, "$t");
        if (json_is_integer(t)) {
            json_array_append(out, (json_t *)t);
            return;
        }
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) collect(x, out, depth + 1);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) collect(x, out, depth + 1);
    }
}

json_t *gv_judge_tensor_ids(const json_t *v)
{
    json_t *out = json_array();
    collect(v, out, 0);
    return out;
}

json_t *gv_judge_input_ids(const json_t *op)
{
    json_t *both = json_array();
    json_array_append(both, json_object_get(op, "args") ? json_object_get(op, "args") : json_null());
    json_array_append(both,
                      json_object_get(op, "kwargs") ? json_object_get(op, "kwargs") : json_null());
    json_t *ids = gv_judge_tensor_ids(both);
    json_decref(both);
    return ids;
}

static void worse(struct gv_judge_outputs *o, enum gv_judge_status s, double units)
{
    if (s > o->worst)
        o->worst = s;
    if (isfinite(units) && units > o->units)
        o->units = units;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_string(isnan(v) ? "nan" : "inf");
}

/* One pair of tensors of two captures. */
static int pair(const struct gv_cap *a, int64_t ia, const struct gv_cap *b, int64_t ib,
                struct gv_judge_outputs *o, struct gv_err *err)
{
    const json_t *ta = gv_cap_tensor(a, ia), *tb = gv_cap_tensor(b, ib);
    json_t *e = json_pack("{s:I, s:I}", "a", (json_int_t)ia, "b", (json_int_t)ib);
    const char *da = json_string_value(json_object_get(ta, "dtype"));
    const char *db = json_string_value(json_object_get(tb, "dtype"));
    json_object_set(e, "dtype", json_object_get(ta, "dtype"));
    json_object_set(e, "shape", json_object_get(ta, "shape"));
    enum gv_judge_status st;
    struct gv_tdiff d = {0};
    d.rel = d.units = NAN;
    if (!da || !db || strcmp(da, db) || !json_equal(json_object_get(ta, "shape"),
                                                     json_object_get(tb, "shape"))) {
        st = GV_JUDGE_MISMATCH;
        json_object_set(e, "dtype_after", json_object_get(tb, "dtype"));
        json_object_set(e, "shape_after", json_object_get(tb, "shape"));
    } else if (json_equal(json_object_get(ta, "sha256"), json_object_get(tb, "sha256"))) {
        st = GV_JUDGE_IDENTICAL;
        d.rel = d.units = 0;
    } else if (!json_is_integer(json_object_get(ta, "offset")) ||
               !json_is_integer(json_object_get(tb, "offset"))) {
        st = GV_JUDGE_UNKNOWN;
    } else {
        void *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;
        int rc = gv_cap_read(a, ia, &x, &nx, err);
        if (!rc)
            rc = gv_cap_read(b, ib, &y, &ny, err);
        if (!rc)
            gv_judge_bytes(da, x, y, nx, &d);
        free(x);
        free(y);
        if (rc) {
            json_decref(e);
            return rc;
        }
        st = d.status;
        json_object_set_new(e, "differing", json_integer((json_int_t)d.ndiff));
        json_object_set_new(e, "count", json_integer((json_int_t)d.count));
        json_object_set_new(e, "max_ulp", json_integer((json_int_t)d.max_ulp));
    }
    json_object_set_new(e, "status", json_string(gv_judge_status_name(st)));
    json_object_set_new(e, "rel", num(d.rel));
    json_object_set_new(e, "units", num(d.units));
    worse(o, st, d.units);
    json_array_append_new(o->list, e);
    return GV_OK;
}

int gv_judge_outputs(const struct gv_cap *a, const json_t *outs_a, const struct gv_cap *b,
                     const json_t *outs_b, struct gv_judge_outputs *o, struct gv_err *err)
{
    o->list = json_array();
    o->worst = GV_JUDGE_IDENTICAL;
    o->units = 0;
    json_t *xa = gv_judge_tensor_ids(outs_a), *xb = gv_judge_tensor_ids(outs_b);
    int rc = GV_OK;
    if (json_array_size(xa) != json_array_size(xb))
        worse(o, GV_JUDGE_MISMATCH, NAN);
    for (size_t i = 0; i < json_array_size(xa) && i < json_array_size(xb) && !rc; i++)
        rc = pair(a, json_integer_value(json_array_get(xa, i)), b,
                  json_integer_value(json_array_get(xb, i)), o, err);
    /* the model's outputs carry their names ("logits", "hidden.3") in the header */
    if (!rc && json_array_size(outs_a) == json_array_size(xa))
        for (size_t i = 0; i < json_array_size(o->list); i++) {
            const json_t *n = json_object_get(json_array_get(outs_a, i), "name");
            if (json_is_string(n))
                json_object_set((json_t *)json_array_get(o->list, i), "name", (json_t *)n);
        }
    json_decref(xa);
    json_decref(xb);
    if (rc) {
        json_decref(o->list);
        o->list = NULL;
    }
    return rc;
}

json_t *gv_judge_env_causes(const json_t *dev_a, const json_t *dev_b)
{
    json_t *out = json_array();
    struct kb_fp_mode ma, mb;
    char text[160];
    kb_fp_mode_read(dev_a, &ma);
    kb_fp_mode_read(dev_b, &mb);
    if (kb_fp_mode_cause(&ma, &mb, text, sizeof text)) {
        json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "kind", "device",
                              "name", "fp_mode", "text", text, "ftz_a", kb_flush_name(ma.ftz),
                              "daz_a", kb_flush_name(ma.daz), "ftz_b", kb_flush_name(mb.ftz),
                              "daz_b", kb_flush_name(mb.daz), "mechanism",
                              kb_fp_mode_fact()->text, "source", kb_fp_mode_fact()->source);
        json_array_append_new(out, c);
    }
    return out;
}

int gv_judge_fp_default(void)
{
    fesetenv(FE_DFL_ENV);
    volatile float tiny = 0x1p-70f, sub = 0x1p-139f;
    float product = tiny * tiny;
    return product != 0.0f && (double)sub == 0x1p-139;
}
