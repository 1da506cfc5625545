/* The python section: environments, the GPU-relevant packages in them (from
 * dist-info/egg-info metadata) and the torch build (torch/version.py, the
 * libraries bundled in torch/lib, the GPU targets compiled into libtorch).
 * Nothing is executed. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/elf.h"
#include "env/libnames.h"
#include "env/offload.h"
#include "env/probe.h"
#include "env/stackscan.h"
#include "kb/hip_versions.h"

static const char *const wanted_names[] = {
    "torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "pytorch-triton",
    "triton-rocm", "tensorflow", "tensorflow-rocm", "tensorflow-cpu", "jax", "jaxlib",
    "onnxruntime", "onnxruntime-rocm", "onnxruntime-gpu", "onnxruntime-training", "vllm",
    "rocm", "bitsandbytes", "flash-attn", "xformers",
};
static const char *const wanted_prefixes[] = {"nvidia-", "rocm-sdk", "jax-rocm", "jax-cuda"};

/* PEP 503 normalisation: lower case, runs of "-_." become "-". */
static void normalize_name(const char *in, size_t n, char *out, size_t outsz)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < outsz; i++) {
        char c = in[i];
        if (c == '-' || c == '_' || c == '.') {
            if (o > 0 && out[o - 1] == '-')
                continue;
            out[o++] = '-';
        } else {
            out[o++] = (char)tolower((unsigned char)c);
        }
    }
    out[o] = '\0';
}

static int is_wanted(const char *norm)
{
    for (size_t i = 0; i < sizeof wanted_names / sizeof wanted_names[0]; i++)
        if (strcmp(norm, wanted_names[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof wanted_prefixes / sizeof wanted_prefixes[0]; i++)
        if (strncmp(norm, wanted_prefixes[i], strlen(wanted_prefixes[i])) == 0)
            return 1;
    return 0;
}

/* Reads Name/Version from meta (a path inside root); falls back to the
 * directory name. */
static json_t *package_entry(const char *root, const char *meta, const char *meta_rel,
                             const char *dirname, size_t name_len)
{
    json_t *e = json_object();
    char *data;
    size_t len;
    struct gv_err err = {0};
    char name[256], version[256];
    if (gv_root_read_file(root, meta, 32 << 20, &data, &len, &err) == GV_OK) {
        int rc = gv_parse_pkg_metadata(data, len, name, sizeof name, version, sizeof version);
        free(data);
        if (rc == 0) {
            gv_json_set_str(e, "version", version);
            gv_json_set_str(e, "source", meta_rel);
            return e;
        }
        snprintf(err.msg, sizeof err.msg, "%s: no Name/Version header", meta_rel);
    }
    /* "name-1.2.3.dist-info": the version is between the first '-' and the suffix */
    const char *v = dirname + name_len;
    const char *dot = strstr(v, ".dist-info");
    if (!dot)
        dot = strstr(v, ".egg-info");
    if (*v == '-' && dot && dot > v + 1) {
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)(dot - v - 1), v + 1);
        /* egg-info names carry "-pyX.Y" after the version */
        char *py = strstr(buf, "-py");
        if (py)
            *py = '\0';
        gv_json_set_str(e, "version", buf);
        gv_json_set_str(e, "source", dirname);
    }
    gv_json_set_str(e, "error", err.msg);
    return e;
}

