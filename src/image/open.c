/* gv_image_open: the reference resolved, the source (a layout directory or a
 * tarball indexed in place) opened, the index followed to one manifest (tag,
 * then platform), the manifest and config read and checked against their
 * digests and sizes, the layers listed (each blob's presence and size
 * checked; its bytes are checked when gv_image_stage reads them). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "image/format.h"

int gv_image_member(const struct gv_image *img, const char *name, const char *what,
                    struct gv_blob **out, struct gv_err *err)
{
    *out = NULL;
    if (img->fd < 0) {
        int fd = gv_root_open(img->path, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, NULL);
        if (fd < 0)
            return gv_err_set(err, errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO,
                              "%s: %s: %s missing (%s)", img->path, what, name, strerror(errno));
        struct stat st;
        int rc;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
            rc = gv_err_set(err, GV_E_FORMAT, "%s: %s: %s is not a regular file", img->path,
                            what, name);
        else
            rc = gv_blob_open_fd(fd, 0, st.st_size, what, out, err);
        close(fd);
        return rc;
    }
    const struct gv_tar_member *m = gv_tarindex_find(&img->tar, name);
    if (!m)
        return gv_err_set(err, GV_E_NOTFOUND, "%s: %s: no member %s in the archive", img->path,
                          what, name);
    if (m->type != '0')
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: member %s is not a regular file",
                          img->path, what, name);
    return gv_blob_open_fd(img->fd, m->off, m->size, what, out, err);
}

int gv_image_read_member(const struct gv_image *img, const char *name, const char *what,
                         char **data, size_t *len, struct gv_err *err)
{
    *data = NULL;
    *len = 0;
    struct gv_blob *b;
    int rc = gv_image_member(img, name, what, &b, err);
    if (rc != GV_OK)
        return rc;
    off_t size = gv_blob_size(b);
    char *buf = NULL;
    if ((unsigned long long)size > GV_IMAGE_JSON_MAX)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: %s: %lld bytes, more than the %zu MiB allowed",
                        img->path, what, (long long)size, GV_IMAGE_JSON_MAX >> 20);
    else if (!(buf = malloc((size_t)size + 1)))
        rc = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    size_t got = 0;
    while (rc == GV_OK && got < (size_t)size) {
        ssize_t r = gv_blob_read(b, buf + got, (size_t)size - got, err);
        if (r < 0)
            rc = (int)r;
        else if (r == 0)
            rc = gv_err_set(err, GV_E_FORMAT, "%s: truncated", what);
        else
            got += (size_t)r;
    }
    gv_blob_close(b);
    if (rc != GV_OK) {
        free(buf);
        return rc;
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return GV_OK;
}

int gv_image_read_blob(const struct gv_image *img, const struct gv_oci_desc *d, const char *what,
                       char **data, size_t *len, struct gv_err *err)
{
    if ((unsigned long long)d->size > GV_IMAGE_JSON_MAX)
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: size %lld, more than the %zu MiB allowed",
                          img->path, what, d->size, GV_IMAGE_JSON_MAX >> 20);
    char name[96];
    snprintf(name, sizeof name, "blobs/sha256/%s", d->digest + 7);
    int rc = gv_image_read_member(img, name, what, data, len, err);
    if (rc != GV_OK)
        return rc;
    char got[72];
    gv_digest_of(*data, *len, got);
    if ((long long)*len != d->size)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: %s: blob %s is %zu bytes, the descriptor says %lld",
                        img->path, what, d->digest, *len, d->size);
    else if (strcmp(got, d->digest) != 0)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: %s: blob %s does not match its digest (it is %s)",
                        img->path, what, d->digest, got);
    if (rc != GV_OK) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

int gv_image_add_tag(struct gv_image *img, const char *name, struct gv_err *err)
{
    if (!name || !name[0])
        return GV_OK;
    for (size_t i = 0; i < img->ntags; i++)
        if (!strcmp(img->tags[i], name))
            return GV_OK;
    char **t = realloc(img->tags, (img->ntags + 1) * sizeof *t);
    if (!t)
        return gv_err_set(err, GV_E_NOMEM, "image tags: out of memory");
    img->tags = t;
    if (!(t[img->ntags] = strdup(name)))
        return gv_err_set(err, GV_E_NOMEM, "image tags: out of memory");
    img->ntags++;
    return GV_OK;
}

int gv_image_set_layers(struct gv_image *img, const struct gv_oci_manifest *m,
                        struct gv_err *err)
{
    if (m->nlayers != img->config.ndiff)
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: manifest %s has %zu layers, its config's rootfs.diff_ids %zu",
                          img->path, img->manifest_digest, m->nlayers, img->config.ndiff);
    img->layers = calloc(m->nlayers ? m->nlayers : 1, sizeof *img->layers);
    if (!img->layers)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", img->path);
    for (size_t i = 0; i < m->nlayers; i++) {
        struct gv_image_layer *l = &img->layers[i];
        img->nlayers = i + 1;
        snprintf(l->digest, sizeof l->digest, "%s", m->layers[i].digest);
        snprintf(l->diff_id, sizeof l->diff_id, "%s", img->config.diff_ids[i]);
        snprintf(l->media_type, sizeof l->media_type, "%s", m->layers[i].media_type);
        gv_media_kind(l->media_type, &l->codec);
        l->size = m->layers[i].size;
        if (i < img->config.nhist && img->config.created_by[i] &&
            !(l->created_by = strdup(img->config.created_by[i])))
            return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", img->path);
    }
    return GV_OK;
}

/* ---- following the index to one manifest ---- */

