/* loader: where the dynamic loader would find each GPU library. The
 * directories of LD_LIBRARY_PATH, of /etc/ld.so.conf (with its includes) and
 * the default directories, in that order, give for every known SONAME the
 * first file that exists there (ELF of this machine's class and type): what
 * ldconfig would put in the cache. The loader itself reads /etc/ld.so.cache
 * after LD_LIBRARY_PATH, then the default directories; when that answer
 * differs (ldconfig not run since a library or a conf file changed), the
 * loader's answer is reported with "stale_cache" and what ldconfig would give.
 * ldconfig is never run. */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/ldcache.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define CONF_MAX (1 << 20)
#define CONF_DEPTH_MAX 8
#define CONF_FILES_MAX 256
#define DIRS_MAX 1024

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#define ELF_MACHINE 62 /* EM_X86_64 */
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#define ELF_MACHINE 183 /* EM_AARCH64 */
#else
#define MULTIARCH "unknown-linux-gnu"
#define ELF_MACHINE 0
#endif

static const char *const default_dirs[] = {
    "/lib/" MULTIARCH, "/usr/lib/" MULTIARCH, "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

/* SONAMEs always resolved, besides those of the libraries section. */
static const char *const usual_sonames[] = {
    "libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so.7", "libhsa-runtime64.so.1",
    "libamd_comgr.so.2", "libamd_comgr.so.3", "libhiprtc.so.6", "libhiprtc.so.7",
    "librocblas.so.4", "librocblas.so.5", "libhipblas.so.2", "libhipblas.so.3",
    "libhipblaslt.so.0", "libhipblaslt.so.1", "libMIOpen.so.1", "librccl.so.1",
    "librocm_smi64.so.1", "libcuda.so.1", "libnvidia-ml.so.1", "libcudart.so.12",
    "libcudart.so.13", "libcublas.so.12", "libcublas.so.13", "libcublasLt.so.12",
    "libcublasLt.so.13", "libcudnn.so.9", "libnccl.so.2", "libnvrtc.so.12", "libnvrtc.so.13",
};

struct dirs {
    char *path[DIRS_MAX];
    const char *via[DIRS_MAX];
    const char *conf[DIRS_MAX]; /* the ld.so.conf file naming it */
    char *real[DIRS_MAX];       /* path resolved inside the root, NULL on error */
    size_t n;
};

static void dirs_add(struct dirs *d, const char *path, const char *via, const char *conf)
{
    if (!path[0] || d->n == DIRS_MAX)
        return;
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->path[i], path))
            return;
    d->path[d->n] = strdup(path);
    d->via[d->n] = via;
    d->conf[d->n] = conf;
    if (d->path[d->n])
        d->n++;
}

struct conf_state {
    const struct gv_probe_ctx *ctx;
    struct dirs *dirs;
    json_t *files;  /* conf_files */
    json_t *errors;
    char *names[CONF_FILES_MAX]; /* owned copies used as dirs->conf */
    size_t n_names;
};

static void parse_conf(struct conf_state *st, const char *path, int depth);

/* glob(3) inside the root: its directory functions list and stat through
 * the root's resolver (gv_root_opendir, gv_root_stat), so a pattern or a
 * link in the root never reaches a host directory. glob has no context
 * argument: the root is set per thread around the call. */
static _Thread_local const char *glob_root;

static void *glob_opendir(const char *path) { return gv_root_opendir(glob_root, path[0] ? path : "/"); }
static struct dirent *glob_readdir(void *d) { return readdir(d); }
static void glob_closedir(void *d) { closedir(d); }
static int glob_stat(const char *path, struct stat *st) { return gv_root_stat(glob_root, path, st, 0); }
static int glob_lstat(const char *path, struct stat *st) { return gv_root_stat(glob_root, path, st, 1); }

static int glob_in_root(const char *root, const char *pattern, glob_t *g)
{
    memset(g, 0, sizeof *g);
    g->gl_opendir = glob_opendir;
    g->gl_readdir = glob_readdir;
    g->gl_closedir = glob_closedir;
    g->gl_stat = glob_stat;
    g->gl_lstat = glob_lstat;
    glob_root = root;
    int rc = glob(pattern, GLOB_ALTDIRFUNC, NULL, g);
    glob_root = NULL;
    return rc;
}

