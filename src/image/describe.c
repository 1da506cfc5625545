/* The "image" section of a snapshot (docs/image.md): reference, form, tags,
 * digests, platform, created, labels, env (values only where the snapshot's
 * environment policy allows, env/envpolicy.h), entrypoint, cmd, user,
 * working_dir, layers. */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "env/envpolicy.h"
#include "image/format.h"

static const char *form_name(enum gv_image_form f)
{
    switch (f) {
    case GV_IMAGE_OCI_LAYOUT: return "oci-layout";
    case GV_IMAGE_OCI_ARCHIVE: return "oci-archive";
    case GV_IMAGE_DOCKER_ARCHIVE: return "docker-archive";
    case GV_IMAGE_DOCKER_OCI: return "docker-oci";
    }
    return "unknown";
}

static json_t *env_list(char *const *env)
{
    json_t *a = json_array();
    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        size_t n = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_stringn(env[i], n));
        if (eq && gv_env_recordable(env[i], n))
            json_object_set_new(o, "value", json_string(eq + 1));
        else if (eq)
            json_object_set_new(o, "redacted", json_true());
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *platform(const struct gv_oci_platform *p)
{
    json_t *o = json_object();
    gv_json_set_str(o, "os", p->os[0] ? p->os : NULL);
    gv_json_set_str(o, "architecture", p->architecture[0] ? p->architecture : NULL);
    gv_json_set_str(o, "variant", p->variant[0] ? p->variant : NULL);
    return o;
}

static json_t *layers(const struct gv_image *img)
{
    json_t *a = json_array();
    for (size_t i = 0; i < img->nlayers; i++) {
        const struct gv_image_layer *l = &img->layers[i];
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer((json_int_t)i));
        json_object_set_new(o, "digest", json_string(l->digest));
        json_object_set_new(o, "diff_id", json_string(l->diff_id));
        json_object_set_new(o, "media_type", json_string(l->media_type));
        json_object_set_new(o, "size", json_integer(l->size));
        gv_json_set_str(o, "created_by", l->created_by);
        json_array_append_new(a, o);
    }
    return a;
}

/* config.KEY copied when present (already type-checked by the parser). */
static void copy_key(json_t *sec, const char *key, const json_t *cfg, const char *from)
{
    json_t *v = json_object_get(cfg, from);
    if (v && !json_is_null(v))
        json_object_set(sec, key, v);
}

json_t *gv_image_describe(const struct gv_image *img)
{
    char source[4200];
    snprintf(source, sizeof source, "%s %s", form_name(img->form),
             img->engine[0] ? img->reference : img->path);
    json_t *s = gv_section_new(source);
    json_object_set_new(s, "reference", json_string(img->reference));
    json_object_set_new(s, "form", json_string(form_name(img->form)));
    gv_json_set_str(s, "engine", img->engine[0] ? img->engine : NULL);
    gv_json_set_str(s, "tag", img->tag[0] ? img->tag : NULL);
    json_t *tags = json_array();
    for (size_t i = 0; i < img->ntags; i++)
        json_array_append_new(tags, json_string(img->tags[i]));
    json_object_set_new(s, "tags", tags);
    gv_json_set_str(s, "manifest_digest", img->manifest_digest[0] ? img->manifest_digest : NULL);
    gv_json_set_str(s, "manifest_media_type",
                    img->manifest_media_type[0] ? img->manifest_media_type : NULL);
    json_object_set_new(s, "config_digest", json_string(img->config_digest));
    json_object_set_new(s, "platform", platform(&img->config.platform));
    const json_t *doc = img->config.doc, *cfg = json_object_get(doc, "config");
    gv_json_set_str(s, "created", json_string_value(json_object_get(doc, "created")));
    json_t *labels = json_object_get(cfg, "Labels");
    json_object_set_new(s, "labels", json_is_object(labels) ? json_deep_copy(labels) : json_object());
    json_object_set_new(s, "env", env_list(img->config.env));
    copy_key(s, "entrypoint", cfg, "Entrypoint");
    copy_key(s, "cmd", cfg, "Cmd");
    copy_key(s, "user", cfg, "User");
    copy_key(s, "working_dir", cfg, "WorkingDir");
    json_object_set_new(s, "layers", layers(img));
    return s;
}