static int desc_answers(const struct gv_oci_desc *d, const char *tag)
{
    return (d->ref_name && gv_image_name_matches(d->ref_name, tag)) ||
           (d->image_name && gv_image_name_matches(d->image_name, tag));
}

static void list_tags(const struct gv_oci_index *x, char *out, size_t outsz)
{
    out[0] = '\0';
    for (size_t i = 0; i < x->n; i++)
        if (x->d[i].ref_name) {
            size_t l = strlen(out);
            char q[101];
            snprintf(out + l, outsz - l, "%s%s", l ? ", " : "",
                     gv_image_quote(x->d[i].ref_name, q, sizeof q));
        }
    if (!out[0])
        snprintf(out, outsz, "none");
}

/* Among the descriptors of x marked in cand, the one for this host. */
static int pick_platform(const struct gv_oci_index *x, const int *cand, const char *what,
                         size_t *out, struct gv_err *err)
{
    struct gv_oci_platform host;
    gv_host_platform(&host);
    size_t first = x->n, match = x->n, bare = x->n;
    int distinct = 0, nmatch = 0, nbare = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (!cand[i])
            continue;
        if (first == x->n)
            first = i;
        else if (strcmp(x->d[i].digest, x->d[first].digest) != 0)
            distinct = 1;
        const struct gv_oci_platform *p = &x->d[i].platform;
        if (x->d[i].has_platform && !strcmp(p->os, host.os) &&
            !strcmp(p->architecture, host.architecture)) {
            if (match == x->n || strcmp(x->d[i].digest, x->d[match].digest) != 0)
                nmatch++;
            match = i;
        } else if (!x->d[i].has_platform) {
            if (bare == x->n || strcmp(x->d[i].digest, x->d[bare].digest) != 0)
                nbare++;
            bare = i;
        }
    }
    if (first == x->n)
        return gv_err_set(err, GV_E_NOTFOUND, "%s: no manifest", what);
    *out = !distinct ? first : nmatch == 1 ? match : (nmatch == 0 && nbare == 1) ? bare : x->n;
    if (*out != x->n)
        return GV_OK;
    char tags[512];
    list_tags(x, tags, sizeof tags);
    if (nmatch == 0 && nbare == 0)
        return gv_err_set(err, GV_E_NOTFOUND, "%s: no manifest for %s/%s", what, host.os,
                          host.architecture);
    return gv_err_set(err, GV_E_USAGE, "%s: several manifests for %s/%s; name one with :TAG (tags: %s)",
                      what, host.os, host.architecture, tags);
}

static int read_index(struct gv_image *img, const struct gv_oci_desc *d, struct gv_oci_index *x,
                      struct gv_err *err)
{
    char what[200];
    char *data;
    size_t len;
    int rc;
    if (d) {
        snprintf(what, sizeof what, "index %.80s", d->digest);
        rc = gv_image_read_blob(img, d, what, &data, &len, err);
    } else {
        snprintf(what, sizeof what, "index.json");
        rc = gv_image_read_member(img, "index.json", what, &data, &len, err);
    }
    if (rc == GV_OK) {
        char w[4400];
        snprintf(w, sizeof w, "%s: %s", img->path, what);
        rc = gv_oci_index_parse(data, len, w, x, err);
        free(data);
    }
    return rc;
}

