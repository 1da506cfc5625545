/* The one generic loader for vendor GPU libraries (see vendor.h). */
#include "dev/vendor.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One symbol: the struct field's name, the names to try (newest ABI first), and
 * where the pointer goes in the table. */
struct sym_spec {
    const char *field;
    const char *names[4];
    int required;
    size_t offset;
};

#define ROW_CUDA(req, field, ret, params, ...)                                               \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_cuda, field)},
#define ROW_NVRTC(req, field, ret, params, ...)                                              \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_nvrtc, field)},
#define ROW_CUBLAS(req, field, ret, params, ...)                                             \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_cublas, field)},
#define ROW_CUBLASLT(req, field, ret, params, ...)                                           \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_cublaslt, field)},
#define ROW_CUDNN(req, field, ret, params, ...)                                              \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_cudnn, field)},
#define ROW_HIP(req, field, ret, params, ...)                                                \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_hip, field)},
#define ROW_HIPRTC(req, field, ret, params, ...)                                             \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_hiprtc, field)},
#define ROW_ROCBLAS(req, field, ret, params, ...)                                            \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_rocblas, field)},
#define ROW_HIPBLASLT(req, field, ret, params, ...)                                          \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_hipblaslt, field)},
#define ROW_MIOPEN(req, field, ret, params, ...)                                             \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_miopen, field)},
#define ROW_NCCL(req, field, ret, params, ...)                                               \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_nccl, field)},

