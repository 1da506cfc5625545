/* gpuvet diff, the image part (docs/image.md, docs/diff-schema.md): the
 * layer of an image that brought each library or package change, the image
 * group of changes (digests, tags, config, layers), and what an image's tag
 * says against its content. Values are compared only as the snapshots record
 * them: a redacted variable stays redacted, and a value the policy withholds
 * is never copied, even when a hand-edited snapshot holds one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env/diff.h"
#include "env/envpolicy.h"
#include "kb/image_tags.h"

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

const json_t *gv_diff_image_section(const json_t *snap)
{
    const json_t *img = json_object_get(snap, "image");
    return json_is_object(img) && json_is_true(json_object_get(img, "collected")) ? img : NULL;
}

/* image.layers[n]: the entry whose "index" is n, else the n-th. */
static const json_t *image_layer_at(const json_t *img, json_int_t n)
{
    const json_t *layers = json_object_get(img, "layers"), *l;
    size_t i;
    json_array_foreach(layers, i, l) {
        const json_t *ix = json_object_get(l, "index");
        if (json_is_integer(ix) && json_integer_value(ix) == n)
            return l;
    }
    l = n >= 0 ? json_array_get(layers, (size_t)n) : NULL;
    return l && !json_is_integer(json_object_get(l, "index")) ? l : NULL;
}

static void copy_str(json_t *to, const json_t *from, const char *key)
{
    const char *s = str(from, key);
    if (s)
        json_object_set_new(to, key, json_string(s));
}

/* {index, digest, diff_id, created_by} of the layer item it names, NULL when
 * img is no image or the item names no layer. */
static json_t *layer_of(const json_t *img, const json_t *it)
{
    const json_t *n = json_object_get(it, "layer");
    if (!img || !json_is_integer(n) || json_integer_value(n) < 0)
        return NULL;
    json_t *o = json_pack("{s:I}", "index", json_integer_value(n));
    const json_t *l = image_layer_at(img, json_integer_value(n));
    copy_str(o, l, "digest");
    copy_str(o, l, "diff_id");
    copy_str(o, l, "created_by");
    return o;
}

void gv_diff_image_layer(json_t *change, const json_t *ia, const json_t *x, const json_t *ib,
                         const json_t *y)
{
    json_t *lb = x ? layer_of(ia, x) : NULL, *la = y ? layer_of(ib, y) : NULL;
    if (!lb && !la)
        return;
    json_t *o = json_object();
    if (lb)
        json_object_set_new(o, "before", lb);
    if (la)
        json_object_set_new(o, "after", la);
    json_object_set_new(change, "image_layer", o);
}

json_t *gv_diff_image_side(const json_t *s)
{
    const json_t *img = gv_diff_image_section(s);
    if (!img)
        return NULL;
    json_t *o = json_object();
    copy_str(o, img, "reference");
    copy_str(o, img, "tag");
    copy_str(o, img, "manifest_digest");
    copy_str(o, img, "config_digest");
    json_object_set_new(o, "layers", json_integer((json_int_t)json_array_size(json_object_get(img, "layers"))));
    return o;
}

/* ---- the image group ---- */

enum { ORD_IDENTITY, ORD_CONFIG, ORD_LABELS, ORD_ENV, ORD_LAYERS };

static void pair(json_t *changes, int ord, const char *subject, const char *a, const char *b,
                 const char *detail)
{
    if (a && b && strcmp(a, b))
        gv_diff_add(changes, GV_LAYER_IMAGE, ord, "changed", subject, a, b, detail);
    else if (a && !b)
        gv_diff_add(changes, GV_LAYER_IMAGE, ord, "removed", subject, a, NULL, detail);
    else if (!a && b)
        gv_diff_add(changes, GV_LAYER_IMAGE, ord, "added", subject, NULL, b, detail);
}

static void field(json_t *changes, int ord, const json_t *ia, const json_t *ib, const char *key,
                  const char *subject)
{
    pair(changes, ord, subject, str(ia, key), str(ib, key), NULL);
}

