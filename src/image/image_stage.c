/* gv_image_stage: a staging tree begun, then every layer's blob opened and
 * applied in order (the applier, stage.h, checks each blob as it reads it).
 * On any error the tree is removed and the error returned. */
#include <stdio.h>

#include "image/format.h"
#include "image/stage.h"

int gv_image_stage(const struct gv_image *img, enum gv_stage_mode mode, const char *parent,
                   struct gv_image_tree **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_image_tree *t;
    int rc = gv_stage_begin(mode, parent, img->nlayers, &t, err);
    if (rc != GV_OK)
        return rc;
    for (size_t i = 0; i < img->nlayers; i++) {
        struct gv_blob *b;
        rc = gv_image_layer_open(img, i, &b, err);
        if (rc == GV_OK) {
            rc = gv_stage_apply(t, i, &img->layers[i], b, err);
            gv_blob_close(b);
        }
        if (rc != GV_OK) {
            gv_image_tree_free(t, 0);
            return rc;
        }
    }
    *out = t;
    return GV_OK;
}
