/* The image reader's internals, shared between its files: the tarball index
 * (tarindex.c), the image source (a layout directory or a tarball: open.c),
 * the OCI and Docker documents (oci.c, docker.c), the engine's export
 * (engine.c). The parse functions take bytes in memory, so the fuzz target
 * (tests/fuzz/fuzz_imagemeta.c) drives them directly. */
#ifndef GV_IMAGE_FORMAT_H
#define GV_IMAGE_FORMAT_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"
#include "image/image.h"

/* Small JSON documents (index, manifest, config, manifest.json) are read
 * whole, at most this many bytes. */
#define GV_IMAGE_JSON_MAX ((size_t)16 << 20)
/* Nested indexes followed at most this deep. */
#define GV_IMAGE_INDEX_DEPTH 4
/* Members of a tarball indexed at most (an image archive has a few per layer). */
#define GV_TAR_MEMBERS_MAX 100000

/* ---- digests ---- */

/* d is "sha256:" + 64 lowercase hex: GV_OK, else GV_E_FORMAT naming what and
 * field (the digest is quoted only when short and printable). */
int gv_digest_check(const char *d, const char *what, const char *field, struct gv_err *err);
/* "sha256:" + the hex of data[0..len). out: 72 bytes. */
void gv_digest_of(const void *data, size_t len, char out[72]);

/* text (from a document) copied for a message: at most outsz - 1 bytes,
 * every byte outside printable ASCII written as '?'. Returns out. */
const char *gv_image_quote(const char *text, char *out, size_t outsz);

/* ---- tarball index (tarindex.c) ---- */

struct gv_tar_member {
    char *name;   /* "./" and trailing "/" removed */
    off_t off;    /* of the data */
    off_t size;
    char type;    /* ustar typeflag, '0' for regular files ('\0' mapped to '0') */
};

struct gv_tarindex {
    struct gv_tar_member *m;
    size_t n;
};

/* Reads len bytes at off into buf; returns the count read (short at the end),
 * or -1 with errno. */
typedef ssize_t (*gv_tar_pread_fn)(void *ctx, void *buf, size_t len, off_t off);

/* Indexes the tarball of total bytes read through rd: ustar and old tar
 * headers (checksum checked), GNU long names ('L'), pax extended headers ('x':
 * path, size), global pax headers ignored. A member whose data runs past the
 * end, or a header cut short, is GV_E_FORMAT "truncated" naming the member.
 * what names the tarball in messages. */
int gv_tarindex_build(gv_tar_pread_fn rd, void *ctx, off_t total, const char *what,
                      struct gv_tarindex *out, struct gv_err *err);
/* The same over the open file fd. */
int gv_tarindex_build_fd(int fd, const char *what, struct gv_tarindex *out, struct gv_err *err);
/* The same over bytes in memory (fuzzing). */
int gv_tarindex_build_mem(const void *data, size_t len, const char *what, struct gv_tarindex *out,
                          struct gv_err *err);
/* The last member named name, or NULL. */
const struct gv_tar_member *gv_tarindex_find(const struct gv_tarindex *t, const char *name);
void gv_tarindex_free(struct gv_tarindex *t);

/* ---- OCI documents (oci.c) ---- */

struct gv_oci_platform {
    char os[32], architecture[32], variant[32];
};

/* A descriptor of an index or manifest: what it points to. */
struct gv_oci_desc {
    char media_type[128];
    char digest[72];
    long long size;
    int has_platform;
    struct gv_oci_platform platform;
    char *ref_name;       /* annotation org.opencontainers.image.ref.name, or NULL */
    char *image_name;     /* annotation io.containerd.image.name, or NULL */
};

struct gv_oci_index {
    char media_type[128]; /* "" when the document names none */
    struct gv_oci_desc *d;
    size_t n;
};

struct gv_oci_manifest {
    char media_type[128];
    struct gv_oci_desc config;
    struct gv_oci_desc *layers;
    size_t nlayers;
};

struct gv_oci_config {
    json_t *doc;              /* the whole config, kept for describe */
    struct gv_oci_platform platform;
    char (*diff_ids)[72];
    size_t ndiff;
    char **created_by;        /* per non-empty history entry (NULL: none), nhist of them */
    size_t nhist;
    char **env;               /* NULL-terminated "NAME=VALUE" */
};

enum gv_media_kind {
    GV_MEDIA_UNKNOWN,
    GV_MEDIA_INDEX,
    GV_MEDIA_MANIFEST,
    GV_MEDIA_CONFIG,
    GV_MEDIA_LAYER,
};
/* What the media type names; for a layer also its codec. */
enum gv_media_kind gv_media_kind(const char *media_type, enum gv_layer_codec *codec);

/* Parse index.json / a nested index, a manifest, a config, from memory; what
 * names the document in messages ("index.json", "manifest sha256:ab12…"). */
int gv_oci_index_parse(const char *data, size_t len, const char *what, struct gv_oci_index *out,
                       struct gv_err *err);
void gv_oci_index_free(struct gv_oci_index *x);
int gv_oci_manifest_parse(const char *data, size_t len, const char *what,
                          struct gv_oci_manifest *out, struct gv_err *err);
