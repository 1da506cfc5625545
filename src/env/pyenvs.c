/* Finding Python environments without running Python: interpreters on PATH,
 * the system prefixes, virtual environments and conda installs in the usual
 * places, each site-packages directory once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/stackscan.h"

struct finder {
    const struct gv_probe_ctx *ctx;
    json_t *envs;
    json_t *seen; /* resolved site-packages path -> true */
};

static int rooted_is_dir(const struct gv_probe_ctx *ctx, const char *path)
{
    return gv_root_is_dir(ctx->root, path);
}

static int rooted_exists(const struct gv_probe_ctx *ctx, const char *path)
{
    return gv_root_exists(ctx->root, path);
}

/* "python3", "python3.11", "python" (not "python3-config", "python3.11m"). */
static int is_python_name(const char *n)
{
    if (strncmp(n, "python", 6) != 0)
        return 0;
    n += 6;
    if (*n == '\0')
        return 1;
    if (*n++ != '3')
        return 0;
    if (*n == '\0')
        return 1;
    if (*n++ != '.' || !*n)
        return 0;
    return strspn(n, "0123456789") == strlen(n);
}

static void python_version_of(const struct gv_probe_ctx *ctx, const char *pyname,
                              const char *interp, char *out, size_t outsz)
{
    out[0] = '\0';
    if (strncmp(pyname, "python3.", 8) == 0) {
        snprintf(out, outsz, "%s", pyname + 6);
        return;
    }
    if (!interp)
        return;
    char target[GV_PATH_MAX];
    if (gv_root_readlink(ctx->root, interp, target, sizeof target) != 0)
        return;
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (strncmp(base, "python3.", 8) == 0 && is_python_name(base))
        snprintf(out, outsz, "%s", base + 6);
}

static const char *find_interpreter(const struct gv_probe_ctx *ctx, const char *prefix,
                                    char *out, size_t outsz)
{
    static const char *const names[] = {"bin/python3", "bin/python"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(out, outsz, "%s/%s", strcmp(prefix, "/") ? prefix : "", names[i]);
        if (rooted_exists(ctx, out))
            return out;
    }
    return NULL;
}

static void add_site(struct finder *f, const char *prefix, const char *kind, const char *site,
                     const char *pyname)
{
    char real[GV_PATH_MAX];
    if (gv_root_realpath(f->ctx->root, site, real, sizeof real, NULL) != 0)
        return;
    if (json_object_get(f->seen, real))
        return;
    json_object_set_new(f->seen, real, json_true());
    json_t *env = json_object();
    gv_json_set_str(env, "prefix", prefix);
    gv_json_set_str(env, "kind", kind);
    char interp[GV_PATH_MAX], ver[32];
    const char *ip = find_interpreter(f->ctx, prefix, interp, sizeof interp);
    gv_json_set_str(env, "interpreter", ip);
    python_version_of(f->ctx, pyname, ip, ver, sizeof ver);
    gv_json_set_str(env, "python_version", ver[0] ? ver : NULL);
    gv_json_set_str(env, "site_packages", site);
    json_array_append_new(f->envs, env);
}

static const char *guess_kind(const struct gv_probe_ctx *ctx, const char *prefix)
{
    char p[GV_PATH_MAX];
    snprintf(p, sizeof p, "%s/pyvenv.cfg", prefix);
    if (rooted_exists(ctx, p))
        return "venv";
    snprintf(p, sizeof p, "%s/conda-meta", prefix);
    if (rooted_is_dir(ctx, p))
        return "conda";
    return "system";
}

static void add_prefix(struct finder *f, const char *prefix, const char *kind)
{
    if (!prefix || prefix[0] != '/' || !rooted_is_dir(f->ctx, prefix))
        return;
    if (!kind)
        kind = guess_kind(f->ctx, prefix);
    static const char *const libs[] = {"lib", "lib64"};
    static const char *const sites[] = {"site-packages", "dist-packages"};
    const char *pfx = strcmp(prefix, "/") ? prefix : "";
    for (size_t i = 0; i < 2; i++) {
        char libdir[GV_PATH_MAX];
        snprintf(libdir, sizeof libdir, "%s/%s", pfx, libs[i]);
        json_t *names = gv_list_dir(f->ctx->root, libdir, "python3");
        size_t k;
        json_t *n;
        json_array_foreach(names, k, n) {
            const char *name = json_string_value(n);
            if (!is_python_name(name))
                continue;
            for (size_t s = 0; s < 2; s++) {
                char site[GV_PATH_MAX];
                if (snprintf(site, sizeof site, "%s/%s/%s", libdir, name, sites[s]) <
                        (int)sizeof site &&
                    rooted_is_dir(f->ctx, site))
                    add_site(f, prefix, kind, site, name);
            }
        }
        json_decref(names);
    }
}

