#include "env/stackscan.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/libnames.h"
#include "env/pkgdb.h"

/* ---- a small string hash table (open addressing, power-of-two size) ---- */

struct strtab {
    char **keys;
    const char **vals;
    size_t cap, n;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int strtab_grow(struct strtab *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 256;
    char **nk = calloc(ncap, sizeof *nk);
    const char **nv = calloc(ncap, sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->keys[i])
            continue;
        size_t j = str_hash(t->keys[i]) & (ncap - 1);
        while (nk[j])
            j = (j + 1) & (ncap - 1);
        nk[j] = t->keys[i];
        nv[j] = t->vals[i];
    }
    free(t->keys);
    free(t->vals);
    t->keys = nk;
    t->vals = nv;
    t->cap = ncap;
    return 0;
}

static size_t strtab_slot(const struct strtab *t, const char *key)
{
    size_t j = str_hash(key) & (t->cap - 1);
    while (t->keys[j] && strcmp(t->keys[j], key) != 0)
        j = (j + 1) & (t->cap - 1);
    return j;
}

/* Keeps the first value put for a key. */
static int strtab_put(struct strtab *t, const char *key, const char *val)
{
    if ((t->n + 1) * 2 > t->cap && strtab_grow(t) != 0)
        return -1;
    size_t j = strtab_slot(t, key);
    if (t->keys[j])
        return 0;
    t->keys[j] = strdup(key);
    if (!t->keys[j])
        return -1;
    t->vals[j] = val;
    t->n++;
    return 0;
}

static const char *strtab_get(const struct strtab *t, const char *key, int *found)
{
    *found = 0;
    if (!t->cap)
        return NULL;
    size_t j = strtab_slot(t, key);
    if (!t->keys[j])
        return NULL;
    *found = 1;
    return t->vals[j];
}

static void strtab_free(struct strtab *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->vals);
}

/* ---- dpkg file ownership ---- */

struct gv_owner_map {
    struct strtab files; /* canonical path -> package */
    struct strtab dirs;  /* canonical dir -> (unused) */
    char **pkgs;         /* package names (values point here) */
    size_t n_pkgs;
};

/* Folds /lib/x, /lib64/x, /bin/x, /sbin/x onto /usr/... (merged /usr). */
static void canonical_path(const char *in, char *out, size_t outsz)
{
    static const char *const top[] = {"/lib/", "/lib64/", "/lib32/", "/libx32/", "/bin/", "/sbin/"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        if (strncmp(in, top[i], strlen(top[i])) == 0) {
            snprintf(out, outsz, "/usr%s", in);
            return;
        }
    }
    snprintf(out, outsz, "%s", in);
}

