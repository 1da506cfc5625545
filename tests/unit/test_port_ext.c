/* gv_port_extensions (src/port/ext.c) on a root with real device code: the
 * offload bundles of tests/fixtures/make-devcode.sh (clang HIP, attached to
 * host .so files) laid out as extension modules of a dist-packages
 * directory, judged against targets they carry and targets they lack. The
 * expected targets are the ones the fixture build asked for. */
#include <unistd.h>

#include "devcode.h"
#include "kb/port_ext.h"
#include "port/hipcc.h"
#include "port/port.h"
#include "port_t.h"

static char dc[512], tmp[512], root[600], site[700];

/* Findings of a scan of root against list. */
static json_t *scan(const char *list, json_t *stats)
{
    char names[8][32];
    struct gv_port_targets t;
    pt_targets(&t, names, list);
    json_t *f = json_array();
    struct gv_err err = {0};
    int rc = gv_port_extensions(root, &t, f, stats, &err);
    if (rc)
        fprintf(stderr, "  gv_port_extensions: %s\n", err.msg);
    T_EQ_INT(rc, 0);
    return f;
}

/* The finding of rule for the file whose path ends with name, or NULL. */
static json_t *finding(json_t *f, const char *name, const char *rule)
{
    return pt_find(f, name, "rule", rule, -1);
}

static int count_rule(json_t *f, const char *rule)
{
    int n = 0;
    size_t i;
    json_t *v;
    json_array_foreach(f, i, v)
        n += strcmp(json_string_value(json_object_get(v, "rule")), rule) == 0;
    return n;
}

/* "a b" of a finding's targets. */
static void targets_str(json_t *finding, char *out, size_t outsz)
{
    out[0] = '\0';
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(finding, "targets"), i, v)
        snprintf(out + strlen(out), outsz - strlen(out), "%s%s", i ? " " : "",
                 json_string_value(v));
}

#define EXT ".cpython-313-x86_64-linux-gnu.so"

static void make_root(void)
{
    snprintf(root, sizeof root, "%s/root", tmp);
    snprintf(site, sizeof site, "%s/usr/lib/python3/dist-packages", root);
    T_EQ_INT(tl_sh("mkdir -p '%s/sub/pkg' '%s/usr/bin'", site, root), 0);
    /* gfx90a:xnack-, gfx942, gfx1100, plain bundle */
    T_EQ_INT(tl_sh("cp '%s/amd/libhip-plain.so' '%s/three" EXT "'", dc, site), 0);
    /* gfx942 and two more in a compressed bundle, two levels down */
    T_EQ_INT(tl_sh("cp '%s/amd/libhip-v2-zstd.so' '%s/sub/pkg/_C" EXT "'", dc, site), 0);
    /* gfx908 only */
    T_EQ_INT(tl_sh("objcopy --add-section .hip_fatbin='%s/amd/bundle-gfx908.bin' "
                   "--set-section-flags .hip_fatbin=alloc,readonly '%s/amd/base.so' "
                   "'%s/one908" EXT "'",
                   dc, dc, site),
             0);
    /* no device code, no GPU runtime */
    T_EQ_INT(tl_sh("cp '%s/amd/base.so' '%s/cpuonly" EXT "'", dc, site), 0);
    /* no device code, links the HIP runtime (a stand-in with its SONAME) */
    T_EQ_INT(tl_sh("cd '%s' && printf 'int hipInit(unsigned f){return (int)f;}\\n' >hip.c && "
                   "cc -shared -fPIC -o libamdhip64.so -Wl,-soname,libamdhip64.so.6 hip.c && "
                   "printf 'int hipInit(unsigned);int f(void){return hipInit(0);}\\n' >e.c && "
                   "cc -shared -fPIC -o '%s/linkhip" EXT "' e.c -L. -lamdhip64",
                   tmp, site),
             0);
    /* not ELF at all */
    T_EQ_INT(tl_sh("printf 'INPUT(-lfoo)\\n' >'%s/script.so'", site), 0);
    /* links are not followed: a link to a module, one out of the root */
    T_EQ_INT(tl_sh("ln -s one908" EXT " '%s/alias" EXT "' && ln -s '%s/amd' '%s/outside'",
                   site, dc, site),
             0);
}

