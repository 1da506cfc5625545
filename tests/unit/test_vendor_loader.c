/* The generic vendor loader against real shared objects made by the real
 * toolchain: a missing library, a library with the right SONAME but without a
 * required symbol, versioned aliases, and the CUDA toolkit's stub libcuda. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev/backend.h"
#include "dev/vendor.h"
#include "t.h"

extern const struct gv_backend gv_backend_cuda;

static char tmp[256];
static int have_cc;

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
    snprintf(cmd, sizeof cmd, "%s -shared -fPIC -Wl,-soname,%s -o '%s' '%s'", cc, soname, so, c);
    return system(cmd);
}

static void missing_library(void)
{
    char empty[300];
    snprintf(empty, sizeof empty, "%s/empty", tmp);
    mkdir(empty, 0700);
    gv_vendor_set_lib_path(empty);
    setenv("GPUVET_LIB_NO_SYSTEM", "1", 1);
    struct gv_vlib lib;
    struct gv_api_cuda api;
    struct gv_err err = {0};
    T_EQ_INT(gv_vlib_open(GV_LIB_CUDA, &lib, &api, &err), GV_E_LIB);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_CHECK(strstr(err.msg, "libcuda not found") != NULL);
    T_CHECK(strstr(err.msg, empty) != NULL);
    T_CHECK(strstr(err.msg, "libcuda.so.1") != NULL);
    T_CHECK(strstr(err.msg, "GPUVET_LIB_NO_SYSTEM") != NULL);
    /* the backend says the same through its interface */
    struct gv_device *dev = NULL;
    gv_err_clear(&err);
    T_EQ_INT(gv_backend_cuda.open("0", &dev, &err), GV_E_LIB);
    T_CHECK(dev == NULL);
    T_CHECK(strstr(err.msg, "libcuda not found") != NULL);
}

static void missing_symbol(void)
{
    if (!have_cc)
        return;
    /* right SONAME, only cuInit: the first missing required symbol is named */
    T_EQ_INT(build_so("libcuda.so.1", "libcuda.so.1", "int cuInit(unsigned f) { return 0; }\n"), 0);
    gv_vendor_set_lib_path(tmp);
    setenv("GPUVET_LIB_NO_SYSTEM", "1", 1);
    struct gv_vlib lib;
    struct gv_api_cuda api;
    struct gv_err err = {0};
    T_EQ_INT(gv_vlib_open(GV_LIB_CUDA, &lib, &api, &err), GV_E_LIB);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_CHECK(strstr(err.msg, "lacks the required symbol cuDriverGetVersion") != NULL);
    T_CHECK(strstr(err.msg, "libcuda.so.1") != NULL);
    /* the rejected file is unmapped: no pointer into it may be left behind */
    T_CHECK(api.cuInit == NULL);
}

/* Every symbol of the HIP list, under its LAST (oldest) name only. */
#define LAST_NAME(req, field, ret, params, ...) last_name(#field, (const char *[]){__VA_ARGS__, NULL}, f);
static void last_name(const char *field, const char **names, FILE *f)
{
    int n = 0;
    while (names[n + 1])
        n++;
    fprintf(f, "int %s(void) { return 0; } /* %s */\n", names[n], field);
}

