/* The stacks section: every ROCm and CUDA install under the root: AMD's
 * /opt/rocm-X.Y.Z trees, the distribution's ROCm in the multiarch library
 * directory, CUDA toolkits in /usr/local, the NVIDIA driver's libcuda, and
 * the CUDA/ROCm libraries that pip wheels put into site-packages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/libnames.h"
#include "env/probe.h"
#include "env/stackscan.h"
#include "kb/hip_versions.h"

const char *const gv_multiarch_dirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                         "/usr/lib/powerpc64le-linux-gnu", "/usr/lib64", NULL};

/* Every file of the root is reached through gv_root_* (src/base/fs.h):
 * resolved inside the root, never on the host. */
static int rel_is_dir(const struct gv_probe_ctx *ctx, const char *rel)
{
    return gv_root_is_dir(ctx->root, rel);
}

static int rel_is_symlink(const struct gv_probe_ctx *ctx, const char *rel)
{
    char t[GV_PATH_MAX];
    return gv_root_readlink(ctx->root, rel, t, sizeof t) == 0;
}

/* Reads the first line of root+rel into out; 0 on success. */
static int read_rel_line(const struct gv_probe_ctx *ctx, const char *rel, char *out, size_t outsz)
{
    if (gv_root_read_line(ctx->root, rel, out, outsz, NULL) != GV_OK)
        return -1;
    return out[0] ? 0 : -1;
}

/* {path, target, resolved[, error]} for a symlink such as /opt/rocm; NULL when absent. */
static json_t *link_info(const struct gv_probe_ctx *ctx, const char *path)
{
    char target[GV_PATH_MAX], real[GV_PATH_MAX];
    if (gv_root_readlink(ctx->root, path, target, sizeof target) != 0)
        return NULL;
    json_t *o = json_object();
    gv_json_set_str(o, "path", path);
    gv_json_set_str(o, "target", target);
    struct gv_err err = {0};
    if (gv_root_realpath(ctx->root, path, real, sizeof real, &err) != 0) {
        gv_json_set_str(o, "error", err.msg);
        return o;
    }
    gv_json_set_str(o, "resolved", real);
    if (!gv_root_exists(ctx->root, real))
        gv_json_set_str(o, "error", "dangling: the link's target does not exist");
    return o;
}

static void add_libdir(const struct gv_probe_ctx *ctx, json_t *libdirs, const char *dir)
{
    if (!rel_is_dir(ctx, dir))
        return;
    /* lib64 -> lib: keep one name for one directory */
    char real[GV_PATH_MAX];
    if (gv_root_realpath(ctx->root, dir, real, sizeof real, NULL) != 0)
        return;
    size_t i;
    json_t *d;
    json_array_foreach(libdirs, i, d) {
        char other[GV_PATH_MAX];
        if (gv_root_realpath(ctx->root, json_string_value(d), other, sizeof other, NULL) == 0 &&
            strcmp(other, real) == 0)
            return;
    }
    json_array_append_new(libdirs, json_string(dir));
}

/* "6.0.0-91" -> version "6.0.0", build "91". */
static void set_version_build(json_t *inst, const char *raw)
{
    char v[128];
    snprintf(v, sizeof v, "%s", raw);
    char *dash = strchr(v, '-');
    if (dash) {
        *dash = '\0';
        gv_json_set_str(inst, "build", dash + 1);
    }
    gv_json_set_str(inst, "version", v);
}

