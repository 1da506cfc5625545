/* gpuvet diff: compare two snapshots layer by layer. Every comparison reads
 * both sides through the "collected" flag: a section missing on either side
 * is "not comparable", never "removed". */
#include "env/diff.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env/envpolicy.h"
#include "env/libnames.h"
#include "kb/rocm_mix.h"

struct dctx {
    json_t *changes;        /* array of change objects, in discovery order */
    json_t *not_comparable; /* array */
    const json_t *img_a, *img_b; /* the "image" sections, NULL for a host or root */
};

static const char *const layer_names[] = {NULL,        "driver", "runtime", "math",
                                          "framework", "loader", "packages", "image"};
static const char *const layer_titles[] = {NULL,
                                           "kernel driver",
                                           "GPU runtime",
                                           "math and communication libraries",
                                           "framework (Python environments)",
                                           "loader and environment",
                                           "packages and GPU tools",
                                           "the image (tag, digests, config, layers)"};

const char *gv_diff_layer_name(int layer)
{
    return layer >= GV_LAYER_DRIVER && layer <= GV_LAYER_IMAGE ? layer_names[layer] : NULL;
}

const char *gv_diff_layer_title(int layer)
{
    return layer >= GV_LAYER_DRIVER && layer <= GV_LAYER_IMAGE ? layer_titles[layer] : NULL;
}

/* ---- Debian version comparison (dpkg's algorithm) ---- */

static int order(int c)
{
    if (isdigit(c))
        return 0;
    if (isalpha(c))
        return c;
    if (c == '~')
        return -1;
    if (c)
        return c + 256;
    return 0;
}

static int verrevcmp(const char *a, const char *b)
{
    while (*a || *b) {
        int first_diff = 0;
        while ((*a && !isdigit((unsigned char)*a)) || (*b && !isdigit((unsigned char)*b))) {
            int ac = order((unsigned char)*a), bc = order((unsigned char)*b);
            if (ac != bc)
                return ac - bc;
            a++;
            b++;
        }
        while (*a == '0')
            a++;
        while (*b == '0')
            b++;
        while (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            if (!first_diff)
                first_diff = *a - *b;
            a++;
            b++;
        }
        if (isdigit((unsigned char)*a))
            return 1;
        if (isdigit((unsigned char)*b))
            return -1;
        if (first_diff)
            return first_diff;
    }
    return 0;
}

/* Split "epoch:upstream-revision" into its parts (copies into buf). */
static void split_version(const char *v, char *buf, size_t n, long *epoch, const char **up,
                          const char **rev)
{
    snprintf(buf, n, "%s", v);
    char *colon = strchr(buf, ':'), *s = buf;
    *epoch = 0;
    if (colon) {
        *epoch = strtol(buf, NULL, 10);
        s = colon + 1;
    }
    char *dash = strrchr(s, '-');
    *rev = "";
    if (dash) {
        *dash = '\0';
        *rev = dash + 1;
    }
    *up = s;
}

int gv_deb_vercmp(const char *a, const char *b)
{
    char ba[256], bb[256];
    long ea, eb;
    const char *ua, *ub, *ra, *rb;
    split_version(a ? a : "", ba, sizeof ba, &ea, &ua, &ra);
    split_version(b ? b : "", bb, sizeof bb, &eb, &ub, &rb);
    if (ea != eb)
        return ea < eb ? -1 : 1;
    int c = verrevcmp(ua, ub);
    return c ? c : verrevcmp(ra, rb);
}

/* ---- recording changes ---- */

static void put_opt(json_t *o, const char *key, const char *val)
{
    json_object_set_new(o, key, val ? json_string(val) : json_null());
}

json_t *gv_diff_add(json_t *changes, int layer, int order_in_layer, const char *kind,
                    const char *subject, const char *before, const char *after, const char *detail)
{
    json_t *o = json_object();
    json_object_set_new(o, "layer", json_string(gv_diff_layer_name(layer)));
    json_object_set_new(o, "rank", json_integer(layer));
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "subject", json_string(subject ? subject : "?"));
    put_opt(o, "before", before);
    put_opt(o, "after", after);
    if (detail && detail[0])
        json_object_set_new(o, "detail", json_string(detail));
    json_object_set_new(o, "_order", json_integer(order_in_layer));
    json_object_set_new(o, "_seq", json_integer((json_int_t)json_array_size(changes)));
    json_array_append_new(changes, o);
    return o;
}

/* order: tie-break inside a layer (smaller first), e.g. GPU packages before others. */
static json_t *add(struct dctx *d, int layer, int order_in_layer, const char *kind,
                   const char *subject, const char *before, const char *after, const char *detail)
{
    return gv_diff_add(d->changes, layer, order_in_layer, kind, subject, before, after, detail);
}

/* added / removed / changed for two optional strings; nothing when equal. */
static json_t *add_pair(struct dctx *d, int layer, int ord, const char *subject, const char *a,
                        const char *b, const char *detail)
{
    if (a && b)
        return strcmp(a, b) ? add(d, layer, ord, "changed", subject, a, b, detail) : NULL;
    if (a)
        return add(d, layer, ord, "removed", subject, a, NULL, detail);
    if (b)
        return add(d, layer, ord, "added", subject, NULL, b, detail);
    return NULL;
}

/* The image layers that brought item x (before) and y (after), on change c. */
static void brought(struct dctx *d, json_t *c, const json_t *x, const json_t *y)
{
    if (c)
        gv_diff_image_layer(c, d->img_a, x, d->img_b, y);
}

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int collected(const json_t *sec)
{
    return json_is_object(sec) && json_is_true(json_object_get(sec, "collected"));
}

