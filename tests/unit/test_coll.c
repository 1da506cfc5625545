/* The collective benchmark without a GPU: nccl-tests' counting and bandwidth
 * formulas (values worked out by hand from nccl-tests src/<op>.cu), the size
 * sweep, option errors, a missing NCCL, the NCCL symbol list resolved against
 * a real libnccl (CUDA 13 ships one in its lib64; the nvidia-nccl wheels and
 * the libnccl2 package too) and against a file that lacks a symbol, and the
 * "no GPU" answer with the real libnccl but no driver. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/coll.h"
#include "dev/vendor.h"
#include "t.h"

static char tmp[256];

static void counting(void)
{
    struct gv_coll_size s;
    /* all-reduce: count = size/4, size column = size */
    gv_coll_size(GV_COLL_ALL_REDUCE, 1048576, 4, 8, &s);
    T_EQ_INT(s.count, 262144);
    T_EQ_INT(s.bytes, 1048576);
    /* all-gather over 8: base = (262144/8) & ~3 = 32768 sent, 262144 received */
    gv_coll_size(GV_COLL_ALL_GATHER, 1048576, 4, 8, &s);
    T_EQ_INT(s.count, 32768);
    T_EQ_INT(s.send_count, 32768);
    T_EQ_INT(s.recv_count, 262144);
    T_EQ_INT(s.bytes, 1048576);
    /* over 3: 262144/3 = 87381, & ~3 = 87380; size column 87380*3*4 = 1048560 */
    gv_coll_size(GV_COLL_ALL_GATHER, 1048576, 4, 3, &s);
    T_EQ_INT(s.count, 87380);
    T_EQ_INT(s.bytes, 1048560);
    gv_coll_size(GV_COLL_ALL_TO_ALL, 1048576, 4, 3, &s);
    T_EQ_INT(s.count, 87380);
    T_EQ_INT(s.send_count, 262140);
    T_EQ_INT(s.recv_count, 262140);
    T_EQ_INT(s.bytes, 1048560);
    /* reduce-scatter over 4 of 64 bytes: 16 elements, 4 per rank */
    gv_coll_size(GV_COLL_REDUCE_SCATTER, 64, 4, 4, &s);
    T_EQ_INT(s.count, 4);
    T_EQ_INT(s.send_count, 16);
    T_EQ_INT(s.recv_count, 4);
    T_EQ_INT(s.bytes, 64);
    /* 8 bytes over 2 ranks cannot be split into 16-byte parts: count 0 */
    gv_coll_size(GV_COLL_ALL_GATHER, 8, 4, 2, &s);
    T_EQ_INT(s.count, 0);
    T_EQ_INT(s.bytes, 0);
    gv_coll_size(GV_COLL_BROADCAST, 8, 4, 2, &s);
    T_EQ_INT(s.count, 2);
    T_EQ_INT(s.bytes, 8);
}

static void bandwidth(void)
{
    double a, b;
    /* 1 MiB in 1 ms: algbw 1.048576 GB/s; all-reduce over 8: x 2*7/8 = 1.835008 */
    gv_coll_bw(GV_COLL_ALL_REDUCE, 1048576, 8, 1e-3, &a, &b);
    T_NEAR(a, 1.048576, 1e-12);
    T_NEAR(b, 1.835008, 1e-12);
    /* two ranks: busbw = algbw for all-reduce (2*1/2) */
    gv_coll_bw(GV_COLL_ALL_REDUCE, 2000000000, 2, 0.01, &a, &b);
    T_NEAR(a, 200.0, 1e-9);
    T_NEAR(b, 200.0, 1e-9);
    /* one rank: busbw 0 for all but broadcast (nccl-tests prints 0) */
    gv_coll_bw(GV_COLL_ALL_REDUCE, 1000, 1, 1e-6, &a, &b);
    T_NEAR(a, 1.0, 1e-12);
    T_NEAR(b, 0.0, 0);
    gv_coll_bw(GV_COLL_BROADCAST, 1000, 1, 1e-6, &a, &b);
    T_NEAR(b, 1.0, 1e-12);
    /* all-gather, reduce-scatter, all-to-all over 4: (n-1)/n = 0.75 */
    gv_coll_bw(GV_COLL_ALL_GATHER, 4000000000, 4, 0.1, &a, &b);
    T_NEAR(a, 40.0, 1e-9);
    T_NEAR(b, 30.0, 1e-9);
    T_NEAR(gv_coll_busbw_factor(GV_COLL_REDUCE_SCATTER, 4), 0.75, 1e-15);
    T_NEAR(gv_coll_busbw_factor(GV_COLL_ALL_TO_ALL, 8), 0.875, 1e-15);
    T_NEAR(gv_coll_busbw_factor(GV_COLL_BROADCAST, 8), 1.0, 0);
    T_NEAR(gv_coll_busbw_factor(GV_COLL_ALL_REDUCE, 8), 1.75, 1e-15);
}