static const struct sym_spec syms_cuda[] = {GV_SYMS_CUDA(ROW_CUDA)};
static const struct sym_spec syms_nvrtc[] = {GV_SYMS_NVRTC(ROW_NVRTC)};
static const struct sym_spec syms_cublas[] = {GV_SYMS_CUBLAS(ROW_CUBLAS)};
static const struct sym_spec syms_cublaslt[] = {GV_SYMS_CUBLASLT(ROW_CUBLASLT)};
static const struct sym_spec syms_cudnn[] = {GV_SYMS_CUDNN(ROW_CUDNN)};
static const struct sym_spec syms_hip[] = {GV_SYMS_HIP(ROW_HIP)};
static const struct sym_spec syms_hiprtc[] = {GV_SYMS_HIPRTC(ROW_HIPRTC)};
static const struct sym_spec syms_rocblas[] = {GV_SYMS_ROCBLAS(ROW_ROCBLAS)};
static const struct sym_spec syms_hipblaslt[] = {GV_SYMS_HIPBLASLT(ROW_HIPBLASLT)};
static const struct sym_spec syms_miopen[] = {GV_SYMS_MIOPEN(ROW_MIOPEN)};
static const struct sym_spec syms_nccl[] = {GV_SYMS_NCCL(ROW_NCCL)};
static const struct sym_spec syms_rccl[] = {GV_SYMS_RCCL(ROW_NCCL)};
#define ROW_NVML(req, field, ret, params, ...)                                               \
    {#field, {__VA_ARGS__, NULL}, req, offsetof(struct gv_api_nvml, field)},
static const struct sym_spec syms_nvml[] = {GV_SYMS_NVML(ROW_NVML)};

/* File names, newest first; the unsuffixed development name comes last (it is
 * also how PyTorch's ROCm wheels name their copies, docs/facts/rocm-facts.md §4b). */
static const char *const cand_cuda[] = {"libcuda.so.1", "libcuda.so", NULL};
static const char *const cand_nvrtc[] = {"libnvrtc.so.13",   "libnvrtc.so.12",   "libnvrtc.so.11.2",
                                         "libnvrtc.so.11.1", "libnvrtc.so.11.0", "libnvrtc.so",
                                         NULL};
static const char *const cand_cublas[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                                          "libcublas.so", NULL};
static const char *const cand_cublaslt[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                            "libcublasLt.so.11", "libcublasLt.so", NULL};
static const char *const cand_cudnn[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so", NULL};
static const char *const cand_hip[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                       "libamdhip64.so", NULL};
/* HIP 5.x has no libhiprtc: hipRTC lives inside libamdhip64.so.5. */
static const char *const cand_hiprtc[] = {"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so",
                                          "libamdhip64.so.5", NULL};
/* AMD: .so.5 (ROCm 7), .so.4 (6.x), .so.3 (5.7); Debian's librocblas0: .so.0 */
static const char *const cand_rocblas[] = {"librocblas.so.5", "librocblas.so.4", "librocblas.so.3",
                                           "librocblas.so.0", "librocblas.so", NULL};
static const char *const cand_hipblaslt[] = {"libhipblaslt.so.1", "libhipblaslt.so.0",
                                             "libhipblaslt.so", NULL};
static const char *const cand_miopen[] = {"libMIOpen.so.1", "libMIOpen.so", NULL};
/* NCCL: libnccl.so.2 since NCCL 2.0 (the deb/rpm packages, the nvidia-nccl-cu1x
 * wheels under nvidia/nccl/lib, CUDA 13's toolkit copy in lib64); RCCL:
 * librccl.so.1 (ROCm 5.x-7.x, Debian's librccl1), librccl.so in PyTorch's ROCm wheels. */
static const char *const cand_nccl[] = {"libnccl.so.2", "libnccl.so", NULL};
static const char *const cand_rccl[] = {"librccl.so.1", "librccl.so", NULL};
/* NVML ships with the driver as libnvidia-ml.so.1 */
static const char *const cand_nvml[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};

/* Where framework wheels keep their copies, relative to a site-packages dir. */
static const char *const wheel_nvidia[] = {"nvidia/*/lib", "nvidia/cu*/lib", "torch/lib", NULL};
static const char *const wheel_rocm[] = {"torch/lib", "_rocm_sdk_core/lib", NULL};

struct lib_spec {
    const char *name;
    const char *const *candidates;
    const struct sym_spec *syms;
    size_t nsyms;
    size_t table_size;
    int nvidia; /* which toolkit and wheel directories apply */
};

#define SPEC(name, cand, syms, api, nv) {name, cand, syms, sizeof syms / sizeof syms[0], sizeof(api), nv}
static const struct lib_spec specs[GV_LIB_COUNT] = {
    [GV_LIB_CUDA] = SPEC("libcuda", cand_cuda, syms_cuda, struct gv_api_cuda, 1),
    [GV_LIB_NVRTC] = SPEC("nvrtc", cand_nvrtc, syms_nvrtc, struct gv_api_nvrtc, 1),
    [GV_LIB_CUBLAS] = SPEC("cublas", cand_cublas, syms_cublas, struct gv_api_cublas, 1),
    [GV_LIB_CUBLASLT] = SPEC("cublasLt", cand_cublaslt, syms_cublaslt, struct gv_api_cublaslt, 1),
    [GV_LIB_CUDNN] = SPEC("cudnn", cand_cudnn, syms_cudnn, struct gv_api_cudnn, 1),
    [GV_LIB_HIP] = SPEC("amdhip64", cand_hip, syms_hip, struct gv_api_hip, 0),
    [GV_LIB_HIPRTC] = SPEC("hiprtc", cand_hiprtc, syms_hiprtc, struct gv_api_hiprtc, 0),
    [GV_LIB_ROCBLAS] = SPEC("rocblas", cand_rocblas, syms_rocblas, struct gv_api_rocblas, 0),
    [GV_LIB_HIPBLASLT] = SPEC("hipblaslt", cand_hipblaslt, syms_hipblaslt, struct gv_api_hipblaslt, 0),
    [GV_LIB_MIOPEN] = SPEC("MIOpen", cand_miopen, syms_miopen, struct gv_api_miopen, 0),
    [GV_LIB_NCCL] = SPEC("nccl", cand_nccl, syms_nccl, struct gv_api_nccl, 1),
    [GV_LIB_RCCL] = SPEC("rccl", cand_rccl, syms_rccl, struct gv_api_nccl, 0),
    [GV_LIB_NVML] = SPEC("nvml", cand_nvml, syms_nvml, struct gv_api_nvml, 1),
};

static char lib_path_opt[4096];
static int lib_path_set;

void gv_vendor_set_lib_path(const char *dirs)
{
    lib_path_set = dirs != NULL;
    snprintf(lib_path_opt, sizeof lib_path_opt, "%s", dirs ? dirs : "");
}

const char *gv_vendor_lib_path(void)
{
    if (lib_path_set)
        return lib_path_opt;
    const char *env = getenv("GPUVET_LIB_PATH");
    return env ? env : "";
}

const char *gv_vendor_lib_name(enum gv_lib_id id)
{
    return (unsigned)id < GV_LIB_COUNT ? specs[id].name : "?";
}

static int system_search_off(void)
{
    const char *v = getenv("GPUVET_LIB_NO_SYSTEM");
    return v && *v && strcmp(v, "0") != 0;
}

static void note_try(struct gv_vlib *lib, const char *what, const char *why)
{
    size_t used = strlen(lib->tried);
    if (used + 8 >= sizeof lib->tried)
        return;
    snprintf(lib->tried + used, sizeof lib->tried - used, "%s%s: %s", used ? "; " : "", what,
             why ? why : "failed");
}

/* Resolves the symbol list; on a missing required symbol names it. The void*
 * to function-pointer conversion is done by copying the object representation,
 * as POSIX's dlsym rationale allows. */
static int resolve(const struct lib_spec *sp, void *handle, void *table, const char *file,
                   struct gv_err *err)
{
    memset(table, 0, sp->table_size);
    for (size_t i = 0; i < sp->nsyms; i++) {
        const struct sym_spec *s = &sp->syms[i];
        void *p = NULL;
        for (int k = 0; k < 4 && s->names[k] && !p; k++) {
            dlerror();
            p = dlsym(handle, s->names[k]);
        }
        if (!p && s->required) {
            char names[256] = "";
            for (int k = 0; k < 4 && s->names[k]; k++) {
                size_t used = strlen(names);
                snprintf(names + used, sizeof names - used, "%s%s", k ? " or " : "", s->names[k]);
            }
            return gv_err_set(err, GV_E_LIB, "%s (%s) lacks the required symbol %s", file,
                              sp->name, names);
        }
        memcpy((char *)table + s->offset, &p, sizeof p);
    }
    return GV_OK;
}

static void record_path(struct gv_vlib *lib, void *handle, const char *fallback)
{
    struct link_map *lm = NULL;
    const char *p = fallback;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
        p = lm->l_name;
    char real[PATH_MAX];
    if (realpath(p, real))
        p = real;
    snprintf(lib->path, sizeof lib->path, "%s", p);
}

/* One dlopen; on success resolves the symbols. Returns 1 if the library is
 * now open, 0 to try the next candidate, <0 for a definite error. */
static int try_file(const struct lib_spec *sp, const char *file, const char *how,
                    struct gv_vlib *lib, void *table, struct gv_err *err)
{
    dlerror();
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        note_try(lib, file, dlerror());
        return 0;
    }
    char path[4096];
    struct gv_vlib tmp = {0};
    record_path(&tmp, h, file);
    snprintf(path, sizeof path, "%s", tmp.path);
    struct gv_err e = {0};
    if (resolve(sp, h, table, path, &e) != GV_OK) {
        /* a file of the right name but the wrong contents: say so, keep looking
         * (and leave no pointer into the file that is about to be unmapped) */
        memset(table, 0, sp->table_size);
        note_try(lib, file, e.msg);
        dlclose(h);
        if (err && !err->code)
            *err = e;
        return 0;
    }
    lib->handle = h;
    lib->table = table;
    snprintf(lib->path, sizeof lib->path, "%s", path);
    snprintf(lib->how, sizeof lib->how, "%s", how);
    return 1;
}

static int try_dirs(const struct lib_spec *sp, const char *dirs, const char *cand,
                    const char *how, struct gv_vlib *lib, void *table, struct gv_err *err)
{
    const char *p = dirs;
    while (p && *p) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n < 2048) {
            char file[4096];
            snprintf(file, sizeof file, "%.*s/%s", (int)n, p, cand);
            int rc = try_file(sp, file, how, lib, table, err);
            if (rc)
                return rc;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return 0;
}

static void toolkit_dirs(const struct lib_spec *sp, char *out, size_t outsz)
{
    const char *vars[] = {sp->nvidia ? "CUDA_HOME" : "ROCM_PATH",
                          sp->nvidia ? "CUDA_PATH" : "HIP_PATH", NULL};
    out[0] = '\0';
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v && strlen(v) < 1024) {
            size_t used = strlen(out);
            snprintf(out + used, outsz - used, "%s%s/%s", used ? ":" : "", v,
                     sp->nvidia ? "lib64" : "lib");
        }
    }
    const char *def = sp->nvidia ? "/usr/local/cuda/lib64" : "/opt/rocm/lib";
    size_t used = strlen(out);
    if (!strstr(out, def)) /* CUDA_HOME=/usr/local/cuda would list it twice */
        snprintf(out + used, outsz - used, "%s%s", used ? ":" : "", def);
}