/* Follows x (the tag applies at the top only) to a manifest descriptor. */
static int choose(struct gv_image *img, const struct gv_oci_index *x, const char *tag, int depth,
                  struct gv_oci_desc *out, struct gv_err *err)
{
    char what[4400];
    snprintf(what, sizeof what, "%s: %s", img->path, depth ? "nested index" : "index.json");
    int *cand = calloc(x->n ? x->n : 1, sizeof *cand);
    if (!cand)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    size_t ncand = 0;
    for (size_t i = 0; i < x->n; i++)
        ncand += cand[i] = !tag[0] || desc_answers(&x->d[i], tag);
    size_t pick = 0;
    int rc = GV_OK;
    if (ncand == 0 && tag[0]) {
        char tags[512];
        list_tags(x, tags, sizeof tags);
        rc = gv_err_set(err, GV_E_NOTFOUND, "%s: no manifest tagged \"%.200s\" (tags: %s)", what,
                        tag, tags);
    } else {
        rc = pick_platform(x, cand, what, &pick, err);
    }
    free(cand);
    if (rc != GV_OK)
        return rc;
    const struct gv_oci_desc *d = &x->d[pick];
    if (depth == 0)
        for (size_t i = 0; rc == GV_OK && i < x->n; i++)
            if (!strcmp(x->d[i].digest, d->digest)) {
                rc = gv_image_add_tag(img, x->d[i].ref_name, err);
                if (rc == GV_OK)
                    rc = gv_image_add_tag(img, x->d[i].image_name, err);
            }
    if (rc != GV_OK)
        return rc;
    if (gv_media_kind(d->media_type, NULL) == GV_MEDIA_MANIFEST) {
        *out = *d;
        out->ref_name = out->image_name = NULL;
        return GV_OK;
    }
    if (depth + 1 >= GV_IMAGE_INDEX_DEPTH)
        return gv_err_set(err, GV_E_FORMAT, "%s: indexes nested more than %d deep", what,
                          GV_IMAGE_INDEX_DEPTH);
    struct gv_oci_index sub;
    if ((rc = read_index(img, d, &sub, err)) != GV_OK)
        return rc;
    rc = choose(img, &sub, "", depth + 1, out, err);
    gv_oci_index_free(&sub);
    return rc;
}

/* Each layer's blob is there, of the manifest's size. */
static int layers_present(const struct gv_image *img, struct gv_err *err)
{
    for (size_t i = 0; i < img->nlayers; i++) {
        struct gv_blob *b;
        int rc = gv_image_layer_open(img, i, &b, err);
        if (rc != GV_OK)
            return rc;
        gv_blob_close(b);
    }
    return GV_OK;
}

static int open_oci(struct gv_image *img, const char *tag, struct gv_err *err)
{
    struct gv_oci_index x;
    int rc = read_index(img, NULL, &x, err);
    if (rc != GV_OK)
        return rc;
    struct gv_oci_desc md;
    rc = choose(img, &x, tag, 0, &md, err);
    gv_oci_index_free(&x);
    if (rc != GV_OK)
        return rc;
    char what[200], *data;
    size_t len;
    snprintf(what, sizeof what, "manifest %s", md.digest);
    if ((rc = gv_image_read_blob(img, &md, what, &data, &len, err)) != GV_OK)
        return rc;
    struct gv_oci_manifest m;
    char w[4400];
    snprintf(w, sizeof w, "%s: %s", img->path, what);
    rc = gv_oci_manifest_parse(data, len, w, &m, err);
    free(data);
    if (rc != GV_OK)
        return rc;
    snprintf(img->manifest_digest, sizeof img->manifest_digest, "%s", md.digest);
    snprintf(img->manifest_media_type, sizeof img->manifest_media_type, "%s",
             m.media_type[0] ? m.media_type : md.media_type);
    snprintf(img->config_digest, sizeof img->config_digest, "%s", m.config.digest);
    snprintf(what, sizeof what, "config %s", m.config.digest);
    rc = gv_image_read_blob(img, &m.config, what, &data, &len, err);
    if (rc == GV_OK) {
        snprintf(w, sizeof w, "%s: %s", img->path, what);
        rc = gv_oci_config_parse(data, len, w, &img->config, err);
        free(data);
    }
    if (rc == GV_OK)
        rc = gv_image_set_layers(img, &m, err);
    gv_oci_manifest_free(&m);
    if (rc == GV_OK && img->form == GV_IMAGE_DOCKER_OCI)
        rc = gv_docker_add_repotags(img, err);
    return rc;
}