/* include PATTERN...: globbed inside the root; a relative pattern is taken
 * relative to the including file's directory (as ldconfig does). */
static void conf_include(struct conf_state *st, const char *from, char *args, int depth)
{
    for (char *save, *pat = strtok_r(args, " \t", &save); pat; pat = strtok_r(NULL, " \t", &save)) {
        char rel[GV_PATH_MAX];
        if (pat[0] == '/')
            snprintf(rel, sizeof rel, "%s", pat);
        else if (snprintf(rel, sizeof rel, "%.*s/%s", (int)(gv_sys_base(from) - from) - 1, from,
                          pat) >= (int)sizeof rel)
            continue;
        glob_t g;
        if (glob_in_root(st->ctx->root, rel, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; i++)
                parse_conf(st, g.gl_pathv[i], depth + 1);
        globfree(&g);
    }
}

static void parse_conf(struct conf_state *st, const char *path, int depth)
{
    if (depth > CONF_DEPTH_MAX || st->n_names == CONF_FILES_MAX) {
        json_array_append_new(st->errors, gv_json_str(path));
        return;
    }
    char *data;
    struct gv_err err = {0};
    if (gv_sys_read(st->ctx, path, CONF_MAX, &data, NULL, &err)) {
        if (depth > 0 || err.code != GV_E_NOTFOUND)
            json_array_append_new(st->errors, gv_json_str(err.msg));
        return;
    }
    char *name = strdup(path);
    if (!name) {
        free(data);
        return;
    }
    st->names[st->n_names++] = name;
    json_t *entry = json_object(), *dirs = json_array();
    json_object_set_new(entry, "path", gv_json_str(path));
    json_object_set_new(entry, "dirs", dirs);
    json_array_append_new(st->files, entry);
    for (char *save, *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *l = gv_sys_trim(line);
        if (!l[0] || !strncmp(l, "hwcap", 5))
            continue;
        if (!strncmp(l, "include", 7) && (l[7] == ' ' || l[7] == '\t')) {
            conf_include(st, name, l + 8, depth);
            continue;
        }
        size_t n = strlen(l);
        while (n > 1 && l[n - 1] == '/')
            l[--n] = '\0';
        json_array_append_new(dirs, gv_json_str(l));
        dirs_add(st->dirs, l, "ld.so.conf", name);
    }
    free(data);
}

static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

static json_t *split_list(const char *val, const char *seps)
{
    json_t *arr = json_array();
    const char *p = val;
    for (;;) {
        size_t n = strcspn(p, seps);
        if (n || strchr(seps, ' ') == NULL)
            json_array_append_new(arr, gv_json_str_bytes(p, n));
        if (!p[n])
            break;
        p += n + 1;
    }
    return arr;
}

/* An ELF shared object this machine's loader could load (class and machine). */
static int loadable_elf(const char *root, const char *path)
{
    unsigned char h[20];
    int fd = gv_root_open(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, NULL);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, h, sizeof h);
    close(fd);
    if (n != (ssize_t)sizeof h || memcmp(h, "\177ELF", 4) != 0)
        return 0;
    int cls = sizeof(void *) == 8 ? 2 : 1;
    unsigned mach = (unsigned)h[18] | ((unsigned)h[19] << 8);
    return h[4] == cls && h[5] == 1 && (ELF_MACHINE == 0 || mach == ELF_MACHINE);
}

static int is_stub(const char *p)
{
    return strstr(p, "/stubs/") != NULL;
}

#define FROM_LLP 1 /* LD_LIBRARY_PATH */
#define FROM_CONF 2
#define FROM_DEFAULT 4
#define FROM_ALL 7

static int dir_in(const struct dirs *d, size_t i, int from)
{
    const char *via = d->via[i];
    int kind = !strcmp(via, "LD_LIBRARY_PATH") ? FROM_LLP
               : !strcmp(via, "default")       ? FROM_DEFAULT
                                               : FROM_CONF;
    return (kind & from) != 0;
}