static json_t *rocm_amd_install(const struct gv_probe_ctx *ctx, const char *prefix,
                                const char *default_real)
{
    static const char *const vfiles[] = {".info/version", ".info/version-rocm",
                                         ".info/version-dev"};
    json_t *inst = json_object();
    gv_json_set_str(inst, "kind", "rocm");
    gv_json_set_str(inst, "layout", "amd");
    gv_json_set_str(inst, "prefix", prefix);
    int found = 0;
    for (size_t i = 0; i < 3 && !found; i++) {
        char rel[GV_PATH_MAX], line[128];
        snprintf(rel, sizeof rel, "%s/%s", prefix, vfiles[i]);
        if (read_rel_line(ctx, rel, line, sizeof line) == 0) {
            set_version_build(inst, line);
            gv_json_set_str(inst, "version_source", rel);
            found = 1;
        }
    }
    const char *base = strrchr(prefix, '/') + 1;
    if (!found && strncmp(base, "rocm-", 5) == 0 && base[5]) {
        gv_json_set_str(inst, "version", base + 5);
        gv_json_set_str(inst, "version_source", "directory name");
    }
    const char *v = json_string_value(json_object_get(inst, "version"));
    char rel_buf[32];
    unsigned a, b;
    if (v && sscanf(v, "%u.%u", &a, &b) == 2) {
        snprintf(rel_buf, sizeof rel_buf, "%u.%u", a, b);
        gv_json_set_str(inst, "rocm_release", rel_buf);
    }
    json_object_set_new(inst, "is_default",
                        json_boolean(default_real && strcmp(default_real, prefix) == 0));
    json_t *libdirs = json_array();
    char d[GV_PATH_MAX];
    snprintf(d, sizeof d, "%s/lib", prefix);
    add_libdir(ctx, libdirs, d);
    snprintf(d, sizeof d, "%s/lib64", prefix);
    add_libdir(ctx, libdirs, d);
    json_object_set_new(inst, "libdirs", libdirs);
    return inst;
}

static void find_rocm_amd(const struct gv_probe_ctx *ctx, json_t *installs)
{
    char def[GV_PATH_MAX];
    int have_def = gv_root_realpath(ctx->root, "/opt/rocm", def, sizeof def, NULL) == 0 &&
                   rel_is_dir(ctx, def);
    /* /opt/rocm itself when it is a directory (container images), then /opt/rocm-* */
    if (!rel_is_symlink(ctx, "/opt/rocm") && rel_is_dir(ctx, "/opt/rocm"))
        json_array_append_new(installs, rocm_amd_install(ctx, "/opt/rocm", have_def ? def : NULL));
    json_t *names = gv_list_dir(ctx->root, "/opt", "rocm-");
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        char prefix[GV_PATH_MAX];
        snprintf(prefix, sizeof prefix, "/opt/%s", json_string_value(n));
        if (rel_is_symlink(ctx, prefix) || !rel_is_dir(ctx, prefix))
            continue;
        json_array_append_new(installs, rocm_amd_install(ctx, prefix, have_def ? def : NULL));
    }
    json_decref(names);
}

/* Debian "1:5.7.1-3" -> "5.7.1" (no epoch, no revision). */
static void upstream_version(const char *deb, char *out, size_t outsz)
{
    const char *colon = strchr(deb, ':');
    snprintf(out, outsz, "%s", colon ? colon + 1 : deb);
    char *dash = strrchr(out, '-');
    if (dash)
        *dash = '\0';
}

/* Real (non-link) files in dir whose name starts with stem ".so." */
static json_t *real_lib_files(const struct gv_probe_ctx *ctx, const char *dir, const char *stem)
{
    char pfx[128];
    snprintf(pfx, sizeof pfx, "%s.so.", stem);
    json_t *names = gv_list_dir(ctx->root, dir, pfx);
    json_t *out = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        char rel[GV_PATH_MAX];
        snprintf(rel, sizeof rel, "%s/%s", dir, json_string_value(n));
        if (!rel_is_symlink(ctx, rel) && gv_root_is_file(ctx->root, rel))
            json_array_append(out, n);
    }
    json_decref(names);
    return out;
}

static void set_package(json_t *inst, const struct gv_owner_map *owners, const json_t *versions,
                        const char *path)
{
    const char *pkg = gv_owner_map_owner(owners, path);
    if (!pkg)
        return;
    gv_json_set_str(inst, "package", pkg);
    gv_json_set_str(inst, "package_version",
                    json_string_value(json_object_get(versions, pkg)));
}