static void scan_packages(const struct gv_probe_ctx *ctx, const char *site, json_t *pkgs)
{
    json_t *names = gv_list_dir(ctx->root, site, NULL);
    size_t k;
    json_t *n;
    json_array_foreach(names, k, n) {
        const char *dn = json_string_value(n);
        size_t dl = strlen(dn);
        int dist = dl > 10 && strcmp(dn + dl - 10, ".dist-info") == 0;
        int egg = dl > 9 && strcmp(dn + dl - 9, ".egg-info") == 0;
        if (!dist && !egg)
            continue;
        size_t name_len = strcspn(dn, "-");
        if (name_len >= dl - (dist ? 10 : 9))
            name_len = dl - (dist ? 10 : 9);
        char norm[256];
        normalize_name(dn, name_len, norm, sizeof norm);
        if (!is_wanted(norm) || json_object_get(pkgs, norm))
            continue;
        char rel[GV_PATH_MAX], meta[GV_PATH_MAX];
        snprintf(rel, sizeof rel, "%s/%s", site, dn);
        /* dist-info/METADATA, egg-info/PKG-INFO, or an egg-info file itself */
        const char *file = dist ? "METADATA" : gv_root_is_dir(ctx->root, rel) ? "PKG-INFO" : NULL;
        char meta_rel[GV_PATH_MAX];
        if (file) {
            snprintf(meta, sizeof meta, "%s/%s", rel, file);
            snprintf(meta_rel, sizeof meta_rel, "%s/%s", dn, file);
        } else {
            snprintf(meta, sizeof meta, "%s", rel);
            snprintf(meta_rel, sizeof meta_rel, "%s", dn);
        }
        json_object_set_new(pkgs, norm, package_entry(ctx->root, meta, meta_rel, dn, name_len));
    }
    json_decref(names);
}

static json_t *str_or_null(const json_t *vars, const char *key)
{
    json_t *v = json_object_get(vars, key);
    return json_is_string(v) ? json_incref(v) : json_null();
}

static void bundled_libraries(const struct gv_probe_ctx *ctx, const char *libdir, json_t *torch)
{
    json_t *arr = json_array();
    json_t *names = gv_list_dir(ctx->root, libdir, "lib");
    size_t k;
    json_t *n;
    json_array_foreach(names, k, n) {
        const char *file = json_string_value(n);
        const struct gv_libname *ln = gv_libname_for_file(file);
        if (!ln)
            continue;
        char rel[GV_PATH_MAX];
        snprintf(rel, sizeof rel, "%s/%s", libdir, file);
        json_t *e = json_object();
        gv_json_set_str(e, "name", ln->name);
        gv_json_set_str(e, "file", file);
        struct gv_elf_info info;
        struct gv_err err = {0};
        if (!gv_root_is_file(ctx->root, rel)) {
            gv_json_set_str(e, "error", "not a regular file (broken link?)");
        } else if (gv_elf_read_rooted(ctx->root, rel, &info, &err) == GV_OK) {
            gv_json_set_str(e, "soname", info.soname);
            gv_elf_free(&info);
        } else {
            gv_json_set_str(e, "error", err.msg);
        }
        json_array_append_new(arr, e);
    }
    json_decref(names);
    json_object_set_new(torch, "bundled_libraries", arr);
}

static json_t *gpu_targets(const struct gv_probe_ctx *ctx, const char *libdir, const char *build)
{
    static const char *const files[] = {"libtorch_hip.so", "libtorch_cuda.so"};
    int first = strcmp(build, "cuda") == 0 ? 1 : 0;
    for (int i = 0; i < 2; i++) {
        const char *f = files[(first + i) % 2];
        char rel[GV_PATH_MAX];
        snprintf(rel, sizeof rel, "%s/%s", libdir, f);
        if (!gv_root_exists(ctx->root, rel))
            continue;
        if (!gv_root_is_file(ctx->root, rel)) {
            snprintf(rel, sizeof rel, "torch/lib/%s", f);
            return gv_section_missing(rel, "not a regular file (or a broken link)");
        }
        struct gv_offload_targets t = {0};
        const char *kind = NULL;
        struct gv_err err = {0};
        char source[GV_PATH_MAX + 32];
        if (gv_offload_scan_rooted(ctx->root, rel, GV_OFFLOAD_QUICK, &t, &kind, &err) !=
            GV_OK) {
            snprintf(source, sizeof source, "torch/lib/%s", f);
            return gv_section_missing(source, err.msg);
        }
        snprintf(source, sizeof source, "torch/lib/%s (%s)", f,
                 strcmp(kind, "hip") == 0 ? ".hip_fatbin" : ".nv_fatbin");
        json_t *s = gv_section_new(source);
        json_t *arr = json_array();
        for (size_t j = 0; j < t.n_targets; j++)
            json_array_append_new(arr, json_string(t.targets[j]));
        json_object_set_new(s, "targets", arr);
        json_object_set_new(s, "entries", json_integer((json_int_t)t.n_entries));
        if (t.n_skipped)
            json_object_set_new(s, "skipped_entries", json_integer((json_int_t)t.n_skipped));
        gv_offload_free(&t);
        return s;
    }
    return gv_section_missing("torch/lib",
                              strcmp(build, "cpu") == 0
                                  ? "CPU build: no libtorch_hip.so or libtorch_cuda.so"
                                  : "no libtorch_hip.so or libtorch_cuda.so in torch/lib");
}

