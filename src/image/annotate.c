/* The image part of an image's snapshot: the image section with what each
 * layer brought, and on libraries and packages the layer that brought them. */
#include <stdio.h>
#include <string.h>

#include "image/image.h"

static void add_layer_stats(json_t *image, const struct gv_image_tree *t)
{
    json_t *layers = json_object_get(image, "layers");
    size_t i;
    json_t *l;
    json_array_foreach(layers, i, l) {
        const struct gv_image_layer_stats *st = gv_image_tree_stats(t, i);
        if (!st)
            continue;
        json_object_set_new(l, "files", json_integer(st->files));
        json_object_set_new(l, "bytes", json_integer(st->bytes));
        json_object_set_new(l, "whiteouts", json_integer(st->whiteouts));
        json_object_set_new(l, "skipped", json_integer(st->skipped));
    }
}

static void set_layer(json_t *item, int layer)
{
    if (layer >= 0)
        json_object_set_new(item, "layer", json_integer(layer));
}

static void annotate_libraries(json_t *doc, const struct gv_image_tree *t)
{
    json_t *items = json_object_get(json_object_get(doc, "libraries"), "items");
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *path = json_string_value(json_object_get(it, "path"));
        if (path)
            set_layer(it, gv_image_tree_layer(t, path));
    }
}

/* A dpkg package's layer: the one that last wrote its file list, which dpkg
 * rewrites whenever it installs or upgrades the package. */
static int package_layer(const struct gv_image_tree *t, const char *name, const char *arch)
{
    char p[512];
    int layer = -1;
    if (arch && *arch) {
        snprintf(p, sizeof p, "/var/lib/dpkg/info/%s:%s.list", name, arch);
        layer = gv_image_tree_layer(t, p);
    }
    if (layer < 0) {
        snprintf(p, sizeof p, "/var/lib/dpkg/info/%s.list", name);
        layer = gv_image_tree_layer(t, p);
    }
    return layer;
}

static void annotate_packages(json_t *doc, const struct gv_image_tree *t)
{
    json_t *pk = json_object_get(doc, "packages");
    const char *mgr = json_string_value(json_object_get(pk, "manager"));
    if (!mgr || strcmp(mgr, "dpkg"))
        return;
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(pk, "items"), i, it) {
        const char *name = json_string_value(json_object_get(it, "name"));
        const char *arch = json_string_value(json_object_get(it, "arch"));
        if (name && !strchr(name, '/'))
            set_layer(it, package_layer(t, name, arch));
    }
}

int gv_image_annotate(json_t *doc, const struct gv_image *img, const struct gv_image_tree *t,
                      struct gv_err *err)
{
    json_t *image = gv_image_describe(img);
    if (!image)
        return gv_err_set(err, GV_E_NOMEM, "image: out of memory");
    add_layer_stats(image, t);
    json_object_set_new(doc, "image", image);
    annotate_libraries(doc, t);
    annotate_packages(doc, t);
    return GV_OK;
}
