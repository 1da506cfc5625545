/* The layer applier's steps, below gv_image_stage (image.h): begin a tree,
 * apply one layer's blob to it. Tests drive these with blobs of their own. */
#ifndef GV_IMAGE_STAGE_H
#define GV_IMAGE_STAGE_H

#include "image/image.h"

/* A new, empty staging tree for nlayers layers under parent (NULL: the
 * cache's images directory). */
int gv_stage_begin(enum gv_stage_mode mode, const char *parent, size_t nlayers,
                   struct gv_image_tree **out, struct gv_err *err);
/* Applies layer index (meta: its digest, diff_id, media type, codec, size)
 * read from b. On error the tree is left as it was half-way: the caller
 * frees it (gv_image_tree_free(t, 0)), which removes the directory. */
int gv_stage_apply(struct gv_image_tree *t, size_t index, const struct gv_image_layer *meta,
                   struct gv_blob *b, struct gv_err *err);

#endif
