/* The capture file (see gvcap.h). */
#include "base/utf8.h"
#include "capture/gvcap.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/sha256.h"
#include "num/fp.h"

static const char magic[8] = {'G', 'V', 'C', 'A', 'P', '0', '1', '\n'};
static const char endmark[8] = {'G', 'V', 'C', 'A', 'P', 'E', 'N', 'D'};

static const struct {
    const char *name;
    size_t size;
    int num;
} dtypes[] = {
    {"float64", 8, GV_F64},        {"float32", 4, GV_F32},       {"float16", 2, GV_F16},
    {"bfloat16", 2, GV_BF16},      {"float8_e4m3fn", 1, GV_F8E4M3}, {"float8_e5m2", 1, GV_F8E5M2},
    {"int64", 8, -1},              {"int32", 4, -1},             {"int16", 2, -1},
    {"int8", 1, -1},               {"uint8", 1, -1},             {"bool", 1, -1},
    {"complex64", 8, -1},          {"complex128", 16, -1},       {"uint16", 2, -1},
    {"uint32", 4, -1},             {"uint64", 8, -1},
};

size_t gv_cap_dtype_size(const char *dtype, int *num)
{
    for (size_t i = 0; dtype && i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(dtypes[i].name, dtype)) {
            if (num)
                *num = dtypes[i].num;
            return dtypes[i].size;
        }
    if (num)
        *num = -1;
    return 0;
}

/* The operators whose NAME has the form __x__ (ATen's operator methods): the only
 * ones with a dispatcher kernel, which a capture can record. */
static const char *const dunder_ops[] = {"__and__",    "__or__",      "__xor__",  "__lshift__",
                                         "__rshift__", "__iand__",    "__ior__",  "__ixor__",
                                         "__ilshift__", "__irshift__"};

#define OP_PART_MAX 128

/* The length of the identifier [A-Za-z_][A-Za-z0-9_]* at s (up to '.' or the end),
 * 0 when it is not one or is longer than OP_PART_MAX. */
static size_t ident_len(const char *s)
{
    size_t n = 0;
    for (; s[n] && s[n] != '.'; n++) {
        unsigned char c = (unsigned char)s[n];
        int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        if (n >= OP_PART_MAX || !(alpha || (n > 0 && c >= '0' && c <= '9')))
            return 0;
    }
    return n;
}

static int is_dunder(const char *s, size_t n)
{
    return n >= 4 && !strncmp(s, "__", 2) && !strncmp(s + n - 2, "__", 2);
}

static int dunder_allowed(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof dunder_ops / sizeof dunder_ops[0]; i++)
        if (strlen(dunder_ops[i]) == n && !strncmp(dunder_ops[i], s, n))
            return 1;
    return 0;
}

int gv_cap_op_name_ok(const char *name)
{
    if (!name)
        return 0;
    const char *p = name;
    for (int part = 0; part < 3; part++) {
        size_t n = ident_len(p);
        if (!n || (is_dunder(p, n) && !(part == 1 && dunder_allowed(p, n))))
            return 0;
        p += n;
        if (part < 2 && *p++ != '.')
            return 0;
    }
    return *p == '\0';
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ---------- writing ---------- */

static int write_all(struct gv_cap_writer *w, const void *p, size_t n, struct gv_err *err)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(w->fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return gv_err_set(err, GV_E_IO, "%s: write failed: %s", w->tmp,
                              k < 0 ? strerror(errno) : "no progress");
        c += k;
        n -= (size_t)k;
        w->off += (uint64_t)k;
    }
    return GV_OK;
}

int gv_cap_create(struct gv_cap_writer *w, const char *path, uint64_t max_bytes,
                  struct gv_err *err)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    if (snprintf(w->path, sizeof w->path, "%s", path) >= (int)sizeof w->path)
        return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp.XXXXXX", path);
    w->fd = mkstemp(w->tmp);
    if (w->fd < 0)
        return gv_err_set(err, GV_E_IO, "%s: cannot create a temporary file: %s", path,
                          strerror(errno));
    fchmod(w->fd, 0644); /* as gpuvet's other outputs; mkstemp makes 0600 */
    w->budget = max_bytes ? max_bytes : UINT64_MAX;
    w->over_budget_at = -1;
    w->tensors = json_array();
    w->ops = json_array();
    int rc = write_all(w, magic, sizeof magic, err);
    if (rc)
        gv_cap_abort(w);
    return rc;
}