/* Both sides collected: 1. Otherwise records the section as not comparable. */
static int comparable(struct dctx *d, const char *name, const json_t *a, const json_t *b)
{
    int ca = collected(a), cb = collected(b);
    if (ca && cb)
        return 1;
    json_t *o = json_object();
    json_object_set_new(o, "section", json_string(name));
    json_object_set_new(o, "before", json_boolean(ca));
    json_object_set_new(o, "after", json_boolean(cb));
    const char *why = !ca ? str(a, "reason") : str(b, "reason");
    char buf[512];
    snprintf(buf, sizeof buf, "not collected %s%s%s", !ca && !cb ? "on either side" : !ca ? "before" : "after",
             why ? ": " : "", why ? why : "");
    json_object_set_new(o, "reason", json_string(buf));
    json_array_append_new(d->not_comparable, o);
    return 0;
}

static int strp_cmp(const void *p, const void *q)
{
    return strcmp(*(const char *const *)p, *(const char *const *)q);
}

json_t *gv_diff_keys(const json_t *a, const json_t *b)
{
    json_t *set = json_object(), *v;
    const char *k;
    if (json_is_object(a))
        json_object_foreach((json_t *)a, k, v) json_object_set_new(set, k, json_true());
    if (json_is_object(b))
        json_object_foreach((json_t *)b, k, v) json_object_set_new(set, k, json_true());
    size_t n = json_object_size(set), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    json_t *arr = json_array();
    if (keys) {
        json_object_foreach(set, k, v) keys[i++] = k;
        qsort(keys, n, sizeof *keys, strp_cmp);
        for (i = 0; i < n; i++)
            json_array_append_new(arr, json_string(keys[i]));
    }
    free(keys);
    json_decref(set);
    return arr;
}

/* An object indexing the objects of arr by their string field key; each value
 * is the string field val (or val2 when val is absent, or "?"), or with
 * val == NULL the item's object field obj (an empty object when absent). */
static json_t *index_by(const json_t *arr, const char *key, const char *val, const char *val2,
                        const char *obj)
{
    json_t *map = json_object(), *it;
    size_t i;
    json_array_foreach(arr, i, it) {
        const char *k = json_string_value(json_object_get(it, key));
        if (!k)
            continue;
        if (val) {
            const char *v = json_string_value(json_object_get(it, val));
            if (!v && val2)
                v = json_string_value(json_object_get(it, val2));
            json_object_set_new(map, k, json_string(v ? v : "?"));
        } else {
            json_t *o = json_object_get(it, obj);
            json_object_set_new(map, k, json_is_object(o) ? json_incref(o) : json_object());
        }
    }
    return map;
}

/* An object whose keys are the strings of arr, each with the value v. */
static json_t *string_set(const json_t *arr, const char *v)
{
    json_t *set = json_object(), *it;
    size_t i;
    json_array_foreach(arr, i, it) if (json_is_string(it))
        json_object_set_new(set, json_string_value(it), json_string(v));
    return set;
}

