/* System probes through their C interface, on fixture roots written here:
 * the dpkg/rpm parsers' edge cases, the GPU package table, the environment
 * allowlist, os-release quoting and fallback, profile.d parsing, groups
 * under --root, and "not collected" where a running system is needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/envpolicy.h"
#include "env/pkgdb.h"
#include "env/probe.h"
#include "t.h"

static char root[512];

static void put(const char *rel, const char *text)
{
    char p[1024], dir[1024];
    snprintf(p, sizeof p, "%s%s", root, rel);
    snprintf(dir, sizeof dir, "%s", p);
    *strrchr(dir, '/') = '\0';
    gv_mkdirs(dir, 0755);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

static void rm(const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s%s", root, rel);
    unlink(p);
}

/* A writable environment array from literals (freed with free_env). */
static char **mkenv(const char *const *list)
{
    size_t n = 0;
    while (list[n])
        n++;
    char **e = calloc(n + 1, sizeof *e);
    for (size_t i = 0; i < n; i++)
        e[i] = strdup(list[i]);
    return e;
}

static void free_env(char **e)
{
    for (size_t i = 0; e[i]; i++)
        free(e[i]);
    free(e);
}

static const char *str(const json_t *o, const char *path)
{
    return gv_json_path_str(o, path);
}

static int is_true(const json_t *o, const char *path)
{
    return json_is_true(gv_json_path(o, path));
}

static void test_dpkg_parse(void)
{
    const char *text =
        "Package: rocm-core\r\n"
        "Status: hold ok installed\r\n"
        "Architecture: amd64\r\n"
        "Version: 6.0.0.60000-91~22.04\r\n"
        "Description: x\r\n"
        " Package: fake-from-continuation\r\n"
        "\r\n"
        "package: lower-case-keys\n"
        "status: install ok installed\n"
        "version: 1.0\n"
        " \t \n"                                   /* blank line made of blanks */
        "Package: gone\nStatus: purge ok not-installed\n\n"
        "Package: no-status\nVersion: 1\n\n"
        "Version: 2\nStatus: install ok installed\n\n" /* no Package */
        "Package: two words\nStatus: install ok installed\n\n"
        "Package: bad-status\nStatus: install ok\n\n"
        "Package: removed\nStatus: deinstall ok config-files\nVersion: 3\n"
        "Source: src-pkg (3)\nArchitecture: all"; /* no trailing newline */
    struct gv_pkg_list l;
    struct gv_err err = {0};
    T_EQ_INT(gv_dpkg_parse(text, strlen(text), &l, &err), 0);
    T_EQ_INT(l.n, 3);
    if (l.n == 3) {
        T_EQ_STR(l.items[0].name, "rocm-core");
        T_EQ_STR(l.items[0].version, "6.0.0.60000-91~22.04");
        T_EQ_STR(l.items[0].arch, "amd64");
        T_EQ_STR(l.items[0].state, "installed");
        T_EQ_INT(l.items[0].hold, 1);
        T_EQ_STR(l.items[1].name, "lower-case-keys");
        T_EQ_INT(l.items[1].hold, 0);
        T_CHECK(l.items[1].arch == NULL);
        T_EQ_STR(l.items[2].name, "removed");
        T_EQ_STR(l.items[2].state, "config-files");
        T_EQ_STR(l.items[2].source, "src-pkg");
    }
    T_EQ_INT(l.skipped, 4); /* no-status, no Package, two words, bad-status */
    gv_pkg_list_free(&l);

    /* an oversized field skips its stanza, nothing else */
    size_t big = GV_DPKG_FIELD_MAX + 10;
    char *t2 = malloc(big + 200);
    int n = sprintf(t2, "Package: a\nStatus: install ok installed\nVersion: ");
    memset(t2 + n, '9', big);
    n += (int)big;
    n += sprintf(t2 + n, "\n\nPackage: b\nStatus: install ok installed\nVersion: 1\n");
    T_EQ_INT(gv_dpkg_parse(t2, (size_t)n, &l, &err), 0);
    T_EQ_INT(l.n, 1);
    T_EQ_INT(l.skipped, 1);
    T_CHECK(strstr(l.first_skip, "longer") != NULL);
    gv_pkg_list_free(&l);
    free(t2);

    /* embedded NUL in a name: skipped, never truncated to a different name */
    const char t3[] = "Package: ab\0cd\nStatus: install ok installed\n";
    T_EQ_INT(gv_dpkg_parse(t3, sizeof t3 - 1, &l, &err), 0);
    T_EQ_INT(l.n, 0);
    gv_pkg_list_free(&l);
    T_EQ_INT(gv_dpkg_parse("", 0, &l, &err), 0);
    T_EQ_INT(l.n, 0);
    gv_pkg_list_free(&l);

    /* Status words dpkg does not write, and names dpkg does not allow, skip their
     * stanza (dpkg itself refuses the whole file); found by fuzz_dpkg: a state word
     * "not-installed" with a NUL byte after it was kept, as a package */
    const char t4[] = "Package:n:\nStatus: hold I e\n\nPackage: a\nStatus: hold , not-installed\0\n\n"
                      "Package: b\nStatus: install ok not-installed\0\n\n"
                      "Package: c\nStatus: install ok installed\n\n"
                      "Package: d\nStatus: hold ok half-configured\n\n"
                      "Package: -e\nStatus: install ok installed\n\n"
                      "Package: f\nStatus: install hold installed\n";
    T_EQ_INT(gv_dpkg_parse(t4, sizeof t4 - 1, &l, &err), 0);
    T_EQ_INT(l.n, 2);
    if (l.n == 2) {
        T_EQ_STR(l.items[0].name, "c");
        T_EQ_STR(l.items[1].name, "d");
        T_EQ_INT(l.items[1].hold, 1);
    }
    T_EQ_INT(l.skipped, 5);
    T_CHECK(strstr(l.first_skip, "Package") != NULL);
    gv_pkg_list_free(&l);
}

