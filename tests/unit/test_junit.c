/* The JUnit builder (store/junit.h): what it saves is byte for byte what
 * gv_junit_write makes of the same cases, and it owns copies of its strings
 * (every --junit caller reuses one buffer for each case's name and message). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "store/junit.h"
#include "t.h"

static char tmpdir[512];

static char *read_back(const char *name)
{
    char p[1024], *x = NULL;
    size_t len;
    struct gv_err err = {0};
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    if (gv_read_file(p, 1 << 20, &x, &len, &err))
        return NULL;
    return x;
}

static void same_as_array_writer(void)
{
    struct gv_junit_case c[4] = {
        {"gpuvet.check.gemm", "a<b>&\"c\"'", 0.5, GV_JUNIT_PASS, NULL, NULL},
        {"gpuvet.check.gemm", "bad", 1.0, GV_JUNIT_FAILURE, "err \x01 > bound", "x\xff\xfey"},
        {"gpuvet.check.sdpa", "err", 0, GV_JUNIT_ERROR, "device fault", NULL},
        {"gpuvet.compare", "gone", 0, GV_JUNIT_SKIPPED, "missing after", ""},
    };
    char pa[1024], pb[1024];
    snprintf(pa, sizeof pa, "%s/array.xml", tmpdir);
    snprintf(pb, sizeof pb, "%s/built.xml", tmpdir);
    struct gv_err err = {0};
    T_EQ_INT(gv_junit_write(pa, "gpuvet check", c, 4, &err), 0);

    struct gv_junit *j = gv_junit_begin("gpuvet check");
    char name[32], msg[64];
    for (size_t i = 0; i < 4; i++) {
        /* one buffer for every case, overwritten after each add */
        snprintf(name, sizeof name, "%s", c[i].name);
        snprintf(msg, sizeof msg, "%s", c[i].message ? c[i].message : "");
        gv_junit_add(j, c[i].classname, name, c[i].seconds, c[i].status,
                     c[i].message ? msg : NULL, c[i].text);
        memset(name, 'Z', sizeof name - 1);
        memset(msg, 'Z', sizeof msg - 1);
    }
    T_EQ_INT(gv_junit_save(j, pb, &err), 0);
    gv_junit_free(j);

    char *a = read_back("array.xml"), *b = read_back("built.xml");
    T_CHECK(a && b);
    if (a && b)
        T_EQ_STR(b, a);
    T_CHECK(b && !strstr(b, "ZZZ"));
    free(a);
    free(b);
}

static void empty_suite_and_no_builder(void)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/empty.xml", tmpdir);
    struct gv_err err = {0};
    struct gv_junit *j = gv_junit_begin("gpuvet compare");
    T_EQ_INT(gv_junit_save(j, p, &err), 0);
    gv_junit_free(j);
    char *x = read_back("empty.xml");
    T_CHECK(x && strstr(x, "name=\"gpuvet compare\" tests=\"0\" failures=\"0\""));
    free(x);
    /* a builder that could not be made is an error when saved, never a crash */
    gv_junit_add(NULL, "c", "n", 0, GV_JUNIT_PASS, NULL, NULL);
    T_EQ_INT(gv_junit_save(NULL, p, &err), GV_E_NOMEM);
    gv_junit_free(NULL);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/test_junit",
             getenv("GV_TEST_TMP") ? getenv("GV_TEST_TMP") : "/tmp");
    gv_mkdirs(tmpdir, 0755);
    T_RUN(same_as_array_writer);
    T_RUN(empty_suite_and_no_builder);
    return t_done();
}
