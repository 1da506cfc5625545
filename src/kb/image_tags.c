/* "Tag says X, content says Y": the version claims of an image's tags and
 * labels against what the image holds (image_tags.h). */
#include "kb/image_tags.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "kb/rules_impl.h"

enum claim_kind { CLAIM_ROCM, CLAIM_CUDA, CLAIM_TORCH, CLAIM_KINDS };
static const char *const kind_id[CLAIM_KINDS] = {"rocm", "cuda", "torch"};
static const char *const kind_name[CLAIM_KINDS] = {"ROCm", "CUDA", "PyTorch"};
/* A bare version that cannot be the kind's: NGC's YY.MM tags (24.05-py3). */
static const int kind_max_major[CLAIM_KINDS] = {19, 19, 9};

struct claim {
    enum claim_kind kind;
    char version[32];
    int parts;             /* components given: "6.4" 2 */
    char path[160];        /* evidence path */
    const char *value;     /* the tag or label as written */
};

/* A version "X.Y" or "X.Y.Z" at s (at least one dot), copied lowercase into
 * buf; the count of components, 0 when s does not start with one. */
static int read_version(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    int parts = 0;
    while (parts < 3 && isdigit((unsigned char)s[n])) {
        while (isdigit((unsigned char)s[n]))
            n++;
        parts++;
        if (s[n] != '.' || !isdigit((unsigned char)s[n + 1]))
            break;
        n++;
    }
    if (parts < 2 || n >= size)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parts;
}

static int add_claim(struct claim *cl, int n, int max, enum claim_kind k, const char *ver,
                     int parts, const char *path, const char *value)
{
    if (n >= max || parts < 2 || kb_major(ver) < 1 || kb_major(ver) > kind_max_major[k])
        return n;
    if (k == CLAIM_CUDA && kb_major(ver) < 7)
        return n;
    for (int i = 0; i < n; i++)
        if (cl[i].kind == k && !strcmp(cl[i].version, ver))
            return n; /* one claim per kind and version */
    cl[n] = (struct claim){.kind = k, .parts = parts, .value = value};
    snprintf(cl[n].version, sizeof cl[n].version, "%s", ver);
    snprintf(cl[n].path, sizeof cl[n].path, "%s", path);
    return n + 1;
}

/* "rocm6.4", "rocm-6.4", "cuda12.4.1", "pytorch_release_2.6.0", "torch2.3",
 * "cu124" (a wheel's local label) anywhere in text. */
static int scan_tokens(const char *text, const char *path, struct claim *cl, int n, int max)
{
    char low[512];
    size_t len = strlen(text) < sizeof low - 1 ? strlen(text) : sizeof low - 1;
    for (size_t i = 0; i < len; i++)
        low[i] = (char)tolower((unsigned char)text[i]);
    low[len] = '\0';
    static const struct {
        const char *word;
        enum claim_kind kind;
    } words[] = {{"rocm", CLAIM_ROCM}, {"cuda", CLAIM_CUDA}, {"pytorch", CLAIM_TORCH},
                 {"torch", CLAIM_TORCH}};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        for (const char *p = strstr(low, words[w].word); p; p = strstr(p + 1, words[w].word)) {
            if (words[w].kind == CLAIM_TORCH && !strcmp(words[w].word, "torch") && p >= low + 2 &&
                !strncmp(p - 2, "py", 2))
                continue; /* "pytorch" was read already */
            const char *v = p + strlen(words[w].word);
            while (*v == '-' || *v == '_' || *v == ' ' || *v == 'v')
                v++;
            if (!strncmp(v, "release", 7))
                v += 7;
            while (*v == '-' || *v == '_')
                v++;
            char ver[32];
            int parts = read_version(v, ver, sizeof ver);
            n = add_claim(cl, n, max, words[w].kind, ver, parts, path, text);
        }
    }
    for (const char *p = strstr(low, "cu"); p; p = strstr(p + 1, "cu")) {
        if ((p > low && isalpha((unsigned char)p[-1])) || !isdigit((unsigned char)p[2]) ||
            !isdigit((unsigned char)p[3]) || !isdigit((unsigned char)p[4]) ||
            isdigit((unsigned char)p[5]))
            continue;
        char ver[8];
        snprintf(ver, sizeof ver, "%c%c.%c", p[2], p[3], p[4]);
        n = add_claim(cl, n, max, CLAIM_CUDA, ver, 2, path, text);
    }
    return n;
}