static void sweep(void)
{
    size_t s[64];
    /* nccl-tests -b 8 -e 1G -f 2: 2^3 .. 2^30, 28 sizes */
    T_EQ_INT(gv_coll_sweep(8, (size_t)1 << 30, 2, s, 64), 28);
    T_EQ_INT(s[0], 8);
    T_EQ_INT(s[1], 16);
    T_EQ_INT(s[27], (size_t)1 << 30);
    /* -f 4: 2^3, 2^5, ..., 2^29: 14 sizes, 1 GiB is not reached */
    T_EQ_INT(gv_coll_sweep(8, (size_t)1 << 30, 4, s, 64), 14);
    T_EQ_INT(s[13], (size_t)1 << 29);
    /* an end off the grid: 8, 16, 32, 64 */
    T_EQ_INT(gv_coll_sweep(8, 100, 2, s, 64), 4);
    T_EQ_INT(s[3], 64);
    T_EQ_INT(gv_coll_sweep(64, 64, 2, s, 64), 1);
    /* more sizes than room: the count is still told */
    T_EQ_INT(gv_coll_sweep(1, 1024, 2, s, 4), 11);
    T_EQ_INT(gv_coll_sweep(0, 64, 2, s, 64), 0);
    T_EQ_INT(gv_coll_sweep(64, 8, 2, s, 64), 0);
    T_EQ_INT(gv_coll_sweep(8, 64, 1, s, 64), 0);
    for (int op = 0; op < GV_COLL_NOPS; op++)
        T_EQ_INT(gv_coll_op_from_name(gv_coll_op_name((enum gv_coll_op)op)), op);
    T_EQ_STR(gv_coll_op_name(GV_COLL_ALL_TO_ALL), "all_to_all");
    T_EQ_INT(gv_coll_op_from_name("alltoall"), -1);
}

static void bad_options(void)
{
    json_t *res = json_array(), *info = NULL;
    struct gv_err err = {0};
    struct gv_coll_opts o = {.iters = -3};
    T_EQ_INT(gv_coll_bench(&o, res, &info, &err), GV_E_USAGE);
    T_CHECK(strstr(err.msg, "iters -3") != NULL);
    json_decref(info);
    info = NULL;
    o = (struct gv_coll_opts){.min_bytes = 4096, .max_bytes = 8};
    gv_err_clear(&err);
    T_EQ_INT(gv_coll_bench(&o, res, &info, &err), GV_E_USAGE);
    T_CHECK(strstr(err.msg, "4096 to 8 bytes") != NULL);
    T_EQ_INT(json_array_size(res), 0);
    json_decref(info);
    json_decref(res);
}

/* No collective library in reach: GV_E_LIB naming the library and its file,
 * never the other vendor's; info still says what was looked for. kind NULL:
 * CUDA's NCCL; "hip": RCCL. */
static void missing_library(const char *kind, const char *upper, const char *name,
                            const char *soname, const char *other)
{
    char empty[300], need[32], none[32];
    snprintf(empty, sizeof empty, "%s/empty", tmp);
    snprintf(need, sizeof need, "need %s", upper);
    snprintf(none, sizeof none, "%s not found", name);
    mkdir(empty, 0700);
    gv_vendor_set_lib_path(empty);
    setenv("GPUVET_LIB_NO_SYSTEM", "1", 1);
    json_t *res = json_array(), *info = NULL;
    struct gv_err err = {0};
    struct gv_coll_opts o = {.kind = kind};
    T_EQ_INT(gv_coll_bench(&o, res, &info, &err), GV_E_LIB);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_CHECK(strstr(err.msg, need) != NULL);
    T_CHECK(strstr(err.msg, none) != NULL);
    T_CHECK(strstr(err.msg, soname) != NULL);
    T_CHECK(strstr(err.msg, other) == NULL);
    T_CHECK(strstr(err.msg, empty) != NULL);
    T_EQ_INT(json_array_size(res), 0);
    json_t *lib = json_object_get(info, "library");
    T_EQ_STR(json_string_value(json_object_get(lib, "name")), name);
    T_CHECK(strstr(json_string_value(json_object_get(lib, "error")), soname) != NULL);
    json_decref(info);
    json_decref(res);
    unsetenv("GPUVET_LIB_NO_SYSTEM");
    gv_vendor_set_lib_path(NULL);
}

