#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "t.h"

static char tmpdir[256];

static void test_sha256_vectors(void)
{
    char hex[65];
    gv_sha256_buf_hex("", 0, hex);
    T_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    gv_sha256_buf_hex("abc", 3, hex);
    T_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    gv_sha256_buf_hex(m, strlen(m), hex);
    T_EQ_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* streaming in odd pieces gives the same digest */
    struct gv_sha256 s;
    uint8_t d[32];
    gv_sha256_init(&s);
    for (size_t i = 0; i < strlen(m); i += 7)
        gv_sha256_update(&s, m + i, strlen(m) - i < 7 ? strlen(m) - i : 7);
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, hex);
    T_EQ_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_root_join(void)
{
    char out[256];
    T_EQ_INT(gv_root_join(out, sizeof out, NULL, "/etc/os-release"), 0);
    T_EQ_STR(out, "/etc/os-release");
    gv_root_join(out, sizeof out, "/", "/etc");
    T_EQ_STR(out, "/etc");
    gv_root_join(out, sizeof out, "/mnt/img/", "/etc");
    T_EQ_STR(out, "/mnt/img/etc");
    T_EQ_INT(gv_root_join(out, 8, "/mnt/img", "/etc/os-release"), GV_E_USAGE);
}

static void test_root_realpath(void)
{
    char p[512], out[512];
    struct gv_err err = {0};
    snprintf(p, sizeof p, "%s/opt/rocm-6.0.0/lib", tmpdir);
    T_EQ_INT(gv_mkdirs(p, 0755), 0);
    snprintf(p, sizeof p, "%s/opt/rocm", tmpdir);
    T_EQ_INT(symlink("/etc/alternatives/rocm", p), 0);
    snprintf(p, sizeof p, "%s/etc/alternatives", tmpdir);
    gv_mkdirs(p, 0755);
    snprintf(p, sizeof p, "%s/etc/alternatives/rocm", tmpdir);
    T_EQ_INT(symlink("/opt/rocm-6.0.0", p), 0);
    /* absolute link targets are taken inside the root, not on the host */
    T_EQ_INT(gv_root_realpath(tmpdir, "/opt/rocm/lib", out, sizeof out, &err), 0);
    T_EQ_STR(out, "/opt/rocm-6.0.0/lib");
    /* a loop is an error, not a hang */
    snprintf(p, sizeof p, "%s/loop1", tmpdir);
    symlink("loop2", p);
    snprintf(p, sizeof p, "%s/loop2", tmpdir);
    symlink("loop1", p);
    T_EQ_INT(gv_root_realpath(tmpdir, "/loop1", out, sizeof out, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "symbolic links") != NULL);
    /* ".." cannot climb out of the root */
    T_EQ_INT(gv_root_realpath(tmpdir, "/../../etc", out, sizeof out, &err), 0);
    T_EQ_STR(out, "/etc");
}

static void test_read_file_limits(void)
{
    char p[512];
    struct gv_err err = {0};
    char *data;
    size_t len;
    snprintf(p, sizeof p, "%s/big", tmpdir);
    FILE *f = fopen(p, "w");
    for (int i = 0; i < 10000; i++)
        fputs("0123456789", f);
    fclose(f);
    T_EQ_INT(gv_read_file(p, 1000, &data, &len, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "larger than") != NULL);
    T_EQ_INT(gv_read_file(p, 1 << 20, &data, &len, &err), 0);
    T_EQ_INT(len, 100000);
    free(data);
    T_EQ_INT(gv_read_file(tmpdir, 1000, &data, &len, &err), GV_E_FORMAT);
    snprintf(p, sizeof p, "%s/fifo", tmpdir);
    mkfifo(p, 0644);
    T_EQ_INT(gv_read_file(p, 1000, &data, &len, &err), GV_E_FORMAT); /* must not block */
    snprintf(p, sizeof p, "%s/nope", tmpdir);
    T_EQ_INT(gv_read_file(p, 1000, &data, &len, &err), GV_E_NOTFOUND);
}

static void test_atomic_write_and_schema(void)
{
    char p[512];
    struct gv_err err = {0};
    snprintf(p, sizeof p, "%s/doc.json", tmpdir);
    json_t *doc = json_pack("{s:s, s:i, s:{s:b}}", "schema", "gpuvet.test", "schema_version", 2,
                            "x", "collected", 1);
    T_EQ_INT(gv_json_write_file(p, doc, &err), 0);
    json_decref(doc);
    json_t *back = NULL;
    T_EQ_INT(gv_json_read_file(p, 1 << 20, &back, &err), 0);
    T_EQ_INT(gv_json_check_schema(back, "gpuvet.test", 2, p, &err), 0);
    T_EQ_INT(gv_json_check_schema(back, "gpuvet.test", 1, p, &err), GV_E_SCHEMA);
    T_CHECK(strstr(err.msg, "newer") != NULL);
    T_EQ_INT(gv_json_check_schema(back, "gpuvet.other", 2, p, &err), GV_E_SCHEMA);
    T_CHECK(json_is_true(gv_json_path(back, "x.collected")));
    json_decref(back);
    /* truncated JSON names the file and position */
    FILE *f = fopen(p, "w");
    fputs("{\"schema\": \"gpuvet.te", f);
    fclose(f);
    T_EQ_INT(gv_json_read_file(p, 1 << 20, &back, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "doc.json") && strstr(err.msg, "line 1"));
    /* no temporary file is left behind */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", tmpdir);
    T_CHECK(system(cmd) != 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gv-test-base-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    T_RUN(test_sha256_vectors);
    T_RUN(test_root_join);
    T_RUN(test_root_realpath);
    T_RUN(test_read_file_limits);
    T_RUN(test_atomic_write_and_schema);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    system(cmd);
    return t_done();
}