static void test_rpm_parse(void)
{
    const char *out = "rocm-core\t6.0.0-1.el9\tx86_64\trocm-core-6.0.0-1.el9.src.rpm\n"
                      "gpg-pubkey\t8483c65d-5ccc5b19\t(none)\t(none)\n"
                      "garbage line\n";
    struct gv_pkg_list l;
    struct gv_err err = {0};
    T_EQ_INT(gv_rpm_parse(out, strlen(out), &l, &err), 0);
    T_EQ_INT(l.n, 2);
    T_EQ_INT(l.skipped, 1);
    if (l.n == 2) {
        T_EQ_STR(l.items[0].version, "6.0.0-1.el9");
        T_EQ_STR(l.items[0].source, "rocm-core-6.0.0-1.el9.src.rpm");
        T_CHECK(l.items[1].source == NULL);
    }
    gv_pkg_list_free(&l);
}

static void test_gpu_packages(void)
{
    const char *yes[] = {"rocm-core", "rocminfo", "rocm-smi-lib", "hip-runtime-amd", "hipcc",
                         "libamdhip64-5", "libhsa-runtime64-1", "librocblas0", "libhipblaslt0",
                         "miopen-hip", "rccl", "amdgpu-dkms", "amd-smi-lib", "libamd-comgr2",
                         "nvidia-driver-550", "nvidia-dkms-550", "cuda-toolkit-12-4",
                         "libcuda1", "libcublas12", "libcublaslt12", "libcudnn9-cuda-12",
                         "libnccl2", "libnvidia-ml1", "libnvrtc12", "libdrm-amdgpu1"};
    const char *no[] = {"cudatext", "hipercontracer", "rocksdb-tools", "hsakmtx", "libc6",
                        "bash", "amdgpuxyz", "nvidiafoo", "librocksdb8", "xserver-xorg-video-amdgpu"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!gv_pkg_is_gpu(yes[i])) {
            fprintf(stderr, "  not marked GPU: %s\n", yes[i]);
            T_CHECK(0);
        }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (gv_pkg_is_gpu(no[i])) {
            fprintf(stderr, "  marked GPU: %s\n", no[i]);
            T_CHECK(0);
        }
}

static void test_env_policy(void)
{
    T_CHECK(gv_env_recordable("HSA_OVERRIDE_GFX_VERSION", 24));
    T_CHECK(gv_env_recordable("PATH", 4));
    T_CHECK(!gv_env_recordable("PATHX", 5));
    T_CHECK(!gv_env_recordable("HSA_", 4)); /* a prefix alone is not a name */
    T_CHECK(!gv_env_recordable("HF_TOKEN", 8));
    T_CHECK(gv_env_allowed("HSA_AUTH_TOKEN", 14) && gv_env_secret("HSA_AUTH_TOKEN", 14));
    T_CHECK(gv_env_secret("ROCM_api_key", 12));
    T_CHECK(gv_env_secret("CUDA_PASSWD", 11));
    T_CHECK(gv_env_secret("NCCL_CREDENTIALS", 16));
    T_CHECK(!gv_env_secret("CUDA_VISIBLE_DEVICES", 20));
}