/* site-packages of the active virtual environment / conda, the user's and the system's. */
static int try_wheels(const struct lib_spec *sp, const char *cand, struct gv_vlib *lib,
                      void *table, struct gv_err *err)
{
    const char *prefixes[4] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"), "/usr/local",
                               "/usr"};
    const char *const *subs = sp->nvidia ? wheel_nvidia : wheel_rocm;
    for (int i = 0; i < 4; i++) {
        if (!prefixes[i] || !*prefixes[i] || strlen(prefixes[i]) > 1024)
            continue;
        for (int s = 0; subs[s]; s++) {
            char pat[2048];
            snprintf(pat, sizeof pat, "%s/lib/python3*/*-packages/%s/%s", prefixes[i], subs[s],
                     cand);
            glob_t g;
            if (glob(pat, 0, NULL, &g) != 0)
                continue;
            for (size_t k = 0; k < g.gl_pathc; k++) {
                int rc = try_file(sp, g.gl_pathv[k], "wheel", lib, table, err);
                if (rc) {
                    globfree(&g);
                    return rc;
                }
            }
            globfree(&g);
        }
    }
    return 0;
}

static int open_candidates(const struct lib_spec *sp, struct gv_vlib *lib, void *table,
                           struct gv_err *err)
{
    const char *user = gv_vendor_lib_path();
    int sys = !system_search_off();
    char tk[4096];
    toolkit_dirs(sp, tk, sizeof tk);
    /* Search order: the user's directories, the system loader, the toolkit's
     * directories, framework wheels; each candidate name newest first. */
    for (int c = 0; sp->candidates[c]; c++)
        if (try_dirs(sp, user, sp->candidates[c], "lib-path", lib, table, err))
            return 1;
    if (!sys)
        return 0;
    for (int c = 0; sp->candidates[c]; c++)
        if (try_file(sp, sp->candidates[c], "system", lib, table, err))
            return 1;
    for (int c = 0; sp->candidates[c]; c++)
        if (try_dirs(sp, tk, sp->candidates[c], "toolkit", lib, table, err))
            return 1;
    for (int c = 0; sp->candidates[c]; c++)
        if (try_wheels(sp, sp->candidates[c], lib, table, err))
            return 1;
    return 0;
}