/* The source: a layout directory, or a tarball indexed, its form by content. */
static int open_source(struct gv_image *img, struct gv_err *err)
{
    if (gv_is_dir(img->path)) {
        img->form = GV_IMAGE_OCI_LAYOUT;
        if (gv_root_exists(img->path, "oci-layout") && gv_root_exists(img->path, "index.json"))
            return GV_OK;
        return gv_err_set(err, GV_E_FORMAT, "%s: not an OCI image layout (no oci-layout or index.json)",
                          img->path);
    }
    img->fd = open(img->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (img->fd < 0)
        return gv_err_set(err, errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO, "%s: %s", img->path,
                          strerror(errno));
    struct stat st;
    if (fstat(img->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return gv_err_set(err, GV_E_FORMAT, "%s: not a regular file or directory", img->path);
    int rc = gv_tarindex_build_fd(img->fd, img->path, &img->tar, err);
    if (rc != GV_OK)
        return rc;
    int oci = gv_tarindex_find(&img->tar, "oci-layout") && gv_tarindex_find(&img->tar, "index.json");
    int docker = gv_tarindex_find(&img->tar, "manifest.json") != NULL;
    if (!oci && !docker)
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: not an image archive (neither oci-layout and index.json nor manifest.json)",
                          img->path);
    img->form = oci ? (docker ? GV_IMAGE_DOCKER_OCI : GV_IMAGE_OCI_ARCHIVE) : GV_IMAGE_DOCKER_ARCHIVE;
    return GV_OK;
}

int gv_image_open(const char *ref, struct gv_image **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_ref r;
    int rc = gv_ref_parse(ref, gv_exists, &r, err);
    if (rc != GV_OK)
        return rc;
    struct gv_image *img = calloc(1, sizeof *img);
    if (!img)
        return gv_err_set(err, GV_E_NOMEM, "image: out of memory");
    img->fd = -1;
    snprintf(img->reference, sizeof img->reference, "%s", ref);
    snprintf(img->tag, sizeof img->tag, "%s", r.tag);
    const char *select = r.tag;
    if (r.kind == GV_REF_ENGINE) {
        snprintf(img->engine, sizeof img->engine, "%s", r.engine);
        rc = gv_engine_export(r.engine, r.path, img->export_file, sizeof img->export_file, err);
        snprintf(img->path, sizeof img->path, "%s", img->export_file);
        select = ""; /* the export holds the one image asked for */
    } else {
        snprintf(img->path, sizeof img->path, "%s", r.path);
    }
    if (rc == GV_OK)
        rc = open_source(img, err);
    if (rc == GV_OK && img->form == GV_IMAGE_DOCKER_ARCHIVE) {
        char keep[sizeof img->tag];
        memcpy(keep, img->tag, sizeof keep);
        snprintf(img->tag, sizeof img->tag, "%s", select);
        rc = gv_docker_open_legacy(img, err);
        memcpy(img->tag, keep, sizeof keep);
    } else if (rc == GV_OK) {
        rc = open_oci(img, select, err);
    }
    if (rc == GV_OK)
        rc = layers_present(img, err);
    if (rc != GV_OK) {
        gv_image_close(img);
        return rc;
    }
    *out = img;
    return GV_OK;
}

void gv_image_close(struct gv_image *img)
{
    if (!img)
        return;
    if (img->fd >= 0)
        close(img->fd);
    gv_tarindex_free(&img->tar);
    gv_engine_export_remove(img->export_file);
    for (size_t i = 0; i < img->ntags; i++)
        free(img->tags[i]);
    free(img->tags);
    gv_oci_config_free(&img->config);
    for (size_t i = 0; i < img->nlayers; i++)
        free(img->layers[i].created_by);
    free(img->layers);
    for (size_t i = 0; img->layer_members && img->layer_members[i]; i++)
        free(img->layer_members[i]);
    free(img->layer_members);
    free(img);
}

enum gv_image_form gv_image_form(const struct gv_image *img) { return img->form; }
size_t gv_image_layer_count(const struct gv_image *img) { return img->nlayers; }

const struct gv_image_layer *gv_image_layer(const struct gv_image *img, size_t i)
{
    return i < img->nlayers ? &img->layers[i] : NULL;
}

const char *gv_image_manifest_digest(const struct gv_image *img) { return img->manifest_digest; }
const char *gv_image_config_digest(const struct gv_image *img) { return img->config_digest; }
char *const *gv_image_env(const struct gv_image *img) { return img->config.env; }

int gv_image_layer_open(const struct gv_image *img, size_t i, struct gv_blob **out,
                        struct gv_err *err)
{
    *out = NULL;
    if (i >= img->nlayers)
        return gv_err_set(err, GV_E_USAGE, "%s: no layer %zu", img->path, i);
    const struct gv_image_layer *l = &img->layers[i];
    char what[128], name[96];
    snprintf(what, sizeof what, "layer %zu (%.19s…)", i, l->digest);
    snprintf(name, sizeof name, "blobs/sha256/%s", l->digest + 7);
    int rc = gv_image_member(img, img->layer_members ? img->layer_members[i] : name, what, out,
                             err);
    if (rc == GV_OK && gv_blob_size(*out) != l->size) {
        rc = gv_err_set(err, GV_E_FORMAT, "%s: %s: blob is %lld bytes, the manifest says %lld",
                        img->path, what, (long long)gv_blob_size(*out), l->size);
        gv_blob_close(*out);
        *out = NULL;
    }
    return rc;
}
