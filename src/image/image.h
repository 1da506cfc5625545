/* Container images as stacks (issue 33, docs/image.md).
 *
 * The image room reads an image the user names (an OCI layout directory, an
 * oci-archive or docker-archive tarball, or an image in the local engine's
 * store, exported with the engine's own `save`), checks every blob against
 * its digest, and streams the layers once, in order, into a staging tree
 * under gpuvet's cache that the environment room then inspects like any
 * --root. Nothing named inside an image (a path, a link target, a media
 * type, a tag) decides what is opened outside the image or where anything is
 * written: blobs are found by digest only, member names are checked, links
 * are resolved inside the staging tree, writes go under the cache only.
 *
 * May touch: the image files it is given, read-only; the engine's export
 * (`podman image save` / `docker save` with a fixed argument list, no shell)
 * into the cache; gpuvet's cache directory ($XDG_CACHE_HOME/gpuvet/images),
 * where staging trees are made and removed. Never prints. */
#ifndef GV_IMAGE_IMAGE_H
#define GV_IMAGE_IMAGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

/* ---- blobs: a byte stream over one blob, wherever it lives ---- */

/* A reader over one blob: a file (an OCI layout's blobs/sha256/HEX), or a
 * region of a tarball (an archive's member), read with pread so that two
 * blobs of one archive can be open at once. */
struct gv_blob;
/* The bytes [off, off + len) of the open file fd (fd is dup'ed; the caller
 * keeps its own). name is for messages ("layer 2 (sha256:ab12…)"). */
int gv_blob_open_fd(int fd, off_t off, off_t len, const char *name, struct gv_blob **out,
                    struct gv_err *err);
/* A whole file, by host path (tests, and the OCI layout's blobs). */
int gv_blob_open_file(const char *path, const char *name, struct gv_blob **out,
                      struct gv_err *err);
/* Up to n bytes: the count read, 0 at the end, or a negative gv_status with
 * err filled (a short file is GV_E_FORMAT "truncated"). */
ssize_t gv_blob_read(struct gv_blob *b, void *buf, size_t n, struct gv_err *err);
off_t gv_blob_size(const struct gv_blob *b);
const char *gv_blob_name(const struct gv_blob *b);
void gv_blob_close(struct gv_blob *b);

/* ---- the image: reference, index, manifest, config ---- */

enum gv_image_form {
    GV_IMAGE_OCI_LAYOUT,     /* a directory with oci-layout, index.json, blobs/ */
    GV_IMAGE_OCI_ARCHIVE,    /* a tar of an OCI layout (skopeo/podman oci-archive) */
    GV_IMAGE_DOCKER_ARCHIVE, /* `docker save`, legacy: manifest.json, ID/layer.tar */
    GV_IMAGE_DOCKER_OCI,     /* `docker save` of Docker Engine 25+: an OCI layout with manifest.json */
};

/* Layer compression, from the media type and checked against the bytes. */
enum gv_layer_codec { GV_CODEC_NONE, GV_CODEC_GZIP, GV_CODEC_ZSTD };

struct gv_image_layer {
    char digest[72];      /* "sha256:HEX" of the blob as stored (compressed) */
    char diff_id[72];     /* "sha256:HEX" of the uncompressed tar (config rootfs.diff_ids) */
    char media_type[128];
    enum gv_layer_codec codec;
    long long size;       /* bytes of the blob as stored */
    char *created_by;     /* the config history entry that made it, NULL when none */
};

struct gv_image;

/* Opens the image ref names (docs/image.md, "References"):
 *   DIR or DIR:TAG          an OCI layout (TAG: org.opencontainers.image.ref.name)
 *   FILE or FILE:TAG        an oci-archive or docker-archive tarball (told apart by
 *                           content: index.json + oci-layout, or manifest.json)
 *   podman:NAME[:TAG], docker:NAME[:TAG]
 *                           the engine's store, exported with its own save into the
 *                           cache first (the export is removed on close)
 * An index of several manifests picks the one for this host's platform
 * (linux/amd64 on x86-64), or the one TAG names. The manifest, config and index
 * are checked against their digests and their schemas (media types known,
 * sizes bounded); layers are only listed here, their blobs checked when read.
 * Errors name the file and the blob or field. */
int gv_image_open(const char *ref, struct gv_image **out, struct gv_err *err);
void gv_image_close(struct gv_image *img);

