/* Images for the commands (docs/image.md): the snapshot of an image and its
 * identity, shared by snapshot, diff, doctor, plan and verify. */
#include <string.h>

#include "cli/cli.h"
#include "env/probe.h"
#include "image/image.h"

static int tree_digest(const void *arg, const char *path, char hex[65])
{
    return gv_image_tree_digest(arg, path, hex);
}

/* The snapshot's own fields that would name the staging tree: the root is the
 * reference the user gave, and the variables are the config's Env. */
static void describe_as_image(json_t *doc, const char *ref)
{
    json_object_set_new(doc, "root", json_string(ref));
    json_t *env = json_object_get(doc, "environment");
    if (json_is_object(env))
        json_object_set_new(env, "source", json_string("the image config's Env (what the "
                                                       "container starts with), "
                                                       "/etc/profile.d/*.sh of the image"));
}

int cli_image_snapshot(const char *ref, int hash, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    struct gv_image *img;
    int rc = gv_image_open(ref, &img, err);
    if (rc)
        return rc;
    struct gv_image_tree *t;
    rc = gv_image_stage(img, GV_STAGE_SNAPSHOT, NULL, &t, err);
    if (rc) {
        gv_image_close(img);
        return rc;
    }
    struct gv_probe_ctx ctx = {.root = gv_image_tree_root(t), .live = 0,
                               .envp = gv_image_env(img), .hash_files = hash,
                               .known_digest = tree_digest, .known_digest_arg = t};
    rc = gv_snapshot_collect(&ctx, doc, err);
    if (!rc)
        rc = gv_image_annotate(*doc, img, t, err);
    if (!rc)
        describe_as_image(*doc, ref);
    else {
        json_decref(*doc);
        *doc = NULL;
    }
    gv_image_tree_free(t, 0);
    gv_image_close(img);
    return rc;
}

int cli_image_identity(const char *ref, json_t **image, struct gv_err *err)
{
    *image = NULL;
    struct gv_image *img;
    int rc = gv_image_open(ref, &img, err);
    if (rc)
        return rc;
    *image = gv_image_describe(img);
    gv_image_close(img);
    return *image ? GV_OK : gv_err_set(err, GV_E_NOMEM, "%s: out of memory", ref);
}