/* A JSON value as compact text (arrays such as entrypoint): a new string or NULL. */
static char *compact(const json_t *v)
{
    return v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

static void json_field(json_t *changes, const json_t *ia, const json_t *ib, const char *key)
{
    char *a = compact(json_object_get(ia, key)), *b = compact(json_object_get(ib, key));
    pair(changes, ORD_CONFIG, key, a, b, NULL);
    free(a);
    free(b);
}

static void platform_text(const json_t *img, char *buf, size_t n)
{
    const json_t *p = json_object_get(img, "platform");
    const char *os = str(p, "os"), *arch = str(p, "architecture"), *var = str(p, "variant");
    snprintf(buf, n, "%s/%s%s%s", os ? os : "?", arch ? arch : "?", var ? "/" : "", var ? var : "");
}

/* Each key of the string maps ma and mb added, removed or changed, as the
 * subject "PREFIX KEY SUFFIX". */
static void diff_maps(json_t *changes, int ord, const json_t *ma, const json_t *mb,
                      const char *prefix, const char *suffix)
{
    json_t *keys = gv_diff_keys(ma, mb), *k;
    size_t i;
    char subj[1200];
    json_array_foreach(keys, i, k) {
        const char *n = json_string_value(k);
        snprintf(subj, sizeof subj, "%s%s%s", prefix, n, suffix);
        pair(changes, ord, subj, str(ma, n), str(mb, n), NULL);
    }
    json_decref(keys);
}

/* The names an image's source gives it, each mapped to itself. */
static json_t *tag_map(const json_t *img)
{
    json_t *m = json_object(), *t;
    size_t i;
    json_array_foreach(json_object_get(img, "tags"), i, t)
        if (json_is_string(t))
            json_object_set(m, json_string_value(t), t);
    return m;
}

/* diff_maps over the maps that map_of makes of each image. */
static void diff_made(json_t *changes, int ord, const json_t *ia, const json_t *ib,
                      json_t *(*map_of)(const json_t *), const char *prefix, const char *suffix)
{
    json_t *ma = map_of(ia), *mb = map_of(ib);
    diff_maps(changes, ord, ma, mb, prefix, suffix);
    json_decref(ma);
    json_decref(mb);
}

static void diff_identity(json_t *changes, const json_t *ia, const json_t *ib)
{
    field(changes, ORD_IDENTITY, ia, ib, "manifest_digest", "manifest digest");
    field(changes, ORD_IDENTITY, ia, ib, "config_digest", "config digest (image ID)");
    field(changes, ORD_IDENTITY, ia, ib, "manifest_media_type", "manifest media type");
    field(changes, ORD_IDENTITY, ia, ib, "form", "form");
    field(changes, ORD_IDENTITY, ia, ib, "tag", "tag asked for");
    diff_made(changes, ORD_IDENTITY, ia, ib, tag_map, "tag ", "");
    char pa[256], pb[256];
    platform_text(ia, pa, sizeof pa);
    platform_text(ib, pb, sizeof pb);
    pair(changes, ORD_IDENTITY, "platform", pa, pb, NULL);
    field(changes, ORD_IDENTITY, ia, ib, "created", "created");
}

static void diff_config(json_t *changes, const json_t *ia, const json_t *ib)
{
    json_field(changes, ia, ib, "entrypoint");
    json_field(changes, ia, ib, "cmd");
    field(changes, ORD_CONFIG, ia, ib, "user", "user");
    field(changes, ORD_CONFIG, ia, ib, "working_dir", "working_dir");
}

static void diff_labels(json_t *changes, const json_t *ia, const json_t *ib)
{
    diff_maps(changes, ORD_LABELS, json_object_get(ia, "labels"), json_object_get(ib, "labels"),
              "label ", "");
}

/* name -> the value as it may be shown: the recorded value of a recordable
 * name, else "(redacted)". A value beside "redacted": true, or under a name
 * the policy does not let through, is never taken. */
static json_t *env_map(const json_t *img)
{
    json_t *m = json_object(), *e;
    size_t i;
    json_array_foreach(json_object_get(img, "env"), i, e) {
        const char *n = str(e, "name"), *v = str(e, "value");
        if (!n || !n[0])
            continue;
        int hidden = json_is_true(json_object_get(e, "redacted")) || !v ||
                     !gv_env_recordable(n, strlen(n));
        json_object_set_new(m, n, json_string(hidden ? "(redacted)" : v));
    }
    return m;
}

static const char *layer_id(const json_t *l)
{
    const char *id = str(l, "diff_id");
    return id ? id : str(l, "digest");
}

/* "sha256:0123456789ab… (created_by)" */
static void layer_text(const json_t *l, char *buf, size_t n)
{
    const char *id = layer_id(l), *by = str(l, "created_by");
    snprintf(buf, n, "%.19s%s%s%.80s%s%s", id ? id : "?", id && strlen(id) > 19 ? "…" : "",
             by ? " (" : "", by ? by : "", by && strlen(by) > 80 ? "…" : "", by ? ")" : "");
}

static void span(char *buf, size_t n, size_t from, size_t to, const char *one, const char *many)
{
    if (to == from + 1)
        snprintf(buf, n, "layer %zu %s", from, one);
    else
        snprintf(buf, n, "layers %zu-%zu %s", from, to - 1, many);
}

/* The shared base (leading layers with equal diff_ids), then each layer that
 * differs. */
static void diff_layers(json_t *changes, const json_t *ia, const json_t *ib)
{
    const json_t *la = json_object_get(ia, "layers"), *lb = json_object_get(ib, "layers");
    size_t na = json_array_size(la), nb = json_array_size(lb), k = 0, n = na > nb ? na : nb;
    while (k < na && k < nb) {
        const char *x = layer_id(json_array_get(la, k)), *y = layer_id(json_array_get(lb, k));
        if (!x || !y || strcmp(x, y))
            break;
        k++;
    }
    if (k == n)
        return;
    char shared[128] = "no layer shared", differ[128], detail[300], a[64], b[64];
    if (k)
        span(shared, sizeof shared, 0, k, "shared", "shared");
    span(differ, sizeof differ, k, n, "differs", "differ");
    snprintf(detail, sizeof detail, "%s, %s", shared, differ);
    snprintf(a, sizeof a, "%zu layer%s", na, na == 1 ? "" : "s");
    snprintf(b, sizeof b, "%zu layer%s", nb, nb == 1 ? "" : "s");
    gv_diff_add(changes, GV_LAYER_IMAGE, ORD_LAYERS, "changed", "layers", a, b, detail);
    char subj[64], ta[256], tb[256];
    for (size_t i = k; i < n; i++) {
        const json_t *x = json_array_get(la, i), *y = json_array_get(lb, i);
        if (x)
            layer_text(x, ta, sizeof ta);
        if (y)
            layer_text(y, tb, sizeof tb);
        snprintf(subj, sizeof subj, "layer %zu", i);
        pair(changes, ORD_LAYERS, subj, x ? ta : NULL, y ? tb : NULL, NULL);
    }
}

void gv_diff_images(json_t *changes, const json_t *a, const json_t *b)
{
    const json_t *ia = gv_diff_image_section(a), *ib = gv_diff_image_section(b);
    if (!ia || !ib)
        return;
    diff_identity(changes, ia, ib);
    diff_config(changes, ia, ib);
    diff_labels(changes, ia, ib);
    diff_made(changes, ORD_ENV, ia, ib, env_map, "", " (image env)");
    diff_layers(changes, ia, ib);
}

/* ---- tag vs content ---- */

static void side_findings(json_t *all, const json_t *snap, const char *side)
{
    if (!gv_diff_image_section(snap))
        return;
    json_t *found = json_array(), *f;
    size_t i;
    gv_kb_image_tag_findings(snap, found);
    json_array_foreach(found, i, f) {
        if (!json_is_object(f))
            continue;
        json_t *o = json_deep_copy(f);
        json_object_set_new(o, "side", json_string(side));
        json_array_append_new(all, o);
    }
    json_decref(found);
}

json_t *gv_diff_image_findings(const json_t *a, const json_t *b)
{
    if (!gv_diff_image_section(a) && !gv_diff_image_section(b))
        return NULL;
    json_t *all = json_array();
    side_findings(all, a, "before");
    side_findings(all, b, "after");
    return all;
}
