/* On-disk cache of references: one file per (inputs, case semantics). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/sha256.h"
#include "num/ref.h"

static const char magic[8] = {'G', 'P', 'U', 'V', 'E', 'T', 'R', 'F'};

#define OFF_VERSION 8
#define OFF_MODEL 12
#define OFF_N 16
#define OFF_KEY 24
#define OFF_SUM 88

void gv_refcache_key(const struct gv_case *c, const char *input_digest, char key[65])
{
    char text[1024];
    snprintf(text, sizeof text,
             "gpuvet-ref layout=%d model=%d op=%s in=%s compute=%s out=%s unary=%s "
             "batch=%lld m=%lld n=%lld k=%lld c=%lld h=%lld w=%lld r=%lld s=%lld stride=%lld "
             "pad=%lld rows=%lld len=%lld bh=%lld seq=%lld d=%lld causal=%d eps=%a inputs=%s",
             GV_REFCACHE_VERSION, GV_REF_MODEL_VERSION, gv_op_name(c->op),
             gv_dtype_name(c->in_dtype), gv_dtype_name(c->compute_dtype),
             gv_dtype_name(c->out_dtype), gv_unary_name(c->unary), (long long)c->batch,
             (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->c, (long long)c->h,
             (long long)c->w, (long long)c->r, (long long)c->s, (long long)c->stride,
             (long long)c->pad, (long long)c->rows, (long long)c->len, (long long)c->bh,
             (long long)c->seq, (long long)c->d, c->causal, c->eps,
             input_digest ? input_digest : "");
    gv_sha256_buf_hex(text, strlen(text), key);
}

void gv_ref_input_digest(const struct gv_buffer *in, int nin, char out[65])
{
    struct gv_sha256 s;
    gv_sha256_init(&s);
    for (int i = 0; i < nin; i++) {
        char head[64];
        int n = snprintf(head, sizeof head, "%s:%zu:", gv_dtype_name(in[i].dtype), in[i].count);
        gv_sha256_update(&s, head, (size_t)n);
        if (in[i].data)
            gv_sha256_update(&s, in[i].data, in[i].count * gv_dtype_size(in[i].dtype));
    }
    uint8_t d[32];
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, out);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

int gv_refcache_parse(const void *data, size_t len, const char key[65], size_t n, double *ref,
                      double *bound, double *scale, struct gv_err *err)
{
    const unsigned char *p = data;
    if (len < GV_REFCACHE_HEADER)
        return gv_err_set(err, GV_E_FORMAT, "reference cache: truncated header (%zu bytes)", len);
    if (memcmp(p, magic, sizeof magic) != 0)
        return gv_err_set(err, GV_E_FORMAT, "reference cache: not a gpuvet reference file");
    if (get32(p + OFF_VERSION) != GV_REFCACHE_VERSION || get32(p + OFF_MODEL) != GV_REF_MODEL_VERSION)
        return gv_err_set(err, GV_E_FORMAT, "reference cache: layout %u / model %u, expected %d / %d",
                          get32(p + OFF_VERSION), get32(p + OFF_MODEL), GV_REFCACHE_VERSION,
                          GV_REF_MODEL_VERSION);
    if (memcmp(p + OFF_KEY, key, 64) != 0)
        return gv_err_set(err, GV_E_FORMAT, "reference cache: entry is for another case");
    uint64_t fn = get64(p + OFF_N);
    if (fn != (uint64_t)n)
        return gv_err_set(err, GV_E_FORMAT, "reference cache: %llu elements, expected %zu",
                          (unsigned long long)fn, n);
    if (n > (SIZE_MAX - GV_REFCACHE_HEADER) / 24 || len != GV_REFCACHE_HEADER + 24 * n)
        return gv_err_set(err, GV_E_FORMAT, "reference cache: %zu bytes, expected %zu", len,
                          n <= SIZE_MAX / 48 ? (size_t)GV_REFCACHE_HEADER + 24 * n : 0);
    uint8_t sum[32];
    struct gv_sha256 s;
    gv_sha256_init(&s);
    gv_sha256_update(&s, p + GV_REFCACHE_HEADER, 24 * n);
    gv_sha256_final(&s, sum);
    if (memcmp(sum, p + OFF_SUM, 32) != 0)
        return gv_err_set(err, GV_E_FORMAT, "reference cache: payload checksum mismatch");
    const unsigned char *q = p + GV_REFCACHE_HEADER;
    memcpy(ref, q, 8 * n);
    memcpy(bound, q + 8 * n, 8 * n);
    memcpy(scale, q + 16 * n, 8 * n);
    return GV_OK;
}

int gv_refcache_encode(const char key[65], size_t n, const double *ref, const double *bound,
                       const double *scale, void **data, size_t *len, struct gv_err *err)
{
    *data = NULL;
    *len = 0;
    if (n > (SIZE_MAX - GV_REFCACHE_HEADER) / 24)
        return gv_err_set(err, GV_E_USAGE, "reference cache: %zu elements is too many", n);
    size_t total = GV_REFCACHE_HEADER + 24 * n;
    unsigned char *p = calloc(1, total);
    if (!p)
        return gv_err_set(err, GV_E_NOMEM, "reference cache: out of memory");
    memcpy(p, magic, sizeof magic);
    uint32_t v = GV_REFCACHE_VERSION, m = GV_REF_MODEL_VERSION;
    uint64_t n64 = n;
    memcpy(p + OFF_VERSION, &v, 4);
    memcpy(p + OFF_MODEL, &m, 4);
    memcpy(p + OFF_N, &n64, 8);
    memcpy(p + OFF_KEY, key, 64);
    unsigned char *q = p + GV_REFCACHE_HEADER;
    memcpy(q, ref, 8 * n);
    memcpy(q + 8 * n, bound, 8 * n);
    memcpy(q + 16 * n, scale, 8 * n);
    struct gv_sha256 s;
    gv_sha256_init(&s);
    gv_sha256_update(&s, q, 24 * n);
    gv_sha256_final(&s, p + OFF_SUM);
    *data = p;
    *len = total;
    return GV_OK;
}

/* Path of the entry for key, or -1 when there is no usable cache directory. */
static int entry_path(const char key[65], char *path, size_t size)
{
    char dir[GV_PATH_MAX];
    struct gv_err ignored;
    if (gv_cache_dir(dir, sizeof dir, "ref", &ignored) != GV_OK)
        return -1;
    int n = snprintf(path, size, "%s/%s.ref", dir, key);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int try_read(const char *path, const char key[65], size_t n, double *ref, double *bound,
                    double *scale)
{
    char *data = NULL;
    size_t len = 0;
    struct gv_err e;
    if (n > (SIZE_MAX - GV_REFCACHE_HEADER - 1) / 24)
        return -1;
    if (gv_read_file(path, GV_REFCACHE_HEADER + 24 * n + 1, &data, &len, &e) != GV_OK)
        return -1;
    int rc = gv_refcache_parse(data, len, key, n, ref, bound, scale, &e);
    free(data);
    return rc == GV_OK ? 0 : -1;
}

int gv_ref_cached(const struct gv_case *c, const struct gv_buffer *in, int nin,
                  const char *input_digest, double *ref, double *bound, double *scale,
                  int *hit, struct gv_err *err)
{
    *hit = 0;
    char digest[65], key[65], path[GV_PATH_MAX];
    if (!input_digest) {
        gv_ref_input_digest(in, nin, digest);
        input_digest = digest;
    }
    gv_refcache_key(c, input_digest, key);
    size_t n = gv_case_out_count(c);
    int have_path = n > 0 && entry_path(key, path, sizeof path) == 0;
    if (have_path && try_read(path, key, n, ref, bound, scale) == 0) {
        *hit = 1;
        return GV_OK;
    }
    int rc = gv_ref_compute(c, in, nin, ref, bound, scale, 0, err);
    if (rc != GV_OK || !have_path)
        return rc;
    void *data;
    size_t len;
    struct gv_err e;
    if (gv_refcache_encode(key, n, ref, bound, scale, &data, &len, &e) == GV_OK) {
        gv_write_atomic(path, data, len, 0644, &e); /* a failed store only costs a recompute */
        free(data);
    }
    return GV_OK;
}