void gv_oci_manifest_free(struct gv_oci_manifest *m);
int gv_oci_config_parse(const char *data, size_t len, const char *what, struct gv_oci_config *out,
                        struct gv_err *err);
void gv_oci_config_free(struct gv_oci_config *c);
void gv_oci_desc_free(struct gv_oci_desc *d);

/* This host's platform: os "linux", architecture "amd64", "arm64", ... */
void gv_host_platform(struct gv_oci_platform *p);

/* ---- docker save's manifest.json (docker.c) ---- */

struct gv_docker_entry {
    char *config;    /* member name, checked: plain relative, no ".." */
    char **tags;     /* RepoTags, ntags of them */
    size_t ntags;
    char **layers;   /* member names, checked */
    size_t nlayers;
};

struct gv_docker_manifest {
    struct gv_docker_entry *e;
    size_t n;
};

int gv_docker_manifest_parse(const char *data, size_t len, const char *what,
                             struct gv_docker_manifest *out, struct gv_err *err);
void gv_docker_manifest_free(struct gv_docker_manifest *m);
/* A member name a document may give: relative, no "." or ".." component, no
 * empty component, printable. 1 or 0. */
int gv_member_name_ok(const char *name);

/* ---- the engine's export (engine.c) ---- */

/* Runs the engine's save of name (podman: `podman image save --format
 * oci-archive -o FILE NAME`, docker: `docker save -o FILE NAME`) into a new
 * private directory under the cache; *file is the tarball's path (dir is its
 * directory, to give to gv_engine_export_remove). */
int gv_engine_export(const char *engine, const char *name, char *file, size_t filesz,
                     struct gv_err *err);
/* Removes the export file and its directory. */
void gv_engine_export_remove(const char *file);

/* ---- the open image (open.c) ---- */

struct gv_image {
    enum gv_image_form form;
    char reference[4096];   /* as given */
    char path[4096];        /* the layout directory or the tarball */
    char engine[16];        /* "podman", "docker" or "" */
    char tag[512];          /* the tag asked for, "" when none */
    char export_file[4096]; /* the engine's export, removed on close ("" none) */
    int fd;                 /* the tarball, or -1 */
    struct gv_tarindex tar;
    char manifest_digest[72], manifest_media_type[128], config_digest[72];
    char **tags;            /* every name the source gives the chosen manifest */
    size_t ntags;
    struct gv_oci_config config;
    struct gv_image_layer *layers;
    size_t nlayers;
    char **layer_members;   /* legacy docker-archive: member of each layer; else NULL */
};

/* A blob reader of the member name (a layout: the file under the directory,
 * resolved inside it; a tarball: a regular member, read in place). what
 * names it in messages. */
int gv_image_member(const struct gv_image *img, const char *name, const char *what,
                    struct gv_blob **out, struct gv_err *err);
/* The member whole (at most GV_IMAGE_JSON_MAX bytes), NUL-terminated. */
int gv_image_read_member(const struct gv_image *img, const char *name, const char *what,
                         char **data, size_t *len, struct gv_err *err);
/* The blob d names (blobs/sha256/HEX), whole, checked against d's size and
 * digest. */
int gv_image_read_blob(const struct gv_image *img, const struct gv_oci_desc *d, const char *what,
                       char **data, size_t *len, struct gv_err *err);
/* Adds name to img's tags (once). */
int gv_image_add_tag(struct gv_image *img, const char *name, struct gv_err *err);
/* Fills img->layers from the manifest's layers and the config (diff_ids,
 * history); counts must agree. */
int gv_image_set_layers(struct gv_image *img, const struct gv_oci_manifest *m,
                        struct gv_err *err);

/* The legacy docker-archive (docker.c): manifest.json's entry picked by TAG
 * (RepoTags), its config and layers. */
int gv_docker_open_legacy(struct gv_image *img, struct gv_err *err);
/* name (a RepoTag, an io.containerd.image.name) answers the TAG asked: the
 * same, the same after a registry or namespace ("docker.io/tiny/img:v2" for
 * "tiny/img:v2"), or its tag part ("v2"). */
int gv_image_name_matches(const char *name, const char *tag);
/* Docker 25+: RepoTags of manifest.json's entry whose Config is the chosen
 * config blob, added to img's tags. */
int gv_docker_add_repotags(struct gv_image *img, struct gv_err *err);

/* ---- the reference (ref.c) ---- */

enum gv_ref_kind { GV_REF_PATH, GV_REF_ENGINE };

struct gv_ref {
    enum gv_ref_kind kind;
    char engine[16];       /* "podman" or "docker" */
    char path[4096];       /* the file or directory; for an engine, NAME[:TAG] */
    char tag[512];         /* "" when none */
};

/* Splits ref (docs/image.md, "References"); exists(path) says whether a
 * host path exists (gv_exists; tests pass their own). */
int gv_ref_parse(const char *ref, int (*exists)(const char *), struct gv_ref *out,
                 struct gv_err *err);

#endif