/* Join a JSON array of strings with sep into buf; NULL when not an array. */
static const char *join(const json_t *arr, const char *sep, char *buf, size_t n)
{
    if (!json_is_array(arr))
        return NULL;
    size_t i, len = 0;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach(arr, i, v) {
        const char *s = json_string_value(v);
        int w = snprintf(buf + len, n - len, "%s%s", i ? sep : "", s ? s : "?");
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    return buf;
}

/* ---- kernel driver ---- */

static const char *module_state(const json_t *m, char *buf, size_t n)
{
    if (!json_is_object(m))
        return NULL;
    const char *v = str(m, "version");
    if (!json_is_true(json_object_get(m, "loaded")))
        snprintf(buf, n, "not loaded%s%s", v ? ", version " : "", v ? v : "");
    else
        snprintf(buf, n, "%s", v ? v : "loaded (version unknown)");
    return buf;
}

static void diff_drivers(struct dctx *d, const json_t *a, const json_t *b)
{
    if (!comparable(d, "drivers", a, b))
        return;
    const json_t *ma = json_object_get(a, "modules"), *mb = json_object_get(b, "modules");
    json_t *keys = gv_diff_keys(ma, mb), *k;
    size_t i;
    json_array_foreach(keys, i, k) {
        const char *name = json_string_value(k);
        char sa[256], sb[256], subj[300];
        snprintf(subj, sizeof subj, "kernel module %s", name);
        add_pair(d, GV_LAYER_DRIVER, 0, subj, module_state(json_object_get(ma, name), sa, sizeof sa),
                 module_state(json_object_get(mb, name), sb, sizeof sb), NULL);
    }
    json_decref(keys);
    const json_t *da = json_object_get(a, "dkms"), *db = json_object_get(b, "dkms");
    keys = gv_diff_keys(da, db);
    json_array_foreach(keys, i, k) {
        const char *name = json_string_value(k);
        char subj[300];
        snprintf(subj, sizeof subj, "dkms package %s", name);
        add_pair(d, GV_LAYER_DRIVER, 1, subj, str(json_object_get(da, name), "version"),
                 str(json_object_get(db, name), "version"), NULL);
    }
    json_decref(keys);
}

/* ---- stacks: installs (runtime), /opt/rocm link and alternatives (loader) ---- */

static void install_key(const json_t *it, char *buf, size_t n)
{
    const char *where = str(it, "prefix");
    if (!where)
        where = str(it, "libdir");
    snprintf(buf, n, "%s %s install %s", str(it, "kind") ? str(it, "kind") : "?",
             str(it, "layout") ? str(it, "layout") : "?", where ? where : "?");
}

static const json_t *find_install(const json_t *arr, const char *key)
{
    size_t i;
    json_t *it;
    char k[1024];
    json_array_foreach(arr, i, it) {
        install_key(it, k, sizeof k);
        if (!strcmp(k, key))
            return it;
    }
    return NULL;
}

static const char *install_desc(const json_t *it, char *buf, size_t n)
{
    if (!it)
        return NULL;
    const char *v = str(it, "version");
    snprintf(buf, n, "%s%s", v ? v : "version unknown",
             json_is_true(json_object_get(it, "is_default")) ? " (default)" : "");
    return buf;
}

static void diff_installs(struct dctx *d, const json_t *ia, const json_t *ib)
{
    json_t *set = json_object(), *it;
    size_t i;
    char key[1024];
    json_array_foreach(ia, i, it) {
        install_key(it, key, sizeof key);
        json_object_set_new(set, key, json_true());
    }
    json_array_foreach(ib, i, it) {
        install_key(it, key, sizeof key);
        json_object_set_new(set, key, json_true());
    }
    json_t *keys = gv_diff_keys(set, NULL), *k;
    json_decref(set);
    json_array_foreach(keys, i, k) {
        const char *kk = json_string_value(k);
        char sa[256], sb[256];
        add_pair(d, GV_LAYER_RUNTIME, 2, kk, install_desc(find_install(ia, kk), sa, sizeof sa),
                 install_desc(find_install(ib, kk), sb, sizeof sb), NULL);
    }
    json_decref(keys);
}

static void diff_stacks(struct dctx *d, const json_t *a, const json_t *b)
{
    if (!comparable(d, "stacks", a, b))
        return;
    diff_installs(d, json_object_get(a, "installs"), json_object_get(b, "installs"));
    const json_t *la = json_object_get(a, "rocm_link"), *lb = json_object_get(b, "rocm_link");
    char subj[300];
    snprintf(subj, sizeof subj, "%s link", str(la, "path") ? str(la, "path") : "/opt/rocm");
    add_pair(d, GV_LAYER_LOADER, 0, subj, str(la, "resolved"), str(lb, "resolved"), NULL);
    const json_t *aa = json_object_get(a, "alternatives"), *ab = json_object_get(b, "alternatives");
    json_t *keys = gv_diff_keys(aa, ab), *k;
    size_t i;
    json_array_foreach(keys, i, k) {
        const char *name = json_string_value(k);
        snprintf(subj, sizeof subj, "alternative %s", name);
        add_pair(d, GV_LAYER_LOADER, 0, subj, str(json_object_get(aa, name), "target"),
                 str(json_object_get(ab, name), "target"), NULL);
    }
    json_decref(keys);
}

/* ---- libraries ---- */

static int lib_layer(const char *name, int *ord)
{
    const struct gv_libname *ln = name ? gv_libname_by_name(name) : NULL;
    *ord = 0;
    if (!ln)
        return GV_LAYER_PACKAGES;
    switch (ln->cls) {
    case GV_LIB_RUNTIME: return GV_LAYER_RUNTIME;
    case GV_LIB_MATH: return GV_LAYER_MATH;
    case GV_LIB_COMM: *ord = 1; return GV_LAYER_MATH;
    default: *ord = 1; return GV_LAYER_PACKAGES;
    }
}

static const char *lib_value(const json_t *it)
{
    const char *v = str(it, "version");
    if (!v)
        v = str(it, "soname");
    if (!v)
        v = str(it, "path");
    return v;
}

static void lib_subject(const json_t *it, char *buf, size_t n)
{
    const char *origin = str(it, "origin");
    snprintf(buf, n, "%s (%s)", str(it, "name") ? str(it, "name") : "?",
             origin ? origin : str(it, "path") ? str(it, "path") : "?");
}

/* Append "; text" (or "text" when buf is empty). */
static void append_text(char *buf, size_t n, const char *text)
{
    size_t len = strlen(buf);
    if (len + 1 >= n)
        return;
    snprintf(buf + len, n - len, "%s%s", len ? "; " : "", text);
}

/* Append "label x -> y". */
static void append_change(char *buf, size_t n, const char *label, const char *x, const char *y)
{
    char t[1024];
    snprintf(t, sizeof t, "%s %s -> %s", label, x ? x : "none", y ? y : "none");
    append_text(buf, n, t);
}

static int differ(const char *x, const char *y)
{
    return (x == NULL) != (y == NULL) || (x && strcmp(x, y) != 0);
}

/* Compare two items that describe the same library. */
static void diff_lib_pair(struct dctx *d, const json_t *x, const json_t *y)
{
    static const char *const fields[] = {"soname", "path", "package", "rocm_release"};
    char detail[2048] = "", subj[1024];
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (differ(str(x, fields[i]), str(y, fields[i])))
            append_change(detail, sizeof detail, fields[i], str(x, fields[i]), str(y, fields[i]));
    const char *ha = str(x, "sha256"), *hb = str(y, "sha256");
    int content = ha && hb && strcmp(ha, hb) != 0;
    int version = differ(str(x, "version"), str(y, "version"));
    if (!detail[0] && !content && !version)
        return;
    int ord, layer = lib_layer(str(y, "name"), &ord);
    lib_subject(y, subj, sizeof subj);
    if (!version && !detail[0]) { /* same everything, other bytes */
        char sa[16], sb[16];
        snprintf(sa, sizeof sa, "%.12s", ha);
        snprintf(sb, sizeof sb, "%.12s", hb);
        brought(d, add(d, layer, ord, "changed", subj, sa, sb, "same version and name, content changed (sha256)"), x, y);
        return;
    }
    if (content && !version)
        append_text(detail, sizeof detail, "content changed (sha256)");
    const char *bx = lib_value(x), *by = lib_value(y);
    for (size_t i = 0; !version && i < sizeof fields / sizeof fields[0]; i++)
        if (differ(str(x, fields[i]), str(y, fields[i]))) {
            bx = str(x, fields[i]) ? str(x, fields[i]) : "none";
            by = str(y, fields[i]) ? str(y, fields[i]) : "none";
            break;
        }
    brought(d, add(d, layer, ord, "changed", subj, bx, by, detail), x, y);
}

static int is_unowned(const json_t *it)
{
    return it && json_is_true(json_object_get(it, "unowned"));
}

static void report_unowned(struct dctx *d, const json_t *before, const json_t *it)
{
    int ord, layer = lib_layer(str(it, "name"), &ord);
    char detail[1024];
    snprintf(detail, sizeof detail, "%s %s%s%s, in a package-managed directory",
             str(it, "name") ? str(it, "name") : "library",
             str(it, "version") ? str(it, "version") : "",
             str(it, "soname") ? " soname " : "", str(it, "soname") ? str(it, "soname") : "");
    const char *was = NULL;
    char wbuf[512];
    if (before) {
        snprintf(wbuf, sizeof wbuf, "owned by %s", str(before, "package") ? str(before, "package") : "a package");
        was = wbuf;
    }
    brought(d, add(d, layer, ord, "unowned", str(it, "path"), was, "owned by no package", detail),
            before, it);
}

/* Items of arr whose (name, origin) equals key; returned as a new array. */
static json_t *group(const json_t *arr, const char *name, const char *origin)
{
    json_t *g = json_array(), *it;
    size_t i;
    json_array_foreach(arr, i, it) {
        const char *n = str(it, "name"), *o = str(it, "origin");
        if (n && !strcmp(n, name) && !differ(o, origin))
            json_array_append(g, it);
    }
    return g;
}

/* Pair items of ga and gb whose field f is equal; pairs are removed from both. */
static void pair_by(struct dctx *d, json_t *ga, json_t *gb, const char *f)
{
    for (size_t i = 0; i < json_array_size(ga);) {
        const char *v = str(json_array_get(ga, i), f);
        size_t j, found = (size_t)-1;
        for (j = 0; v && j < json_array_size(gb); j++)
            if (!differ(v, str(json_array_get(gb, j), f))) {
                found = j;
                break;
            }
        if (found == (size_t)-1) {
            i++;
            continue;
        }
        json_t *x = json_array_get(ga, i), *y = json_array_get(gb, found);
        diff_lib_pair(d, x, y);
        if (is_unowned(y) && !is_unowned(x))
            report_unowned(d, x, y);
        json_array_remove(ga, i);
        json_array_remove(gb, found);
    }
}

static void diff_lib_group(struct dctx *d, json_t *ga, json_t *gb)
{
    pair_by(d, ga, gb, "path");
    pair_by(d, ga, gb, "soname");
    if (json_array_size(ga) == 1 && json_array_size(gb) == 1) {
        json_t *x = json_array_get(ga, 0), *y = json_array_get(gb, 0);
        diff_lib_pair(d, x, y);
        if (is_unowned(y) && !is_unowned(x))
            report_unowned(d, x, y);
        return;
    }
    size_t i;
    json_t *it;
    char subj[1024], detail[1024];
    json_array_foreach(ga, i, it) {
        int ord, layer = lib_layer(str(it, "name"), &ord);
        lib_subject(it, subj, sizeof subj);
        snprintf(detail, sizeof detail, "%s", str(it, "path") ? str(it, "path") : "");
        brought(d, add(d, layer, ord, "removed", subj, lib_value(it), NULL, detail), it, NULL);
    }
    json_array_foreach(gb, i, it) {
        if (is_unowned(it)) {
            report_unowned(d, NULL, it);
            continue;
        }
        int ord, layer = lib_layer(str(it, "name"), &ord);
        lib_subject(it, subj, sizeof subj);
        snprintf(detail, sizeof detail, "%s", str(it, "path") ? str(it, "path") : "");
        brought(d, add(d, layer, ord, "added", subj, NULL, lib_value(it), detail), NULL, it);
    }
}

static void diff_libraries(struct dctx *d, const json_t *a, const json_t *b)
{
    if (!comparable(d, "libraries", a, b))
        return;
    const json_t *ia = json_object_get(a, "items"), *ib = json_object_get(b, "items");
    /* groups keyed by "name\torigin", visited in sorted order */
    json_t *set = json_object(), *it;
    size_t i;
    char key[2048];
    for (int side = 0; side < 2; side++)
        json_array_foreach(side ? ib : ia, i, it) {
            const char *n = str(it, "name");
            if (!n)
                continue;
            snprintf(key, sizeof key, "%s\t%s", n, str(it, "origin") ? str(it, "origin") : "");
            json_object_set_new(set, key, json_pack("{s:s,s:o}", "name", n, "origin",
                                                    str(it, "origin") ? json_string(str(it, "origin"))
                                                                      : json_null()));
        }
    json_t *keys = gv_diff_keys(set, NULL), *k;
    json_array_foreach(keys, i, k) {
        json_t *g = json_object_get(set, json_string_value(k));
        const char *name = str(g, "name"), *origin = str(g, "origin");
        json_t *ga = group(ia, name, origin), *gb = group(ib, name, origin);
        diff_lib_group(d, ga, gb);
        json_decref(ga);
        json_decref(gb);
    }
    json_decref(keys);
    json_decref(set);
}

/* ---- mixed sets: a library resolved by the loader that belongs to another
 * ROCm release than the one the stack is on (kb/rocm_mix.h) ---- */

/* "6.4.3" -> "6.4" */
static void major_minor(const char *v, char *buf, size_t n)
{
    snprintf(buf, n, "%s", v ? v : "");
    char *dot = strchr(buf, '.');
    if (dot && (dot = strchr(dot + 1, '.')))
        *dot = '\0';
}

/* One mixed library (kb/rocm_mix.h) into set, keyed "soname\tpath". */
static void add_mixed(const struct gv_rocm_mix *m, void *set)
{
    char key[2048], ra[64], rb[64];
    major_minor(m->release, ra, sizeof ra);
    major_minor(m->reference, rb, sizeof rb);
    snprintf(key, sizeof key, "%s\t%s", m->soname, m->path);
    json_object_set_new(set, key, json_pack("{s:s,s:s,s:s,s:s}", "soname", m->soname, "path",
                                            m->path, "release", ra, "hip", rb));
}

/* The mixed libraries of one side, by the predicate doctor uses too. */
static json_t *mixed_set(const json_t *snap)
{
    json_t *set = json_object();
    gv_rocm_mixed_each(snap, add_mixed, set);
    return set;
}

static void diff_mixed(struct dctx *d, const json_t *a, const json_t *b)
{
    json_t *ma = mixed_set(a), *mb = mixed_set(b), *keys = gv_diff_keys(mb, NULL), *k;
    size_t i;
    json_array_foreach(keys, i, k) {
        const char *key = json_string_value(k);
        if (json_object_get(ma, key))
            continue; /* already mixed before: not a change */
        const json_t *m = json_object_get(mb, key);
        char after[512], detail[1024];
        snprintf(after, sizeof after, "ROCm %s library on HIP runtime %s", str(m, "release"), str(m, "hip"));
        snprintf(detail, sizeof detail, "the loader resolves %s to %s (ROCm %s) next to a ROCm %s HIP runtime",
                 str(m, "soname"), str(m, "path"), str(m, "release"), str(m, "hip"));
        add(d, GV_LAYER_RUNTIME, 1, "mixed", str(m, "soname"), NULL, after, detail);
    }
    json_decref(keys);
    json_decref(ma);
    json_decref(mb);
}

/* ---- framework: Python environments ---- */

/* Environments are matched by their site-packages directory: on Debian two
 * share the prefix /usr (/usr/lib/python3/dist-packages, where python3-torch
 * lives, and /usr/lib/python3.N/dist-packages). By prefix where a snapshot
 * lacks it. */
static const json_t *find_env(const json_t *envs, const json_t *want)
{
    size_t i;
    json_t *e;
    const char *sp = str(want, "site_packages");
    json_array_foreach(envs, i, e) {
        if (sp && str(e, "site_packages") ? !differ(str(e, "site_packages"), sp)
                                           : !differ(str(e, "prefix"), str(want, "prefix")))
            return e;
    }
    return NULL;
}

/* How an environment is named in messages: its prefix, or its site-packages
 * directory when another environment of the list has the same prefix. */
static const char *env_label(const json_t *envs, const json_t *e)
{
    const char *prefix = str(e, "prefix") ? str(e, "prefix") : "?";
    size_t i, same = 0;
    json_t *x;
    json_array_foreach(envs, i, x) same += !differ(str(x, "prefix"), str(e, "prefix"));
    return same > 1 && str(e, "site_packages") ? str(e, "site_packages") : prefix;
}

static void diff_bundled(struct dctx *d, const char *prefix, const json_t *ta, const json_t *tb)
{
    json_t *ba = index_by(json_object_get(ta, "bundled_libraries"), "name", "soname", "file", NULL);
    json_t *bb = index_by(json_object_get(tb, "bundled_libraries"), "name", "soname", "file", NULL);
    json_t *keys = gv_diff_keys(ba, bb), *k;
    size_t i;
    char subj[1200];
    json_array_foreach(keys, i, k) {
        const char *n = json_string_value(k);
        snprintf(subj, sizeof subj, "torch bundled %s (%s)", n, prefix);
        add_pair(d, GV_LAYER_FRAMEWORK, 1, subj, json_string_value(json_object_get(ba, n)),
                 json_string_value(json_object_get(bb, n)), NULL);
    }
    json_decref(keys);
    json_decref(ba);
    json_decref(bb);
}

static void diff_targets(struct dctx *d, const char *prefix, const json_t *ga, const json_t *gb)
{
    char subj[1200];
    snprintf(subj, sizeof subj, "python.torch.gpu_targets (%s)", prefix);
    if (!comparable(d, subj, ga, gb))
        return;
    json_t *sa = string_set(json_object_get(ga, "targets"), "");
    json_t *sb = string_set(json_object_get(gb, "targets"), "");
    json_t *keys = gv_diff_keys(sa, sb), *k;
    size_t i;
    json_array_foreach(keys, i, k) {
        const char *t = json_string_value(k);
        int in_a = json_object_get(sa, t) != NULL, in_b = json_object_get(sb, t) != NULL;
        if (in_a == in_b)
            continue;
        snprintf(subj, sizeof subj, "torch GPU target %s (%s)", t, prefix);
        add(d, GV_LAYER_FRAMEWORK, 1, in_b ? "added" : "removed", subj, in_a ? t : NULL,
            in_b ? t : NULL, in_b ? NULL : "kernels for this GPU are no longer compiled into the wheel");
    }
    json_decref(keys);
    json_decref(sa);
    json_decref(sb);
}

static void diff_torch(struct dctx *d, const char *prefix, const json_t *ta, const json_t *tb)
{
    static const char *const fields[] = {"version", "hip", "cuda", "build"};
    char subj[1200];
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        snprintf(subj, sizeof subj, "torch %s (%s)", fields[i], prefix);
        add_pair(d, GV_LAYER_FRAMEWORK, 0, subj, str(ta, fields[i]), str(tb, fields[i]), NULL);
    }
    diff_bundled(d, prefix, ta, tb);
    const json_t *ga = json_object_get(ta, "gpu_targets"), *gb = json_object_get(tb, "gpu_targets");
    if (ga || gb)
        diff_targets(d, prefix, ga, gb);
}