/* min, max, mean, mean |x|, NaN and Inf counts of a floating tensor. */
static json_t *stats(const void *data, size_t count, enum gv_dtype t)
{
    double mn = INFINITY, mx = -INFINITY, sum = 0, asum = 0;
    uint64_t nan = 0, inf = 0, finite = 0;
    const float *f = t == GV_F32 ? data : NULL; /* the common case, without a call per element */
    for (size_t i = 0; i < count; i++) {
        double v = f ? (double)f[i] : gv_fp_load(data, t, i);
        if (isnan(v)) {
            nan++;
        } else if (isinf(v)) {
            inf++;
        } else {
            finite++;
            sum += v;
            asum += fabs(v);
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
    }
    json_t *s = json_object();
    if (finite) {
        json_object_set_new(s, "min", json_real(mn));
        json_object_set_new(s, "max", json_real(mx));
        json_object_set_new(s, "mean", json_real(sum / (double)finite));
        json_object_set_new(s, "mean_abs", json_real(asum / (double)finite));
    }
    json_object_set_new(s, "nan", json_integer((json_int_t)nan));
    json_object_set_new(s, "inf", json_integer((json_int_t)inf));
    return s;
}

int gv_cap_add_tensor(struct gv_cap_writer *w, const char *dtype, const int64_t *shape, int ndim,
                      const void *data, size_t nbytes, const json_t *meta, int64_t *id,
                      struct gv_err *err)
{
    int num;
    size_t esz = gv_cap_dtype_size(dtype, &num);
    if (!esz)
        return gv_err_set(err, GV_E_FORMAT, "capture: tensor of unknown dtype '%s'", dtype);
    if (ndim < 0 || ndim > GV_CAP_MAX_DIMS)
        return gv_err_set(err, GV_E_FORMAT, "capture: tensor of %d dimensions", ndim);
    uint64_t count = 1;
    json_t *sh = json_array();
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && count > UINT64_MAX / (uint64_t)shape[i])) {
            json_decref(sh);
            return gv_err_set(err, GV_E_FORMAT, "capture: tensor shape out of range");
        }
        count *= (uint64_t)shape[i];
        json_array_append_new(sh, json_integer((json_int_t)shape[i]));
    }
    if (count * esz != nbytes) {
        json_decref(sh);
        return gv_err_set(err, GV_E_FORMAT, "capture: %s tensor of %llu elements with %zu bytes",
                          dtype, (unsigned long long)count, nbytes);
    }
    json_t *t = json_object();
    *id = (int64_t)json_array_size(w->tensors);
    json_object_set_new(t, "id", json_integer((json_int_t)*id));
    json_object_set_new(t, "dtype", json_string(dtype));
    json_object_set_new(t, "shape", sh);
    json_object_set_new(t, "nbytes", json_integer((json_int_t)nbytes));
    char hex[65];
    gv_sha256_buf_hex(data, nbytes, hex);
    json_object_set_new(t, "sha256", json_string(hex));
    if (num >= 0)
        json_object_set_new(t, "stats", stats(data, (size_t)count, (enum gv_dtype)num));
    if (meta)
        json_object_update(t, (json_t *)meta);
    w->seen += nbytes;
    int rc = GV_OK;
    if (w->stored + nbytes <= w->budget) {
        static const uint8_t zeros[8];
        if (w->off % 8)
            rc = write_all(w, zeros, 8 - w->off % 8, err);
        json_object_set_new(t, "offset", json_integer((json_int_t)w->off));
        if (!rc)
            rc = write_all(w, data, nbytes, err);
        w->stored += nbytes;
    } else {
        json_object_set_new(t, "offset", json_null());
        if (w->over_budget_at < 0)
            w->over_budget_at = *id;
    }
    json_array_append_new(w->tensors, t);
    return rc;
}

void gv_cap_add_op(struct gv_cap_writer *w, json_t *op)
{
    json_array_append_new(w->ops, op);
}

