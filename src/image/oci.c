/* The OCI (and Docker v2 schema 2) documents of an image: index.json and
 * nested indexes, manifests, configs. Parsed from memory and validated: media
 * types known, digests well formed, sizes sane, fields of the right type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/json.h"
#include "base/sha256.h"
#include "image/format.h"

int gv_digest_check(const char *d, const char *what, const char *field, struct gv_err *err)
{
    int ok = d && !strncmp(d, "sha256:", 7) && strlen(d) == 7 + 64;
    for (size_t i = 7; ok && i < 71; i++)
        ok = (d[i] >= '0' && d[i] <= '9') || (d[i] >= 'a' && d[i] <= 'f');
    if (ok)
        return GV_OK;
    int quote = d && strlen(d) <= 80;
    for (const char *c = d; quote && *c; c++)
        quote = *c >= 0x20 && *c < 0x7f;
    if (quote)
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: %s: bad digest \"%s\" (want sha256: and 64 lowercase hex digits)",
                          what, field, d);
    return gv_err_set(err, GV_E_FORMAT,
                      "%s: %s: bad digest (want sha256: and 64 lowercase hex digits)", what, field);
}

const char *gv_image_quote(const char *text, char *out, size_t outsz)
{
    size_t i = 0;
    for (; text && text[i] && i + 1 < outsz; i++)
        out[i] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
    out[i] = '\0';
    return out;
}

void gv_digest_of(const void *data, size_t len, char out[72])
{
    char hex[65];
    gv_sha256_buf_hex(data, len, hex);
    snprintf(out, 72, "sha256:%s", hex);
}

static const struct {
    const char *type;
    enum gv_media_kind kind;
    enum gv_layer_codec codec;
} media[] = {
    {"application/vnd.oci.image.index.v1+json", GV_MEDIA_INDEX, GV_CODEC_NONE},
    {"application/vnd.docker.distribution.manifest.list.v2+json", GV_MEDIA_INDEX, GV_CODEC_NONE},
    {"application/vnd.oci.image.manifest.v1+json", GV_MEDIA_MANIFEST, GV_CODEC_NONE},
    {"application/vnd.docker.distribution.manifest.v2+json", GV_MEDIA_MANIFEST, GV_CODEC_NONE},
    {"application/vnd.oci.image.config.v1+json", GV_MEDIA_CONFIG, GV_CODEC_NONE},
    {"application/vnd.docker.container.image.v1+json", GV_MEDIA_CONFIG, GV_CODEC_NONE},
    {"application/vnd.oci.image.layer.v1.tar", GV_MEDIA_LAYER, GV_CODEC_NONE},
    {"application/vnd.oci.image.layer.v1.tar+gzip", GV_MEDIA_LAYER, GV_CODEC_GZIP},
    {"application/vnd.oci.image.layer.v1.tar+zstd", GV_MEDIA_LAYER, GV_CODEC_ZSTD},
    {"application/vnd.oci.image.layer.nondistributable.v1.tar", GV_MEDIA_LAYER, GV_CODEC_NONE},
    {"application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", GV_MEDIA_LAYER,
     GV_CODEC_GZIP},
    {"application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", GV_MEDIA_LAYER,
     GV_CODEC_ZSTD},
    {"application/vnd.docker.image.rootfs.diff.tar", GV_MEDIA_LAYER, GV_CODEC_NONE},
    {"application/vnd.docker.image.rootfs.diff.tar.gzip", GV_MEDIA_LAYER, GV_CODEC_GZIP},
    {"application/vnd.docker.image.rootfs.diff.tar.zstd", GV_MEDIA_LAYER, GV_CODEC_ZSTD},
    {"application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", GV_MEDIA_LAYER, GV_CODEC_GZIP},
};

enum gv_media_kind gv_media_kind(const char *media_type, enum gv_layer_codec *codec)
{
    for (size_t i = 0; i < sizeof media / sizeof media[0]; i++)
        if (media_type && !strcmp(media_type, media[i].type)) {
            if (codec)
                *codec = media[i].codec;
            return media[i].kind;
        }
    return GV_MEDIA_UNKNOWN;
}

void gv_host_platform(struct gv_oci_platform *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->os, sizeof p->os, "linux");
    struct utsname u;
    const char *m = uname(&u) == 0 ? u.machine : "";
    const char *arch = !strcmp(m, "x86_64")    ? "amd64"
                       : !strcmp(m, "aarch64") ? "arm64"
                       : !strcmp(m, "ppc64le") ? "ppc64le"
                       : !strcmp(m, "s390x")   ? "s390x"
                       : !strcmp(m, "riscv64") ? "riscv64"
                                               : m;
    snprintf(p->architecture, sizeof p->architecture, "%s", arch);
}

/* The document of data as an object, or an error naming what. */
static int parse_object(const char *data, size_t len, const char *what, json_t **doc,
                        struct gv_err *err)
{
    json_error_t je;
    int rc = gv_json_parse(data, len, what, doc, &je, err);
    if (rc == GV_E_FORMAT)
        return gv_err_set(err, GV_E_FORMAT, "%s: not JSON: line %d column %d: %s", what, je.line,
                          je.column, je.text);
    if (rc != GV_OK)
        return rc;
    if (!json_is_object(*doc)) {
        json_decref(*doc);
        *doc = NULL;
        return gv_err_set(err, GV_E_FORMAT, "%s: JSON not an object", what);
    }
    return GV_OK;
}