static void diff_env_pair(struct dctx *d, const json_t *ea, const json_t *eb, const char *prefix)
{
    char subj[1200];
    snprintf(subj, sizeof subj, "python version (%s)", prefix);
    add_pair(d, GV_LAYER_FRAMEWORK, 2, subj, str(ea, "python_version"), str(eb, "python_version"), NULL);
    const json_t *pa = json_object_get(ea, "packages"), *pb = json_object_get(eb, "packages");
    json_t *keys = gv_diff_keys(pa, pb), *k;
    size_t i;
    json_array_foreach(keys, i, k) {
        const char *n = json_string_value(k);
        snprintf(subj, sizeof subj, "pip %s (%s)", n, prefix);
        add_pair(d, GV_LAYER_FRAMEWORK, !strcmp(n, "torch") ? 0 : 2, subj,
                 str(json_object_get(pa, n), "version"), str(json_object_get(pb, n), "version"), NULL);
    }
    json_decref(keys);
    const json_t *ta = json_object_get(ea, "torch"), *tb = json_object_get(eb, "torch");
    if (json_is_object(ta) || json_is_object(tb))
        diff_torch(d, prefix, json_is_object(ta) ? ta : NULL, json_is_object(tb) ? tb : NULL);
}

static const char *env_desc(const json_t *e, char *buf, size_t n)
{
    const json_t *t = json_object_get(e, "torch");
    snprintf(buf, n, "python %s%s%s", str(e, "python_version") ? str(e, "python_version") : "?",
             str(t, "version") ? ", torch " : "", str(t, "version") ? str(t, "version") : "");
    return buf;
}