/* The kind a repository name or label key names, -1 when none. */
static int kind_in_name(const char *name, size_t len)
{
    char low[256];
    len = len < sizeof low - 1 ? len : sizeof low - 1;
    for (size_t i = 0; i < len; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[len] = '\0';
    return strstr(low, "torch") ? CLAIM_TORCH : strstr(low, "rocm") ? CLAIM_ROCM
           : strstr(low, "cuda") ? CLAIM_CUDA : -1;
}

/* "nvidia/cuda:12.4.1-runtime": the repository's last component names a kind
 * and the tag starts with a bare version. */
static int scan_named_tag(const char *ref, const char *path, struct claim *cl, int n, int max)
{
    const char *slash = strrchr(ref, '/');
    const char *last = slash ? slash + 1 : ref;
    const char *colon = strchr(last, ':');
    if (!colon)
        return n;
    int k = kind_in_name(last, (size_t)(colon - last));
    char ver[32];
    int parts = read_version(colon + 1, ver, sizeof ver);
    return k < 0 ? n : add_claim(cl, n, max, (enum claim_kind)k, ver, parts, path, ref);
}

/* The OCI annotations' own pair: org.opencontainers.image.title naming a kind
 * ("rocm", "pytorch") and org.opencontainers.image.version its version. */
static int titled_version(const json_t *img, struct claim *cl, int n, int max)
{
    const json_t *labels = jobj(img, "labels");
    const char *title = jstr(labels, "org.opencontainers.image.title");
    const char *version = jstr(labels, "org.opencontainers.image.version");
    int k = title ? kind_in_name(title, strlen(title)) : -1;
    char ver[32];
    int parts = version ? read_version(version, ver, sizeof ver) : 0;
    if (k < 0 || parts == 0)
        return n;
    return add_claim(cl, n, max, (enum claim_kind)k, ver, parts,
                     "image.labels.org.opencontainers.image.version", version);
}

static int collect_claims(const json_t *img, struct claim *cl, int max)
{
    int n = 0;
    char path[160];
    if (jstr(img, "tag"))
        n = scan_tokens(jstr(img, "tag"), "image.tag", cl, n, max);
    size_t i;
    json_t *t;
    json_array_foreach(jarr(img, "tags"), i, t) {
        if (!json_is_string(t))
            continue;
        snprintf(path, sizeof path, "image.tags[%zu]", i);
        n = scan_tokens(json_string_value(t), path, cl, n, max);
        n = scan_named_tag(json_string_value(t), path, cl, n, max);
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)jobj(img, "labels"), key, v) {
        if (!json_is_string(v))
            continue;
        snprintf(path, sizeof path, "image.labels.%.100s", key);
        n = scan_tokens(json_string_value(v), path, cl, n, max);
        int k = kind_in_name(key, strlen(key));
        char ver[32];
        int parts = read_version(json_string_value(v), ver, sizeof ver);
        if (k >= 0 && strstr(key, "version"))
            n = add_claim(cl, n, max, (enum claim_kind)k, ver, parts, path, json_string_value(v));
    }
    return titled_version(img, cl, n, max);
}

/* Components of a version: "6.2" 2, "12.4.1-1" 3. */
static int version_parts(const char *v)
{
    int n = 1;
    for (; *v && *v != '-' && *v != '+'; v++)
        n += *v == '.';
    return n;
}

/* What the content holds of kind: evidence entries {path, value} appended
 * to ev; *match set when one agrees with the claim on the components both
 * give ("6.2.4" and a torch's "6.2" agree). */
