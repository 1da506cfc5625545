/* safetensors writer and validating reader (see safetensors.h). */
#include "store/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"

static const struct {
    const char *name;
    enum gv_dtype t;
} st_dtypes[] = {
    {"F64", GV_F64},         {"F32", GV_F32},         {"F16", GV_F16},
    {"BF16", GV_BF16},       {"F8_E4M3", GV_F8E4M3},  {"F8_E5M2", GV_F8E5M2},
};
#define N_ST_DTYPES (sizeof st_dtypes / sizeof st_dtypes[0])

const char *gv_st_dtype_name(enum gv_dtype t)
{
    for (size_t i = 0; i < N_ST_DTYPES; i++)
        if (st_dtypes[i].t == t)
            return st_dtypes[i].name;
    return NULL;
}

int gv_st_dtype_from_name(const char *name)
{
    for (size_t i = 0; i < N_ST_DTYPES; i++)
        if (name && !strcmp(st_dtypes[i].name, name))
            return (int)st_dtypes[i].t;
    return -1;
}

/* ---------- writer ---------- */

static int by_size_desc(const void *a, const void *b)
{
    const struct gv_st_tensor *const *x = a, *const *y = b;
    size_t sx = gv_dtype_size((*x)->dtype), sy = gv_dtype_size((*y)->dtype);
    if (sx != sy)
        return sx > sy ? -1 : 1;
    return *x < *y ? -1 : *x > *y; /* stable: keep the caller's order */
}

static json_t *tensor_header(const struct gv_st_tensor *t, size_t begin)
{
    json_t *o = json_object(), *shape = json_array(), *off = json_array();
    json_object_set_new(o, "dtype", json_string(gv_st_dtype_name(t->dtype)));
    for (int d = 0; d < t->ndim; d++)
        json_array_append_new(shape, json_integer(t->dims[d]));
    json_object_set_new(o, "shape", shape);
    json_array_append_new(off, json_integer((json_int_t)begin));
    json_array_append_new(off, json_integer((json_int_t)(begin + t->nbytes)));
    json_object_set_new(o, "data_offsets", off);
    return o;
}

static int check_tensor(const char *path, const struct gv_st_tensor *t, struct gv_err *err)
{
    if (!gv_st_dtype_name(t->dtype))
        return gv_err_set(err, GV_E_USAGE, "%s: tensor %s: format %s has no safetensors dtype",
                          path, t->name, gv_dtype_name(t->dtype));
    if (t->ndim < 0 || t->ndim > GV_ST_MAX_DIMS)
        return gv_err_set(err, GV_E_USAGE, "%s: tensor %s: %d dimensions", path, t->name,
                          t->ndim);
    size_t count = 1;
    for (int d = 0; d < t->ndim; d++)
        count *= (size_t)t->dims[d];
    if (count * gv_dtype_size(t->dtype) != t->nbytes)
        return gv_err_set(err, GV_E_USAGE, "%s: tensor %s: shape does not match %zu bytes", path,
                          t->name, t->nbytes);
    if (!strcmp(t->name, "__metadata__"))
        return gv_err_set(err, GV_E_USAGE, "%s: a tensor cannot be named __metadata__", path);
    return GV_OK;
}

