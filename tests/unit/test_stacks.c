/* Unit tests of the helpers behind the stacks/libraries/python probes: the
 * accelerated SHA-256 file hash (against the portable implementation and the
 * FIPS 180-2 test vectors), the HIP -> ROCm release table, versions in file
 * names, and the Python text parsers. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/probe.h"
#include "base/sha256.h"
#include "env/filehash.h"
#include "env/stackscan.h"
#include "kb/hip_versions.h"
#include "t.h"

static int write_tmp(const void *data, size_t len, char *path, size_t pathsz)
{
    snprintf(path, pathsz, "/tmp/gv-test-hash-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    int ok = write(fd, data, len) == (ssize_t)len;
    close(fd);
    return ok ? 0 : -1;
}

/* want NULL: sha256sum (coreutils) is the oracle. */
static void file_hash_is(const void *data, size_t len, const char *want)
{
    char path[64], hex[65], cmd[128], oracle[65] = "";
    struct gv_err err = {0};
    T_CHECK(write_tmp(data, len, path, sizeof path) == 0);
    T_EQ_INT(gv_sha256_file_hex(path, hex, &err), 0);
    if (!want) {
        snprintf(cmd, sizeof cmd, "sha256sum %s", path);
        FILE *p = popen(cmd, "r");
        if (p) {
            if (fscanf(p, "%64s", oracle) != 1)
                oracle[0] = '\0';
            pclose(p);
        }
        want = oracle;
    }
    T_EQ_STR(hex, want);
    unlink(path);
}