int gv_cap_finish(struct gv_cap_writer *w, const json_t *header, struct gv_err *err)
{
    json_t *idx = json_object();
    json_object_set_new(idx, "schema", json_string(GV_CAP_SCHEMA));
    json_object_set_new(idx, "schema_version", json_integer(GV_CAP_SCHEMA_VERSION));
    json_object_set(idx, "header", (json_t *)header);
    json_t *budget = json_object();
    json_object_set_new(budget, "max_bytes", w->budget == UINT64_MAX
                                                 ? json_null()
                                                 : json_integer((json_int_t)w->budget));
    json_object_set_new(budget, "stored_bytes", json_integer((json_int_t)w->stored));
    json_object_set_new(budget, "tensor_bytes", json_integer((json_int_t)w->seen));
    json_object_set_new(budget, "first_unstored_tensor",
                        w->over_budget_at < 0 ? json_null() : json_integer(w->over_budget_at));
    json_object_set_new(idx, "budget", budget);
    json_object_set(idx, "tensors", w->tensors);
    json_object_set(idx, "ops", w->ops);
    char *text = gv_json_dumps(idx, JSON_COMPACT);
    json_decref(idx);
    if (!text)
        return gv_err_set(err, GV_E_NOMEM, "%s: cannot serialise the index", w->path);
    uint64_t at = w->off, len = strlen(text);
    uint8_t tr[24];
    put_le64(tr, at);
    put_le64(tr + 8, len);
    memcpy(tr + 16, endmark, 8);
    int rc = write_all(w, text, len, err);
    free(text);
    if (!rc)
        rc = write_all(w, tr, sizeof tr, err);
    if (!rc && fsync(w->fd) != 0)
        rc = gv_err_set(err, GV_E_IO, "%s: fsync: %s", w->tmp, strerror(errno));
    if (!rc && close(w->fd) != 0)
        rc = gv_err_set(err, GV_E_IO, "%s: close: %s", w->tmp, strerror(errno));
    w->fd = -1;
    if (!rc && rename(w->tmp, w->path) != 0)
        rc = gv_err_set(err, GV_E_IO, "%s: rename: %s", w->path, strerror(errno));
    if (rc) {
        gv_cap_abort(w);
        return rc;
    }
    json_decref(w->tensors);
    json_decref(w->ops);
    w->tensors = w->ops = NULL;
    return GV_OK;
}

void gv_cap_abort(struct gv_cap_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->tmp[0])
        unlink(w->tmp);
    json_decref(w->tensors);
    json_decref(w->ops);
    w->tensors = w->ops = NULL;
}

/* ---------- reading ---------- */

int gv_cap_parse_trailer(const uint8_t trailer[24], uint64_t size, uint64_t *index_off,
                         uint64_t *index_len, const char *what, struct gv_err *err)
{
    if (memcmp(trailer + 16, endmark, 8) != 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: no end marker: the capture is incomplete "
                          "(the capturing process did not finish) or not a gpuvet capture",
                          what);
    uint64_t off = get_le64(trailer), len = get_le64(trailer + 8);
    if (size < 32 || off < 8 || len == 0 || len > GV_CAP_MAX_INDEX || off > size - 24 ||
        len != size - 24 - off)
        return gv_err_set(err, GV_E_FORMAT, "%s: the trailer points outside the file (index at "
                          "%llu, %llu bytes, file %llu bytes): truncated or corrupt",
                          what, (unsigned long long)off, (unsigned long long)len,
                          (unsigned long long)size);
    *index_off = off;
    *index_len = len;
    return GV_OK;
}

static int check_ref(const json_t *v, size_t ntensors, int depth)
{
    if (depth > 16)
        return -1;
    if (json_is_object(v)) {
        const json_t *t = json_object_get(v, "$t");
        if (t)
            return json_is_integer(t) && json_integer_value(t) >= 0 &&
                           (size_t)json_integer_value(t) < ntensors
                       ? 0
                       : -1;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) if (check_ref(x, ntensors, depth + 1)) return -1;
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if (check_ref(x, ntensors, depth + 1)) return -1;
    }
    return 0;
}

static int check_tensor(const json_t *t, size_t i, uint64_t data_end, const char *what,
                        struct gv_err *err)
{
    const json_t *id = json_object_get(t, "id"), *shape = json_object_get(t, "shape");
    const json_t *nb = json_object_get(t, "nbytes"), *off = json_object_get(t, "offset");
    const char *dtype = json_string_value(json_object_get(t, "dtype"));
    const char *sha = json_string_value(json_object_get(t, "sha256"));
    size_t esz = gv_cap_dtype_size(dtype, NULL);
    if (!json_is_object(t) || !json_is_integer(id) || json_integer_value(id) != (json_int_t)i)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: missing or out-of-order id", what, i);
    if (!esz)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: unknown dtype '%s'", what, i,
                          dtype ? dtype : "(none)");
    if (!json_is_array(shape) || json_array_size(shape) > GV_CAP_MAX_DIMS)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: bad shape", what, i);
    uint64_t count = 1;
    size_t k;
    json_t *d;
    json_array_foreach(shape, k, d) {
        json_int_t v = json_integer_value(d);
        if (!json_is_integer(d) || v < 0 || (v && count > (UINT64_MAX / 16) / (uint64_t)v))
            return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: bad shape", what, i);
        count *= (uint64_t)v;
    }
    if (!json_is_integer(nb) || (uint64_t)json_integer_value(nb) != count * esz)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: nbytes does not match %s x shape",
                          what, i, dtype);
    if (!sha || strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64)
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: bad sha256", what, i);
    if (off && !json_is_null(off)) {
        json_int_t o = json_integer_value(off);
        if (!json_is_integer(off) || o < 8 || (uint64_t)o > data_end ||
            count * esz > data_end - (uint64_t)o)
            return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: data outside the file", what, i);
    } else if (!off) {
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor %zu: no offset", what, i);
    }
    return GV_OK;
}