static void diff_python(struct dctx *d, const json_t *a, const json_t *b)
{
    if (!comparable(d, "python", a, b))
        return;
    const json_t *ea = json_object_get(a, "environments"), *eb = json_object_get(b, "environments");
    size_t i;
    json_t *e;
    char subj[1200], buf[512];
    json_array_foreach(ea, i, e) {
        const json_t *other = find_env(eb, e);
        if (other) {
            diff_env_pair(d, e, other, env_label(eb, other));
        } else {
            snprintf(subj, sizeof subj, "python environment %s", env_label(ea, e));
            add(d, GV_LAYER_FRAMEWORK, 3, "removed", subj, env_desc(e, buf, sizeof buf), NULL, NULL);
        }
    }
    json_array_foreach(eb, i, e) {
        if (find_env(ea, e))
            continue;
        snprintf(subj, sizeof subj, "python environment %s", env_label(eb, e));
        add(d, GV_LAYER_FRAMEWORK, 3, "added", subj, NULL, env_desc(e, buf, sizeof buf), NULL);
    }
}

/* ---- loader and environment ---- */

static void diff_loader(struct dctx *d, const json_t *a, const json_t *b)
{
    if (!comparable(d, "loader", a, b))
        return;
    char sa[4096], sb[4096], subj[1200];
    add_pair(d, GV_LAYER_LOADER, 1, "LD_LIBRARY_PATH (loader)",
             join(json_object_get(a, "ld_library_path"), ":", sa, sizeof sa),
             join(json_object_get(b, "ld_library_path"), ":", sb, sizeof sb), NULL);
    add_pair(d, GV_LAYER_LOADER, 1, "LD_PRELOAD (loader)",
             join(json_object_get(a, "ld_preload"), " ", sa, sizeof sa),
             join(json_object_get(b, "ld_preload"), " ", sb, sizeof sb), NULL);
    json_t *ca = json_object(), *cb = json_object(), *it;
    size_t i;
    json_array_foreach(json_object_get(a, "conf_files"), i, it) if (str(it, "path"))
        json_object_set_new(ca, str(it, "path"), json_string(join(json_object_get(it, "dirs"), " ", sa, sizeof sa) ? sa : ""));
    json_array_foreach(json_object_get(b, "conf_files"), i, it) if (str(it, "path"))
        json_object_set_new(cb, str(it, "path"), json_string(join(json_object_get(it, "dirs"), " ", sb, sizeof sb) ? sb : ""));
    json_t *keys = gv_diff_keys(ca, cb), *k;
    json_array_foreach(keys, i, k) {
        const char *p = json_string_value(k);
        snprintf(subj, sizeof subj, "ld.so.conf %s", p);
        add_pair(d, GV_LAYER_LOADER, 1, subj, json_string_value(json_object_get(ca, p)),
                 json_string_value(json_object_get(cb, p)), NULL);
    }
    json_decref(keys);
    json_decref(ca);
    json_decref(cb);
    const json_t *ra = json_object_get(a, "resolved"), *rb = json_object_get(b, "resolved");
    keys = gv_diff_keys(ra, rb);
    json_array_foreach(keys, i, k) {
        const char *so = json_string_value(k);
        const json_t *x = json_object_get(ra, so), *y = json_object_get(rb, so);
        const char *px = json_is_true(json_object_get(x, "found")) ? str(x, "path") : NULL;
        const char *py = json_is_true(json_object_get(y, "found")) ? str(y, "path") : NULL;
        snprintf(subj, sizeof subj, "loader resolves %s", so);
        add_pair(d, GV_LAYER_LOADER, 2, subj, px, py, NULL);
    }
    json_decref(keys);
}

