/* Compiled extensions (docs/port.md, "Compiled extensions"): every shared
 * object under the site-/dist-packages of a root's Python environments (env's
 * finder), the GPU code it carries (env's offload reader: HIP offload bundles
 * and CUDA fatbins), judged against the targets. Nothing is loaded or run;
 * paths resolve inside the root (gv_root_open), links are not followed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "env/elf.h"
#include "env/offload.h"
#include "env/probe.h"
#include "env/stackscan.h"
#include "kb/kb.h"
#include "kb/port_ext.h"
#include "port/port.h"

#define EXT_MAX_DEPTH 16       /* directory levels below a site-packages */
#define EXT_MAX_FILES 200000   /* directory entries looked at, per root */

struct ext_walk {
    const char *root;
    const struct gv_port_targets *t;
    json_t *findings;
    long entries, modules, gpu_modules, hip, cuda, unreadable;
};

static int is_amd(const char *target)
{
    return strncmp(target, "gfx", 3) == 0;
}

static int targets_have_amd(const struct gv_port_targets *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (is_amd(t->names[i]))
            return 1;
    return 0;
}

/* "a, b, c" of a list, into out. */
static void join(char *const *v, size_t n, char *out, size_t outsz)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, outsz - len, "%s%s", i ? ", " : "", v[i]);
    }
}

static int code_runs_on(const struct gv_offload_targets *o, const char *gfx)
{
    for (size_t i = 0; i < o->n_target_ids; i++)
        if (kb_code_object_runs_on(o->target_ids[i], gfx))
            return 1;
    for (size_t i = 0; i < o->n_targets; i++)
        if (kb_code_object_runs_on(o->targets[i], gfx))
            return 1;
    return 0;
}

static void set_targets(json_t *f, json_t *targets)
{
    if (f)
        json_object_set_new(f, "targets", targets);
    else
        json_decref(targets);
}

static void add(struct ext_walk *w, json_t *f)
{
    if (f)
        json_array_append_new(w->findings, f);
}

/* Why and fix of hipErrorNoBinaryForGpu, from the error table. */
static const struct kb_error *no_binary_fact(void)
{
    return kb_error_match("hipErrorNoBinaryForGpu");
}

/* A HIP module without code for some AMD target. */
static void judge_hip(struct ext_walk *w, const char *path, const struct gv_offload_targets *o)
{
    json_t *missing = json_array();
    char miss[512] = "", carries[512];
    for (size_t i = 0; i < w->t->n; i++) {
        const char *gfx = w->t->names[i];
        if (!is_amd(gfx) || code_runs_on(o, gfx))
            continue;
        json_array_append_new(missing, json_string(gfx));
        size_t len = strlen(miss);
        snprintf(miss + len, sizeof miss - len, "%s%s", len ? ", " : "", gfx);
    }
    if (!json_array_size(missing)) {
        json_decref(missing);
        return;
    }
    join(o->n_target_ids ? o->target_ids : o->targets,
         o->n_target_ids ? o->n_target_ids : o->n_targets, carries, sizeof carries);
    const struct kb_error *e = no_binary_fact();
    char msg[1536], why[1024], fix[1024], src[512];
    snprintf(msg, sizeof msg,
             "its HIP code objects are for %s only, none runs on %s: loading it there fails "
             "with \"%s\"",
             carries, miss, kb_no_binary_message);
    snprintf(why, sizeof why, "%s", e ? e->meaning : "no code object for the GPU's target");
    snprintf(fix, sizeof fix,
             "rebuild the extension for %s: PYTORCH_ROCM_ARCH=\"%s\" for torch's "
             "cpp_extension/setup.py builds, or hipcc --offload-arch=<each target>; %s",
             miss, miss, e ? e->fix : "");
    snprintf(src, sizeof src, "%s; %s", kb_no_binary_source, e ? e->source : "");
    json_t *f = gv_port_finding(path, 0, 0, "ext-no-target", "error", msg, why, src, fix);
    set_targets(f, missing);
    add(w, f);
}

/* A module with only NVIDIA code, judged against AMD targets. */
static void judge_cuda_only(struct ext_walk *w, const char *path,
                            const struct gv_offload_targets *o)
{
    char carries[512], msg[1024];
    join(o->targets, o->n_targets, carries, sizeof carries);
    snprintf(msg, sizeof msg,
             "built for CUDA only (NVIDIA code for %s, no HIP code object): in a ROCm "
             "environment it cannot load (its CUDA libraries are missing) or, where it loads, "
             "has no kernel for any AMD GPU (\"%s\")",
             carries, kb_no_binary_message);
    json_t *targets = json_array();
    for (size_t i = 0; i < w->t->n; i++)
        if (is_amd(w->t->names[i]))
            json_array_append_new(targets, json_string(w->t->names[i]));
    json_t *f = gv_port_finding(
        path, 0, 0, "ext-cuda-only", "error", msg,
        "a CUDA fatbin holds NVIDIA SASS/PTX only; the HIP runtime loads AMD code objects "
        "from .hip_fatbin offload bundles",
        "docs/facts/rocm-facts.md §7 (offload bundles and fatbins), §8", 
        "port the extension's sources with hipify and rebuild it against ROCm's torch "
        "(PYTORCH_ROCM_ARCH=<targets>), or install its ROCm build");
    set_targets(f, targets);
    add(w, f);
}