static void missing_nccl(void) { missing_library(NULL, "NCCL", "nccl", "libnccl.so.2", "librccl"); }

/* The device kind hip asks for RCCL: without it, a GV_E_LIB naming librccl.so.1. */
static void hip_without_rccl(void)
{
    missing_library("hip", "RCCL", "rccl", "librccl.so.1", "libnccl");
}

/* Builds DIR/file as a shared object with the given SONAME from C source. */
static int build_so(const char *file, const char *soname, const char *src)
{
    char c[512], so[512], cmd[2048];
    snprintf(c, sizeof c, "%s/%s.c", tmp, file);
    snprintf(so, sizeof so, "%s/%s", tmp, file);
    FILE *f = fopen(c, "w");
    if (!f)
        return -1;
    fputs(src, f);
    fclose(f);
    const char *cc = getenv("CC") ? getenv("CC") : "cc";
    snprintf(cmd, sizeof cmd, "%s -shared -fPIC -Wl,-soname,%s -o '%s' '%s' 2>/dev/null", cc,
             soname, so, c);
    return system(cmd);
}

/* Builds the stand-in library file (its own SONAME) from src and makes the
 * temporary directory the only place libraries are looked for; 0 when there
 * is no C compiler (the case is then not run, and says so). */
static int use_stand_in(const char *file, const char *src, const char *what)
{
    if (build_so(file, file, src)) {
        fprintf(stderr, "  no C compiler: %s is not run\n", what);
        return 0;
    }
    gv_vendor_set_lib_path(tmp);
    setenv("GPUVET_LIB_NO_SYSTEM", "1", 1);
    return 1;
}

static void nccl_lacking_a_symbol(void)
{
    if (!use_stand_in("libnccl.so.2", "int ncclGetVersion(int *v) { *v = 22809; return 0; }\n",
                      "the wrong-contents case"))
        return;
    struct gv_vlib lib;
    struct gv_api_nccl api;
    struct gv_err err = {0};
    T_EQ_INT(gv_vlib_open(GV_LIB_NCCL, &lib, &api, &err), GV_E_LIB);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_CHECK(strstr(err.msg, "lacks the required symbol ncclGetErrorString") != NULL);
    T_CHECK(api.ncclGetVersion == NULL);
    char so[300];
    snprintf(so, sizeof so, "%s/libnccl.so.2", tmp);
    unlink(so);
    unsetenv("GPUVET_LIB_NO_SYSTEM");
    gv_vendor_set_lib_path(NULL);
}

/* RCCL's own list (syms_rccl.h): a stand-in librccl.so.1 with RCCL's exports
 * (its all-to-all is ncclAllToAll) fills the all-to-all entry, and the hip
 * kind, with RCCL found, says what is missing instead of running. */
static void rccl_symbol_list(void)
{
    static const char *const names[] = {
        "ncclGetErrorString", "ncclCommInitAll", "ncclCommDestroy", "ncclCommAbort",
        "ncclCommGetAsyncError", "ncclGroupStart", "ncclGroupEnd", "ncclAllReduce",
        "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclSend", "ncclRecv",
        "ncclAllToAll"};
    char src[2048] = "int ncclGetVersion(int *v) { *v = 22203; return 0; }\n";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t used = strlen(src);
        snprintf(src + used, sizeof src - used, "int %s(void) { return 0; }\n", names[i]);
    }
    if (!use_stand_in("librccl.so.1", src, "the stand-in RCCL case"))
        return;
    struct gv_vlib lib;
    struct gv_api_nccl api;
    struct gv_err err = {0};
    T_EQ_INT(gv_vlib_open(GV_LIB_RCCL, &lib, &api, &err), GV_OK);
    T_CHECK(api.ncclAlltoAll != NULL);
    T_CHECK(api.ncclGetLastError == NULL);
    if (lib.handle)
        gv_vlib_close(&lib);
    json_t *res = json_array(), *info = NULL;
    struct gv_coll_opts o = {.kind = "hip"};
    gv_err_clear(&err);
    T_EQ_INT(gv_coll_bench(&o, res, &info, &err), GV_E_UNSUPPORTED);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_CHECK(strstr(err.msg, "librccl.so.1") != NULL);
    T_CHECK(strstr(err.msg, "RCCL 2.22.3") != NULL);
    T_EQ_STR(json_string_value(json_object_get(info, "alltoall_call")), "ncclAllToAll");
    json_decref(info);
    json_decref(res);
    char so[300];
    snprintf(so, sizeof so, "%s/librccl.so.1", tmp);
    unlink(so);
    unsetenv("GPUVET_LIB_NO_SYSTEM");
    gv_vendor_set_lib_path(NULL);
}

