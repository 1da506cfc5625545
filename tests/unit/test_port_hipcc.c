/* gv_port_compile (src/port/hipcc.c) and gv_port_extensions (src/port/ext.c)
 * on the trixie-hipcc fixture root (tests/fixtures/debian-rocm.sh): Debian's
 * real hipcc 5.7.1 compiling for gfx90a and gfx1100 without a GPU (and sid's
 * hipcc 7.0.2 with HIP 6.4 headers in sid-hipcc), and the
 * extension module its own hipcc built for gfx90a only. The expected
 * diagnostics are clang's own wording for the lines written below. */
#include <unistd.h>

#include "port/port.h"
#include "port_t.h"
#include "t.h"
#include "tools.h"

static char root[1024], sid[1024], tmp[512], src[700];

/* The finding of severity on line of the file whose path ends with name. */
static json_t *at_line(json_t *f, const char *name, long line, const char *severity)
{
    return pt_find(f, name, "severity", severity, line);
}

static void write_sources(void)
{
    snprintf(src, sizeof src, "%s/src", tmp);
    T_EQ_INT(tl_sh("mkdir -p '%s/sub'", src), 0);
    /* line 4: a *_sync call HIP 5.7 does not have; line 9: a ballot kept in
     * 32 bits; kernel.h included by a relative path */
    FILE *f = fopen(strcat(strcpy((char[800]){0}, src), "/sub/warp.hip"), "w");
    T_CHECK(f != NULL);
    if (!f)
        return;
    fputs("#include <hip/hip_runtime.h>\n"
          "#include \"kernel.h\"\n"
          "__global__ void r(int *o, int v) {\n"
          "    v += __shfl_down_sync(0xffffffff, v, 16);\n"
          "    o[threadIdx.x] = v;\n"
          "}\n"
          "__global__ void b(int *o, int p) {\n"
          "    unsigned long long keep = __ballot(p);\n"
          "    unsigned votes = __ballot(p);\n"
          "    o[threadIdx.x] = __popc(votes) + (int)(keep & 1);\n"
          "}\n",
          f);
    fclose(f);
    /* an error in a header beside the source: reported on the header */
    T_EQ_INT(tl_sh("printf '#define GV_KERNEL_H 1\\nstatic int gv_bad = gv_undeclared;\\n' "
                   ">'%s/sub/kernel.h'",
                   src),
             0);
    /* a clean file and a file that is not a HIP source (not compiled) */
    T_EQ_INT(tl_sh("printf '#include <hip/hip_runtime.h>\\n__global__ void k(int *o) "
                   "{ o[threadIdx.x] = warpSize; }\\n' >'%s/clean.hip' && "
                   "printf 'this is not C\\n' >'%s/notes.txt'",
                   src, src),
             0);
}

static void test_compile(void)
{
    char names[8][32];
    struct gv_port_targets t;
    pt_targets(&t, names, "gfx90a,gfx1100,sm_90");
    json_t *f = json_array(), *stats = json_object();
    struct gv_err err = {0};
    const char *paths[] = {src};
    char *before = tl_capture("ls -A '%s/tmp'", root);
    int rc = gv_port_compile(root, paths, 1, &t, f, stats, &err);
    char *after = tl_capture("ls -A '%s/tmp'", root);
    if (rc)
        fprintf(stderr, "  gv_port_compile: %s\n", err.msg);
    T_EQ_INT(rc, 0);
    json_t *sync = at_line(f, "/sub/warp.hip", 4, "error");
    T_CHECK(sync != NULL);
    if (sync) {
        T_EQ_STR(json_string_value(json_object_get(sync, "rule")), "compile");
        T_CHECK(strstr(json_string_value(json_object_get(sync, "message")),
                       "use of undeclared identifier '__shfl_down_sync'") != NULL);
        T_EQ_INT(json_integer_value(json_object_get(sync, "column")), 10);
        json_t *tg = json_object_get(sync, "targets");
        T_EQ_INT(json_array_size(tg), 2); /* both AMD targets, sm_90 not compiled */
    }
    json_t *ballot = at_line(f, "/sub/warp.hip", 9, "warning");
    T_CHECK(ballot != NULL);
    if (ballot)
        T_CHECK(strstr(json_string_value(json_object_get(ballot, "message")),
                       "-Wshorten-64-to-32") != NULL);
    T_CHECK(at_line(f, "/sub/warp.hip", 8, "warning") == NULL);
    json_t *hdr = at_line(f, "/sub/kernel.h", 2, "error");
    T_CHECK(hdr != NULL);
    if (hdr)
        T_EQ_STR(json_string_value(json_object_get(hdr, "file")),
                 strcat(strcpy((char[800]){0}, src), "/sub/kernel.h"));
    T_CHECK(at_line(f, "/clean.hip", 1, "error") == NULL);
    T_EQ_INT(json_integer_value(json_object_get(stats, "compile_files")), 2);
    T_EQ_INT(json_integer_value(json_object_get(stats, "compile_runs")), 2);
    T_EQ_STR(json_string_value(json_object_get(stats, "compiler")), "/usr/bin/hipcc");
    /* nothing left behind in the root */
    T_EQ_STR(after, before);
    free(before);
    free(after);
    json_decref(f);
    json_decref(stats);
}