static void test_missing_target(void)
{
    json_t *stats = json_object();
    json_t *f = scan("gfx1100", stats);
    json_t *one = finding(f, "/one908" EXT, "ext-no-target");
    T_CHECK(one != NULL);
    if (one) {
        char tg[128];
        targets_str(one, tg, sizeof tg);
        T_EQ_STR(tg, "gfx1100");
        T_EQ_STR(json_string_value(json_object_get(one, "severity")), "error");
        const char *msg = json_string_value(json_object_get(one, "message"));
        T_CHECK(strstr(msg, "gfx908") != NULL);
        T_CHECK(strstr(msg, "hipErrorNoBinaryForGpu: Unable to find code object for all "
                            "current devices!") != NULL);
        T_CHECK(strstr(json_string_value(json_object_get(one, "fix")), "PYTORCH_ROCM_ARCH") !=
                NULL);
        T_EQ_STR(json_string_value(json_object_get(one, "file")),
                 "/usr/lib/python3/dist-packages/one908" EXT);
    }
    /* three carries gfx1100; the nested one carries it too */
    T_CHECK(finding(f, "/three" EXT, "ext-no-target") == NULL);
    T_CHECK(finding(f, "/_C" EXT, "ext-no-target") == NULL);
    T_EQ_INT(count_rule(f, "ext-no-target"), 1);
    /* the module that links HIP without device code: a note; the CPU one: nothing */
    json_t *note = finding(f, "/linkhip" EXT, "ext-no-gpu-code");
    T_CHECK(note != NULL);
    if (note)
        T_EQ_STR(json_string_value(json_object_get(note, "severity")), "note");
    T_CHECK(finding(f, "/cpuonly" EXT, "ext-no-gpu-code") == NULL);
    T_CHECK(finding(f, "/script.so", "ext-unreadable") != NULL);
    /* the link was not followed: one908 judged once, nothing from outside */
    T_CHECK(finding(f, "/alias" EXT, "ext-no-target") == NULL);
    T_EQ_INT(json_integer_value(json_object_get(stats, "extension_files")), 6);
    T_EQ_INT(json_integer_value(json_object_get(stats, "extension_files_hip")), 3);
    T_EQ_INT(json_integer_value(json_object_get(stats, "extension_files_cuda")), 0);
    json_decref(f);
    json_decref(stats);
}

static void test_several_targets(void)
{
    json_t *f = scan("gfx90a,gfx1030,sm_90", NULL);
    char tg[128];
    json_t *three = finding(f, "/three" EXT, "ext-no-target");
    T_CHECK(three != NULL);
    if (three) {
        targets_str(three, tg, sizeof tg);
        T_EQ_STR(tg, "gfx1030"); /* gfx90a:xnack- runs on gfx90a; sm_90 is not AMD */
    }
    json_t *one = finding(f, "/one908" EXT, "ext-no-target");
    T_CHECK(one != NULL);
    if (one) {
        targets_str(one, tg, sizeof tg);
        T_EQ_STR(tg, "gfx90a gfx1030");
    }
    json_decref(f);
}

static void test_covered(void)
{
    json_t *f = scan("gfx942", NULL);
    T_EQ_INT(count_rule(f, "ext-no-target"), 1); /* only one908 */
    json_decref(f);
    f = scan("sm_90", NULL); /* no AMD target: nothing to judge */
    T_EQ_INT(count_rule(f, "ext-no-target") + count_rule(f, "ext-cuda-only"), 0);
    json_decref(f);
}

static void test_cuda_only(void)
{
    char made[600];
    snprintf(made, sizeof made, "%s/libtorch_cuda.so", dc);
    if (access(made, R_OK) != 0) {
        fprintf(stderr, "  skipped part: no CUDA fatbin (make-devcode.sh needs nvcc)\n");
        return;
    }
    T_EQ_INT(tl_sh("cp '%s' '%s/cudaonly" EXT "'", made, site), 0);
    json_t *f = scan("gfx1100", NULL);
    T_CHECK(finding(f, "/cudaonly" EXT, "ext-cuda-only") != NULL);
    json_decref(f);
    T_EQ_INT(tl_sh("rm '%s/cudaonly" EXT "'", site), 0);
}

static void test_generic_and_features(void)
{
    T_EQ_INT(kb_code_object_runs_on("gfx90a:xnack-", "gfx90a"), 1);
    T_EQ_INT(kb_code_object_runs_on("gfx90a", "gfx90a:sramecc+:xnack+"), 1);
    T_EQ_INT(kb_code_object_runs_on("gfx90a", "gfx908"), 0);
    T_EQ_INT(kb_code_object_runs_on("gfx1100", "gfx110"), 0);
    T_EQ_INT(kb_code_object_runs_on("gfx11-generic", "gfx1101"), 1);
    T_EQ_INT(kb_code_object_runs_on("gfx11-generic", "gfx1030"), 0);
    T_EQ_INT(kb_code_object_runs_on("gfx10-3-generic", "gfx1030"), 1);
    T_EQ_INT(kb_code_object_runs_on("gfx9-4-generic", "gfx942"), 1);
    T_EQ_INT(kb_gpu_runtime_lib("libamdhip64.so.6"), 1);
    T_EQ_INT(kb_gpu_runtime_lib("libamdhip64_fake.so"), 0);
    T_EQ_INT(kb_gpu_runtime_lib("libc.so.6"), 0);
}