int gv_cap_check_index(const json_t *index, uint64_t data_end, const char *what,
                       struct gv_err *err)
{
    int rc = gv_json_check_schema(index, GV_CAP_SCHEMA, GV_CAP_SCHEMA_VERSION, what, err);
    if (rc)
        return rc;
    const json_t *tensors = json_object_get(index, "tensors"), *ops = json_object_get(index, "ops");
    if (!json_is_object(json_object_get(index, "header")) || !json_is_array(tensors) ||
        !json_is_array(ops))
        return gv_err_set(err, GV_E_FORMAT, "%s: the index lacks its header, tensors or ops", what);
    size_t i;
    json_t *t;
    json_array_foreach(tensors, i, t) {
        if ((rc = check_tensor(t, i, data_end, what, err)))
            return rc;
    }
    size_t nt = json_array_size(tensors);
    json_array_foreach(ops, i, t) {
        const json_t *ix = json_object_get(t, "i");
        if (!json_is_object(t) || !json_is_string(json_object_get(t, "name")) ||
            !json_is_integer(ix) || json_integer_value(ix) != (json_int_t)i)
            return gv_err_set(err, GV_E_FORMAT, "%s: op %zu: missing name or out-of-order index",
                              what, i);
        if (check_ref(json_object_get(t, "args"), nt, 0) ||
            check_ref(json_object_get(t, "kwargs"), nt, 0) ||
            check_ref(json_object_get(t, "mutated"), nt, 0) ||
            check_ref(json_object_get(t, "outputs"), nt, 0)) {
            char name[256];
            gv_escape(json_string_value(json_object_get(t, "name")), name, sizeof name);
            return gv_err_set(err, GV_E_FORMAT, "%s: op %zu ('%s') refers to a tensor that is "
                              "not in the capture", what, i, name);
        }
    }
    const json_t *h = json_object_get(index, "header");
    if (check_ref(json_object_get(h, "inputs"), nt, 0) ||
        check_ref(json_object_get(h, "outputs"), nt, 0) ||
        check_ref(json_object_get(h, "call"), nt, 0))
        return gv_err_set(err, GV_E_FORMAT, "%s: the model's inputs, outputs or call refer to a tensor "
                          "that is not in the capture", what);
    return GV_OK;
}

int gv_cap_open(const char *path, struct gv_cap *c, struct gv_err *err)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    snprintf(c->path, sizeof c->path, "%s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gv_err_set(err, errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO, "%s: %s", path,
                          strerror(errno));
    struct stat st;
    uint8_t head[8], tr[24];
    int rc = GV_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = gv_err_set(err, GV_E_FORMAT, "%s: not a regular file", path);
    else if (st.st_size < 32 || pread(fd, head, 8, 0) != 8 || memcmp(head, magic, 8) != 0)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: not a gpuvet capture (no GVCAP01 magic)", path);
    else if (pread(fd, tr, 24, st.st_size - 24) != 24)
        rc = gv_err_set(err, GV_E_IO, "%s: cannot read the trailer", path);
    uint64_t off = 0, len = 0;
    if (!rc)
        rc = gv_cap_parse_trailer(tr, (uint64_t)st.st_size, &off, &len, path, err);
    char *text = rc ? NULL : malloc(len + 1);
    if (!rc && !text)
        rc = gv_err_set(err, GV_E_NOMEM, "%s: %llu bytes of index", path, (unsigned long long)len);
    if (!rc && pread(fd, text, len, (off_t)off) != (ssize_t)len)
        rc = gv_err_set(err, GV_E_IO, "%s: cannot read the index", path);
    if (!rc) {
        json_error_t je;
        rc = gv_json_parse(text, len, path, &c->index, &je, err);
        if (rc == GV_E_FORMAT)
            rc = gv_err_set(err, GV_E_FORMAT, "%s: the index is not valid JSON (%s)", path, je.text);
        else if (!rc)
            rc = gv_cap_check_index(c->index, off, path, err);
    }
    free(text);
    if (rc) {
        json_decref(c->index);
        c->index = NULL;
        close(fd);
        return rc;
    }
    c->fd = fd;
    c->size = (uint64_t)st.st_size;
    c->header = json_object_get(c->index, "header");
    c->tensors = json_object_get(c->index, "tensors");
    c->ops = json_object_get(c->index, "ops");
    return GV_OK;
}

