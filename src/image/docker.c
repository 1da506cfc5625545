/* `docker save` tarballs: manifest.json (Config, RepoTags, Layers by member
 * name), the legacy layout (ID/layer.tar or DIFFID.tar, CONFIG.json) and the
 * RepoTags of Docker 25+'s OCI layout. Member names from the document are
 * taken only when plain and relative; layers are found in the tarball's index,
 * never on the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/sha256.h"
#include "image/format.h"

int gv_member_name_ok(const char *name)
{
    if (!name || !name[0] || name[0] == '/' || strlen(name) > 1024)
        return 0;
    for (const char *c = name; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
            return 0;
    const char *p = name;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        if (!e)
            break;
        p = e + 1;
        if (!*p)
            return 0;
    }
    return 1;
}

static void entry_free(struct gv_docker_entry *e)
{
    free(e->config);
    for (size_t i = 0; i < e->ntags; i++)
        free(e->tags[i]);
    free(e->tags);
    for (size_t i = 0; i < e->nlayers; i++)
        free(e->layers[i]);
    free(e->layers);
}

void gv_docker_manifest_free(struct gv_docker_manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        entry_free(&m->e[i]);
    free(m->e);
    m->e = NULL;
    m->n = 0;
}

/* A member name from the document, checked. */
static int member_copy(const json_t *v, const char *what, const char *field, char **out,
                       struct gv_err *err)
{
    const char *s = json_string_value(v);
    if (!s || strlen(s) != json_string_length(v))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: missing or not a string", what, field);
    char q[201];
    if (!gv_member_name_ok(s))
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: %s: member name \"%s\" refused (absolute, \"..\", or not plain)",
                          what, field, gv_image_quote(s, q, sizeof q));
    if (!(*out = strdup(s)))
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    return GV_OK;
}

static int strings_copy(const json_t *arr, const char *what, const char *field, int members,
                        char ***out, size_t *n, struct gv_err *err)
{
    *out = NULL;
    *n = 0;
    if (!arr || json_is_null(arr))
        return GV_OK;
    if (!json_is_array(arr))
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: not an array", what, field);
    *out = calloc(json_array_size(arr) + 1, sizeof **out);
    if (!*out)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char f[64];
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        const json_t *v = json_array_get(arr, i);
        int rc;
        if (members) {
            rc = member_copy(v, what, f, &(*out)[i], err);
        } else if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
            rc = gv_err_set(err, GV_E_FORMAT, "%s: %s: not a string", what, f);
        } else {
            (*out)[i] = strdup(json_string_value(v));
            rc = (*out)[i] ? GV_OK : gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
        }
        if (rc != GV_OK)
            return rc;
        *n = i + 1;
    }
    return GV_OK;
}

static int entry_parse(const json_t *o, const char *what, size_t i, struct gv_docker_entry *e,
                       struct gv_err *err)
{
    char f[64];
    if (!json_is_object(o))
        return gv_err_set(err, GV_E_FORMAT, "%s: [%zu]: not an object", what, i);
    snprintf(f, sizeof f, "[%zu].Config", i);
    int rc = member_copy(json_object_get(o, "Config"), what, f, &e->config, err);
    if (rc == GV_OK) {
        snprintf(f, sizeof f, "[%zu].RepoTags", i);
        rc = strings_copy(json_object_get(o, "RepoTags"), what, f, 0, &e->tags, &e->ntags, err);
    }
    if (rc == GV_OK) {
        snprintf(f, sizeof f, "[%zu].Layers", i);
        const json_t *l = json_object_get(o, "Layers");
        if (!json_is_array(l))
            return gv_err_set(err, GV_E_FORMAT, "%s: %s: missing or not an array", what, f);
        rc = strings_copy(l, what, f, 1, &e->layers, &e->nlayers, err);
    }
    return rc;
}