/* The compile check's reader of clang's lines (hipcc.c). */
static void test_diagnostic_lines(void)
{
    struct gv_port_diag d;
    char a[] = "/tmp/s0/k.h:27:14: error: use of undeclared identifier 'x'; did: you";
    T_EQ_INT(gv_port_split_diagnostic(a, &d), 0);
    T_EQ_STR(d.file, "/tmp/s0/k.h");
    T_EQ_INT(d.line, 27);
    T_EQ_INT(d.column, 14);
    T_EQ_STR(d.severity, "error");
    T_EQ_STR(d.message, "use of undeclared identifier 'x'; did: you");
    char b[] = "a:b.cu:1:2: fatal error: 'x.h' file not found";
    T_EQ_INT(gv_port_split_diagnostic(b, &d), 0);
    T_EQ_STR(d.file, "a:b.cu");
    T_EQ_STR(d.severity, "error");
    char c[] = "k.h:80:22: warning: implicit conversion [-Wshorten-64-to-32]";
    T_EQ_INT(gv_port_split_diagnostic(c, &d), 0);
    T_EQ_STR(d.severity, "warning");
    char e[] = "k.h:3:4: note: in instantiation of 'f<int>' requested here";
    T_EQ_INT(gv_port_split_diagnostic(e, &d), 0);
    T_EQ_STR(d.severity, "note");
    T_EQ_INT(d.line, 3);
    char n1[] = "In file included from /tmp/check.hip:4:", n2[] = ":1:1: error: x",
         n3[] = "b.cu::1: error: y", n4[] = "c.cu:1x:1: error: z",
         n5[] = "clang++-17: warning: argument unused during compilation",
         n6[] = "d.cu:1234567890:1: error: w";
    T_EQ_INT(gv_port_split_diagnostic(n1, &d), -1);
    T_EQ_INT(gv_port_split_diagnostic(n2, &d), -1);
    T_EQ_INT(gv_port_split_diagnostic(n3, &d), -1);
    T_EQ_INT(gv_port_split_diagnostic(n4, &d), -1);
    T_EQ_INT(gv_port_split_diagnostic(n5, &d), -1);
    T_EQ_INT(gv_port_split_diagnostic(n6, &d), -1);
}

static void test_bad_calls(void)
{
    struct gv_port_targets t = {0};
    struct gv_err err = {0};
    T_EQ_INT(gv_port_extensions(root, &t, NULL, NULL, &err), GV_E_USAGE);
    /* a root without Python: no environments, no findings, no error */
    json_t *f = json_array(), *stats = json_object();
    char empty[700];
    snprintf(empty, sizeof empty, "%s/empty", tmp);
    T_EQ_INT(tl_sh("mkdir -p '%s'", empty), 0);
    T_EQ_INT(gv_port_extensions(empty, &t, f, stats, &err), 0);
    T_EQ_INT(json_array_size(f), 0);
    T_EQ_INT(json_integer_value(json_object_get(stats, "python_environments")), 0);
    json_decref(f);
    json_decref(stats);
}

int main(void)
{
    if (!tl_find_llvm((char[16]){0}, 16) || !tl_have("objcopy") || !tl_have("cc")) {
        fprintf(stderr, "skipped: needs clang-NN, ld.lld-NN, clang-offload-bundler-NN (NN >= "
                        "17; Debian: clang-19 lld-19 clang-tools-19), objcopy and cc\n");
        return 77;
    }
    int made = dc_build("hip", dc, sizeof dc);
    if (made < 0)
        return 1;
    if (made == 0)
        return 77;
    tl_tmpdir("test_port_ext", tmp, sizeof tmp);
    make_root();
    T_RUN(test_missing_target);
    T_RUN(test_several_targets);
    T_RUN(test_covered);
    T_RUN(test_cuda_only);
    T_RUN(test_generic_and_features);
    T_RUN(test_diagnostic_lines);
    T_RUN(test_bad_calls);
    return t_done();
}