int gv_vlib_open(enum gv_lib_id id, struct gv_vlib *lib, void *table, struct gv_err *err)
{
    memset(lib, 0, sizeof *lib);
    lib->id = id;
    if ((unsigned)id >= GV_LIB_COUNT)
        return gv_err_set(err, GV_E_USAGE, "unknown vendor library %d", (int)id);
    const struct lib_spec *sp = &specs[id];
    struct gv_err first = {0};
    if (open_candidates(sp, lib, table, &first))
        return GV_OK;
    if (first.code) /* a file was found but lacked a symbol: the most useful message */
        return gv_err_set(err, GV_E_LIB, "%s (tried: %s)", first.msg, lib->tried);
    const char *user = gv_vendor_lib_path();
    return gv_err_set(err, GV_E_LIB,
                      "%s not found (searched %s%s%s; tried: %s)", sp->name,
                      *user ? "--lib-path/GPUVET_LIB_PATH " : "", *user ? user : "",
                      system_search_off() ? " only, system search off by GPUVET_LIB_NO_SYSTEM"
                                          : (*user ? ", the system loader, toolkit and wheel directories"
                                                   : "the system loader, toolkit and wheel directories"),
                      lib->tried[0] ? lib->tried : "nothing");
}

int gv_vlib_open_file(enum gv_lib_id id, const char *file, struct gv_vlib *lib, void *table,
                      struct gv_err *err)
{
    memset(lib, 0, sizeof *lib);
    lib->id = id;
    if ((unsigned)id >= GV_LIB_COUNT)
        return gv_err_set(err, GV_E_USAGE, "unknown vendor library %d", (int)id);
    struct gv_err first = {0};
    if (try_file(&specs[id], file, "dependency", lib, table, &first) == 1)
        return GV_OK;
    if (first.code)
        return gv_err_set(err, GV_E_LIB, "%s", first.msg);
    return gv_err_set(err, GV_E_LIB, "%s: %s", specs[id].name, lib->tried);
}

/* The library stays mapped: vendor runtimes register atexit handlers and
 * thread-local destructors that crash or leak when their code is unmapped
 * first, so gpuvet forgets the handle instead of calling dlclose. */
void gv_vlib_close(struct gv_vlib *lib)
{
    if (lib && lib->handle) {
        lib->handle = NULL;
        lib->table = NULL;
    }
}

json_t *gv_vlib_describe(const struct gv_vlib *lib, const char *error)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(gv_vendor_lib_name(lib->id)));
    if (lib->handle) {
        json_object_set_new(o, "path", json_string(lib->path));
        json_object_set_new(o, "found_by", json_string(lib->how));
        if (lib->version[0])
            json_object_set_new(o, "version", json_string(lib->version));
        if (lib->stub)
            json_object_set_new(o, "stub", json_true());
    } else {
        json_object_set_new(o, "error", json_string(error && *error ? error : "not loaded"));
    }
    if (lib->tried[0])
        json_object_set_new(o, "tried", json_string(lib->tried));
    return o;
}