static json_t *torch_build(const struct gv_probe_ctx *ctx, const char *site)
{
    char rel[GV_PATH_MAX];
    snprintf(rel, sizeof rel, "%s/torch", site);
    if (!gv_root_is_dir(ctx->root, rel))
        return NULL;
    json_t *t = json_object();
    snprintf(rel, sizeof rel, "%s/torch/version.py", site);
    char *data;
    size_t len;
    struct gv_err err = {0};
    const char *build = "cpu";
    if (gv_root_read_file(ctx->root, rel, 1 << 20, &data, &len, &err) != GV_OK) {
        gv_json_set_str(t, "error", err.msg);
    } else {
        json_t *vars = gv_parse_py_assignments(data, len);
        free(data);
        json_object_set_new(t, "version", str_or_null(vars, "__version__"));
        json_object_set_new(t, "hip", str_or_null(vars, "hip"));
        json_object_set_new(t, "cuda", str_or_null(vars, "cuda"));
        gv_json_set_str(t, "git_version", json_string_value(json_object_get(vars, "git_version")));
        const char *hip = json_string_value(json_object_get(vars, "hip"));
        if (hip)
            build = "rocm";
        else if (json_string_value(json_object_get(vars, "cuda")))
            build = "cuda";
        gv_json_set_str(t, "build", build);
        gv_json_set_str(t, "version_source", "torch/version.py");
        char rel_buf[32];
        if (hip && gv_hip_to_rocm_release(hip, rel_buf, sizeof rel_buf))
            gv_json_set_str(t, "rocm_release", rel_buf);
        if (!json_is_string(json_object_get(vars, "__version__")))
            gv_json_set_str(t, "error", "torch/version.py has no __version__ string");
        json_decref(vars);
    }
    snprintf(rel, sizeof rel, "%s/torch/lib", site);
    bundled_libraries(ctx, rel, t);
    json_object_set_new(t, "gpu_targets", gpu_targets(ctx, rel, build));
    return t;
}

json_t *gv_probe_python(const struct gv_probe_ctx *ctx)
{
    json_t *interps = NULL;
    json_t *envs = gv_python_find_envs(ctx, &interps);
    json_t *sec = gv_section_new("PATH, /usr, /usr/local, /opt/conda, /opt/venv, ~/.venv, "
                                 "~/venv, ~/miniconda3, ~/anaconda3, ~/.pyenv, ~/.local, "
                                 "$VIRTUAL_ENV, $CONDA_PREFIX");
    json_object_set_new(sec, "interpreters", interps);
    size_t i;
    json_t *env;
    json_array_foreach(envs, i, env) {
        const char *site = json_string_value(json_object_get(env, "site_packages"));
        json_t *pkgs = json_object();
        scan_packages(ctx, site, pkgs);
        json_object_set_new(env, "packages", pkgs);
        json_t *torch = torch_build(ctx, site);
        if (torch)
            json_object_set_new(env, "torch", torch);
    }
    json_object_set_new(sec, "environments", envs);
    return sec;
}