static void test_environment_probe(void)
{
    static const char *const lit[] = {"HSA_OVERRIDE_GFX_VERSION=10.3.0", "HF_TOKEN=hf_secretvalue1",
                    "HSA_AUTH_TOKEN=secretvalue2", "PATH=/usr/bin", "HOME=/root",
                    "ROCM_PATH=\xff\xfe/opt", "NOEQUALS", "LD_LIBRARY_PATH=/opt/rocm/lib", NULL};
    char **envp = mkenv(lit);
    put("/etc/profile.d/rocm.sh",
        "# comment ROCM_PATH=/nope\n"
        "export ROCM_PATH=\"/opt/rocm-6.0.0\" HIP_PLATFORM='amd'\n"
        "if true; then\n  PATH=/opt/rocm/bin:$PATH; export PATH\nfi\n"
        "declare -x ROCM_API_KEY=topsecret3\nexport HOME=/x UNRELATED=y\n");
    put("/etc/profile.d/other.sh", "export FOO=bar\n");
    put("/etc/profile.d/notsh.txt", "export ROCM_PATH=/ignored\n");
    put("/etc/environment", "CUDA_HOME=\"/usr/local/cuda\"\n");
    struct gv_probe_ctx ctx = {.root = root, .live = 0, .envp = envp};
    json_t *s = gv_probe_environment(&ctx);
    char *dump = gv_json_dump(s);
    T_CHECK(dump != NULL);
    if (getenv("T_VERBOSE"))
        fputs(dump, stderr);
    T_EQ_STR(str(s, "variables.HSA_OVERRIDE_GFX_VERSION"), "10.3.0");
    T_EQ_STR(str(s, "variables.PATH"), "/usr/bin");
    T_EQ_STR(str(s, "variables.ROCM_PATH"), "?" "?/opt"); /* invalid UTF-8 replaced */
    T_EQ_INT(json_object_size(json_object_get(s, "variables")), 4);
    T_EQ_INT(json_array_size(json_object_get(s, "withheld")), 1);
    T_EQ_STR(json_string_value(json_array_get(json_object_get(s, "withheld"), 0)), "HSA_AUTH_TOKEN");
    T_CHECK(dump && !strstr(dump, "secretvalue") && !strstr(dump, "topsecret") &&
            !strstr(dump, "HF_TOKEN") && !strstr(dump, "\"HOME\"") && !strstr(dump, "UNRELATED") &&
            !strstr(dump, "/ignored") && !strstr(dump, "/nope") && !strstr(dump, "FOO"));
    json_t *pd = json_object_get(s, "profile_d");
    T_EQ_INT(json_array_size(pd), 2);
    T_EQ_STR(str(json_array_get(pd, 0), "path"), "/etc/environment");
    T_EQ_STR(str(json_array_get(pd, 0), "sets.CUDA_HOME"), "/usr/local/cuda");
    json_t *rocm = json_array_get(pd, 1);
    T_EQ_STR(str(rocm, "path"), "/etc/profile.d/rocm.sh");
    T_EQ_STR(str(rocm, "sets.ROCM_PATH"), "/opt/rocm-6.0.0");
    T_EQ_STR(str(rocm, "sets.HIP_PLATFORM"), "amd");
    T_EQ_STR(str(rocm, "sets.PATH"), "/opt/rocm/bin:$PATH");
    T_EQ_STR(json_string_value(json_array_get(json_object_get(rocm, "withheld"), 0)), "ROCM_API_KEY");
    free(dump);
    json_decref(s);
    rm("/etc/profile.d/rocm.sh");
    rm("/etc/profile.d/other.sh");
    rm("/etc/profile.d/notsh.txt");
    rm("/etc/environment");
    free_env(envp);
}