static void find_distro(const struct gv_probe_ctx *ctx, json_t *installs,
                        const struct gv_owner_map *owners, const json_t *versions)
{
    for (const char *const *dir = gv_multiarch_dirs; *dir; dir++) {
        if (!rel_is_dir(ctx, *dir) || rel_is_symlink(ctx, *dir))
            continue;
        json_t *hips = real_lib_files(ctx, *dir, "libamdhip64");
        size_t i;
        json_t *n;
        json_array_foreach(hips, i, n) {
            const char *file = json_string_value(n);
            char path[GV_PATH_MAX], fv[128], rel_buf[32];
            snprintf(path, sizeof path, "%s/%s", *dir, file);
            json_t *inst = json_object();
            gv_json_set_str(inst, "kind", "rocm");
            gv_json_set_str(inst, "layout", "distro");
            gv_json_set_str(inst, "prefix", "/usr");
            gv_json_set_str(inst, "libdir", *dir);
            gv_json_set_str(inst, "hip_library", path);
            set_package(inst, owners, versions, path);
            const char *pv = json_string_value(json_object_get(inst, "package_version"));
            int parts = gv_version_from_filename(file, fv, sizeof fv);
            if (pv) {
                char up[128], src[300];
                upstream_version(pv, up, sizeof up);
                gv_json_set_str(inst, "version", up);
                snprintf(src, sizeof src, "hip runtime package %s",
                         json_string_value(json_object_get(inst, "package")));
                gv_json_set_str(inst, "version_source", src);
            } else if (parts >= 2) {
                gv_json_set_str(inst, "version", fv);
                gv_json_set_str(inst, "version_source", "file name");
            }
            if (parts >= 2) {
                gv_json_set_str(inst, "hip_version", fv);
                if (gv_hip_to_rocm_release(fv, rel_buf, sizeof rel_buf))
                    gv_json_set_str(inst, "rocm_release", rel_buf);
            }
            json_t *libdirs = json_array();
            json_array_append_new(libdirs, json_string(*dir));
            json_object_set_new(inst, "libdirs", libdirs);
            json_array_append_new(installs, inst);
        }
        json_decref(hips);
    }
}

/* Version of a CUDA toolkit: version.json, version.txt, the cuda-runtime wheel
 * record (toolkits assembled from wheels), or the directory name. */
static void cuda_version(const struct gv_probe_ctx *ctx, const char *prefix, json_t *inst)
{
    char rel[GV_PATH_MAX], *text;
    snprintf(rel, sizeof rel, "%s/version.json", prefix);
    json_t *doc = NULL;
    if (gv_root_read_file(ctx->root, rel, 1 << 20, &text, NULL, NULL) == GV_OK) {
        doc = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
        free(text);
    }
    if (doc && !json_is_object(doc)) {
        json_decref(doc);
        doc = NULL;
    }
    if (doc) {
        const char *v = gv_json_path_str(doc, "cuda.version");
        if (v) {
            gv_json_set_str(inst, "version", v);
            gv_json_set_str(inst, "version_source", rel);
        }
        json_decref(doc);
        if (v)
            return;
    }
    snprintf(rel, sizeof rel, "%s/version.txt", prefix);
    char line[256];
    if (read_rel_line(ctx, rel, line, sizeof line) == 0 && strncmp(line, "CUDA Version ", 13) == 0) {
        gv_json_set_str(inst, "version", line + 13);
        gv_json_set_str(inst, "version_source", rel);
        return;
    }
    snprintf(rel, sizeof rel, "%s/dist-info", prefix);
    json_t *names = gv_list_dir(ctx->root, rel, "nvidia_cuda_runtime-");
    const char *dn = json_string_value(json_array_get(names, 0));
    const char *end = dn ? strstr(dn, ".dist-info") : NULL;
    if (dn && end) {
        char v[64], src[GV_PATH_MAX];
        snprintf(v, sizeof v, "%.*s", (int)(end - dn - 20), dn + 20);
        snprintf(src, sizeof src, "%s/%s", rel, dn);
        gv_json_set_str(inst, "version", v);
        gv_json_set_str(inst, "version_source", src);
    }
    json_decref(names);
    if (end)
        return;
    const char *base = strrchr(prefix, '/') + 1;
    if (strncmp(base, "cuda-", 5) == 0 && base[5]) {
        gv_json_set_str(inst, "version", base + 5);
        gv_json_set_str(inst, "version_source", "directory name");
    }
}

static json_t *cuda_toolkit(const struct gv_probe_ctx *ctx, const char *prefix, const char *def)
{
    json_t *inst = json_object();
    gv_json_set_str(inst, "kind", "cuda");
    gv_json_set_str(inst, "layout", "toolkit");
    gv_json_set_str(inst, "prefix", prefix);
    cuda_version(ctx, prefix, inst);
    json_object_set_new(inst, "is_default", json_boolean(def && strcmp(def, prefix) == 0));
    json_t *libdirs = json_array();
    char d[GV_PATH_MAX];
    snprintf(d, sizeof d, "%s/lib64", prefix);
    add_libdir(ctx, libdirs, d);
    snprintf(d, sizeof d, "%s/lib", prefix);
    add_libdir(ctx, libdirs, d);
    snprintf(d, sizeof d, "%s/targets", prefix);
    json_t *targets = gv_list_dir(ctx->root, d, NULL);
    size_t i;
    json_t *n;
    json_array_foreach(targets, i, n) {
        char t[GV_PATH_MAX];
        snprintf(t, sizeof t, "%s/targets/%s/lib", prefix, json_string_value(n));
        add_libdir(ctx, libdirs, t);
    }
    json_decref(targets);
    json_object_set_new(inst, "libdirs", libdirs);
    return inst;
}