void gv_owner_map_add_list(struct gv_owner_map *m, const char *pkg, char *data)
{
    for (char *line = data; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        const char *base = strrchr(line, '/');
        if (base && gv_libname_for_file(base + 1)) {
            char canon[GV_PATH_MAX];
            canonical_path(line, canon, sizeof canon);
            strtab_put(&m->files, canon, pkg);
            char *slash = strrchr(canon, '/');
            if (slash && slash != canon) {
                *slash = '\0';
                strtab_put(&m->dirs, canon, pkg);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
}

static char *package_of_list_name(const char *name)
{
    size_t n = strlen(name);
    if (n <= 5 || strcmp(name + n - 5, ".list") != 0)
        return NULL;
    n -= 5;
    const char *colon = memchr(name, ':', n);
    if (colon)
        n = (size_t)(colon - name);
    return strndup(name, n);
}

struct gv_owner_map *gv_owner_map_load(const char *root)
{
    if (!gv_root_is_dir(root, "/var/lib/dpkg/info"))
        return NULL;
    json_t *names = gv_list_dir(root, "/var/lib/dpkg/info", NULL);
    struct gv_owner_map *m = calloc(1, sizeof *m);
    size_t n = json_array_size(names);
    if (m)
        m->pkgs = calloc(n ? n : 1, sizeof *m->pkgs);
    if (!m || !m->pkgs) {
        json_decref(names);
        gv_owner_map_free(m);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        char *pkg = package_of_list_name(name);
        if (!pkg)
            continue;
        m->pkgs[m->n_pkgs++] = pkg;
        char path[GV_PATH_MAX];
        char *data;
        if (snprintf(path, sizeof path, "/var/lib/dpkg/info/%s", name) >= (int)sizeof path ||
            gv_root_read_file(root, path, (size_t)64 << 20, &data, NULL, NULL) != GV_OK)
            continue;
        gv_owner_map_add_list(m, pkg, data);
        free(data);
    }
    json_decref(names);
    return m;
}

const char *gv_owner_map_owner(const struct gv_owner_map *m, const char *path)
{
    if (!m)
        return NULL;
    char canon[GV_PATH_MAX];
    canonical_path(path, canon, sizeof canon);
    int found;
    return strtab_get(&m->files, canon, &found);
}

int gv_owner_map_manages_dir(const struct gv_owner_map *m, const char *dir)
{
    if (!m)
        return 0;
    char canon[GV_PATH_MAX];
    canonical_path(dir, canon, sizeof canon);
    int found;
    strtab_get(&m->dirs, canon, &found);
    return found;
}

size_t gv_owner_map_size(const struct gv_owner_map *m) { return m ? m->files.n : 0; }

struct gv_owner_map *gv_owner_map_new(void) { return calloc(1, sizeof(struct gv_owner_map)); }

void gv_owner_map_free(struct gv_owner_map *m)
{
    if (!m)
        return;
    strtab_free(&m->files);
    strtab_free(&m->dirs);
    for (size_t i = 0; i < m->n_pkgs; i++)
        free(m->pkgs[i]);
    free(m->pkgs);
    free(m);
}

/* ---- package versions ---- */

/* name -> version of the installed packages, from the text of dpkg's status
 * file, through the one dpkg parser (src/env/pkgdb.h). */
json_t *gv_dpkg_status_versions(char *data)
{
    json_t *out = json_object();
    struct gv_pkg_list l = {0};
    if (gv_dpkg_parse(data, strlen(data), &l, NULL) == GV_OK) {
        for (size_t i = 0; i < l.n; i++) {
            const struct gv_pkg *p = &l.items[i];
            if (p->name && p->version && p->state && !strcmp(p->state, "installed") &&
                !json_object_get(out, p->name))
                json_object_set_new(out, p->name, json_string(p->version));
        }
    }
    gv_pkg_list_free(&l);
    return out;
}

static json_t *dpkg_status_versions(const char *root)
{
    char *data;
    if (gv_root_read_file(root, "/var/lib/dpkg/status", (size_t)256 << 20, &data, NULL, NULL) !=
        GV_OK)
        return NULL;
    json_t *out = gv_dpkg_status_versions(data);
    free(data);
    return out;
}

json_t *gv_dpkg_alternatives_parse(char *data)
{
    json_t *o = json_object();
    char *lines[512];
    size_t nl = 0;
    for (char *p = data; p && nl < 512;) {
        lines[nl++] = p;
        char *e = strchr(p, '\n');
        if (e)
            *e = '\0';
        p = e ? e + 1 : NULL;
    }
    if (nl < 2)
        return o;
    gv_json_set_str(o, "mode", lines[0]);
    /* slave links come in name/path pairs until an empty line */
    size_t i = 2, nslaves = 0;
    while (i + 1 < nl && lines[i][0]) {
        i += 2;
        nslaves++;
    }
    i++;
    json_t *choices = json_array();
    /* each choice: path, priority, one path per slave */
    while (i + 1 < nl && lines[i][0]) {
        json_t *c = json_object();
        gv_json_set_str(c, "path", lines[i]);
        gv_json_set_str(c, "priority", lines[i + 1]);
        json_array_append_new(choices, c);
        i += 2 + nslaves;
    }
    json_object_set_new(o, "choices", choices);
    return o;
}

json_t *gv_pkg_versions(const json_t *packages, const char *root, const char **source)
{
    if (json_is_true(json_object_get(packages, "collected"))) {
        json_t *out = json_object();
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(packages, "items"), i, it) {
            const char *n = json_string_value(json_object_get(it, "name"));
            const char *v = json_string_value(json_object_get(it, "version"));
            if (n && v && !json_object_get(out, n))
                json_object_set_new(out, n, json_string(v));
        }
        *source = "packages section";
        return out;
    }
    *source = "/var/lib/dpkg/status";
    return dpkg_status_versions(root);
}

/* ---- small helpers ---- */

int gv_version_from_filename(const char *file, char *out, size_t outsz)
{
    const char *so = strstr(file, ".so.");
    if (!so)
        return 0;
    const char *v = so + 4;
    int parts = 0;
    for (const char *p = v;;) {
        size_t digits = strspn(p, "0123456789");
        if (digits == 0)
            return 0;
        parts++;
        p += digits;
        if (*p == '\0')
            break;
        if (*p != '.')
            return 0;
        p++;
    }
    snprintf(out, outsz, "%s", v);
    return parts;
}

static int cmp_json_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *gv_list_dir(const char *root, const char *dir, const char *prefix)
{
    json_t *arr = json_array();
    DIR *d = gv_root_opendir(root, dir);
    if (!d)
        return arr;
    size_t n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    size_t plen = prefix ? strlen(prefix) : 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (prefix && strncmp(e->d_name, prefix, plen) != 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
            cap = ncap;
        }
        names[n] = strdup(e->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_json_str);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(arr, json_string(names[i]));
        free(names[i]);
    }
    free(names);
    return arr;
}

const char *gv_ctx_getenv(const struct gv_probe_ctx *ctx, const char *name)
{
    if (!ctx->envp)
        return NULL;
    size_t n = strlen(name);
    for (char *const *e = ctx->envp; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

void gv_parse_record_libs(char *data, const char *version, const char *wheel, json_t *map)
{
    for (char *save = NULL, *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *comma = strchr(l, ','); /* path,hash,size */
        if (comma)
            *comma = '\0';
        const char *base = strrchr(l, '/');
        base = base ? base + 1 : l;
        if (!gv_libname_for_file(base) || json_object_get(map, base))
            continue;
        json_t *w = json_object();
        gv_json_set_str(w, "version", version);
        gv_json_set_str(w, "wheel", wheel);
        json_object_set_new(map, base, w);
    }
}