static json_t *resolve(const struct gv_probe_ctx *ctx, const struct dirs *d, const char *soname,
                       int from)
{
    for (size_t i = 0; i < d->n; i++) {
        if (!dir_in(d, i, from))
            continue;
        char cand[GV_PATH_MAX], real[GV_PATH_MAX], first[GV_PATH_MAX];
        if (snprintf(cand, sizeof cand, "%s/%s", strcmp(d->path[i], "/") ? d->path[i] : "",
                     soname) >= (int)sizeof cand)
            continue;
        /* one lstat first, in the directory resolved inside the root: most
         * candidates do not exist */
        if (!d->real[i] || snprintf(first, sizeof first, "%s/%s", d->real[i], soname) >=
                               (int)sizeof first)
            continue;
        if (!gv_root_exists(ctx->root, first) ||
            gv_root_realpath(ctx->root, cand, real, sizeof real, NULL) ||
            !gv_root_is_file(ctx->root, real) || !loadable_elf(ctx->root, real))
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "found", json_true());
        json_object_set_new(o, "path", gv_json_str(real));
        if (strcmp(cand, real))
            json_object_set_new(o, "link", gv_json_str(cand));
        json_object_set_new(o, "via", json_string(d->via[i]));
        if (d->conf[i])
            json_object_set_new(o, "conf_file", gv_json_str(d->conf[i]));
        if (is_stub(cand) || is_stub(real))
            json_object_set_new(o, "stub", json_true());
        return o;
    }
    json_t *o = json_object();
    json_object_set_new(o, "found", json_false());
    return o;
}

/* The cache's answer for soname, when its file exists and is loadable. */
static json_t *from_cache(const struct gv_probe_ctx *ctx, const struct gv_ldcache *cache,
                          const char *soname)
{
    const char *p = gv_ldcache_lookup(cache, soname, gv_ldcache_native_flags());
    char real[GV_PATH_MAX];
    if (!p || p[0] != '/' || gv_root_realpath(ctx->root, p, real, sizeof real, NULL) ||
        !gv_root_is_file(ctx->root, real) || !loadable_elf(ctx->root, real))
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "found", json_true());
    json_object_set_new(o, "path", gv_json_str(real));
    if (strcmp(p, real))
        json_object_set_new(o, "link", gv_json_str(p));
    json_object_set_new(o, "via", json_string("ld.so.cache"));
    if (is_stub(p) || is_stub(real))
        json_object_set_new(o, "stub", json_true());
    return o;
}

static int same_answer(const json_t *a, const json_t *b)
{
    int fa = json_is_true(json_object_get(a, "found")), fb = json_is_true(json_object_get(b, "found"));
    if (!fa || !fb)
        return fa == fb;
    const char *pa = json_string_value(json_object_get(a, "path"));
    const char *pb = json_string_value(json_object_get(b, "path"));
    return pa && pb && !strcmp(pa, pb);
}

/* What the directories say (configured), or, with a cache, what the loader
 * does: LD_LIBRARY_PATH, the cache, the default directories. */
static json_t *resolve_soname(const struct gv_probe_ctx *ctx, const struct dirs *d,
                              const struct gv_ldcache *cache, const char *soname)
{
    json_t *configured = resolve(ctx, d, soname, FROM_ALL);
    const char *via = json_string_value(json_object_get(configured, "via"));
    if (!cache || (via && !strcmp(via, "LD_LIBRARY_PATH"))) /* found before the cache */
        return configured;
    json_t *real = from_cache(ctx, cache, soname);
    if (!real)
        real = resolve(ctx, d, soname, FROM_DEFAULT);
    if (same_answer(real, configured)) {
        json_decref(real);
        return configured;
    }
    json_object_set_new(real, "stale_cache", json_true());
    json_object_set_new(real, "ldconfig_would", configured);
    return real;
}

/* /etc/ld.so.cache of the root, or NULL with the reason in the section. */
static uint8_t *read_cache(const struct gv_probe_ctx *ctx, struct gv_ldcache *cache, json_t *s)
{
    char *data = NULL;
    size_t len = 0;
    struct gv_err err = {0};
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string("/etc/ld.so.cache"));
    if (!gv_root_exists(ctx->root, "/etc/ld.so.cache")) {
        json_object_set_new(o, "collected", json_false());
        json_object_set_new(o, "reason", json_string("no /etc/ld.so.cache (ldconfig never run "
                                                     "here): the directories' order is reported"));
    } else if (gv_root_read_file(ctx->root, "/etc/ld.so.cache", 256u << 20, &data, &len, &err) ||
               gv_ldcache_parse((const uint8_t *)data, len, cache, &err)) {
        json_object_set_new(o, "collected", json_false());
        json_object_set_new(o, "reason", json_string(err.msg));
        free(data);
        data = NULL;
    } else {
        json_object_set_new(o, "collected", json_true());
        json_object_set_new(o, "entries", json_integer((json_int_t)cache->n));
    }
    json_object_set_new(s, "cache", o);
    return (uint8_t *)data;
}