/* A value may be shown only for an allowlisted, non-secret name. */
static const char *shown(const char *name, const char *val)
{
    if (!val)
        return NULL;
    return gv_env_recordable(name, strlen(name)) ? val : "(value withheld)";
}

static void diff_vars(struct dctx *d, const json_t *va, const json_t *vb, const char *where, int ord)
{
    json_t *keys = gv_diff_keys(va, vb), *k;
    size_t i;
    char subj[1200];
    json_array_foreach(keys, i, k) {
        const char *n = json_string_value(k);
        if (!gv_env_allowed(n, strlen(n)))
            continue; /* never report names outside the allowlist */
        const char *x = json_string_value(json_object_get(va, n));
        const char *y = json_string_value(json_object_get(vb, n));
        if (x && y && !strcmp(x, y))
            continue;
        snprintf(subj, sizeof subj, "%s (%s)", n, where);
        if (x && y && !gv_env_recordable(n, strlen(n)))
            add(d, GV_LAYER_LOADER, ord, "changed", subj, "(value withheld)", "(value withheld)", NULL);
        else
            add_pair(d, GV_LAYER_LOADER, ord, subj, shown(n, x), shown(n, y), NULL);
    }
    json_decref(keys);
}

/* Allowlisted names whose values were withheld (secret-looking): by name only. */
static void diff_withheld(struct dctx *d, const json_t *a, const json_t *b)
{
    json_t *wa = string_set(json_object_get(a, "withheld"), "set (value withheld)");
    json_t *wb = string_set(json_object_get(b, "withheld"), "set (value withheld)");
    json_t *keys = gv_diff_keys(wa, wb), *k;
    size_t i;
    char subj[1200];
    json_array_foreach(keys, i, k) {
        const char *n = json_string_value(k);
        if (!gv_env_allowed(n, strlen(n)))
            continue;
        snprintf(subj, sizeof subj, "%s (environment)", n);
        add_pair(d, GV_LAYER_LOADER, 1, subj, json_string_value(json_object_get(wa, n)),
                 json_string_value(json_object_get(wb, n)), NULL);
    }
    json_decref(keys);
    json_decref(wa);
    json_decref(wb);
}