/* obj[key] as a string into out: absent is "" (GV_OK), another type or too
 * long an error naming the field. */
static int opt_str(const json_t *obj, const char *key, char *out, size_t outsz, const char *what,
                   const char *field, struct gv_err *err)
{
    out[0] = '\0';
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return GV_OK;
    if (!json_is_string(v))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: not a string", what, field);
    if (json_string_length(v) >= outsz || strlen(json_string_value(v)) != json_string_length(v))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: too long or holds a NUL", what, field);
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return GV_OK;
}

static char *annotation(const json_t *d, const char *key)
{
    const json_t *a = json_object_get(d, "annotations");
    const char *s = json_string_value(json_object_get(a, key));
    if (!s || strlen(s) > 1024)
        return NULL;
    return strdup(s);
}

void gv_oci_desc_free(struct gv_oci_desc *d)
{
    free(d->ref_name);
    free(d->image_name);
    d->ref_name = d->image_name = NULL;
}

static int platform_parse(const json_t *p, struct gv_oci_platform *out, const char *what,
                          struct gv_err *err)
{
    if (!json_is_object(p))
        return gv_err_set(err, GV_E_FORMAT, "%s: platform: not an object", what);
    int rc = opt_str(p, "os", out->os, sizeof out->os, what, "platform.os", err);
    if (rc == GV_OK)
        rc = opt_str(p, "architecture", out->architecture, sizeof out->architecture, what,
                     "platform.architecture", err);
    if (rc == GV_OK)
        rc = opt_str(p, "variant", out->variant, sizeof out->variant, what, "platform.variant",
                     err);
    return rc;
}

/* One descriptor; field names it ("manifests[2]"). want: the kind its media
 * type must be (GV_MEDIA_UNKNOWN: index or manifest). */
static int desc_parse(const json_t *d, const char *what, const char *field, enum gv_media_kind want,
                      struct gv_oci_desc *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    char f[160];
    if (!json_is_object(d))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: not an object", what, field);
    snprintf(f, sizeof f, "%s.mediaType", field);
    int rc = opt_str(d, "mediaType", out->media_type, sizeof out->media_type, what, f, err);
    if (rc != GV_OK)
        return rc;
    enum gv_media_kind k = gv_media_kind(out->media_type, NULL);
    int fits = want == GV_MEDIA_UNKNOWN ? (k == GV_MEDIA_INDEX || k == GV_MEDIA_MANIFEST)
                                        : k == want;
    char q[129];
    if (!fits)
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: unknown media type \"%s\"", what, f,
                          gv_image_quote(out->media_type, q, sizeof q));
    snprintf(f, sizeof f, "%s.digest", field);
    const char *dg = json_string_value(json_object_get(d, "digest"));
    if ((rc = gv_digest_check(dg, what, f, err)) != GV_OK)
        return rc;
    snprintf(out->digest, sizeof out->digest, "%s", dg);
    const json_t *sz = json_object_get(d, "size");
    if (!json_is_integer(sz) || json_integer_value(sz) < 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: %s.size: not a non-negative integer", what,
                          field);
    out->size = json_integer_value(sz);
    const json_t *p = json_object_get(d, "platform");
    if (p) {
        if ((rc = platform_parse(p, &out->platform, what, err)) != GV_OK)
            return rc;
        out->has_platform = 1;
    }
    out->ref_name = annotation(d, "org.opencontainers.image.ref.name");
    out->image_name = annotation(d, "io.containerd.image.name");
    return GV_OK;
}

static int check_schema_version(const json_t *doc, const char *what, struct gv_err *err)
{
    const json_t *v = json_object_get(doc, "schemaVersion");
    if (v && (!json_is_integer(v) || json_integer_value(v) != 2))
        return gv_err_set(err, GV_E_SCHEMA, "%s: schemaVersion: want 2", what);
    return GV_OK;
}

/* An index or manifest: an object, schemaVersion 2, its mediaType (when it
 * names one, into media_type[128]) of kind. On error *doc is NULL. */