enum gv_image_form gv_image_form(const struct gv_image *img);
size_t gv_image_layer_count(const struct gv_image *img);
const struct gv_image_layer *gv_image_layer(const struct gv_image *img, size_t i);
/* "sha256:HEX" of the manifest (what to pin: name@sha256:…); "" for a legacy
 * docker-archive, which holds no manifest blob (pin the config, the image ID). */
const char *gv_image_manifest_digest(const struct gv_image *img);
const char *gv_image_config_digest(const struct gv_image *img);
/* The config's Env as a NULL-terminated "NAME=VALUE" list (the environment the
 * container starts with), owned by img. */
char *const *gv_image_env(const struct gv_image *img);
/* The "image" section of a snapshot (docs/image.md): reference, form, tags,
 * digests, platform, created, labels, env (by the snapshot's policy:
 * env/envpolicy.h), entrypoint, cmd, user, working_dir, layers. A new object. */
json_t *gv_image_describe(const struct gv_image *img);
/* A reader of layer i's blob (its digest and size checked as it is read, by
 * gv_image_stage). */
int gv_image_layer_open(const struct gv_image *img, size_t i, struct gv_blob **out,
                        struct gv_err *err);

/* ---- applying the layers ---- */

enum gv_stage_mode {
    /* Directories and links made; regular files kept (written) only when a
     * snapshot reads them (gv_image_keep), the others made as empty sparse files
     * of the right size. For snapshot --image. */
    GV_STAGE_SNAPSHOT,
    /* Every regular file written: a root to run in (check/torch --image). */
    GV_STAGE_FULL,
};

/* Whether a snapshot reads the content of the regular file path (inside the
 * image) of size bytes whose first bytes are head[0..headlen): ELF files, files
 * of at most 1 MiB, and the few larger ones the environment room reads
 * (dpkg status, ld.so.cache, rpm databases, wheel METADATA and RECORD); never
 * an AMDGPU code object (no reader opens one on its own). A kept ELF file
 * over 1 MiB is written without its offload bundles' code (sparse.h). */
int gv_image_keep(const char *path, long long size, const unsigned char *head, size_t headlen);

struct gv_image_tree;

/* Applies every layer of img in order into a new directory made under
 * parent (mode 0700; parent NULL: $XDG_CACHE_HOME/gpuvet/images): each blob
 * read once, its digest and size checked against the manifest, decompressed
 * (gzip, zstd, or none; checked against the media type), its diff_id checked
 * against the config, its tar members applied: whiteouts (.wh.NAME) and opaque
 * directories (.wh..wh..opq) remove what lower layers made, hard links (also
 * to a lower layer's file) are linked, member names with "..", absolute names
 * after the leading "/" is dropped, empty names, and a member written through a
 * link that climbs out of the root are refused, as are device nodes (skipped,
 * counted) and members over GV_IMAGE_MEMBER_MAX. The sha256 of every regular
 * file is computed while streaming. Errors name the layer (index and digest)
 * and the member; on any error the directory is removed and nothing is left. */
#define GV_IMAGE_MEMBER_MAX (64LL << 30)
int gv_image_stage(const struct gv_image *img, enum gv_stage_mode mode, const char *parent,
                   struct gv_image_tree **out, struct gv_err *err);

/* The staging directory: a root for struct gv_probe_ctx (host path). */
const char *gv_image_tree_root(const struct gv_image_tree *t);
/* The sha256 hex (64 + NUL) of the regular file at path (inside the image,
 * as the snapshot names it, links already resolved): 1 when known, 0 not (a
 * snapshot's tree hashes only the files it keeps, gv_image_keep). */
int gv_image_tree_digest(const struct gv_image_tree *t, const char *path, char hex[65]);
/* The index of the layer that last wrote path (inside the image), -1 when no
 * layer did. */
int gv_image_tree_layer(const struct gv_image_tree *t, const char *path);
/* Per layer: members applied, bytes of regular files, whiteouts. */
struct gv_image_layer_stats {
    long long files, bytes, whiteouts, skipped;
};
const struct gv_image_layer_stats *gv_image_tree_stats(const struct gv_image_tree *t, size_t i);
/* Removes the staging directory (when keep is 0) and frees t. */
void gv_image_tree_free(struct gv_image_tree *t, int keep);

/* ---- a snapshot of an image ---- */

/* Adds to doc (a snapshot of the tree's root) the "image" section and, on every
 * libraries and packages item, "layer": the index of the layer that brought it
 * (docs/image.md, "Which layer"). */
int gv_image_annotate(json_t *doc, const struct gv_image *img, const struct gv_image_tree *t,
                      struct gv_err *err);

#endif