/* A profile.d script that appeared or disappeared, with the (allowlisted) names it sets. */
static void profile_script(struct dctx *d, const char *path, const json_t *x, const json_t *y)
{
    char subj[1200], names[1024] = "", what[1100];
    const char *vn;
    json_t *vv;
    json_object_foreach((json_t *)(x ? x : y), vn, vv) if (gv_env_allowed(vn, strlen(vn)))
        append_text(names, sizeof names, vn);
    snprintf(what, sizeof what, "sets %s", names[0] ? names : "no recorded variable");
    snprintf(subj, sizeof subj, "profile script %s", path);
    add(d, GV_LAYER_LOADER, 1, x ? "removed" : "added", subj, x ? what : NULL, y ? what : NULL, NULL);
}

static void diff_profile_d(struct dctx *d, const json_t *a, const json_t *b)
{
    json_t *pa = index_by(json_object_get(a, "profile_d"), "path", NULL, NULL, "sets");
    json_t *pb = index_by(json_object_get(b, "profile_d"), "path", NULL, NULL, "sets");
    json_t *keys = gv_diff_keys(pa, pb), *k;
    size_t i;
    json_array_foreach(keys, i, k) {
        const char *p = json_string_value(k);
        json_t *x = json_object_get(pa, p), *y = json_object_get(pb, p);
        if (!x || !y)
            profile_script(d, p, x, y);
        diff_vars(d, x, y, p, 1);
    }
    json_decref(keys);
    json_decref(pa);
    json_decref(pb);
}

static void diff_environment(struct dctx *d, const json_t *a, const json_t *b)
{
    if (!comparable(d, "environment", a, b))
        return;
    diff_vars(d, json_object_get(a, "variables"), json_object_get(b, "variables"), "environment", 1);
    diff_withheld(d, a, b);
    diff_profile_d(d, a, b);
}

/* ---- packages ---- */

static int installed(const json_t *it)
{
    const char *s = str(it, "state");
    return !s || !strcmp(s, "installed");
}

/* Package items keyed by name, or name:arch when a name has several arches. */
static json_t *pkg_map(const json_t *items)
{
    json_t *count = json_object(), *map = json_object(), *it;
    size_t i;
    json_array_foreach(items, i, it) {
        const char *n = str(it, "name");
        if (!n || !installed(it))
            continue;
        json_int_t c = json_integer_value(json_object_get(count, n));
        json_object_set_new(count, n, json_integer(c + 1));
    }
    json_array_foreach(items, i, it) {
        const char *n = str(it, "name");
        if (!n || !installed(it))
            continue;
        char key[1024];
        if (json_integer_value(json_object_get(count, n)) > 1)
            snprintf(key, sizeof key, "%s:%s", n, str(it, "arch") ? str(it, "arch") : "?");
        else
            snprintf(key, sizeof key, "%s", n);
        json_object_set(map, key, it);
    }
    json_decref(count);
    return map;
}