static void find_cuda_toolkits(const struct gv_probe_ctx *ctx, json_t *installs)
{
    char def[GV_PATH_MAX];
    int have_def = gv_root_realpath(ctx->root, "/usr/local/cuda", def, sizeof def, NULL) == 0;
    json_t *names = gv_list_dir(ctx->root, "/usr/local", "cuda");
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        const char *name = json_string_value(n);
        char prefix[GV_PATH_MAX];
        snprintf(prefix, sizeof prefix, "/usr/local/%s", name);
        if ((strcmp(name, "cuda") != 0 && strncmp(name, "cuda-", 5) != 0) ||
            rel_is_symlink(ctx, prefix) || !rel_is_dir(ctx, prefix))
            continue;
        json_array_append_new(installs, cuda_toolkit(ctx, prefix, have_def ? def : NULL));
    }
    json_decref(names);
    if (rel_is_dir(ctx, "/opt/cuda") && !rel_is_symlink(ctx, "/opt/cuda"))
        json_array_append_new(installs, cuda_toolkit(ctx, "/opt/cuda", NULL));
}

static void find_cuda_driver(const struct gv_probe_ctx *ctx, json_t *installs,
                             const struct gv_owner_map *owners, const json_t *versions)
{
    for (const char *const *dir = gv_multiarch_dirs; *dir; dir++) {
        if (!rel_is_dir(ctx, *dir) || rel_is_symlink(ctx, *dir))
            continue;
        json_t *files = real_lib_files(ctx, *dir, "libcuda");
        size_t i;
        json_t *n;
        json_array_foreach(files, i, n) {
            const char *file = json_string_value(n);
            char path[GV_PATH_MAX], fv[128];
            snprintf(path, sizeof path, "%s/%s", *dir, file);
            json_t *inst = json_object();
            gv_json_set_str(inst, "kind", "cuda");
            gv_json_set_str(inst, "layout", "driver");
            gv_json_set_str(inst, "libdir", *dir);
            gv_json_set_str(inst, "driver_library", path);
            if (gv_version_from_filename(file, fv, sizeof fv) >= 2) {
                gv_json_set_str(inst, "version", fv);
                gv_json_set_str(inst, "version_source", "file name");
            }
            set_package(inst, owners, versions, path);
            json_t *libdirs = json_array();
            json_array_append_new(libdirs, json_string(*dir));
            json_object_set_new(inst, "libdirs", libdirs);
            json_array_append_new(installs, inst);
        }
        json_decref(files);
    }
}

/* Subdirectories of site/sub that hold a lib/ directory: nvidia/cublas/lib ... */
static json_t *wheel_libdirs(const struct gv_probe_ctx *ctx, const char *top)
{
    json_t *libdirs = json_array();
    json_t *names = gv_list_dir(ctx->root, top, NULL);
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        char d[GV_PATH_MAX];
        snprintf(d, sizeof d, "%s/%s/lib", top, json_string_value(n));
        add_libdir(ctx, libdirs, d);
    }
    json_decref(names);
    return libdirs;
}