static void content_of(const json_t *snap, const struct claim *cl, json_t *ev, int *match)
{
    char path[160];
    size_t i;
    json_t *x;
#define SEEN(p, ver, most)                                                                   \
    do {                                                                                     \
        json_t *e_ = json_object();                                                          \
        json_object_set_new(e_, "path", json_string(p));                                     \
        json_object_set_new(e_, "value", json_string(ver));                                  \
        json_array_append_new(ev, e_);                                                       \
        int n_ = version_parts(ver) < cl->parts ? version_parts(ver) : cl->parts;            \
        *match |= kb_vercmp_n(ver, cl->version, n_ > (most) ? (most) : n_) == 0;             \
    } while (0)
    if (cl->kind != CLAIM_TORCH)
        json_array_foreach(jarr(section(snap, "stacks"), "installs"), i, x) {
            const char *k = jstr(x, "kind"), *l = jstr(x, "layout"), *ver = jstr(x, "version");
            if (!k || strcmp(k, kind_id[cl->kind]) || (l && !strcmp(l, "driver")) || !ver ||
                kb_major(ver) < 0)
                continue;
            snprintf(path, sizeof path, "stacks.installs[%zu].version", i);
            SEEN(path, ver, 3);
        }
    if (cl->kind == CLAIM_CUDA)
        json_array_foreach(jarr(section(snap, "libraries"), "items"), i, x) {
            const char *name = jstr(x, "name"), *ver = jstr(x, "version");
            if (!name || strcmp(name, "cudart") || !ver || kb_major(ver) < 0)
                continue;
            snprintf(path, sizeof path, "libraries.items[%zu].version", i);
            SEEN(path, ver, 2); /* libcudart 12.4.127 is CUDA 12.4.1: its patch is not CUDA's */
        }
    json_array_foreach(jarr(section(snap, "python"), "environments"), i, x) {
        const json_t *torch = jobj(x, "torch");
        char buf[64];
        const char *ver = NULL;
        if (cl->kind == CLAIM_TORCH) {
            const char *tv = jstr(torch, "version");
            ver = tv ? kb_public_version(tv, buf, sizeof buf) : NULL;
            snprintf(path, sizeof path, "python.environments[%zu].torch.version", i);
        } else if (cl->kind == CLAIM_CUDA) {
            ver = jstr(torch, "cuda");
            snprintf(path, sizeof path, "python.environments[%zu].torch.cuda", i);
        } else if (jstr(torch, "hip")) {
            ver = kb_rocm_from_hip(jstr(torch, "hip"), buf, sizeof buf);
            snprintf(path, sizeof path, "python.environments[%zu].torch.hip", i);
        }
        if (ver && kb_major(ver) >= 0)
            SEEN(path, ver, 3);
    }
#undef SEEN
}

int gv_kb_image_tag_findings(const json_t *snap, json_t *out_array)
{
    const json_t *img = section(snap, "image");
    if (!img || !json_is_array(out_array))
        return 0;
    struct claim cl[24];
    int n = collect_claims(img, cl, (int)(sizeof cl / sizeof cl[0])), added = 0;
    for (int i = 0; i < n; i++) {
        json_t *content = json_array();
        int match = 0;
        content_of(snap, &cl[i], content, &match);
        if (match || !json_array_size(content)) {
            json_decref(content);
            continue;
        }
        json_t *first = json_array_get(content, 0);
        char msg[512];
        snprintf(msg, sizeof msg, "%s says %s %s, the content has %s %s%s", cl[i].path,
                 kind_name[cl[i].kind], cl[i].version, kind_name[cl[i].kind],
                 jstr(first, "value"), json_array_size(content) > 1 ? " (and more)" : "");
        json_t *ev = json_array(), *e = json_object();
        json_object_set_new(e, "path", json_string(cl[i].path));
        json_object_set_new(e, "value", json_string(cl[i].value));
        json_array_append_new(ev, e);
        json_array_extend(ev, content);
        json_decref(content);
        json_t *f = json_object();
        json_object_set_new(f, "id", json_string("image-tag"));
        json_object_set_new(f, "severity", json_string("warning"));
        json_t *m = json_string(msg);
        json_object_set_new(f, "message", m ? m : json_string("tag and content disagree"));
        json_object_set_new(f, "evidence", ev);
        json_object_set_new(f, "kind", json_string(kind_id[cl[i].kind]));
        json_object_set_new(f, "claimed", json_string(cl[i].version));
        json_array_append_new(out_array, f);
        added++;
    }
    return added;
}