static void test_vectors(void)
{
    file_hash_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    file_hash_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    file_hash_is(two, strlen(two),
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* Every tail length around the 64-byte block and the 56-byte padding limit,
 * and lengths that cross the 1 MiB read buffer, against coreutils' sha256sum
 * (the file path uses the SHA extensions where the CPU has them). */
static void test_against_portable(void)
{
    size_t big = (1u << 20) + 4099;
    uint8_t *buf = malloc(big);
    T_CHECK(buf != NULL);
    if (!buf)
        return;
    uint32_t x = 12345;
    for (size_t i = 0; i < big; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    size_t lens[300];
    size_t n = 0;
    for (size_t l = 0; l < 260; l++)
        lens[n++] = l;
    lens[n++] = 1u << 20;
    lens[n++] = (1u << 20) - 1;
    lens[n++] = big;
    for (size_t i = 0; i < n; i++)
        file_hash_is(buf, lens[i], NULL);
    fprintf(stderr, "  (SHA extensions in use: %s)\n", gv_sha256_accelerated() ? "yes" : "no");
    free(buf);
}

static void test_parallel(void)
{
    char paths[5][64];
    const char *data[5] = {"a", "abc", "", "hello world", "xyz"};
    struct gv_hash_job jobs[6] = {{0}};
    for (int i = 0; i < 5; i++) {
        T_CHECK(write_tmp(data[i], strlen(data[i]), paths[i], sizeof paths[i]) == 0);
        jobs[i].path = paths[i];
    }
    jobs[5].path = "/nonexistent/gpuvet-hash-test";
    gv_filehash_run(jobs, 6, 2);
    for (int i = 0; i < 5; i++) {
        char want[65];
        gv_sha256_buf_hex(data[i], strlen(data[i]), want);
        T_EQ_INT(jobs[i].rc, 0);
        T_EQ_STR(jobs[i].hex, want);
        unlink(paths[i]);
    }
    T_CHECK(jobs[5].rc != 0);
    T_CHECK(strstr(jobs[5].err, "/nonexistent/gpuvet-hash-test") != NULL);
}

static void test_hip_table(void)
{
    char r[32];
    /* rocm-facts.md 2b rows */
    T_EQ_INT(gv_hip_to_rocm_release("5.7.31921", r, sizeof r), 1);
    T_EQ_STR(r, "5.7");
    T_EQ_INT(gv_hip_to_rocm_release("6.0.32830-d62f6a171", r, sizeof r), 1);
    T_EQ_STR(r, "6.0");
    T_EQ_INT(gv_hip_to_rocm_release("6.4.43484", r, sizeof r), 1);
    T_EQ_STR(r, "6.4");
    T_EQ_STR(gv_hip_exact_rocm("6.0.32831"), "6.0.2");
    T_EQ_STR(gv_hip_exact_rocm("6.2.41133-dd7f95766"), "6.2.0");
    T_CHECK(gv_hip_exact_rocm("6.2.99999") == NULL);
    /* not in the table: major.minor only */
    T_EQ_INT(gv_hip_to_rocm_release("6.9.12345", r, sizeof r), 2);
    T_EQ_STR(r, "6.9");
    /* not HIP versions */
    T_EQ_INT(gv_hip_to_rocm_release("2.3.0", r, sizeof r), 0);
    T_EQ_INT(gv_hip_to_rocm_release("1.13.0", r, sizeof r), 0);
    T_EQ_INT(gv_hip_to_rocm_release("abc", r, sizeof r), 0);
    T_EQ_INT(gv_hip_to_rocm_release("", r, sizeof r), 0);
    T_EQ_INT(gv_hip_to_rocm_release(NULL, r, sizeof r), 0);
}

static void test_filename_versions(void)
{
    char v[64];
    T_EQ_INT(gv_version_from_filename("libamdhip64.so.6.0.32830", v, sizeof v), 3);
    T_EQ_STR(v, "6.0.32830");
    T_EQ_INT(gv_version_from_filename("libcuda.so.580.65.06", v, sizeof v), 3);
    T_EQ_STR(v, "580.65.06");
    T_EQ_INT(gv_version_from_filename("libcudnn.so.9", v, sizeof v), 1);
    T_EQ_INT(gv_version_from_filename("libamdhip64.so", v, sizeof v), 0);
    T_EQ_INT(gv_version_from_filename("libnvrtc.so.13.alt", v, sizeof v), 0);
    T_EQ_INT(gv_version_from_filename("libx.so.1..2", v, sizeof v), 0);
    T_EQ_INT(gv_version_from_filename("libx.so.", v, sizeof v), 0);
}

static void test_py_assignments(void)
{
    const char *src = "from typing import Optional\n"
                      "__all__ = ['__version__', 'hip']\n"
                      "__version__ = '2.3.0+rocm6.0'\n"
                      "debug = False\n"
                      "cuda: Optional[str] = None\n"
                      "hip: Optional[str] = \"6.0.32830-d62f6a171\"\n"
                      "  indented = 'no'\n"
                      "bad = 'unterminated\n"
                      "esc = 'a\\'b'\n";
    json_t *o = gv_parse_py_assignments(src, strlen(src));
    T_EQ_STR(json_string_value(json_object_get(o, "__version__")), "2.3.0+rocm6.0");
    T_EQ_STR(json_string_value(json_object_get(o, "hip")), "6.0.32830-d62f6a171");
    T_CHECK(json_is_null(json_object_get(o, "cuda")));
    T_CHECK(json_object_get(o, "debug") == NULL);
    T_CHECK(json_object_get(o, "__all__") == NULL);
    T_CHECK(json_object_get(o, "indented") == NULL);
    T_CHECK(json_object_get(o, "bad") == NULL);
    T_CHECK(json_object_get(o, "esc") == NULL);
    json_decref(o);
}

static void test_metadata(void)
{
    const char *m = "Metadata-Version: 2.1\r\nName: torch\r\nVersion:  2.3.0+rocm6.0 \r\n"
                    "Summary: x\r\n\r\nVersion: 9.9.9\n";
    char name[64], ver[64];
    T_EQ_INT(gv_parse_pkg_metadata(m, strlen(m), name, sizeof name, ver, sizeof ver), 0);
    T_EQ_STR(name, "torch");
    T_EQ_STR(ver, "2.3.0+rocm6.0");
    const char *body_only = "Metadata-Version: 2.1\n\nName: x\nVersion: 1\n";
    T_CHECK(gv_parse_pkg_metadata(body_only, strlen(body_only), name, sizeof name, ver,
                                  sizeof ver) != 0);
}

/* dpkg .list ownership with merged /usr: a file listed as /lib/... is the
 * same file as /usr/lib/...; arch-qualified list names give the package. */
static void test_owner_map(void)
{
    char root[] = "/tmp/gv-test-dpkg-XXXXXX";
    T_CHECK(mkdtemp(root) != NULL);
    char dir[256], path[320];
    snprintf(dir, sizeof dir, "%s/var/lib/dpkg/info", root);
    T_EQ_INT(gv_mkdirs(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/libcuda1:amd64.list", dir);
    FILE *f = fopen(path, "w");
    T_CHECK(f != NULL);
    if (f) {
        fputs("/.\n/lib\n/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu/libcuda.so.580.65.06\n", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/libamdhip64-6.list", dir);
    f = fopen(path, "w");
    T_CHECK(f != NULL);
    if (f) {
        fputs("/usr/lib/x86_64-linux-gnu/libamdhip64.so.6.4.43484\n/usr/share/doc/x\n", f);
        fclose(f);
    }
    struct gv_owner_map *m = gv_owner_map_load(root);
    T_CHECK(m != NULL);
    T_EQ_STR(gv_owner_map_owner(m, "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06"), "libcuda1");
    T_EQ_STR(gv_owner_map_owner(m, "/lib/x86_64-linux-gnu/libcuda.so.580.65.06"), "libcuda1");
    T_EQ_STR(gv_owner_map_owner(m, "/lib/x86_64-linux-gnu/libamdhip64.so.6.4.43484"),
             "libamdhip64-6");
    T_CHECK(gv_owner_map_owner(m, "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921") == NULL);
    T_CHECK(gv_owner_map_manages_dir(m, "/usr/lib/x86_64-linux-gnu"));
    T_CHECK(!gv_owner_map_manages_dir(m, "/usr/local/cuda-13.0/lib"));
    T_EQ_INT(gv_owner_map_size(m), 2); /* only GPU library files are kept */
    gv_owner_map_free(m);
    T_CHECK(gv_owner_map_load("/nonexistent-gpuvet-root") == NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    T_EQ_INT(system(cmd), 0);
}

static void test_dpkg_text(void)
{
    char status[] = "Package: a\nStatus: install ok installed\nVersion: 1:2.0-1\n\n"
                    "Package: b\nStatus: deinstall ok config-files\nVersion: 3\n\n"
                    "Package: rocm-core\nVersion: 6.0.0.60000-91~22.04\nStatus: install ok installed";
    json_t *v = gv_dpkg_status_versions(status);
    T_EQ_STR(json_string_value(json_object_get(v, "a")), "1:2.0-1");
    T_CHECK(json_object_get(v, "b") == NULL);
    T_EQ_STR(json_string_value(json_object_get(v, "rocm-core")), "6.0.0.60000-91~22.04");
    json_decref(v);
    char alt[] = "manual\n/opt/rocm\nrocm-lib\n/usr/lib/rocm\n\n/opt/rocm-6.0.0\n60000\n"
                 "/opt/rocm-6.0.0/lib\n/opt/rocm-5.7.0\n50700\n/opt/rocm-5.7.0/lib\n";
    json_t *a = gv_dpkg_alternatives_parse(alt);
    T_EQ_STR(json_string_value(json_object_get(a, "mode")), "manual");
    json_t *c = json_object_get(a, "choices");
    T_EQ_INT(json_array_size(c), 2);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(c, 1), "path")), "/opt/rocm-5.7.0");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(c, 1), "priority")), "50700");
    json_decref(a);
}

/* $VIRTUAL_ENV and $CONDA_PREFIX of the recorded environment lead to their
 * environments on a live system; PATH gives the interpreters. */
static void test_virtual_env(void)
{
    char venv[] = "/tmp/gv-test-venv-XXXXXX";
    T_CHECK(mkdtemp(venv) != NULL);
    char p[512];
    snprintf(p, sizeof p, "%s/lib/python3.11/site-packages/torch-2.4.0+rocm6.1.dist-info", venv);
    T_EQ_INT(gv_mkdirs(p, 0755), 0);
    snprintf(p, sizeof p, "%s/lib/python3.11/site-packages/torch-2.4.0+rocm6.1.dist-info/METADATA",
             venv);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs("Metadata-Version: 2.1\nName: torch\nVersion: 2.4.0+rocm6.1\n\n", f);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/pyvenv.cfg", venv);
    f = fopen(p, "w");
    if (f) {
        fputs("home = /usr/bin\n", f);
        fclose(f);
    }
    char ve[600];
    snprintf(ve, sizeof ve, "VIRTUAL_ENV=%s", venv);
    char *envp[] = {ve, (char *)"PATH=/nonexistent-gpuvet", NULL};
    struct gv_probe_ctx ctx = {.root = "/", .live = 1, .envp = envp, .hash_files = 0};
    json_t *py = gv_probe_python(&ctx);
    json_t *found = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(py, "environments"), i, e)
        if (strcmp(json_string_value(json_object_get(e, "prefix")), venv) == 0)
            found = e;
    T_CHECK(found != NULL);
    T_EQ_STR(json_string_value(json_object_get(found, "kind")), "venv");
    T_EQ_STR(json_string_value(json_object_get(found, "python_version")), "3.11");
    T_EQ_STR(gv_json_path_str(found, "packages.torch.version"), "2.4.0+rocm6.1");
    T_EQ_INT(json_array_size(json_object_get(py, "interpreters")), 0);
    json_decref(py);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", venv);
    T_EQ_INT(system(cmd), 0);
}

int main(void)
{
    T_RUN(test_virtual_env);
    T_RUN(test_owner_map);
    T_RUN(test_dpkg_text);
    T_RUN(test_vectors);
    T_RUN(test_against_portable);
    T_RUN(test_parallel);
    T_RUN(test_hip_table);
    T_RUN(test_filename_versions);
    T_RUN(test_py_assignments);
    T_RUN(test_metadata);
    return t_done();
}