/* HIP 6.4's headers (sid's hipcc 7.0.2): the *_sync functions exist and take
 * 64-bit masks only; the static_assert fires inside the header and is put on
 * the user's line by the instantiation note. */
static void test_compile_hip64(void)
{
    char names[8][32], dir[800];
    struct gv_port_targets t;
    pt_targets(&t, names, "gfx90a,gfx1100");
    snprintf(dir, sizeof dir, "%s/hip64", tmp);
    T_EQ_INT(tl_sh("mkdir -p '%s' && printf '#include <hip/hip_runtime.h>\\n"
                   "__global__ void r(int *o, int v) {\\n"
                   "    v += __shfl_down_sync(0xffffffff, v, 16);\\n"
                   "    v += __shfl_down_sync(__activemask(), v, warpSize / 2);\\n"
                   "    o[threadIdx.x] = v;\\n}\\n' >'%s/m.hip'",
                   dir, dir),
             0);
    json_t *f = json_array(), *stats = json_object();
    struct gv_err err = {0};
    const char *paths[] = {dir};
    int rc = gv_port_compile(sid, paths, 1, &t, f, stats, &err);
    if (rc)
        fprintf(stderr, "  gv_port_compile: %s\n", err.msg);
    T_EQ_INT(rc, 0);
    json_t *mask = at_line(f, "/m.hip", 3, "error");
    T_CHECK(mask != NULL);
    if (mask) {
        const char *msg = json_string_value(json_object_get(mask, "message"));
        T_CHECK(strstr(msg, "The mask must be a 64-bit integer") != NULL);
        T_CHECK(strstr(msg, "amd_warp_sync_functions.h") != NULL);
        T_EQ_INT(json_array_size(json_object_get(mask, "targets")), 2);
    }
    T_CHECK(at_line(f, "/m.hip", 4, "error") == NULL);
    T_EQ_INT(json_integer_value(json_object_get(stats, "compile_errors")), 1);
    json_decref(f);
    json_decref(stats);
}

static void test_no_compiler(void)
{
    char names[8][32];
    struct gv_port_targets t;
    pt_targets(&t, names, "gfx90a");
    json_t *f = json_array();
    struct gv_err err = {0};
    const char *paths[] = {src};
    T_EQ_INT(gv_port_compile(tmp, paths, 1, &t, f, NULL, &err), GV_E_NOTFOUND);
    T_CHECK(strstr(err.msg, "no HIP compiler") != NULL);
    json_decref(f);
}

static void test_fixture_extension(void)
{
    char names[8][32];
    struct gv_port_targets t;
    json_t *f = json_array();
    struct gv_err err = {0};
    pt_targets(&t, names, "gfx1100");
    T_EQ_INT(gv_port_extensions(root, &t, f, NULL, &err), 0);
    json_t *e = json_array_get(f, 0);
    T_EQ_INT(json_array_size(f), 1);
    if (e) {
        T_EQ_STR(json_string_value(json_object_get(e, "file")),
                 "/usr/lib/python3/dist-packages/gvext_hip.cpython-313-x86_64-linux-gnu.so");
        T_EQ_STR(json_string_value(json_object_get(e, "rule")), "ext-no-target");
        T_CHECK(strstr(json_string_value(json_object_get(e, "message")), "gfx90a") != NULL);
    }
    json_decref(f);
    f = json_array();
    pt_targets(&t, names, "gfx90a");
    T_EQ_INT(gv_port_extensions(root, &t, f, NULL, &err), 0);
    T_EQ_INT(json_array_size(f), 0);
    json_decref(f);
}

/* The root of a fixture of tests/fixtures/debian-rocm.sh (built when missing). */
static int fixture(const char *name, char *out, size_t outsz)
{
    const char *gsrc = getenv("GV_SRC");
    char *path = tl_capture("bash '%s/tests/fixtures/debian-rocm.sh' %s",
                            gsrc && *gsrc ? gsrc : ".", name);
    if (!path || !*path) {
        fprintf(stderr, "FAIL: the %s fixture could not be built\n", name);
        free(path);
        return -1;
    }
    snprintf(out, outsz, "%.*s", (int)strcspn(path, "\n"), path);
    free(path);
    return 0;
}

int main(void)
{
    if (geteuid() != 0 || !tl_have("debootstrap")) {
        fprintf(stderr, "skipped: the trixie-hipcc fixture needs root and debootstrap\n");
        return 77;
    }
    if (fixture("trixie-hipcc", root, sizeof root) || fixture("sid-hipcc", sid, sizeof sid))
        return 1;
    tl_tmpdir("test_port_hipcc", tmp, sizeof tmp);
    write_sources();
    T_RUN(test_compile);
    T_RUN(test_compile_hip64);
    T_RUN(test_no_compiler);
    T_RUN(test_fixture_extension);
    return t_done();
}
