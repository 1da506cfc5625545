/* Rollback of a container image: pin the baseline's digest (docs/rollback.md,
 * "Images"); verify an image or a running container's process against it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "env/filehash.h"
#include "env/probe.h"
#include "env/sysutil.h"
#include "plan/image_pin.h"
#include "plan/pkg.h"
#include "plan/verify.h"

/* ---- validation (the grammar of distribution/reference) ---- */

static int lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [_.] | __ | [-]+ */
static int valid_path_component(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return 0;
    while (i < n) {
        if (lower_alnum(s[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && !lower_alnum(s[j]))
            j++;
        size_t len = j - i;
        int dashes = strspn(s + i, "-") >= len;
        if (!(dashes || (len == 1 && (s[i] == '.' || s[i] == '_')) ||
              (len == 2 && s[i] == '_' && s[i + 1] == '_')))
            return 0;
        i = j;
    }
    return 1;
}

/* host[:port], host := domain-component ('.' domain-component)*,
 * domain-component := [A-Za-z0-9] | [A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9] */
static int valid_domain(const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    size_t host = colon ? (size_t)(colon - s) : n;
    if (colon) {
        size_t port = n - host - 1;
        if (port == 0 || port > 5)
            return 0;
        for (size_t i = host + 1; i < n; i++)
            if (!isdigit((unsigned char)s[i]))
                return 0;
    }
    size_t start = 0;
    for (size_t i = 0; i <= host; i++) {
        if (i < host && s[i] != '.') {
            if (!isalnum((unsigned char)s[i]) && s[i] != '-')
                return 0;
            continue;
        }
        if (i == start || s[start] == '-' || s[i - 1] == '-')
            return 0;
        start = i + 1;
    }
    return 1;
}

int gv_valid_image_name(const char *s)
{
    if (!s || !*s || strlen(s) > 255)
        return 0;
    const char *slash = strchr(s, '/');
    const char *p = s;
    if (slash) { /* the first component is a domain when it looks like one */
        size_t n = (size_t)(slash - s);
        int domain = (memchr(s, '.', n) || memchr(s, ':', n) || (n == 9 && !strncmp(s, "localhost", 9)));
        for (size_t i = 0; i < n && !domain; i++)
            domain = isupper((unsigned char)s[i]);
        if (domain) {
            if (!valid_domain(s, n))
                return 0;
            p = slash + 1;
        }
    }
    for (;;) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (!valid_path_component(p, n))
            return 0;
        if (!end)
            return 1;
        p = end + 1;
    }
}

int gv_valid_image_tag(const char *s)
{
    if (!s || !*s || strlen(s) > 128 || !(isalnum((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-'))
            return 0;
    return 1;
}

int gv_valid_sha256_digest(const char *s)
{
    if (!s || strncmp(s, "sha256:", 7) || strlen(s) != 7 + 64)
        return 0;
    for (const char *p = s + 7; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

int gv_plan_is_image(const json_t *baseline)
{
    return json_is_object(json_object_get(baseline, "image"));
}

/* ---- the pin ---- */

struct pin {
    char name[256];
    char tag[129];     /* "" when none */
    char digest[72];   /* sha256:HEX */
    int by_image_id;   /* a legacy docker-archive: the config digest, no registry digest */
};

/* NAME[:TAG][@DIGEST] of one tags entry into p; 0 when it is not a reference
 * (a bare tag, no '/' or ':'), 1 when it is one, -1 when it is a bad one. */
static int split_reference(const char *s, struct pin *p)
{
    if (!strchr(s, '/') && !strchr(s, ':'))
        return 0;
    char ref[400];
    if (strlen(s) >= sizeof ref)
        return -1;
    snprintf(ref, sizeof ref, "%s", s);
    char *at = strchr(ref, '@');
    if (at && !gv_valid_sha256_digest(at + 1))
        return -1;
    if (at)
        *at = '\0';
    char *slash = strrchr(ref, '/'), *colon = strrchr(ref, ':');
    p->tag[0] = '\0';
    if (colon && (!slash || colon > slash)) {
        *colon = '\0';
        if (!gv_valid_image_tag(colon + 1))
            return -1;
        snprintf(p->tag, sizeof p->tag, "%s", colon + 1);
    }
    if (!gv_valid_image_name(ref))
        return -1;
    snprintf(p->name, sizeof p->name, "%s", ref);
    return 1;
}

/* The name (and tag) to pin: --name, else the first of image.tags that is a
 * reference. 1 found, 0 none, or a gv_status (a bad value, its field named). */
static int pick_name(const json_t *img, const char *name, struct pin *p, struct gv_err *err)
{
    const json_t *asked = json_object_get(img, "tag");
    if (asked && !gv_valid_image_tag(json_string_value(asked)))
        return gv_err_set(err, GV_E_FORMAT, "image.tag: not an image tag (OCI reference grammar)");
    if (name) {
        if (!gv_valid_image_name(name))
            return gv_err_set(err, GV_E_USAGE,
                              "--name %s: not an image name (OCI reference grammar)", name);
        snprintf(p->name, sizeof p->name, "%s", name);
        snprintf(p->tag, sizeof p->tag, "%s", asked ? json_string_value(asked) : "");
        return 1;
    }
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(img, "tags"), i, t)
    {
        const char *s = json_string_value(t);
        int rc = s ? split_reference(s, p) : -1;
        if (rc < 0)
            return gv_err_set(err, GV_E_FORMAT,
                              "image.tags[%zu]: not an image reference NAME[:TAG] (OCI reference "
                              "grammar)",
                              i);
        if (rc == 1) {
            if (!p->tag[0] && asked)
                snprintf(p->tag, sizeof p->tag, "%s", json_string_value(asked));
            return 1;
        }
    }
    return 0;
}

static int pick_digest(const json_t *img, struct pin *p, struct gv_err *err)
{
    const json_t *m = json_object_get(img, "manifest_digest");
    const char *form = json_string_value(json_object_get(img, "form"));
    if (m) {
        if (!gv_valid_sha256_digest(json_string_value(m)))
            return gv_err_set(err, GV_E_FORMAT,
                              "image.manifest_digest: not a digest sha256:<64 hex digits>");
        snprintf(p->digest, sizeof p->digest, "%s", json_string_value(m));
        return GV_OK;
    }
    if (!form || strcmp(form, "docker-archive"))
        return gv_err_set(err, GV_E_FORMAT,
                          "image.manifest_digest: missing (only a legacy docker-archive has none)");
    const char *c = json_string_value(json_object_get(img, "config_digest"));
    if (!gv_valid_sha256_digest(c))
        return gv_err_set(err, GV_E_FORMAT,
                          "image.config_digest: not a digest sha256:<64 hex digits>");
    snprintf(p->digest, sizeof p->digest, "%s", c);
    p->by_image_id = 1;
    return GV_OK;
}

/* "NAME@sha256:…", or the image ID "sha256:…" for a legacy docker-archive. */
static void pin_reference(const struct pin *p, char *out, size_t n)
{
    if (p->by_image_id)
        snprintf(out, n, "%s", p->digest);
    else
        snprintf(out, n, "%s@%s", p->name, p->digest);
}

/* The commands of docker or podman: pull and tag (or, by image ID, check it
 * is loaded and tag), then gpuvet verify. */
static json_t *engine_commands(const char *engine, const struct pin *p, const char *gpuvet,
                               const char *base)
{
    char ref[400], named[400], vref[420];
    pin_reference(p, ref, sizeof ref);
    snprintf(named, sizeof named, "%s:%s", p->name, p->tag);
    json_t *cmds = json_array();
    if (p->by_image_id)
        json_array_append_new(cmds, gv_plan_argv(engine, "image", "inspect", ref, NULL));
    else
        json_array_append_new(cmds, gv_plan_argv(engine, "pull", ref, NULL));
    if (p->tag[0])
        json_array_append_new(cmds, gv_plan_argv(engine, "tag", ref, named, NULL));
    snprintf(vref, sizeof vref, "%s:%s", engine, p->tag[0] ? named : ref);
    if (base)
        json_array_append_new(cmds, gv_plan_argv(gpuvet, "verify", "--image", vref, "--baseline", base,
                                            NULL));
    return cmds;
}

/* engines[]: docker, podman (commands), kubernetes and compose (what to write). */
static json_t *engines(const struct pin *p, const char *gpuvet, const char *base)
{
    char ref[400], line[420], set[440];
    pin_reference(p, ref, sizeof ref);
    snprintf(line, sizeof line, "image: %s", ref);
    snprintf(set, sizeof set, "<CONTAINER>=%s", ref);
    json_t *e = json_array();
    json_array_append_new(e, json_pack("{s:s, s:o}", "engine", "docker", "commands",
                                       engine_commands("docker", p, gpuvet, base)));
    json_array_append_new(e, json_pack("{s:s, s:o}", "engine", "podman", "commands",
                                       engine_commands("podman", p, gpuvet, base)));
    if (p->by_image_id) {
        const char *why = "an image ID cannot be pulled from a registry: push the tagged image "
                          "and pin the digest the registry gives";
        json_array_append_new(e, json_pack("{s:s, s:s}", "engine", "kubernetes", "note", why));
        json_array_append_new(e, json_pack("{s:s, s:s}", "engine", "compose", "note", why));
        return e;
    }
    json_array_append_new(
        e, json_pack("{s:s, s:[o], s:s, s:s}", "engine", "kubernetes", "commands",
                     gv_plan_argv("kubectl", "set", "image", "deployment/<DEPLOYMENT>", set, NULL),
                     "manifest", line, "note",
                     "replace the placeholders DEPLOYMENT and CONTAINER (in angle brackets) "
                     "with yours; in a manifest, the container's image: line"));
    json_array_append_new(e, json_pack("{s:s, s:s}", "engine", "compose", "manifest", line));
    return e;
}

static const char *verify_base(const struct gv_plan_opts *opts)
{
    return opts && opts->baseline_path && gv_valid_abs_path(opts->baseline_path)
               ? opts->baseline_path
               : NULL;
}

static json_t *pin_json(const struct pin *p)
{
    char ref[400];
    pin_reference(p, ref, sizeof ref);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "name", p->name, "digest", p->digest, "by",
                          p->by_image_id ? "image_id" : "manifest_digest", "reference", ref);
    if (p->tag[0])
        json_object_set_new(o, "tag", json_string(p->tag));
    json_object_set_new(o, "why",
                        json_string(p->by_image_id
                                        ? "a legacy docker-archive holds no manifest, so it has "
                                          "no registry digest: the pin is the image ID (the "
                                          "config digest); load the baseline's archive "
                                          "(docker load -i) before tagging it"
                                        : "the manifest digest names the image's exact content; "
                                          "a tag can move, a digest cannot"));
    return o;
}

int gv_plan_image_pin(const json_t *baseline, const struct gv_plan_opts *opts, const char *name,
                      json_t **out, struct gv_err *err)
{
    *out = NULL;
    const json_t *img = json_object_get(baseline, "image");
    if (!json_is_object(img))
        return gv_err_set(err, GV_E_FORMAT, "baseline: no image section (snapshot --image)");
    struct pin p = {0};
    int rc = pick_digest(img, &p, err);
    if (rc)
        return rc;
    int found = pick_name(img, name, &p, err);
    if (found < 0)
        return found;
    const char *base = verify_base(opts);
    json_t *plan = json_pack("{s:s, s:i, s:s, s:b, s:s, s:[]}", "schema", GV_PLAN_SCHEMA,
                             "schema_version", GV_PLAN_SCHEMA_VERSION, "kind", "image-pin",
                             "complete", found == 1, "baseline", base ? base : "", "problems");
    if (!found) {
        json_array_append_new(
            json_object_get(plan, "problems"),
            json_pack("{s:s, s:s, s:s}", "subject", "image.tags", "message",
                      "the image has no name among its tags (only bare tags, or none)", "how",
                      "name it: gpuvet plan rollback --to BASELINE --name NAME"));
        *out = plan;
        return GV_OK;
    }
    const char *gpuvet = opts && opts->gpuvet_path ? opts->gpuvet_path : "gpuvet";
    json_object_set_new(plan, "gpuvet", json_string(gpuvet));
    json_object_set_new(plan, "pin", pin_json(&p));
    json_object_set_new(plan, "engines", engines(&p, gpuvet, base));
    *out = plan;
    return GV_OK;
}

/* ---- rendering ---- */

/* The pin of a plan, validated again (the plan may come from anywhere). */
static int read_pin(const json_t *plan, struct pin *p)
{
    const json_t *j = json_object_get(plan, "pin");
    const char *name = json_string_value(json_object_get(j, "name"));
    const char *tag = json_string_value(json_object_get(j, "tag"));
    const char *digest = json_string_value(json_object_get(j, "digest"));
    const char *by = json_string_value(json_object_get(j, "by"));
    if (!gv_valid_image_name(name) || (tag && !gv_valid_image_tag(tag)) ||
        !gv_valid_sha256_digest(digest) || !by)
        return -1;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->tag, sizeof p->tag, "%s", tag ? tag : "");
    snprintf(p->digest, sizeof p->digest, "%s", digest);
    p->by_image_id = !strcmp(by, "image_id");
    return strcmp(by, "image_id") && strcmp(by, "manifest_digest") ? -1 : 0;
}

/* The engines of a plan, rebuilt from its validated pin. */
static json_t *rebuild(const json_t *plan, struct pin *p)
{
    if (read_pin(plan, p))
        return NULL;
    const char *base = json_string_value(json_object_get(plan, "baseline"));
    const char *gpuvet = json_string_value(json_object_get(plan, "gpuvet"));
    if (!gv_valid_abs_path(gpuvet))
        gpuvet = NULL;
    return engines(p, gpuvet ? gpuvet : "gpuvet", base && gv_valid_abs_path(base) ? base : NULL);
}

/* One {"argv": [...]} command, every word quoted, and a newline. */
static int quoted_argv(struct gv_buf *b, const json_t *cmd)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(cmd, "argv"), i, a)
    {
        if (i)
            gv_buf_add(b, " ");
        if (gv_sh_quote(b, json_string_value(a)))
            return -1;
    }
    gv_buf_add(b, "\n");
    return 0;
}

static int sh_engine(struct gv_buf *b, const json_t *e)
{
    const char *name = json_string_value(json_object_get(e, "engine"));
    const json_t *cmds = json_object_get(e, "commands");
    size_t i;
    json_t *c;
    if (!strcmp(name, "docker") || !strcmp(name, "podman")) {
        gv_buf_printf(b, "\nif command -v %s >/dev/null 2>&1; then\n", name);
        json_array_foreach(cmds, i, c)
        {
            gv_buf_add(b, "    ");
            if (quoted_argv(b, c))
                return -1;
        }
        gv_buf_add(b, "    ran=1\nfi\n");
        return 0;
    }
    gv_buf_printf(b, "\n# %s (not run by this script):\n", name);
    json_array_foreach(cmds, i, c)
    {
        gv_buf_add(b, "#   ");
        if (quoted_argv(b, c))
            return -1;
    }
    const char *m = json_string_value(json_object_get(e, "manifest"));
    const char *n = json_string_value(json_object_get(e, "note"));
    if (m)
        gv_buf_printf(b, "#   %s\n", m);
    if (n)
        gv_buf_printf(b, "# note: %s\n", n);
    return 0;
}

/* What both renderers start from: the validated pin, its reference, the
 * engines rebuilt from it. -1 when the pin fails validation. */
struct rendering {
    struct pin p;
    char ref[400];
    json_t *eng;
};

static int rendering_begin(const json_t *plan, struct rendering *r)
{
    r->eng = rebuild(plan, &r->p);
    if (!r->eng)
        return -1;
    pin_reference(&r->p, r->ref, sizeof r->ref);
    return 0;
}

/* The text, or NULL (and nothing) when a word could not be quoted. */
static char *rendering_end(struct rendering *r, struct gv_buf *b, int rc)
{
    json_decref(r->eng);
    if (rc) {
        gv_buf_free(b);
        return NULL;
    }
    return gv_buf_take(b);
}

char *gv_plan_image_render_sh(const json_t *plan)
{
    struct rendering r;
    if (rendering_begin(plan, &r))
        return NULL;
    struct gv_buf b = {0};
    gv_buf_add(&b, "#!/usr/bin/env bash\n"
                   "# gpuvet rollback plan for a container image: pin the baseline's digest.\n"
                   "# Review it, then run it. It writes no file: it pulls and tags the image\n"
                   "# with docker and podman (each where installed), then verifies it.\n");
    gv_buf_printf(&b, "# pin: %s\n", r.ref);
    if (r.p.by_image_id)
        gv_buf_add(&b, "# note: a legacy docker-archive has no manifest digest: the pin is the\n"
                       "# image ID; load the baseline's archive first (docker load -i FILE)\n");
    gv_buf_add(&b, "set -euo pipefail\nran=0\n");
    int rc = 0;
    size_t i;
    json_t *e;
    json_array_foreach(r.eng, i, e)
        rc = rc ? rc : sh_engine(&b, e);
    gv_buf_add(&b, "\nif [ \"$ran\" -eq 0 ]; then\n"
                   "    echo 'gpuvet plan: neither docker nor podman is installed here' >&2\n"
                   "    exit 1\nfi\necho 'gpuvet plan: the image is pinned'\n");
    return rendering_end(&r, &b, rc);
}

char *gv_plan_image_render_md(const json_t *plan)
{
    struct rendering r;
    if (rendering_begin(plan, &r))
        return NULL;
    struct gv_buf b = {0};
    gv_buf_add(&b, "# Rollback plan: pin the image\n\n");
    const char *base = json_string_value(json_object_get(plan, "baseline"));
    if (base && *base && gv_valid_abs_path(base))
        gv_buf_printf(&b, "Baseline: `%s`\n\n", base);
    gv_buf_printf(&b, "Pin: `%s`\n\n%s.\n", r.ref,
                  r.p.by_image_id ? "A legacy docker-archive holds no manifest, so it has no "
                                  "registry digest: the pin is the image ID (the config digest); "
                                  "load the baseline's archive (`docker load -i`) before tagging it"
                                : "The manifest digest names the image's exact content; a tag "
                                  "can move, a digest cannot");
    int rc = 0;
    size_t i, j;
    json_t *e, *c;
    json_array_foreach(r.eng, i, e)
    {
        gv_buf_printf(&b, "\n## %s\n", json_string_value(json_object_get(e, "engine")));
        const char *n = json_string_value(json_object_get(e, "note"));
        const char *m = json_string_value(json_object_get(e, "manifest"));
        if (n)
            gv_buf_printf(&b, "\n%s.\n", n);
        if (json_array_size(json_object_get(e, "commands"))) {
            gv_buf_add(&b, "\n```sh\n");
            json_array_foreach(json_object_get(e, "commands"), j, c)
                rc = rc ? rc : quoted_argv(&b, c);
            gv_buf_add(&b, "```\n");
        }
        if (m)
            gv_buf_printf(&b, "\n```yaml\n%s\n```\n", m);
    }
    return rendering_end(&r, &b, rc);
}

/* ---- verification ---- */

static json_t *verify_report(const char *baseline_name, const char *kind)
{
    return json_pack("{s:s, s:i, s:s, s:s, s:b, s:[], s:[], s:[]}", "schema", GV_VERIFY_SCHEMA,
                     "schema_version", GV_VERIFY_SCHEMA_VERSION, "baseline",
                     baseline_name ? baseline_name : "", "kind", kind, "stack_matches", 0,
                     "differences", "not_comparable", "leftovers");
}

int gv_verify_image(const json_t *baseline, const json_t *image, const char *baseline_name,
                    json_t **report, struct gv_err *err)
{
    *report = NULL;
    const json_t *bi = json_object_get(baseline, "image");
    if (!json_is_object(bi))
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: no image section: compare an image with a snapshot of an image "
                          "(gpuvet snapshot --image)",
                          baseline_name);
    const char *key = "manifest_digest";
    const char *b = json_string_value(json_object_get(bi, key));
    const char *now = json_string_value(json_object_get(image, key));
    if (!b || !now) { /* a legacy docker-archive on one side: the image ID */
        key = "config_digest";
        b = json_string_value(json_object_get(bi, key));
        now = json_string_value(json_object_get(image, key));
    }
    if (!gv_valid_sha256_digest(b))
        return gv_err_set(err, GV_E_FORMAT, "%s: image.%s: not a digest sha256:<64 hex digits>",
                          baseline_name, key);
    if (!gv_valid_sha256_digest(now))
        return gv_err_set(err, GV_E_FORMAT, "the image's %s: not a digest sha256:<64 hex digits>",
                          key);
    json_t *r = verify_report(baseline_name, "image");
    int same = !strcmp(b, now);
    json_object_set_new(r, "stack_matches", json_boolean(same));
    gv_json_set_str(r, "reference", json_string_value(json_object_get(image, "reference")));
    json_object_set_new(r, "compared", json_string(key));
    json_object_set_new(r, "baseline_digest", json_string(b));
    json_object_set_new(r, "image_digest", json_string(now));
    json_t *bt = json_object_get(bi, "tags"), *it = json_object_get(image, "tags");
    json_object_set_new(r, "baseline_tags", json_is_array(bt) ? json_deep_copy(bt) : json_array());
    json_object_set_new(r, "image_tags", json_is_array(it) ? json_deep_copy(it) : json_array());
    if (!same)
        json_array_append_new(json_object_get(r, "differences"),
                              json_pack("{s:s, s:s, s:s, s:s, s:s}", "layer", "image", "kind",
                                        "changed", "subject", key, "before", b, "after", now));
    *report = r;
    return GV_OK;
}

static const json_t *baseline_library(const json_t *baseline, const char *path)
{
    size_t i;
    json_t *it;
    json_array_foreach(gv_json_path(baseline, "libraries.items"), i, it)
    {
        const char *p = json_string_value(json_object_get(it, "path"));
        if (p && !strcmp(p, path))
            return it;
    }
    return NULL;
}

/* One mapped library judged: its entry gets "status" and lands in mismatches
 * or not_in_baseline when it is not the baseline's. */
static void judge(json_t *r, json_t *m, const struct gv_hash_job *job, const json_t *base)
{
    const char *why = NULL;
    const char *want = json_string_value(json_object_get(base, "sha256"));
    if (job && job->rc == 0)
        json_object_set_new(m, "sha256", json_string(job->hex));
    if (json_is_true(json_object_get(m, "deleted")))
        why = "deleted: the file it mapped was removed or replaced since; its content cannot be "
              "read by path";
    else if (!job || job->rc)
        why = job ? job->err : "not hashed";
    else if (!base) {
        json_object_set_new(m, "status", json_string("not_in_baseline"));
        json_array_append(json_object_get(r, "not_in_baseline"), m);
        return;
    } else if (!want)
        why = "the baseline has no sha256 for it (snapshot --no-hash, or a sparse file)";
    else if (strcmp(want, job->hex)) {
        json_object_set_new(m, "baseline_sha256", json_string(want));
        why = "its content differs from the baseline's";
    }
    json_object_set_new(m, "status", json_string(why ? "mismatch" : "match"));
    if (why) {
        json_object_set_new(m, "reason", json_string(why));
        json_array_append(json_object_get(r, "mismatches"), m);
    }
}

static void copy_identity(json_t *r, const json_t *baseline)
{
    const json_t *bi = json_object_get(baseline, "image");
    if (!json_is_object(bi))
        return;
    json_t *o = json_object();
    const char *keys[] = {"reference", "manifest_digest", "config_digest"};
    for (size_t i = 0; i < 3; i++)
        gv_json_set_str(o, keys[i], json_string_value(json_object_get(bi, keys[i])));
    json_object_set_new(r, "image", o);
}

int gv_verify_process(const json_t *baseline, int pid, const char *baseline_name,
                      json_t **report, struct gv_err *err)
{
    *report = NULL;
    if (pid <= 0)
        return gv_err_set(err, GV_E_USAGE, "--pid %d: not a process id", pid);
    struct gv_probe_ctx ctx = {.root = "/", .live = 1, .pid = pid};
    json_t *s = gv_probe_process(&ctx);
    if (!json_is_true(json_object_get(s, "collected"))) {
        int rc = gv_err_set(err, GV_E_NOTFOUND, "process %d: %s", pid,
                            json_string_value(json_object_get(s, "reason")));
        json_decref(s);
        return rc;
    }
    char root[64];
    snprintf(root, sizeof root, "/proc/%d/root", pid);
    json_t *mapped = json_object_get(s, "mapped");
    size_t n = json_array_size(mapped), i;
    struct gv_hash_job *jobs = calloc(n ? n : 1, sizeof *jobs);
    if (!jobs) {
        json_decref(s);
        return gv_err_set(err, GV_E_NOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        jobs[i].root = root;
        jobs[i].path = json_string_value(json_object_get(json_array_get(mapped, i), "path"));
    }
    gv_filehash_run(jobs, n, 1);
    json_t *r = verify_report(baseline_name, "process");
    json_object_set_new(r, "pid", json_integer(pid));
    gv_json_set_str(r, "exe", json_string_value(json_object_get(s, "exe")));
    copy_identity(r, baseline);
    json_object_set_new(r, "mismatches", json_array());
    json_object_set_new(r, "not_in_baseline", json_array());
    for (i = 0; i < n; i++) {
        json_t *m = json_array_get(mapped, i);
        judge(r, m, jobs[i].path ? &jobs[i] : NULL, baseline_library(baseline, jobs[i].path ? jobs[i].path : ""));
    }
    free(jobs);
    json_object_set(r, "mapped", mapped);
    json_object_set(r, "conflicts", json_object_get(s, "conflicts"));
    json_decref(s);
    int ok = n > 0 && !json_array_size(json_object_get(r, "mismatches")) &&
             !json_array_size(json_object_get(r, "not_in_baseline"));
    if (!n)
        json_array_append_new(json_object_get(r, "not_comparable"),
                              json_pack("{s:s, s:s}", "section", "process", "reason",
                                        "the process maps no GPU library: nothing to compare"));
    json_object_set_new(r, "stack_matches", json_boolean(ok));
    *report = r;
    return GV_OK;
}
