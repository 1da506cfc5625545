/* Run-time compilation of the embedded kernels with NVRTC or hipRTC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/gpu.h"
#include "dev/kernel_sources.h"

const char *const gv_kernel_entries[] = {
    "gv_cvt_u16_to_f32", "gv_cvt_u8_to_f32", "gv_cvt_f32_to_u16", "gv_cvt_f32_to_u8",
    "gv_unary_f32",      "gv_reduce_f32",    "gv_reduce_f64",     "gv_softmax_f32",    "gv_layernorm_f32",
    "gv_rmsnorm_f32",    "gv_sdpa_f32",      "gv_gemm_f32",       "gv_conv2d_f32",
    "gv_test_fault",     "gv_test_spin",
    "gv_bench_spin",     "gv_bench_fill",    "gv_bench_copy",     "gv_bench_scale",    "gv_bench_add",
    "gv_bench_triad",    "gv_bench_read",    "gv_bench_iota",     "gv_bench_empty",
    "gv_coll_fill",      "gv_coll_check",    "gv_coll_poke",      "gv_coll_gate",
};
const int gv_kernel_entry_count = sizeof gv_kernel_entries / sizeof gv_kernel_entries[0];

char *gv_kernels_joined(void)
{
    size_t total = 1;
    for (int i = 0; i < gv_kernel_sources_count; i++)
        total += strlen(gv_kernel_sources[i].text) + strlen(gv_kernel_sources[i].name) + 32;
    char *s = malloc(total);
    if (!s)
        return NULL;
    size_t used = 0;
    for (int i = 0; i < gv_kernel_sources_count; i++)
        used += (size_t)snprintf(s + used, total - used, "#line 1 \"%s\"\n%s\n",
                                 gv_kernel_sources[i].name, gv_kernel_sources[i].text);
    return s;
}

void gv_rtc_out_free(struct gv_rtc_out *o)
{
    if (!o)
        return;
    free(o->code);
    free(o->log);
    o->code = o->log = NULL;
    o->size = 0;
}

/* The first lines of a compiler log, for an error message. */
static void log_head(const char *log, char *out, size_t outsz)
{
    size_t n = log ? strlen(log) : 0;
    if (n > 600)
        n = 600;
    snprintf(out, outsz, "%.*s%s", (int)n, log ? log : "", log && strlen(log) > n ? " ..." : "");
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

/* NVRTC and hipRTC have the same shape: one generic driver over both tables. */
struct rtc_api {
    int (*create)(void **, const char *, const char *);
    int (*compile)(void *, int, const char **);
    int (*logsize)(void *, size_t *);
    int (*getlog)(void *, char *);
    int (*codesize)(void *, size_t *);
    int (*getcode)(void *, char *);
    void (*destroy)(void **);
    const char *(*errstr)(int);
};

static const struct gv_api_nvrtc *nv;
static int nv_create(void **p, const char *src, const char *name)
{
    return nv->nvrtcCreateProgram((nvrtcProgram *)p, src, name, 0, NULL, NULL);
}
static int nv_compile(void *p, int n, const char **o)
{
    return nv->nvrtcCompileProgram(p, n, (const char *const *)o);
}
static int nv_logsize(void *p, size_t *n) { return nv->nvrtcGetProgramLogSize(p, n); }
static int nv_getlog(void *p, char *s) { return nv->nvrtcGetProgramLog(p, s); }
static int nv_ptxsize(void *p, size_t *n) { return nv->nvrtcGetPTXSize(p, n); }
static int nv_getptx(void *p, char *s) { return nv->nvrtcGetPTX(p, s); }
static int nv_cubinsize(void *p, size_t *n) { return nv->nvrtcGetCUBINSize(p, n); }
static int nv_getcubin(void *p, char *s) { return nv->nvrtcGetCUBIN(p, s); }
static void nv_destroy(void **p) { nv->nvrtcDestroyProgram((nvrtcProgram *)p); }
static const char *nv_errstr(int r) { return nv->nvrtcGetErrorString(r); }

static const struct gv_api_hiprtc *amd;
static int amd_create(void **p, const char *src, const char *name)
{
    return amd->hiprtcCreateProgram((hiprtcProgram *)p, src, name, 0, NULL, NULL);
}
static int amd_compile(void *p, int n, const char **o) { return amd->hiprtcCompileProgram(p, n, o); }
static int amd_logsize(void *p, size_t *n) { return amd->hiprtcGetProgramLogSize(p, n); }
static int amd_getlog(void *p, char *s) { return amd->hiprtcGetProgramLog(p, s); }
static int amd_codesize(void *p, size_t *n) { return amd->hiprtcGetCodeSize(p, n); }
static int amd_getcode(void *p, char *s) { return amd->hiprtcGetCode(p, s); }
static void amd_destroy(void **p) { amd->hiprtcDestroyProgram((hiprtcProgram *)p); }
static const char *amd_errstr(int r) { return amd->hiprtcGetErrorString(r); }

static char *fetch_log(const struct rtc_api *a, void *prog)
{
    size_t n = 0;
    if (a->logsize(prog, &n) != 0 || n > (64u << 20))
        n = 0;
    char *log = calloc(n + 1, 1);
    if (log && n && a->getlog(prog, log) != 0)
        log[0] = '\0';
    return log;
}

static int rtc_run(const struct rtc_api *a, const char *who, const char **opts, int nopt,
                   struct gv_rtc_out *out, struct gv_err *err)
{
    char *src = gv_kernels_joined();
    if (!src)
        return gv_err_set(err, GV_E_NOMEM, "%s: joining the kernel sources", who);
    void *prog = NULL;
    int r = a->create(&prog, src, "gpuvet_kernels.cu");
    if (r != 0) {
        free(src);
        return gv_err_set(err, GV_E_LIB, "%s create program: %s (%d)", who, a->errstr(r), r);
    }
    r = a->compile(prog, nopt, opts);
    out->log = fetch_log(a, prog);
    int rc = GV_OK;
    if (r != 0) {
        char head[700];
        log_head(out->log, head, sizeof head);
        rc = gv_err_set(err, GV_E_DEVICE, "%s compile (%s): %s (%d): %s", who, out->options,
                        a->errstr(r), r, head);
    } else {
        size_t n = 0;
        r = a->codesize(prog, &n);
        if (r != 0 || n == 0 || n > (512u << 20)) {
            rc = gv_err_set(err, GV_E_DEVICE, "%s: no code produced (%d)", who, r);
        } else if (!(out->code = malloc(n))) {
            rc = gv_err_set(err, GV_E_NOMEM, "%s: %zu bytes of code", who, n);
        } else if ((r = a->getcode(prog, out->code)) != 0) {
            rc = gv_err_set(err, GV_E_DEVICE, "%s: fetching code: %s", who, a->errstr(r));
        } else {
            out->size = n;
        }
    }
    a->destroy(&prog);
    free(src);
    if (rc != GV_OK) {
        free(out->code);
        out->code = NULL;
        out->size = 0;
    }
    return rc;
}

static void join_opts(const char **opts, int n, char *out, size_t outsz)
{
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, outsz - used, "%s%s", i ? " " : "", opts[i]);
    }
}