static int has_libcuda(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/libcuda.so.1", dir);
    return access(p, F_OK) == 0;
}

/* The real NCCL: every required symbol, the version, an error string; then
 * the benchmark with that NCCL but only its directory searched. */
static void real_nccl(void)
{
    struct gv_vlib lib;
    struct gv_api_nccl api;
    struct gv_err err = {0};
    if (gv_vlib_open(GV_LIB_NCCL, &lib, &api, &err) != GV_OK) {
        fprintf(stderr, "  no libnccl on this machine (%s): not run\n", err.msg);
        return;
    }
    fprintf(stderr, "  %s (%s)\n", lib.path, lib.how);
#define REQUIRED(req, field, ...) T_CHECK(!(req) || api.field != NULL);
    GV_SYMS_NCCL(REQUIRED)
#undef REQUIRED
    int v = 0;
    T_EQ_INT(api.ncclGetVersion(&v), ncclSuccess);
    fprintf(stderr, "  ncclGetVersion: %d\n", v);
    T_CHECK(v >= 2000);
    if (v >= 22800) /* NCCL 2.28 added ncclAlltoAll */
        T_CHECK(api.ncclAlltoAll != NULL);
    const char *s = api.ncclGetErrorString(ncclInvalidArgument);
    T_CHECK(s && strstr(s, "invalid argument") != NULL);
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s", lib.path);
    snprintf(dir, sizeof dir, "%s", dirname(path));
    gv_vlib_close(&lib);
    if (has_libcuda(dir)) {
        fprintf(stderr, "  %s also holds libcuda.so.1: the no-GPU case is not run\n", dir);
        return;
    }
    /* NCCL found, no driver there: "no NVIDIA GPU", the library described */
    gv_vendor_set_lib_path(dir);
    setenv("GPUVET_LIB_NO_SYSTEM", "1", 1);
    json_t *res = json_array(), *info = NULL;
    gv_err_clear(&err);
    T_EQ_INT(gv_coll_bench(NULL, res, &info, &err), GV_E_NOTFOUND);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_CHECK(strstr(err.msg, "no NVIDIA GPU driver") != NULL);
    T_CHECK(strstr(err.msg, "libcuda") != NULL);
    json_t *l = json_object_get(info, "library");
    T_CHECK(json_string_value(json_object_get(l, "path")) != NULL);
    T_CHECK(json_string_value(json_object_get(info, "version"))[0] == '2');
    T_CHECK(json_is_object(json_object_get(info, "env")));
    json_decref(info);
    json_decref(res);
    unsetenv("GPUVET_LIB_NO_SYSTEM");
    gv_vendor_set_lib_path(NULL);
}

/* RCCL has the same symbol list; Debian's librccl1 in a fixture root, when
 * one was built with it (GV_RCCL_ROOT or the fixture cache). */
static void real_rccl(void)
{
    const char *root = getenv("GV_RCCL_LIBDIR");
    if (!root || !*root) {
        fprintf(stderr, "  GV_RCCL_LIBDIR not set (a directory holding librccl.so.1 and its "
                        "HIP libraries): not run\n");
        return;
    }
    gv_vendor_set_lib_path(root);
    setenv("GPUVET_LIB_NO_SYSTEM", "1", 1);
    struct gv_vlib lib;
    struct gv_api_nccl api;
    struct gv_err err = {0};
    int rc = gv_vlib_open(GV_LIB_RCCL, &lib, &api, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    T_EQ_INT(rc, GV_OK);
    int v = 0;
    if (!rc)
        T_EQ_INT(api.ncclGetVersion(&v), ncclSuccess);
    fprintf(stderr, "  %s: version %d\n", lib.path, v);
    unsetenv("GPUVET_LIB_NO_SYSTEM");
    gv_vendor_set_lib_path(NULL);
}

int main(void)
{
    const char *base = getenv("GV_TEST_TMP") ? getenv("GV_TEST_TMP") : "/tmp";
    mkdir(base, 0755); /* shared with the other tests: some run as nobody below it */
    snprintf(tmp, sizeof tmp, "%s/coll.XXXXXX", base);
    if (!mkdtemp(tmp)) {
        perror(tmp);
        return 1;
    }
    T_RUN(counting);
    T_RUN(bandwidth);
    T_RUN(sweep);
    T_RUN(bad_options);
    T_RUN(missing_nccl);
    T_RUN(hip_without_rccl);
    T_RUN(nccl_lacking_a_symbol);
    T_RUN(rccl_symbol_list);
    T_RUN(real_nccl);
    T_RUN(real_rccl);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    fprintf(stderr, "%d checks, %d failed\n", t_checks, t_failed);
    return t_failed ? 1 : 0;
}