int gv_docker_manifest_parse(const char *data, size_t len, const char *what,
                             struct gv_docker_manifest *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc;
    json_error_t je;
    int rc = gv_json_parse(data, len, what, &doc, &je, err);
    if (rc == GV_E_FORMAT)
        return gv_err_set(err, GV_E_FORMAT, "%s: not JSON: line %d column %d: %s", what, je.line,
                          je.column, je.text);
    if (rc != GV_OK)
        return rc;
    if (!json_is_array(doc) || json_array_size(doc) == 0) {
        json_decref(doc);
        return gv_err_set(err, GV_E_FORMAT, "%s: not a non-empty JSON array", what);
    }
    size_t n = json_array_size(doc);
    out->e = calloc(n, sizeof *out->e);
    if (!out->e)
        rc = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    for (size_t i = 0; rc == GV_OK && i < n; i++) {
        out->n = i + 1;
        rc = entry_parse(json_array_get(doc, i), what, i, &out->e[i], err);
    }
    json_decref(doc);
    if (rc != GV_OK)
        gv_docker_manifest_free(out);
    return rc;
}

/* name (a RepoTag, a containerd image name) answers tag: the same, or the
 * same after a registry/namespace ("docker.io/tiny/img:v2" for "tiny/img:v2"),
 * or its tag part alone ("v2"). */
static int name_matches(const char *name, const char *tag)
{
    size_t nl = strlen(name), tl = strlen(tag);
    if (!strcmp(name, tag))
        return 1;
    if (nl > tl && name[nl - tl - 1] == '/' && !strcmp(name + nl - tl, tag))
        return 1;
    const char *colon = strrchr(name, ':');
    return !strchr(tag, ':') && !strchr(tag, '/') && colon && !strchr(colon, '/') &&
           !strcmp(colon + 1, tag);
}

int gv_image_name_matches(const char *name, const char *tag) { return name_matches(name, tag); }

static int entry_pick(const struct gv_docker_manifest *m, const char *tag, const char *what,
                      size_t *out, struct gv_err *err)
{
    if (!tag[0]) {
        if (m->n == 1) {
            *out = 0;
            return GV_OK;
        }
        return gv_err_set(err, GV_E_USAGE, "%s: %zu images; name one with FILE:TAG", what, m->n);
    }
    for (size_t i = 0; i < m->n; i++)
        for (size_t j = 0; j < m->e[i].ntags; j++)
            if (name_matches(m->e[i].tags[j], tag)) {
                *out = i;
                return GV_OK;
            }
    return gv_err_set(err, GV_E_NOTFOUND, "%s: no image tagged \"%.200s\" (RepoTags)", what, tag);
}

static enum gv_layer_codec sniff(const unsigned char *h, size_t n)
{
    if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
        return GV_CODEC_GZIP;
    if (n >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f && h[3] == 0xfd)
        return GV_CODEC_ZSTD;
    return GV_CODEC_NONE;
}

/* sha256 of a whole blob, streamed. */
static int blob_digest(struct gv_blob *b, char out[72], struct gv_err *err)
{
    struct gv_sha256 s;
    gv_sha256_init(&s);
    unsigned char buf[65536];
    ssize_t r;
    while ((r = gv_blob_read(b, buf, sizeof buf, err)) > 0)
        gv_sha256_update(&s, buf, (size_t)r);
    if (r < 0)
        return (int)r;
    uint8_t d[32];
    char hex[65];
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, hex);
    snprintf(out, 72, "sha256:%s", hex);
    return GV_OK;
}

/* A legacy layer: its member's size, its codec from the bytes, and its digest:
 * an uncompressed layer's digest is its diff_id (checked by the stage as it
 * streams it); a compressed one is hashed here. */
static int legacy_layer(struct gv_image *img, size_t i, const char *member, struct gv_err *err)
{
    struct gv_image_layer *l = &img->layers[i];
    char what[96];
    snprintf(what, sizeof what, "layer %zu (%.60s)", i, member);
    struct gv_blob *b;
    int rc = gv_image_member(img, member, what, &b, err);
    if (rc != GV_OK)
        return rc;
    unsigned char head[4];
    ssize_t n = gv_blob_read(b, head, sizeof head, err);
    l->size = gv_blob_size(b);
    l->codec = n > 0 ? sniff(head, (size_t)n) : GV_CODEC_NONE;
    snprintf(l->diff_id, sizeof l->diff_id, "%s", img->config.diff_ids[i]);
    static const char *const types[] = {"application/vnd.docker.image.rootfs.diff.tar",
                                        "application/vnd.docker.image.rootfs.diff.tar.gzip",
                                        "application/vnd.docker.image.rootfs.diff.tar.zstd"};
    snprintf(l->media_type, sizeof l->media_type, "%s", types[l->codec]);
    gv_blob_close(b);
    if (n < 0)
        return (int)n;
    if (l->codec == GV_CODEC_NONE) {
        snprintf(l->digest, sizeof l->digest, "%s", l->diff_id);
        return GV_OK;
    }
    if ((rc = gv_image_member(img, member, what, &b, err)) != GV_OK)
        return rc;
    rc = blob_digest(b, l->digest, err);
    gv_blob_close(b);
    return rc;
}

