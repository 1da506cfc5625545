/* Images for the commands (docs/image.md): the snapshot of an image and its
 * identity, shared by snapshot, diff, doctor, plan and verify. */
#include "cli/cli.h"
#include "image/image.h"

int cli_image_snapshot(const char *ref, int hash, json_t **doc, struct gv_err *err)
{
    (void)hash;
    *doc = NULL;
    return gv_err_set(err, GV_E_UNSUPPORTED, "%s: images are not read yet", ref);
}

int cli_image_identity(const char *ref, json_t **image, struct gv_err *err)
{
    *image = NULL;
    return gv_err_set(err, GV_E_UNSUPPORTED, "%s: images are not read yet", ref);
}