static void versioned_alias(void)
{
    if (!have_cc)
        return;
    char src[512];
    snprintf(src, sizeof src, "%s/hipsrc.txt", tmp);
    FILE *f = fopen(src, "w");
    T_CHECK(f != NULL);
    if (!f)
        return;
    GV_SYMS_HIP(LAST_NAME)
    fclose(f);
    char text[8192] = "";
    f = fopen(src, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    T_CHECK(strstr(text, "hipGetDeviceProperties(void)") != NULL);
    T_CHECK(strstr(text, "R0600") == NULL);
    T_EQ_INT(build_so("libamdhip64.so.5", "libamdhip64.so.5", text), 0);
    gv_vendor_set_lib_path(tmp);
    struct gv_vlib lib;
    struct gv_api_hip api;
    struct gv_err err = {0};
    T_EQ_INT(gv_vlib_open(GV_LIB_HIP, &lib, &api, &err), GV_OK);
    T_CHECK(api.hipGetDeviceProperties != NULL); /* the pre-6.0 name was taken */
    T_CHECK(api.hipModuleLaunchKernel != NULL);
    T_CHECK(strstr(lib.path, "libamdhip64.so.5") != NULL);
    T_EQ_STR(lib.how, "lib-path");
    json_t *j = gv_vlib_describe(&lib, NULL);
    T_CHECK(json_string_value(json_object_get(j, "path")) != NULL);
    json_decref(j);
    gv_vlib_close(&lib);
}

/* A library found only as a framework wheel's copy: a real shared object
 * named libMIOpen.so.1 under $VIRTUAL_ENV/lib/python3.X/site-packages/torch/lib. */
static void wheel_copy(void)
{
    if (!have_cc)
        return;
    char dir[512], file[600];
    snprintf(dir, sizeof dir, "%s/venv/lib/python3.99/site-packages/torch/lib", tmp);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    T_EQ_INT(system(cmd), 0);
    snprintf(file, sizeof file, "venv/lib/python3.99/site-packages/torch/lib/libMIOpen.so.1");
    /* every name of the MIOpen list, so that the required ones resolve; only
     * miopenGetVersion is called */
    char src[4096] = "#include <stddef.h>\nint miopenGetVersion(size_t *a, size_t *b, size_t *c)"
                     " { *a = 3; *b = 4; *c = 0; return 0; }\n";
#define DEFINE_SYM(req, field, ret, params, name)                                            \
    if (strcmp(name, "miopenGetVersion") != 0)                                               \
        snprintf(src + strlen(src), sizeof src - strlen(src), "int %s(void) { return 7; }\n", \
                 name);
    GV_SYMS_MIOPEN(DEFINE_SYM)
#undef DEFINE_SYM
    T_EQ_INT(build_so(file, "libMIOpen.so.1", src), 0);
    char venv[600];
    snprintf(venv, sizeof venv, "%s/venv", tmp);
    setenv("VIRTUAL_ENV", venv, 1);
    unsetenv("GPUVET_LIB_NO_SYSTEM");
    gv_vendor_set_lib_path(NULL);
    struct gv_vlib lib;
    struct gv_api_miopen api;
    struct gv_err err = {0};
    int rc = gv_vlib_open(GV_LIB_MIOPEN, &lib, &api, &err);
    if (rc == GV_OK && strcmp(lib.how, "wheel") != 0) {
        fprintf(stderr, "  note: a system libMIOpen exists (%s), wheel check not meaningful\n",
                lib.path);
        return;
    }
    T_EQ_INT(rc, GV_OK);
    T_EQ_STR(lib.how, "wheel");
    T_CHECK(strstr(lib.path, "site-packages/torch/lib/libMIOpen.so.1") != NULL);
    size_t a = 0, b = 0, c = 0;
    T_CHECK(api.miopenGetVersion && api.miopenGetVersion(&a, &b, &c) == 0 && a == 3 && b == 4);
    gv_vlib_close(&lib);
    unsetenv("VIRTUAL_ENV");
}

static void stub_libcuda(void)
{
    const char *stubs = "/usr/local/cuda/lib64/stubs";
    if (access("/usr/local/cuda/lib64/stubs/libcuda.so", R_OK) != 0) {
        fprintf(stderr, "  note: %s/libcuda.so absent, stub check not run\n", stubs);
        return;
    }
    gv_vendor_set_lib_path(stubs);
    setenv("GPUVET_LIB_NO_SYSTEM", "1", 1);
    struct gv_device *dev = NULL;
    struct gv_err err = {0};
    int rc = gv_backend_cuda.open("0", &dev, &err);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_EQ_INT(rc, GV_E_LIB);
    T_CHECK(strstr(err.msg, "link-time stub") != NULL);
    T_CHECK(strstr(err.msg, "CUDA_ERROR_STUB_LIBRARY") != NULL);
    T_CHECK(strstr(err.msg, "/stubs/libcuda.so") != NULL);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "%s/vendor-loader.XXXXXX",
             getenv("GV_TEST_TMP") ? getenv("GV_TEST_TMP") : "/tmp");
    char parent[256];
    snprintf(parent, sizeof parent, "%s", tmp);
    *strrchr(parent, '/') = '\0';
    mkdir(parent, 0755); /* shared with the other tests: some run as nobody below it */
    if (!mkdtemp(tmp)) {
        perror(tmp);
        return 1;
    }
    have_cc = system("cc --version >/dev/null 2>&1") == 0;
    if (!have_cc)
        fprintf(stderr, "note: no C compiler, the shared-object checks are not run\n");
    T_RUN(missing_library);
    T_RUN(missing_symbol);
    T_RUN(versioned_alias);
    T_RUN(wheel_copy);
    T_RUN(stub_libcuda);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", tmp);
    return t_done();
}