static int legacy_config(struct gv_image *img, const struct gv_docker_entry *e,
                         struct gv_err *err)
{
    char *data;
    size_t len;
    char what[300];
    snprintf(what, sizeof what, "%s: config %s", img->path, e->config);
    int rc = gv_image_read_member(img, e->config, what, &data, &len, err);
    if (rc != GV_OK)
        return rc;
    gv_digest_of(data, len, img->config_digest);
    rc = gv_oci_config_parse(data, len, what, &img->config, err);
    free(data);
    if (rc == GV_OK && img->config.ndiff != e->nlayers)
        rc = gv_err_set(err, GV_E_FORMAT,
                        "%s: manifest.json names %zu layers, the config's rootfs.diff_ids %zu",
                        img->path, e->nlayers, img->config.ndiff);
    return rc;
}

/* The archive's manifest.json, read and parsed; what gets its name. */
static int read_manifest(const struct gv_image *img, char *what, size_t whatsz,
                         struct gv_docker_manifest *m, struct gv_err *err)
{
    snprintf(what, whatsz, "%s: manifest.json", img->path);
    char *data;
    size_t len;
    int rc = gv_image_read_member(img, "manifest.json", what, &data, &len, err);
    if (rc != GV_OK)
        return rc;
    rc = gv_docker_manifest_parse(data, len, what, m, err);
    free(data);
    return rc;
}

int gv_docker_open_legacy(struct gv_image *img, struct gv_err *err)
{
    char what[4200];
    struct gv_docker_manifest m;
    int rc = read_manifest(img, what, sizeof what, &m, err);
    if (rc != GV_OK)
        return rc;
    size_t pick = 0;
    rc = entry_pick(&m, img->tag, what, &pick, err);
    const struct gv_docker_entry *e = rc == GV_OK ? &m.e[pick] : NULL;
    if (rc == GV_OK)
        rc = legacy_config(img, e, err);
    if (rc == GV_OK) {
        img->layers = calloc(e->nlayers ? e->nlayers : 1, sizeof *img->layers);
        img->layer_members = calloc(e->nlayers + 1, sizeof *img->layer_members);
        if (!img->layers || !img->layer_members)
            rc = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    }
    for (size_t i = 0; rc == GV_OK && i < e->nlayers; i++) {
        img->nlayers = i + 1;
        if (i < img->config.nhist && img->config.created_by[i])
            img->layers[i].created_by = strdup(img->config.created_by[i]);
        if (!(img->layer_members[i] = strdup(e->layers[i])))
            rc = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
        else
            rc = legacy_layer(img, i, e->layers[i], err);
    }
    for (size_t i = 0; rc == GV_OK && i < e->ntags; i++)
        rc = gv_image_add_tag(img, e->tags[i], err);
    gv_docker_manifest_free(&m);
    return rc;
}

int gv_docker_add_repotags(struct gv_image *img, struct gv_err *err)
{
    if (!gv_tarindex_find(&img->tar, "manifest.json"))
        return GV_OK;
    char what[4200];
    struct gv_docker_manifest m;
    int rc = read_manifest(img, what, sizeof what, &m, err);
    if (rc != GV_OK)
        return rc;
    char want[100];
    snprintf(want, sizeof want, "blobs/sha256/%s", img->config_digest + 7);
    for (size_t i = 0; rc == GV_OK && i < m.n; i++)
        if (!strcmp(m.e[i].config, want))
            for (size_t j = 0; rc == GV_OK && j < m.e[i].ntags; j++)
                rc = gv_image_add_tag(img, m.e[i].tags[j], err);
    gv_docker_manifest_free(&m);
    return rc;
}
