/* Differences between two snapshots (docs/snapshot-schema.md), grouped by
 * layer and ranked by consequence. The result is a gpuvet.diff document
 * (docs/diff-schema.md); src/cli/diff_out.c prints it. */
#ifndef GV_ENV_DIFF_H
#define GV_ENV_DIFF_H

#include <jansson.h>

#include "base/err.h"

#define GV_DIFF_SCHEMA "gpuvet.diff"
#define GV_DIFF_SCHEMA_VERSION 1

/* Layers, most consequential first; the value is the change's "rank". */
enum gv_diff_layer {
    GV_LAYER_DRIVER = 1,    /* kernel modules, dkms packages */
    GV_LAYER_RUNTIME = 2,   /* HIP/HSA/comgr/hiprtc, CUDA driver/runtime; installs; mixed sets */
    GV_LAYER_MATH = 3,      /* BLAS, DNN, FFT, ... and RCCL/NCCL */
    GV_LAYER_FRAMEWORK = 4, /* Python environments, torch builds and their pip packages */
    GV_LAYER_LOADER = 5,    /* loader paths and resolution, environment, /opt/rocm link */
    GV_LAYER_PACKAGES = 6,  /* every package (GPU ones first) and GPU tool libraries */
    GV_LAYER_IMAGE = 7,     /* the image itself: tag vs content, digests, config, its layers */
};

/* The layer's name in the document ("driver", "runtime", ...); NULL if out of range. */
const char *gv_diff_layer_name(int layer);
/* A heading for people ("kernel driver", ...). */
const char *gv_diff_layer_title(int layer);

/* Compare Debian package versions (epoch:upstream-revision) like dpkg does:
 * <0, 0, >0. Also orders rpm-style strings sensibly. */
int gv_deb_vercmp(const char *a, const char *b);

/* Compare snapshot a (before) with b (after), both already validated by
 * gv_snapshot_load. *out receives a gpuvet.diff document:
 *   {schema, schema_version, before:{file,created,root}, after:{...},
 *    changes:[{layer, rank, kind, subject, before, after, detail?}],
 *    not_comparable:[{section, before, after, reason}], summary:{...}}
 * a_name/b_name are the file names recorded in before/after.file. */
int gv_diff_snapshots(const json_t *a, const json_t *b, const char *a_name, const char *b_name,
                      json_t **out, struct gv_err *err);

/* ---- the image part (diff_image.c), for diff.c only ---- */

/* Appends a change object to changes and returns it (borrowed); order: the
 * tie-break inside the layer (smaller first). before/after NULL: null. */
json_t *gv_diff_add(json_t *changes, int layer, int order, const char *kind, const char *subject,
                    const char *before, const char *after, const char *detail);
/* The "image_layer" of a change about item x (before, NULL when none) and y
 * (after): for each side that is an image (ia/ib: its "image" section, else
 * NULL) and whose item carries "layer": N, {index, digest, diff_id, created_by}
 * of image.layers[N]. Sets nothing when neither side has one. */
void gv_diff_image_layer(json_t *change, const json_t *ia, const json_t *x, const json_t *ib,
                         const json_t *y);
/* The image group (layer "image"): for each side that is an image, what its
 * tag or labels say against its content (kb); when both are images, digests,
 * tags, platform, created, labels, env (values only as recorded), entrypoint,
 * cmd, user, working_dir and the layers shared or not. */
void gv_diff_images(json_t *changes, const json_t *a, const json_t *b);
/* The sorted union of the keys of objects a and b (either may be NULL), as a
 * new array of strings. */
json_t *gv_diff_keys(const json_t *a, const json_t *b);
/* What each image side's tag or labels say against its content (kb), each
 * finding {side: "before"|"after", id, severity, message, evidence}; a new
 * array, NULL when neither side is an image. */
json_t *gv_diff_image_findings(const json_t *a, const json_t *b);
/* Snapshot snap's "image" section when it is an image snapshot, else NULL. */
const json_t *gv_diff_image_section(const json_t *snap);
/* {reference, manifest_digest, config_digest, layers} of snapshot s's image
 * section, for the document's before/after; NULL when s is no image. */
json_t *gv_diff_image_side(const json_t *s);

#endif