/* Known SONAMEs: the usual ones plus every soname of the libraries section,
 * sorted and unique. */
static json_t *sonames_of(const json_t *libraries)
{
    json_t *set = json_object(), *it;
    for (size_t i = 0; i < sizeof usual_sonames / sizeof usual_sonames[0]; i++)
        json_object_set_new(set, usual_sonames[i], json_true());
    size_t i;
    json_array_foreach(json_object_get(libraries, "items"), i, it) {
        const char *s = json_string_value(json_object_get(it, "soname"));
        if (s && s[0] && !strchr(s, '/'))
            json_object_set_new(set, s, json_true());
    }
    return set;
}

json_t *gv_probe_loader(const struct gv_probe_ctx *ctx, const json_t *libraries)
{
    json_t *s = gv_section_new("LD_LIBRARY_PATH, LD_PRELOAD, /etc/ld.so.conf, /etc/ld.so.cache, "
                               "default dirs");
    struct dirs *d = calloc(1, sizeof *d);
    struct conf_state *st = calloc(1, sizeof *st);
    if (!d || !st) {
        free(d);
        free(st);
        json_decref(s);
        return gv_section_missing("/etc/ld.so.conf", "out of memory");
    }
    const char *llp = env_get(ctx->envp, "LD_LIBRARY_PATH");
    const char *pre = env_get(ctx->envp, "LD_PRELOAD");
    if (llp) {
        json_t *arr = split_list(llp, ":;");
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v) dirs_add(d, json_string_value(v), "LD_LIBRARY_PATH", NULL);
        json_object_set_new(s, "ld_library_path", arr);
    }
    if (pre)
        json_object_set_new(s, "ld_preload", split_list(pre, ": \t"));
    *st = (struct conf_state){.ctx = ctx, .dirs = d, .files = json_array(), .errors = json_array()};
    parse_conf(st, "/etc/ld.so.conf", 0);
    json_object_set_new(s, "conf_files", st->files);
    for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++)
        dirs_add(d, default_dirs[i], "default", NULL);
    json_t *sd = json_array();
    for (size_t i = 0; i < d->n; i++) {
        char real[GV_PATH_MAX];
        json_array_append_new(sd, gv_json_str(d->path[i]));
        if (d->path[i][0] == '/' &&
            gv_root_realpath(ctx->root, d->path[i], real, sizeof real, NULL) == 0)
            d->real[i] = strdup(real);
    }
    json_object_set_new(s, "search_dirs", sd);
    struct gv_ldcache cache = {0};
    uint8_t *cache_data = read_cache(ctx, &cache, s);
    json_t *names = sonames_of(libraries), *res = json_object();
    const char *key;
    json_t *v;
    const char **sorted = malloc((json_object_size(names) + 1) * sizeof *sorted);
    size_t n = 0;
    json_object_foreach(names, key, v) if (sorted) sorted[n++] = key;
    if (sorted) {
        qsort(sorted, n, sizeof *sorted, gv_sys_strcmp_p);
        for (size_t i = 0; i < n; i++)
            json_object_set_new(res, sorted[i],
                                resolve_soname(ctx, d, cache_data ? &cache : NULL, sorted[i]));
    }
    free(sorted);
    gv_ldcache_free(&cache);
    free(cache_data);
    json_decref(names);
    json_object_set_new(s, "resolved", res);
    if (json_array_size(st->errors))
        json_object_set_new(s, "errors", st->errors);
    else
        json_decref(st->errors);
    for (size_t i = 0; i < d->n; i++) {
        free(d->path[i]);
        free(d->real[i]);
    }
    for (size_t i = 0; i < st->n_names; i++)
        free(st->names[i]);
    free(d);
    free(st);
    return s;
}