static int doc_head(const char *data, size_t len, const char *what, enum gv_media_kind kind,
                    char *media_type, json_t **doc, struct gv_err *err)
{
    int rc = parse_object(data, len, what, doc, err);
    if (rc != GV_OK)
        return rc;
    if ((rc = check_schema_version(*doc, what, err)) == GV_OK)
        rc = opt_str(*doc, "mediaType", media_type, 128, what, "mediaType", err);
    char q[129];
    if (rc == GV_OK && media_type[0] && gv_media_kind(media_type, NULL) != kind)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: mediaType: unknown media type \"%s\" for %s",
                        what, gv_image_quote(media_type, q, sizeof q),
                        kind == GV_MEDIA_INDEX ? "an index" : "a manifest");
    if (rc != GV_OK) {
        json_decref(*doc);
        *doc = NULL;
    }
    return rc;
}

static int descs_parse(const json_t *arr, const char *what, const char *key,
                       enum gv_media_kind want, struct gv_oci_desc **out, size_t *n,
                       struct gv_err *err)
{
    *out = NULL;
    *n = 0;
    if (!json_is_array(arr))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: missing or not an array", what, key);
    size_t cnt = json_array_size(arr);
    if (cnt == 0)
        return GV_OK;
    *out = calloc(cnt, sizeof **out);
    if (!*out)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < cnt; i++) {
        char f[64];
        snprintf(f, sizeof f, "%s[%zu]", key, i);
        int rc = desc_parse(json_array_get(arr, i), what, f, want, &(*out)[i], err);
        *n = i + 1;
        if (rc != GV_OK)
            return rc;
    }
    return GV_OK;
}

static void descs_free(struct gv_oci_desc *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gv_oci_desc_free(&d[i]);
    free(d);
}

int gv_oci_index_parse(const char *data, size_t len, const char *what, struct gv_oci_index *out,
                       struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc;
    int rc = doc_head(data, len, what, GV_MEDIA_INDEX, out->media_type, &doc, err);
    if (rc != GV_OK)
        return rc;
    rc = descs_parse(json_object_get(doc, "manifests"), what, "manifests", GV_MEDIA_UNKNOWN,
                         &out->d, &out->n, err);
    json_decref(doc);
    if (rc != GV_OK)
        gv_oci_index_free(out);
    return rc;
}

void gv_oci_index_free(struct gv_oci_index *x)
{
    descs_free(x->d, x->n);
    x->d = NULL;
    x->n = 0;
}

int gv_oci_manifest_parse(const char *data, size_t len, const char *what,
                          struct gv_oci_manifest *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc;
    int rc = doc_head(data, len, what, GV_MEDIA_MANIFEST, out->media_type, &doc, err);
    if (rc != GV_OK)
        return rc;
    rc = desc_parse(json_object_get(doc, "config"), what, "config", GV_MEDIA_CONFIG,
                        &out->config, err);
    if (rc == GV_OK)
        rc = descs_parse(json_object_get(doc, "layers"), what, "layers", GV_MEDIA_LAYER,
                         &out->layers, &out->nlayers, err);
    json_decref(doc);
    if (rc != GV_OK)
        gv_oci_manifest_free(out);
    return rc;
}

void gv_oci_manifest_free(struct gv_oci_manifest *m)
{
    gv_oci_desc_free(&m->config);
    descs_free(m->layers, m->nlayers);
    m->layers = NULL;
    m->nlayers = 0;
}

/* A list of strings, or absent/null: GV_OK; anything else names field. */
static int str_array_ok(const json_t *v, const char *what, const char *field, struct gv_err *err)
{
    if (!v || json_is_null(v))
        return GV_OK;
    if (!json_is_array(v))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: not an array", what, field);
    size_t i;
    const json_t *s;
    json_array_foreach(v, i, s) if (!json_is_string(s) ||
                                    strlen(json_string_value(s)) != json_string_length(s))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s[%zu]: not a string", what, field, i);
    return GV_OK;
}

static int config_types(const json_t *doc, const char *what, struct gv_err *err)
{
    const json_t *c = json_object_get(doc, "config");
    if (c && !json_is_null(c) && !json_is_object(c))
        return gv_err_set(err, GV_E_FORMAT, "%s: config: not an object", what);
    static const char *const lists[] = {"Env", "Entrypoint", "Cmd"};
    for (size_t i = 0; i < 3; i++) {
        char f[32];
        snprintf(f, sizeof f, "config.%s", lists[i]);
        int rc = str_array_ok(json_object_get(c, lists[i]), what, f, err);
        if (rc != GV_OK)
            return rc;
    }
    static const char *const strs[] = {"User", "WorkingDir"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(c, strs[i]);
        if (v && !json_is_string(v))
            return gv_err_set(err, GV_E_FORMAT, "%s: config.%s: not a string", what, strs[i]);
    }
    const json_t *l = json_object_get(c, "Labels");
    if (l && !json_is_null(l)) {
        if (!json_is_object(l))
            return gv_err_set(err, GV_E_FORMAT, "%s: config.Labels: not an object", what);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)l, k, v) if (!json_is_string(v))
            return gv_err_set(err, GV_E_FORMAT, "%s: config.Labels: a value not a string", what);
    }
    const json_t *cr = json_object_get(doc, "created");
    if (cr && !json_is_string(cr))
        return gv_err_set(err, GV_E_FORMAT, "%s: created: not a string", what);
    return GV_OK;
}