int gv_nvrtc_compile(const struct gv_api_nvrtc *api, const char *arch, struct gv_rtc_out *out,
                     struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    int maj = 0, min = 0;
    api->nvrtcVersion(&maj, &min);
    snprintf(out->compiler, sizeof out->compiler, "nvrtc %d.%d", maj, min);
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    const char *opts[] = {archopt, "--std=c++14", "-DGV_NVRTC=1"};
    join_opts(opts, 3, out->options, sizeof out->options);
    nv = api;
    int cubin = strncmp(arch, "sm_", 3) == 0 && api->nvrtcGetCUBIN && api->nvrtcGetCUBINSize;
    struct rtc_api a = {nv_create, nv_compile, nv_logsize, nv_getlog,
                        cubin ? nv_cubinsize : nv_ptxsize, cubin ? nv_getcubin : nv_getptx,
                        nv_destroy, nv_errstr};
    out->is_ptx = !cubin;
    return rtc_run(&a, out->compiler, opts, 3, out, err);
}

int gv_hiprtc_compile(const struct gv_api_hiprtc *api, const char *arch, struct gv_rtc_out *out,
                      struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    int maj = 0, min = 0;
    api->hiprtcVersion(&maj, &min);
    snprintf(out->compiler, sizeof out->compiler, "hiprtc %d.%d", maj, min);
    char archopt[96];
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    const char *opts[] = {archopt, "-O3", "-DGV_HIPRTC=1"};
    join_opts(opts, 3, out->options, sizeof out->options);
    amd = api;
    struct rtc_api a = {amd_create, amd_compile, amd_logsize, amd_getlog,
                        amd_codesize, amd_getcode, amd_destroy, amd_errstr};
    return rtc_run(&a, out->compiler, opts, 3, out, err);
}

json_t *gv_rtc_out_describe(const struct gv_rtc_out *o, const char *output)
{
    json_t *k = json_object();
    json_object_set_new(k, "compiler", json_string(o->compiler));
    json_object_set_new(k, "options", json_string(o->options));
    if (output)
        json_object_set_new(k, "output", json_string(output));
    json_object_set_new(k, "bytes", json_integer((json_int_t)o->size));
    json_object_set_new(k, "log", json_string(o->log ? o->log : ""));
    return k;
}