int gv_safetensors_write(const char *path, const struct gv_st_tensor *t, size_t n,
                         const json_t *metadata, struct gv_err *err)
{
    const struct gv_st_tensor **order = calloc(n ? n : 1, sizeof *order);
    if (!order)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", path);
    int rc = GV_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        order[i] = &t[i];
        rc = check_tensor(path, &t[i], err);
    }
    if (rc) {
        free(order);
        return rc;
    }
    qsort(order, n, sizeof *order, by_size_desc);
    json_t *hdr = json_object();
    if (metadata)
        json_object_set(hdr, "__metadata__", (json_t *)metadata);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (json_object_get(hdr, order[i]->name)) {
            rc = gv_err_set(err, GV_E_USAGE, "%s: tensor name %s used twice", path,
                            order[i]->name);
            break;
        }
        json_object_set_new(hdr, order[i]->name, tensor_header(order[i], total));
        total += order[i]->nbytes;
    }
    char *js = rc ? NULL : gv_json_dumps(hdr, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
    json_decref(hdr);
    if (!rc && !js)
        rc = gv_err_set(err, GV_E_NOMEM, "%s: cannot serialise the header", path);
    if (rc) {
        free(order);
        return rc;
    }
    size_t hlen = strlen(js), padded = (hlen + 7) & ~(size_t)7;
    uint8_t *buf = malloc(8 + padded + total);
    if (!buf) {
        free(js);
        free(order);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory (%zu bytes)", path, total);
    }
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    memcpy(buf + 8, js, hlen);
    memset(buf + 8 + hlen, ' ', padded - hlen);
    size_t off = 8 + padded;
    for (size_t i = 0; i < n; i++) {
        if (order[i]->nbytes)
            memcpy(buf + off, order[i]->data, order[i]->nbytes);
        off += order[i]->nbytes;
    }
    rc = gv_write_atomic(path, buf, off, 0644, err);
    free(buf);
    free(js);
    free(order);
    return rc;
}

/* ---------- reader ---------- */

static int get_u64(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int parse_tensor(const char *what, const char *name, const json_t *o, size_t datalen,
                        struct gv_st_tensor *t, struct gv_err *err)
{
    if (!json_is_object(o))
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\": not an object", what, name);
    t->name = name;
    int dt = gv_st_dtype_from_name(json_string_value(json_object_get(o, "dtype")));
    if (dt < 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\": field \"dtype\" missing or not "
                          "one of F64, F32, F16, BF16, F8_E4M3, F8_E5M2", what, name);
    t->dtype = (enum gv_dtype)dt;
    json_t *shape = json_object_get(o, "shape");
    if (!json_is_array(shape) || json_array_size(shape) > GV_ST_MAX_DIMS)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\": field \"shape\" missing, not "
                          "an array, or more than %d dimensions", what, name, GV_ST_MAX_DIMS);
    t->ndim = (int)json_array_size(shape);
    uint64_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        uint64_t v;
        if (get_u64(json_array_get(shape, (size_t)d), &v) || v > ((uint64_t)1 << 40))
            return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\": shape[%d] is not a "
                              "non-negative integer below 2^40", what, name, d);
        t->dims[d] = (long long)v;
        if (v && count > ((uint64_t)1 << 62) / v)
            return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\": shape too large", what, name);
        count *= v;
    }
    json_t *off = json_object_get(o, "data_offsets");
    uint64_t b, e;
    if (!json_is_array(off) || json_array_size(off) != 2 || get_u64(json_array_get(off, 0), &b) ||
        get_u64(json_array_get(off, 1), &e) || b > e || e > datalen)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\": field \"data_offsets\" is not "
                          "[begin, end] within the %zu-byte data buffer", what, name, datalen);
    if (count > ((uint64_t)1 << 62) / 8 || count * gv_dtype_size(t->dtype) != e - b)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\": %llu bytes for a shape that "
                          "needs %llu", what, name, (unsigned long long)(e - b),
                          (unsigned long long)(count * gv_dtype_size(t->dtype)));
    t->nbytes = (size_t)(e - b);
    t->data = (const void *)(uintptr_t)b; /* an offset until the caller rebases it */
    return GV_OK;
}

static int by_offset(const void *a, const void *b)
{
    const struct gv_st_tensor *x = a, *y = b;
    uintptr_t ox = (uintptr_t)x->data, oy = (uintptr_t)y->data;
    if (ox != oy)
        return ox < oy ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

/* The tensors must cover [0, datalen) without holes or overlaps. */
static int check_coverage(const char *what, struct gv_st_file *f, size_t datalen,
                          struct gv_err *err)
{
    qsort(f->t, f->n, sizeof *f->t, by_offset);
    size_t at = 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t b = (size_t)(uintptr_t)f->t[i].data;
        if (b != at)
            return gv_err_set(err, GV_E_FORMAT, "%s: tensor \"%s\" starts at byte %zu of the "
                              "data buffer, expected %zu (hole or overlap)", what, f->t[i].name,
                              b, at);
        at += f->t[i].nbytes;
    }
    if (at != datalen)
        return gv_err_set(err, GV_E_FORMAT, "%s: the tensors cover %zu of %zu data bytes", what,
                          at, datalen);
    return GV_OK;
}