void gv_cap_close(struct gv_cap *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    json_decref(c->index);
    c->index = NULL;
}

const json_t *gv_cap_tensor(const struct gv_cap *c, int64_t id)
{
    return id < 0 ? NULL : json_array_get(c->tensors, (size_t)id);
}

/* "output of op 3, aten.convolution.default in layer1.0.conv1", "param:fc.weight" */
static void tensor_what(const struct gv_cap *c, const json_t *t, char *out, size_t n)
{
    const char *role = json_string_value(json_object_get(t, "role"));
    long long op = -1;
    if (role && sscanf(role, "op:%lld", &op) == 1 && op >= 0) {
        const json_t *o = json_array_get(c->ops, (size_t)op);
        const char *mod = json_string_value(json_object_get(o, "module"));
        snprintf(out, n, "output of op %lld, %s in %s", op,
                 json_string_value(json_object_get(o, "name")) ? json_string_value(json_object_get(o, "name"))
                                                               : "?",
                 mod && *mod ? mod : "the model itself");
    } else {
        snprintf(out, n, "%s", role ? role : "no role");
    }
}

int gv_cap_verify(const struct gv_cap *c, struct gv_err *err)
{
    for (size_t i = 0; i < json_array_size(c->tensors); i++) {
        if (!json_is_integer(json_object_get(json_array_get(c->tensors, i), "offset")))
            continue;
        void *d = NULL;
        size_t n = 0;
        int rc = gv_cap_read(c, (int64_t)i, &d, &n, err);
        free(d);
        if (rc)
            return rc;
    }
    return GV_OK;
}

int gv_cap_read(const struct gv_cap *c, int64_t id, void **data, size_t *n, struct gv_err *err)
{
    *data = NULL;
    *n = 0;
    const json_t *t = gv_cap_tensor(c, id);
    if (!t)
        return gv_err_set(err, GV_E_FORMAT, "%s: no tensor %lld", c->path, (long long)id);
    const json_t *off = json_object_get(t, "offset");
    if (!json_is_integer(off))
        return gv_err_set(err, GV_E_NOTFOUND, "%s: tensor %lld was not kept (the capture's "
                          "--max-bytes budget was spent): only its digest and statistics are "
                          "there", c->path, (long long)id);
    size_t nb = (size_t)json_integer_value(json_object_get(t, "nbytes"));
    uint8_t *buf = malloc(nb ? nb : 1);
    if (!buf)
        return gv_err_set(err, GV_E_NOMEM, "%s: tensor %lld, %zu bytes", c->path, (long long)id, nb);
    size_t got = 0;
    while (got < nb) {
        ssize_t k = pread(c->fd, buf + got, nb - got, (off_t)json_integer_value(off) + (off_t)got);
        if (k <= 0) {
            free(buf);
            return gv_err_set(err, GV_E_IO, "%s: tensor %lld: short read", c->path, (long long)id);
        }
        got += (size_t)k;
    }
    char hex[65];
    gv_sha256_buf_hex(buf, nb, hex);
    if (strcmp(hex, json_string_value(json_object_get(t, "sha256"))) != 0) {
        free(buf);
        char what[512];
        tensor_what(c, t, what, sizeof what);
        return gv_err_set(err, GV_E_FORMAT, "%s: tensor %lld (%s): its bytes do not match their "
                          "sha256: the file is corrupt", c->path, (long long)id, what);
    }
    *data = buf;
    *n = nb;
    return GV_OK;
}

int gv_cap_is_capture(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    char head[8];
    int yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, 8) == 8 &&
              memcmp(head, magic, 8) == 0;
    close(fd);
    return yes;
}

int gv_cap_load_document(const char *path, size_t json_max, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    if (!gv_cap_is_capture(path))
        return gv_json_read_file(path, json_max, doc, err);
    struct gv_cap c;
    int rc = gv_cap_open(path, &c, err);
    if (rc)
        return rc;
    *doc = json_incref(c.index);
    gv_cap_close(&c);
    return GV_OK;
}