/* A conda install and its named environments. */
static void add_conda(struct finder *f, const char *prefix)
{
    add_prefix(f, prefix, NULL);
    char envs[GV_PATH_MAX];
    snprintf(envs, sizeof envs, "%s/envs", prefix);
    json_t *names = gv_list_dir(f->ctx->root, envs, NULL);
    size_t k;
    json_t *n;
    json_array_foreach(names, k, n) {
        char p[GV_PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", envs, json_string_value(n));
        add_prefix(f, p, "conda");
    }
    json_decref(names);
}

static void add_interpreter(struct finder *f, json_t *interps, const char *dir, const char *name)
{
    char path[GV_PATH_MAX], target[GV_PATH_MAX], real[GV_PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return;
    json_t *it = json_object();
    gv_json_set_str(it, "path", path);
    if (gv_root_readlink(f->ctx->root, path, target, sizeof target) == 0)
        gv_json_set_str(it, "target", target);
    struct gv_err err = {0};
    if (gv_root_realpath(f->ctx->root, path, real, sizeof real, &err) == 0) {
        gv_json_set_str(it, "resolved", real);
        if (!gv_root_is_file(f->ctx->root, real))
            gv_json_set_str(it, "error", "does not resolve to a regular file");
    } else {
        gv_json_set_str(it, "error", err.msg);
    }
    json_array_append_new(interps, it);
}

/* Python executables in each PATH directory; their prefixes become candidates. */
static void scan_path(struct finder *f, json_t *interps)
{
    static const char std_path[] = "/usr/local/bin:/usr/bin:/bin";
    int own = f->ctx->live || f->ctx->envp_of_root;
    const char *path = own ? gv_ctx_getenv(f->ctx, "PATH") : std_path;
    if (!path)
        path = std_path;
    char *copy = strdup(path);
    json_t *seen = json_object(); /* /bin and /usr/bin are one directory with merged /usr */
    for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
         d = strtok_r(NULL, ":", &save)) {
        char real[GV_PATH_MAX];
        if (d[0] != '/' || gv_root_realpath(f->ctx->root, d, real, sizeof real, NULL) != 0 ||
            json_object_get(seen, real))
            continue;
        json_object_set_new(seen, real, json_true());
        json_t *names = gv_list_dir(f->ctx->root, d, "python");
        size_t k;
        json_t *n;
        int any = 0;
        json_array_foreach(names, k, n) {
            if (is_python_name(json_string_value(n))) {
                add_interpreter(f, interps, d, json_string_value(n));
                any = 1;
            }
        }
        json_decref(names);
        size_t dl = strlen(d);
        if (any && dl > 4 && strcmp(d + dl - 4, "/bin") == 0) {
            char prefix[GV_PATH_MAX];
            snprintf(prefix, sizeof prefix, "%.*s", (int)(dl - 4), d);
            add_prefix(f, prefix, NULL);
        }
    }
    json_decref(seen);
    free(copy);
}

void gv_parse_passwd_homes(char *data, json_t *homes)
{
    for (char *save = NULL, *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *field = l; /* name:pw:uid:gid:gecos:HOME:shell */
        for (int i = 0; i < 5 && field; i++) {
            field = strchr(field, ':');
            if (field)
                field++;
        }
        if (!field)
            continue;
        char *end = strchr(field, ':');
        if (end)
            *end = '\0';
        if ((strncmp(field, "/home/", 6) == 0 && !strstr(field, "/..")) || strcmp(field, "/root") == 0)
            json_object_set_new(homes, field, json_true());
    }
}

/* Home directories: from the root's /etc/passwd, plus /root and /home/. */
static json_t *home_dirs(const struct gv_probe_ctx *ctx)
{
    json_t *homes = json_object();
    json_object_set_new(homes, "/root", json_true());
    char *data;
    if (gv_root_read_file(ctx->root, "/etc/passwd", 16 << 20, &data, NULL, NULL) == GV_OK) {
        gv_parse_passwd_homes(data, homes);
        free(data);
    }
    json_t *names = gv_list_dir(ctx->root, "/home", NULL);
    size_t k;
    json_t *n;
    json_array_foreach(names, k, n) {
        char p[GV_PATH_MAX];
        snprintf(p, sizeof p, "/home/%s", json_string_value(n));
        json_object_set_new(homes, p, json_true());
    }
    json_decref(names);
    return homes;
}

static void add_home(struct finder *f, const char *home)
{
    static const char *const venvs[] = {".venv", "venv"};
    static const char *const condas[] = {"miniconda3", "anaconda3", "miniforge3"};
    char p[GV_PATH_MAX];
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", home, venvs[i]);
        add_prefix(f, p, NULL);
    }
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", home, condas[i]);
        add_conda(f, p);
    }
    snprintf(p, sizeof p, "%s/.local", home);
    add_prefix(f, p, "user");
    char versions[GV_PATH_MAX];
    snprintf(versions, sizeof versions, "%s/.pyenv/versions", home);
    json_t *names = gv_list_dir(f->ctx->root, versions, NULL);
    size_t k;
    json_t *n;
    json_array_foreach(names, k, n) {
        snprintf(p, sizeof p, "%s/%s", versions, json_string_value(n));
        add_prefix(f, p, "pyenv");
    }
    json_decref(names);
}

json_t *gv_python_find_envs(const struct gv_probe_ctx *ctx, json_t **interpreters)
{
    struct finder f = {.ctx = ctx, .envs = json_array(), .seen = json_object()};
    json_t *interps = json_array();
    scan_path(&f, interps);
    add_prefix(&f, "/usr", "system");
    add_prefix(&f, "/usr/local", "system");
    if (ctx->live || ctx->envp_of_root) {
        add_prefix(&f, gv_ctx_getenv(ctx, "VIRTUAL_ENV"), NULL);
        add_prefix(&f, gv_ctx_getenv(ctx, "CONDA_PREFIX"), NULL);
    }
    add_conda(&f, "/opt/conda");
    add_conda(&f, "/opt/miniconda3");
    add_prefix(&f, "/opt/venv", NULL);
    json_t *homes = home_dirs(ctx);
    const char *home;
    json_t *v;
    json_object_foreach(homes, home, v)
        add_home(&f, home);
    json_decref(homes);
    json_decref(f.seen);
    if (interpreters)
        *interpreters = interps;
    else
        json_decref(interps);
    return f.envs;
}