static int diff_ids_parse(const json_t *doc, const char *what, struct gv_oci_config *out,
                          struct gv_err *err)
{
    const json_t *r = json_object_get(doc, "rootfs");
    if (!json_is_object(r))
        return gv_err_set(err, GV_E_FORMAT, "%s: rootfs: missing or not an object", what);
    const char *type = json_string_value(json_object_get(r, "type"));
    if (!type || strcmp(type, "layers") != 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: rootfs.type: want \"layers\"", what);
    const json_t *ids = json_object_get(r, "diff_ids");
    if (!json_is_array(ids))
        return gv_err_set(err, GV_E_FORMAT, "%s: rootfs.diff_ids: missing or not an array", what);
    size_t n = json_array_size(ids);
    out->diff_ids = calloc(n ? n : 1, sizeof *out->diff_ids);
    if (!out->diff_ids)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < n; i++) {
        char f[48];
        snprintf(f, sizeof f, "rootfs.diff_ids[%zu]", i);
        const char *d = json_string_value(json_array_get(ids, i));
        int rc = gv_digest_check(d, what, f, err);
        if (rc != GV_OK)
            return rc;
        snprintf(out->diff_ids[i], 72, "%s", d);
        out->ndiff = i + 1;
    }
    return GV_OK;
}

/* created_by of each history entry that made a layer (empty_layer skipped). */
static int history_parse(const json_t *doc, const char *what, struct gv_oci_config *out,
                         struct gv_err *err)
{
    const json_t *h = json_object_get(doc, "history");
    if (!h || json_is_null(h))
        return GV_OK;
    if (!json_is_array(h))
        return gv_err_set(err, GV_E_FORMAT, "%s: history: not an array", what);
    out->created_by = calloc(json_array_size(h) + 1, sizeof *out->created_by);
    if (!out->created_by)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    size_t i;
    const json_t *e;
    json_array_foreach(h, i, e) {
        if (!json_is_object(e))
            return gv_err_set(err, GV_E_FORMAT, "%s: history[%zu]: not an object", what, i);
        if (json_is_true(json_object_get(e, "empty_layer")))
            continue;
        const char *cb = json_string_value(json_object_get(e, "created_by"));
        if (cb && !(out->created_by[out->nhist] = strdup(cb)))
            return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
        out->nhist++;
    }
    return GV_OK;
}

static int env_copy(const json_t *doc, const char *what, struct gv_oci_config *out,
                    struct gv_err *err)
{
    const json_t *env = json_object_get(json_object_get(doc, "config"), "Env");
    size_t n = json_is_array(env) ? json_array_size(env) : 0;
    out->env = calloc(n + 1, sizeof *out->env);
    if (!out->env)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < n; i++)
        if (!(out->env[i] = strdup(json_string_value(json_array_get(env, i)))))
            return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    return GV_OK;
}

int gv_oci_config_parse(const char *data, size_t len, const char *what, struct gv_oci_config *out,
                        struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = parse_object(data, len, what, &out->doc, err);
    if (rc != GV_OK)
        return rc;
    rc = opt_str(out->doc, "os", out->platform.os, sizeof out->platform.os, what, "os", err);
    if (rc == GV_OK)
        rc = opt_str(out->doc, "architecture", out->platform.architecture,
                     sizeof out->platform.architecture, what, "architecture", err);
    if (rc == GV_OK)
        rc = opt_str(out->doc, "variant", out->platform.variant, sizeof out->platform.variant,
                     what, "variant", err);
    if (rc == GV_OK)
        rc = config_types(out->doc, what, err);
    if (rc == GV_OK)
        rc = diff_ids_parse(out->doc, what, out, err);
    if (rc == GV_OK)
        rc = history_parse(out->doc, what, out, err);
    if (rc == GV_OK)
        rc = env_copy(out->doc, what, out, err);
    if (rc != GV_OK)
        gv_oci_config_free(out);
    return rc;
}

void gv_oci_config_free(struct gv_oci_config *c)
{
    json_decref(c->doc);
    free(c->diff_ids);
    for (size_t i = 0; c->created_by && i < c->nhist; i++)
        free(c->created_by[i]);
    free(c->created_by);
    for (size_t i = 0; c->env && c->env[i]; i++)
        free(c->env[i]);
    free(c->env);
    memset(c, 0, sizeof *c);
}