static int parse_header(const char *what, struct gv_st_file *f, size_t hlen, struct gv_err *err)
{
    const uint8_t *h = f->buf + 8;
    if (hlen == 0 || h[0] != '{')
        return gv_err_set(err, GV_E_FORMAT, "%s: the header does not start with '{'", what);
    json_error_t je;
    if (gv_json_parse((const char *)h, hlen, what, &f->header, &je, err) == GV_E_NOMEM)
        return GV_E_NOMEM;
    if (!json_is_object(f->header))
        return gv_err_set(err, GV_E_FORMAT, "%s: the header is not a JSON object (%s)", what,
                          f->header ? "another JSON value" : je.text);
    size_t n = json_object_size(f->header);
    f->t = calloc(n ? n : 1, sizeof *f->t);
    if (!f->t)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    size_t datalen = f->len - 8 - hlen;
    const char *key;
    json_t *val;
    json_object_foreach(f->header, key, val) {
        if (!strcmp(key, "__metadata__")) {
            const char *mk;
            json_t *mv;
            if (!json_is_object(val))
                return gv_err_set(err, GV_E_FORMAT, "%s: __metadata__ is not an object", what);
            json_object_foreach(val, mk, mv) if (!json_is_string(mv)) return gv_err_set(
                err, GV_E_FORMAT, "%s: __metadata__ \"%s\" is not a string", what, mk);
            f->metadata = val;
            continue;
        }
        int rc = parse_tensor(what, key, val, datalen, &f->t[f->n], err);
        if (rc)
            return rc;
        f->n++;
    }
    int rc = check_coverage(what, f, datalen, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < f->n; i++)
        f->t[i].data = f->buf + 8 + hlen + (uintptr_t)f->t[i].data;
    return GV_OK;
}

int gv_safetensors_parse(uint8_t *buf, size_t len, const char *what, struct gv_st_file *f,
                         struct gv_err *err)
{
    memset(f, 0, sizeof *f);
    f->buf = buf;
    f->len = len;
    int rc;
    if (len < 8) {
        rc = gv_err_set(err, GV_E_FORMAT, "%s: %zu bytes: too short for a safetensors file", what,
                        len);
    } else {
        uint64_t hlen = 0;
        for (int i = 7; i >= 0; i--)
            hlen = hlen << 8 | buf[i];
        if (hlen > GV_ST_MAX_HEADER || hlen > len - 8)
            rc = gv_err_set(err, GV_E_FORMAT, "%s: header length %llu does not fit the %zu-byte "
                            "file (truncated or not safetensors)", what,
                            (unsigned long long)hlen, len);
        else
            rc = parse_header(what, f, (size_t)hlen, err);
    }
    if (rc)
        gv_safetensors_free(f);
    return rc;
}

int gv_safetensors_read(const char *path, size_t max, struct gv_st_file *f, struct gv_err *err)
{
    char *data;
    size_t len;
    memset(f, 0, sizeof *f);
    int rc = gv_read_file(path, max, &data, &len, err);
    if (rc)
        return rc;
    return gv_safetensors_parse((uint8_t *)data, len, path, f, err);
}

void gv_safetensors_free(struct gv_st_file *f)
{
    json_decref(f->header);
    free(f->t);
    free(f->buf);
    memset(f, 0, sizeof *f);
}

const struct gv_st_tensor *gv_safetensors_find(const struct gv_st_file *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->t[i].name, name))
            return &f->t[i];
    return NULL;
}