static void find_python_stacks(const struct gv_probe_ctx *ctx, json_t *installs)
{
    json_t *envs = gv_python_find_envs(ctx, NULL);
    size_t i;
    json_t *env;
    json_array_foreach(envs, i, env) {
        const char *site = json_string_value(json_object_get(env, "site_packages"));
        char top[GV_PATH_MAX];
        snprintf(top, sizeof top, "%s/nvidia", site);
        json_t *libdirs = wheel_libdirs(ctx, top);
        if (json_array_size(libdirs)) {
            json_t *inst = json_object();
            gv_json_set_str(inst, "kind", "cuda");
            gv_json_set_str(inst, "layout", "python");
            gv_json_set_str(inst, "prefix", top);
            gv_json_set_str(inst, "site_packages", site);
            json_object_set_new(inst, "libdirs", json_incref(libdirs));
            json_array_append_new(installs, inst);
        }
        json_decref(libdirs);
        /* TheRock ROCm wheels: _rocm_sdk_core/lib, _rocm_sdk_libraries_<family>/lib */
        json_t *rocm = json_array();
        json_t *names = gv_list_dir(ctx->root, site, "_rocm_sdk_");
        size_t k;
        json_t *n;
        json_array_foreach(names, k, n) {
            char d[GV_PATH_MAX];
            snprintf(d, sizeof d, "%s/%s/lib", site, json_string_value(n));
            add_libdir(ctx, rocm, d);
        }
        json_decref(names);
        if (json_array_size(rocm)) {
            json_t *inst = json_object();
            gv_json_set_str(inst, "kind", "rocm");
            gv_json_set_str(inst, "layout", "python");
            gv_json_set_str(inst, "prefix", site);
            gv_json_set_str(inst, "site_packages", site);
            json_object_set_new(inst, "libdirs", json_incref(rocm));
            json_array_append_new(installs, inst);
        }
        json_decref(rocm);
    }
    json_decref(envs);
}

/* /var/lib/dpkg/alternatives/NAME: mode, link, slaves, then path/priority. */
static json_t *alternatives(const struct gv_probe_ctx *ctx, const char *name)
{
    char etc[GV_PATH_MAX], db[GV_PATH_MAX], target[GV_PATH_MAX];
    snprintf(etc, sizeof etc, "/etc/alternatives/%s", name);
    snprintf(db, sizeof db, "/var/lib/dpkg/alternatives/%s", name);
    json_t *o = json_object();
    if (gv_root_readlink(ctx->root, etc, target, sizeof target) == 0) {
        gv_json_set_str(o, "target", target);
        gv_json_set_str(o, "link", etc);
    }
    char *data;
    if (gv_root_read_file(ctx->root, db, 1 << 20, &data, NULL, NULL) == 0) {
        gv_json_set_str(o, "source", db);
        json_t *parsed = gv_dpkg_alternatives_parse(data);
        json_object_update(o, parsed);
        json_decref(parsed);
        free(data);
    }
    if (json_object_size(o) == 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static void rocm_core(json_t *sec, const json_t *versions, const char *vsource)
{
    const char *v = json_string_value(json_object_get(versions, "rocm-core"));
    const char *name = "rocm-core";
    const char *key;
    json_t *val;
    if (!v) {
        json_object_foreach((json_t *)versions, key, val) {
            if (strncmp(key, "rocm-core", 9) == 0 && json_is_string(val)) {
                name = key;
                v = json_string_value(val);
                break;
            }
        }
    }
    if (!v)
        return;
    json_t *o = json_object();
    gv_json_set_str(o, "package", name);
    gv_json_set_str(o, "version", v);
    gv_json_set_str(o, "source", vsource);
    json_object_set_new(sec, "rocm_core", o);
}

json_t *gv_probe_stacks(const struct gv_probe_ctx *ctx, const json_t *packages)
{
    json_t *sec = gv_section_new("/opt/rocm-*, /usr/local/cuda*, multiarch libdir, "
                                 "site-packages");
    const char *vsource = NULL;
    json_t *versions = gv_pkg_versions(packages, ctx->root, &vsource);
    struct gv_owner_map *owners = gv_owner_map_load(ctx->root);
    json_t *installs = json_array();
    find_rocm_amd(ctx, installs);
    find_distro(ctx, installs, owners, versions);
    find_cuda_toolkits(ctx, installs);
    find_cuda_driver(ctx, installs, owners, versions);
    find_python_stacks(ctx, installs);
    json_object_set_new(sec, "installs", installs);
    json_t *l = link_info(ctx, "/opt/rocm");
    if (l)
        json_object_set_new(sec, "rocm_link", l);
    l = link_info(ctx, "/usr/local/cuda");
    if (l)
        json_object_set_new(sec, "cuda_link", l);
    json_t *alts = json_object();
    static const char *const alt_names[] = {"rocm", "cuda"};
    for (size_t i = 0; i < 2; i++) {
        json_t *a = alternatives(ctx, alt_names[i]);
        if (a)
            json_object_set_new(alts, alt_names[i], a);
    }
    json_object_set_new(sec, "alternatives", alts);
    if (versions)
        rocm_core(sec, versions, vsource);
    json_decref(versions);
    gv_owner_map_free(owners);
    return sec;
}