static void test_host_probe(void)
{
    put("/usr/lib/os-release", "ID=fedora\nVERSION_ID=40\n"
                               "PRETTY_NAME=\"Fedora \\\"Linux\\\" 40\"\nVERSION_CODENAME=\"\"\n");
    struct gv_probe_ctx ctx = {.root = root, .live = 0};
    json_t *h = gv_probe_host(&ctx);
    T_CHECK(is_true(h, "os.collected"));
    T_EQ_STR(str(h, "os.source"), "/usr/lib/os-release");
    T_EQ_STR(str(h, "os.id"), "fedora");
    T_EQ_STR(str(h, "os.pretty_name"), "Fedora \"Linux\" 40");
    T_CHECK(gv_json_path(h, "os.codename") == NULL); /* empty means absent */
    T_CHECK(json_is_false(gv_json_path(h, "kernel.collected")));
    T_CHECK(strstr(str(h, "kernel.reason"), "--root") != NULL);
    T_CHECK(json_is_false(gv_json_path(h, "cpu.collected")));
    T_CHECK(json_is_false(gv_json_path(h, "container.collected")));
    json_decref(h);
    put("/etc/os-release", "ID='debian'\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\n");
    h = gv_probe_host(&ctx);
    T_EQ_STR(str(h, "os.source"), "/etc/os-release");
    T_EQ_STR(str(h, "os.id"), "debian");
    T_EQ_STR(str(h, "os.codename"), "bookworm");
    json_decref(h);
}

static void test_not_live(void)
{
    put("/etc/group", "root:x:0:\nvideo:x:44:u\n");
    struct gv_probe_ctx ctx = {.root = root, .live = 0, .pid = 1};
    json_t *p = gv_probe_permissions(&ctx);
    T_CHECK(is_true(p, "collected"));
    T_CHECK(is_true(p, "video_group.exists"));
    T_EQ_INT(json_integer_value(gv_json_path(p, "video_group.gid")), 44);
    T_CHECK(json_is_false(gv_json_path(p, "render_group.exists")));
    T_CHECK(gv_json_path(p, "video_group.member") == NULL);
    T_CHECK(json_object_get(p, "user") == NULL && json_object_get(p, "devices") == NULL);
    T_CHECK(str(p, "not_collected.user") != NULL && str(p, "not_collected.devices") != NULL);
    json_decref(p);
    json_t *g = gv_probe_gpus(&ctx);
    T_CHECK(json_is_false(json_object_get(g, "collected")));
    T_CHECK(json_object_get(g, "devices") == NULL); /* never an empty list */
    json_decref(g);
    json_t *pr = gv_probe_process(&ctx);
    T_CHECK(json_is_false(json_object_get(pr, "collected")));
    json_decref(pr);
    json_t *pk = gv_probe_packages(&ctx);
    T_CHECK(json_is_false(json_object_get(pk, "collected")));
    T_CHECK(json_object_get(pk, "count") == NULL);
    json_decref(pk);
}

static void test_loader_env(void)
{
    static const char *const lit[] = {"LD_PRELOAD=/a/libamdhip64.so.6 /b.so:/c.so",
                                      "LD_LIBRARY_PATH=/x:;/y", NULL};
    char **envp = mkenv(lit);
    struct gv_probe_ctx ctx = {.root = root, .live = 0, .envp = envp};
    json_t *s = gv_probe_loader(&ctx, NULL);
    json_t *pre = json_object_get(s, "ld_preload"), *llp = json_object_get(s, "ld_library_path");
    T_EQ_INT(json_array_size(pre), 3);
    T_EQ_STR(json_string_value(json_array_get(pre, 2)), "/c.so");
    T_EQ_INT(json_array_size(llp), 3);
    T_EQ_STR(json_string_value(json_array_get(llp, 1)), "");
    T_EQ_STR(json_string_value(json_array_get(json_object_get(s, "search_dirs"), 0)), "/x");
    T_EQ_STR(json_string_value(json_array_get(json_object_get(s, "search_dirs"), 1)), "/y");
    json_t *r = json_object_get(json_object_get(s, "resolved"), "libcuda.so.1");
    T_CHECK(r && json_is_false(json_object_get(r, "found")));
    json_decref(s);
    free_env(envp);
}

int main(void)
{
    const char *tmp = getenv("GV_TEST_TMP");
    char base[400];
    snprintf(base, sizeof base, "%s", tmp ? tmp : "/tmp");
    gv_mkdirs(base, 0755);
    snprintf(root, sizeof root, "%s/test_env_system.XXXXXX", base);
    if (!mkdtemp(root))
        return 1;
    T_RUN(test_dpkg_parse);
    T_RUN(test_rpm_parse);
    T_RUN(test_gpu_packages);
    T_RUN(test_env_policy);
    T_RUN(test_environment_probe);
    T_RUN(test_host_probe);
    T_RUN(test_not_live);
    T_RUN(test_loader_env);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return t_done();
}
