/* drivers: the amdgpu and nvidia kernel modules (loaded, version), the DKMS
 * packages that ship them, and the module versions built in the DKMS tree. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define MAX_DKMS_ENTRIES 256

static json_t *module_json(const struct gv_probe_ctx *ctx, const char *name)
{
    char dir[256], path[256], ver[256];
    snprintf(dir, sizeof dir, "/sys/module/%s", name);
    json_t *m = json_object();
    int loaded = gv_sys_is_dir(ctx, dir);
    json_object_set_new(m, "loaded", json_boolean(loaded));
    snprintf(path, sizeof path, "%s/version", dir);
    if (loaded && gv_sys_line(ctx, path, ver, sizeof ver) == 0 && ver[0]) {
        gv_json_put_str(m, "version", ver);
        gv_json_put_str(m, "source", path);
    }
    return m;
}

/* First line of /proc/driver/nvidia/version ("NVRM version: ..."). */
static void nvidia_proc_version(const struct gv_probe_ctx *ctx, json_t *m)
{
    char line[512];
    const char *p = "/proc/driver/nvidia/version";
    if (gv_sys_have(ctx, "/proc/driver/nvidia", NULL) && gv_sys_line(ctx, p, line, sizeof line) == 0 &&
        line[0]) {
        gv_json_put_str(m, "proc_version", line);
        if (!json_object_get(m, "source"))
            gv_json_put_str(m, "source", p);
    }
}

static int is_dkms_package(const char *name)
{
    return !strcmp(name, "amdgpu-dkms") || !strncmp(name, "nvidia-dkms", 11) ||
           !strncmp(name, "nvidia-kernel-dkms", 18) || !strncmp(name, "nvidia-open-kernel-dkms", 23);
}

static json_t *dkms_packages(const json_t *packages)
{
    json_t *out = json_object(), *items = json_object_get(packages, "items");
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *name = json_string_value(json_object_get(it, "name"));
        const char *ver = json_string_value(json_object_get(it, "version"));
        const char *state = json_string_value(json_object_get(it, "state"));
        if (!name || !is_dkms_package(name))
            continue;
        json_t *o = json_object();
        gv_json_put_str(o, "version", ver);
        gv_json_put_str(o, "state", state);
        json_object_set_new(o, "hold", json_incref(json_object_get(it, "hold")));
        gv_json_put_str(o, "source", json_string_value(json_object_get(packages, "manager")));
        json_object_set_new(out, name, o);
    }
    return out;
}

/* A directory that is not a symlink (DKMS keeps kernel-<kver>-<arch> links
 * next to the version directories; they are not versions). */
static int real_dir(const struct gv_probe_ctx *ctx, const char *path)
{
    struct stat st;
    return gv_root_stat(ctx->root, path, &st, 1) == 0 && S_ISDIR(st.st_mode);
}

/* Sorted names of the subdirectories of a directory inside the root. */
static json_t *subdirs(const struct gv_probe_ctx *ctx, const char *dir, int skip_build)
{
    struct dirent **names;
    json_t *arr = json_array();
    int n = gv_sys_scandir(ctx, dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        char sub[GV_PATH_MAX];
        snprintf(sub, sizeof sub, "%s/%s", dir, nm);
        if (nm[0] != '.' && json_array_size(arr) < MAX_DKMS_ENTRIES &&
            !(skip_build && (!strcmp(nm, "source") || !strcmp(nm, "build"))) &&
            strcmp(nm, "original_module") != 0 && real_dir(ctx, sub))
            json_array_append_new(arr, gv_json_str(nm));
        free(names[i]);
    }
    if (n >= 0)
        free(names);
    return arr;
}

/* /var/lib/dkms/<module>/<version>/<kernel>: versions and the kernels each
 * was built for. */
static json_t *dkms_tree(const struct gv_probe_ctx *ctx)
{
    static const char *const mods[] = {"amdgpu", "nvidia", "nvidia-open"};
    json_t *out = json_object();
    for (size_t m = 0; m < sizeof mods / sizeof mods[0]; m++) {
        char dir[256];
        snprintf(dir, sizeof dir, "/var/lib/dkms/%s", mods[m]);
        if (!gv_sys_is_dir(ctx, dir))
            continue;
        json_t *vers = subdirs(ctx, dir, 0), *arr = json_array(), *v;
        size_t i;
        json_array_foreach(vers, i, v) {
            char vdir[GV_PATH_MAX];
            snprintf(vdir, sizeof vdir, "%s/%s", dir, json_string_value(v));
            json_t *e = json_object();
            json_object_set(e, "version", v);
            json_object_set_new(e, "kernels", subdirs(ctx, vdir, 1));
            json_object_set_new(e, "source", gv_json_str(vdir));
            json_array_append_new(arr, e);
        }
        json_decref(vers);
        json_object_set_new(out, mods[m], arr);
    }
    return out;
}

json_t *gv_probe_drivers(const struct gv_probe_ctx *ctx, const json_t *packages)
{
    const char *reason;
    int have_sys = gv_sys_have(ctx, "/sys/module", &reason);
    json_t *s = gv_section_new(have_sys ? "/sys/module, /var/lib/dkms, packages"
                                        : "/var/lib/dkms, packages");
    json_t *nc = json_object();
    if (have_sys) {
        json_t *mods = json_object();
        json_object_set_new(mods, "amdgpu", module_json(ctx, "amdgpu"));
        json_t *nv = module_json(ctx, "nvidia");
        nvidia_proc_version(ctx, nv);
        json_object_set_new(mods, "nvidia", nv);
        json_object_set_new(s, "modules", mods);
    } else {
        json_object_set_new(nc, "modules", json_string(reason));
    }
    if (json_is_true(json_object_get(packages, "collected")))
        json_object_set_new(s, "dkms", dkms_packages(packages));
    else
        json_object_set_new(nc, "dkms", json_string("the packages section was not collected"));
    json_object_set_new(s, "dkms_tree", dkms_tree(ctx));
    if (json_object_size(nc))
        json_object_set_new(s, "not_collected", nc);
    else
        json_decref(nc);
    return s;
}