/* A module with no device code that links a GPU runtime: a note. */
static void judge_no_code(struct ext_walk *w, const char *path)
{
    struct gv_elf_info info;
    struct gv_err err = {0};
    if (gv_elf_read_rooted(w->root, path, &info, &err) != 0)
        return;
    const char *lib = NULL;
    for (size_t i = 0; i < info.n_needed && !lib; i++)
        if (kb_gpu_runtime_lib(info.needed[i]))
            lib = info.needed[i];
    if (lib) {
        char msg[768];
        snprintf(msg, sizeof msg,
                 "links %s but carries no GPU code of its own: it runs only the kernels of "
                 "the libraries it calls, so it needs no rebuild for a new gfx target (those "
                 "libraries do)",
                 lib);
        add(w, gv_port_finding(path, 0, 0, "ext-no-gpu-code", "note", msg,
                               "device code lives in .hip_fatbin or .nv_fatbin sections; this "
                               "file has neither",
                               "docs/facts/rocm-facts.md §7", "none needed for this file"));
    }
    gv_elf_free(&info);
}

static void scan_module(struct ext_walk *w, const char *path)
{
    struct gv_offload_targets o;
    struct gv_err err = {0};
    const char *kind = NULL;
    w->modules++;
    int rc = gv_offload_scan_rooted(w->root, path, GV_OFFLOAD_QUICK, &o, &kind, &err);
    if (rc == GV_E_NOTFOUND) {
        judge_no_code(w, path);
        return;
    }
    if (rc) {
        w->unreadable++;
        add(w, gv_port_finding(path, 0, 0, "ext-unreadable", "warning", err.msg,
                               "its GPU code could not be read, so it could not be judged",
                               "docs/facts/rocm-facts.md §7",
                               "check the file; rebuild it if it is damaged"));
        return;
    }
    w->gpu_modules++;
    int has_hip = strstr(kind, "hip") != NULL;
    w->hip += has_hip;
    w->cuda += strstr(kind, "cuda") != NULL;
    if (targets_have_amd(w->t)) {
        if (has_hip)
            judge_hip(w, path, &o);
        else
            judge_cuda_only(w, path, &o);
    }
    gv_offload_free(&o);
}

static int is_shared_object(const char *name)
{
    size_t n = strlen(name);
    return (n > 3 && strcmp(name + n - 3, ".so") == 0) || strstr(name, ".so.") != NULL;
}

/* Entry type without following links: 'd', 'f' (regular) or 0. */
static char entry_type(struct ext_walk *w, const char *path, const struct dirent *e)
{
    if (e->d_type == DT_DIR)
        return 'd';
    if (e->d_type == DT_REG)
        return 'f';
    if (e->d_type != DT_UNKNOWN)
        return 0;
    struct stat st;
    if (gv_root_stat(w->root, path, &st, 1) != 0)
        return 0;
    return S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : 0;
}

static void walk(struct ext_walk *w, const char *dir, int depth)
{
    struct dirent **names = NULL;
    int n = gv_root_scandir(w->root, dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const struct dirent *e = names[i];
        char path[GV_PATH_MAX];
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            w->entries++ < EXT_MAX_FILES &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path) {
            char type = entry_type(w, path, e);
            if (type == 'd' && depth < EXT_MAX_DEPTH)
                walk(w, path, depth + 1);
            else if (type == 'f' && is_shared_object(e->d_name))
                scan_module(w, path);
        }
        free(names[i]);
    }
    free(names);
}

static void set_stat(json_t *stats, const char *key, long v)
{
    if (stats)
        json_object_set_new(stats, key, json_integer(v));
}

int gv_port_extensions(const char *root, const struct gv_port_targets *t, json_t *findings,
                       json_t *stats, struct gv_err *err)
{
    if (!root || !t || !json_is_array(findings))
        return gv_err_set(err, GV_E_USAGE, "port extensions: root, targets and findings needed");
    int live = strcmp(root, "/") == 0;
    struct gv_probe_ctx ctx = {.root = root, .live = live};
    json_t *envs = gv_python_find_envs(&ctx, NULL);
    if (!envs)
        return gv_err_set(err, GV_E_NOMEM, "port extensions: out of memory");
    struct ext_walk w = {.root = root, .t = t, .findings = findings};
    size_t i;
    json_t *env;
    json_array_foreach(envs, i, env) {
        const char *site = json_string_value(json_object_get(env, "site_packages"));
        if (site)
            walk(&w, site, 0);
    }
    set_stat(stats, "python_environments", (long)json_array_size(envs));
    set_stat(stats, "extension_files", w.modules);
    set_stat(stats, "extension_files_gpu", w.gpu_modules);
    set_stat(stats, "extension_files_hip", w.hip);
    set_stat(stats, "extension_files_cuda", w.cuda);
    set_stat(stats, "extension_files_unreadable", w.unreadable);
    json_decref(envs);
    if (w.entries > EXT_MAX_FILES)
        return gv_err_set(err, GV_E_FORMAT,
                          "port extensions: more than %d entries under the site-packages of "
                          "%s; stopped there",
                          EXT_MAX_FILES, root);
    return GV_OK;
}