static void diff_packages(struct dctx *d, const json_t *a, const json_t *b)
{
    if (!comparable(d, "packages", a, b))
        return;
    json_t *ma = pkg_map(json_object_get(a, "items")), *mb = pkg_map(json_object_get(b, "items"));
    json_t *keys = gv_diff_keys(ma, mb), *k;
    size_t i;
    json_array_foreach(keys, i, k) {
        const char *n = json_string_value(k);
        const json_t *x = json_object_get(ma, n), *y = json_object_get(mb, n);
        const char *vx = str(x, "version"), *vy = str(y, "version");
        int gpu = json_is_true(json_object_get(x ? x : y, "gpu")) || json_is_true(json_object_get(y, "gpu"));
        char detail[512] = "";
        if (x && y) {
            int c = gv_deb_vercmp(vx, vy);
            if (c)
                snprintf(detail, sizeof detail, "%s", c < 0 ? "upgraded" : "downgraded");
            if (differ(str(x, "arch"), str(y, "arch")))
                append_change(detail, sizeof detail, "arch", str(x, "arch"), str(y, "arch"));
            if (json_is_true(json_object_get(x, "hold")) != json_is_true(json_object_get(y, "hold")))
                append_text(detail, sizeof detail,
                            json_is_true(json_object_get(y, "hold")) ? "now held" : "no longer held");
            if (!differ(vx, vy) && detail[0]) {
                brought(d, add(d, GV_LAYER_PACKAGES, gpu ? 0 : 2, "changed", n, vx, vy, detail), x, y);
                continue;
            }
        }
        brought(d,
                add_pair(d, GV_LAYER_PACKAGES, gpu ? 0 : 2, n, x ? (vx ? vx : "?") : NULL,
                         y ? (vy ? vy : "?") : NULL, detail[0] ? detail : (gpu ? "GPU stack package" : NULL)),
                x, y);
    }
    json_decref(keys);
    json_decref(ma);
    json_decref(mb);
}

/* ---- assembling the document ---- */

static int change_cmp(const void *p, const void *q)
{
    const json_t *x = *(json_t *const *)p, *y = *(json_t *const *)q;
    static const char *const keys[] = {"rank", "_order", "_seq"};
    for (size_t i = 0; i < 3; i++) {
        json_int_t a = json_integer_value(json_object_get(x, keys[i]));
        json_int_t b = json_integer_value(json_object_get(y, keys[i]));
        if (a != b)
            return a < b ? -1 : 1;
    }
    return 0;
}

static json_t *sorted_changes(json_t *changes)
{
    size_t n = json_array_size(changes);
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    json_t *out = json_array();
    if (!v)
        return out;
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(changes, i);
    qsort(v, n, sizeof *v, change_cmp);
    for (size_t i = 0; i < n; i++) {
        json_object_del(v[i], "_order");
        json_object_del(v[i], "_seq");
        json_array_append(out, v[i]);
    }
    free(v);
    return out;
}

static json_t *side(const json_t *snap, const char *file)
{
    json_t *o = json_object();
    json_object_set_new(o, "file", json_string(file ? file : ""));
    put_opt(o, "created", str(snap, "created"));
    put_opt(o, "root", str(snap, "root"));
    put_opt(o, "gpuvet_version", str(snap, "gpuvet_version"));
    json_t *img = gv_diff_image_side(snap);
    if (img)
        json_object_set_new(o, "image", img);
    return o;
}

static json_t *summary(const json_t *changes)
{
    json_t *s = json_object(), *by = json_object(), *it;
    for (int l = GV_LAYER_DRIVER; l <= GV_LAYER_PACKAGES; l++) /* "image" only when counted */
        json_object_set_new(by, gv_diff_layer_name(l), json_integer(0));
    size_t i;
    json_array_foreach(changes, i, it) {
        const char *l = str(it, "layer");
        json_object_set_new(by, l, json_integer(json_integer_value(json_object_get(by, l)) + 1));
    }
    json_object_set_new(s, "changes", json_integer((json_int_t)json_array_size(changes)));
    json_object_set_new(s, "by_layer", by);
    return s;
}

int gv_diff_snapshots(const json_t *a, const json_t *b, const char *a_name, const char *b_name,
                      json_t **out, struct gv_err *err)
{
    if (!json_is_object(a) || !json_is_object(b))
        return gv_err_set(err, GV_E_USAGE, "diff: both snapshots must be JSON objects");
    struct dctx d = {json_array(), json_array(), gv_diff_image_section(a), gv_diff_image_section(b)};
    if (!d.changes || !d.not_comparable) {
        json_decref(d.changes);
        json_decref(d.not_comparable);
        return gv_err_set(err, GV_E_NOMEM, "diff: out of memory");
    }
#define SEC(s, n) json_object_get(s, n)
    diff_drivers(&d, SEC(a, "drivers"), SEC(b, "drivers"));
    diff_stacks(&d, SEC(a, "stacks"), SEC(b, "stacks"));
    diff_libraries(&d, SEC(a, "libraries"), SEC(b, "libraries"));
    diff_mixed(&d, a, b);
    diff_python(&d, SEC(a, "python"), SEC(b, "python"));
    diff_loader(&d, SEC(a, "loader"), SEC(b, "loader"));
    diff_environment(&d, SEC(a, "environment"), SEC(b, "environment"));
    diff_packages(&d, SEC(a, "packages"), SEC(b, "packages"));
    gv_diff_images(d.changes, a, b);
#undef SEC
    json_t *changes = sorted_changes(d.changes);
    json_decref(d.changes);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(GV_DIFF_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_DIFF_SCHEMA_VERSION));
    json_object_set_new(doc, "before", side(a, a_name));
    json_object_set_new(doc, "after", side(b, b_name));
    json_object_set_new(doc, "summary", summary(changes));
    json_object_set_new(doc, "changes", changes);
    json_object_set_new(doc, "not_comparable", d.not_comparable);
    json_t *findings = gv_diff_image_findings(a, b);
    if (findings)
        json_object_set_new(doc, "image_findings", findings);
    *out = doc;
    return GV_OK;
}
