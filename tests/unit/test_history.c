/* The history store below the CLI: password removal from database URLs
 * (expected outputs written by hand), document-to-columns extraction of the
 * fuzz corpus's documents (expected values read from the documents with
 * jansson, not from the code under test), a SQLite round trip, retried-run
 * deduplication, the matrix of hand-built runs, and a missing libpq. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "store/history.h"
#include "t.h"

static char tmpdir[4096];

static void redacted(const char *url, const char *want)
{
    char out[512];
    gv_url_redact(url, out, sizeof out);
    T_EQ_STR(out, want);
}

static void test_redact(void)
{
    redacted("postgresql://user:secret@host/db", "postgresql://user@host/db");
    redacted("postgres://u:p%40ss@db.example.com:5432/gv?sslmode=require",
             "postgres://u@db.example.com:5432/gv?sslmode=require");
    redacted("postgresql://u:a@b@host/db", "postgresql://u@host/db"); /* '@' in the password */
    redacted("postgresql://u@/gv?host=/tmp/s&password=xyz", "postgresql://u@/gv?host=/tmp/s");
    redacted("postgresql://u@/gv?password=xyz&host=/tmp/s", "postgresql://u@/gv?host=/tmp/s");
    redacted("postgresql://u@h/gv?password=xyz", "postgresql://u@h/gv");
    redacted("host=/tmp/s password=xyz dbname=gv", "host=/tmp/s dbname=gv");
    redacted("host=h PASSWORD=xyz", "host=h");
    redacted("postgresql://h/db", "postgresql://h/db");
    redacted("postgresql://u@h/db?passwordless=1", "postgresql://u@h/db?passwordless=1");
    redacted("/home/me/.local/share/gpuvet/history.db", "/home/me/.local/share/gpuvet/history.db");
    redacted("postgresql://:onlypw@h/db", "postgresql://@h/db");
}

static json_t *corpus(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/history/%s",
             getenv("GV_SRC") ? getenv("GV_SRC") : ".", name);
    json_t *doc = NULL;
    struct gv_err err = {0};
    if (gv_json_read_file(path, 1 << 24, &doc, &err))
        fprintf(stderr, "%s\n", err.msg);
    return doc;
}

static void test_extract(void)
{
    struct gv_history_ident id = {"fallback-host", ""};
    struct gv_run_cols c;
    struct gv_err err = {0};
    json_t *r = corpus("results.json");
    T_CHECK(r != NULL);
    T_EQ_INT(gv_history_extract(r, &id, &c, "results.json", &err), GV_OK);
    T_EQ_STR(c.kind, "check");
    T_EQ_STR(c.created, json_string_value(json_object_get(r, "created")));
    T_EQ_STR(c.gpu_model, gv_json_path_str(r, "device.description.name"));
    T_EQ_STR(c.kernel, gv_json_path_str(r, "snapshot.host.kernel.release"));
    T_EQ_STR(c.rocm, "6.0.0");      /* the default install of the trimmed snapshot */
    T_EQ_STR(c.driver, "6.16.6");   /* amdgpu module */
    T_EQ_STR(c.torch, "2.3.0+rocm6.0");
    T_EQ_STR(c.hostname, "fallback-host");
    T_EQ_STR(c.machine_key, "host:fallback-host");
    T_EQ_INT(c.cases, json_integer_value(gv_json_path(r, "summary.cases")));
    T_EQ_STR(c.verdict, "pass");
    T_EQ_INT(c.gpu_count, 1);
    T_EQ_STR(c.gpu_ids, "0000:03:00.0");
    json_decref(r);

    json_t *cap = corpus("capture.json");
    T_EQ_INT(gv_history_extract(cap, NULL, &c, "capture.json", &err), GV_OK);
    T_EQ_STR(c.kind, "capture");
    T_EQ_STR(c.gpu_model, "NVIDIA H200");
    T_EQ_STR(c.gpu_arch, "sm_90");
    T_EQ_STR(c.torch, "2.11.0+cu130");
    T_EQ_STR(c.verdict, "");
    T_EQ_STR(c.machine_key, "unknown");
    json_decref(cap);

    json_t *p = corpus("probe.json"); /* a schema this build does not know: generic columns */
    T_EQ_INT(gv_history_extract(p, &id, &c, "probe.json", &err), GV_OK);
    T_EQ_STR(c.kind, "probe");
    T_EQ_STR(c.verdict, "fail");
    T_EQ_STR(c.gpu_model, "AMD Instinct MI300X");
    T_EQ_STR(c.device, "hip:0");
    json_decref(p);

    json_t *bad = json_pack("{s:s,s:i}", "schema", "acme.thing", "schema_version", 1);
    T_EQ_INT(gv_history_extract(bad, &id, &c, "x.json", &err), GV_E_SCHEMA);
    T_CHECK(strstr(err.msg, "x.json") != NULL);
    json_decref(bad);
}

/* A judged run of machine host on GPU gpu at time t. */
static json_t *run_doc(const char *gpu, const char *t, int fail, double eff)
{
    return json_pack("{s:s,s:i,s:s,s:{s:s,s:{s:s}},s:{s:i,s:i,s:i,s:i,s:i},"
                     "s:[{s:s,s:s,s:s,s:{s:f}}]}",
                     "schema", "gpuvet.results", "schema_version", 1, "created", t, "device",
                     "spec", "cpu", "description", "name", gpu, "summary", "cases", 2, "pass",
                     2 - fail, "fail", fail, "error", 0, "skipped", 0, "cases", "id", "case.a",
                     "compute_dtype", "f32", "out_dtype", "f16", "metrics", "effective_bits", eff);
}

static void test_sqlite_matrix(void)
{
    char db[4200];
    snprintf(db, sizeof db, "%s/unit.db", tmpdir);
    unlink(db);
    struct gv_history *h = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_history_open(db, 0, &h, &err), GV_E_NOTFOUND); /* reading does not create */
    T_EQ_INT(gv_history_open(db, 1, &h, &err), GV_OK);
    if (!h)
        return;
    struct gv_history_ident a = {"alpha", ""}, b = {"beta", ""};
    struct { struct gv_history_ident *id; const char *gpu, *t; int fail; double eff; } runs[] = {
        {&a, "GPU X", "2026-01-01T00:00:00Z", 0, 10.0}, {&b, "GPU X", "2026-01-02T00:00:00Z", 1, 5.0},
        {&a, "GPU X", "2026-01-03T00:00:00Z", 0, 9.0},  {&a, "GPU Y", "2026-01-04T00:00:00Z", 0, 11.0},
    };
    for (int i = 0; i < 4; i++) {
        json_t *d = run_doc(runs[i].gpu, runs[i].t, runs[i].fail, runs[i].eff);
        int64_t id = 0;
        int is_new = 0;
        T_EQ_INT(gv_history_record(h, d, NULL, runs[i].id, &id, &is_new, &err), GV_OK);
        T_EQ_INT(id, i + 1);
        T_EQ_INT(is_new, 1);
        /* the same document again: the same run, nothing new */
        T_EQ_INT(gv_history_record(h, d, NULL, runs[i].id, &id, &is_new, &err), GV_OK);
        T_EQ_INT(id, i + 1);
        T_EQ_INT(is_new, 0);
        json_decref(d);
    }
    json_t *m = NULL;
    T_EQ_INT(gv_history_matrix(h, NULL, &m, &err), GV_OK);
    const json_t *rows = json_object_get(m, "rows");
    T_EQ_INT(json_array_size(rows), 2);
    const json_t *y = json_array_get(rows, 0), *x = json_array_get(rows, 1); /* newest first */
    T_EQ_STR(json_string_value(json_object_get(y, "gpu_model")), "GPU Y");
    T_EQ_INT(json_integer_value(json_object_get(x, "runs")), 3);
    T_EQ_INT(json_integer_value(json_object_get(x, "machines")), 2);
    T_EQ_INT(json_integer_value(json_object_get(x, "passes")), 2);
    T_EQ_INT(json_integer_value(json_object_get(x, "failures")), 1);
    T_EQ_STR(json_string_value(json_object_get(x, "first_seen")), "2026-01-01T00:00:00Z");
    T_EQ_STR(json_string_value(json_object_get(x, "last_seen")), "2026-01-03T00:00:00Z");
    T_NEAR(json_number_value(gv_json_path(x, "worst.bits_lost")), 11.0 - 5.0, 1e-12);
    T_EQ_INT(json_integer_value(gv_json_path(x, "worst.run")), 2);
    const json_t *tl = json_object_get(x, "timeline");
    T_EQ_INT(json_array_size(tl), 3);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(tl, 1), "machine")), "beta");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(tl, 1), "verdict")), "fail");
    json_decref(m);
    struct gv_history_filter f = {.gpu = "gpu y"};
    T_EQ_INT(gv_history_matrix(h, &f, &m, &err), GV_OK);
    T_EQ_INT(json_array_size(json_object_get(m, "rows")), 1);
    json_decref(m);
    struct gv_history_filter s = {.since = "2026-01-02T00:00:00Z", .gpu = "x"};
    T_EQ_INT(gv_history_matrix(h, &s, &m, &err), GV_OK);
    T_EQ_INT(json_integer_value(json_object_get(json_array_get(json_object_get(m, "rows"), 0),
                                                "runs")), 2);
    json_decref(m);
    json_t *sum = NULL, *doc = NULL;
    T_EQ_INT(gv_history_good(h, NULL, &b, &sum, &doc, &err), GV_E_NOTFOUND);
    T_EQ_INT(gv_history_good(h, NULL, &a, &sum, &doc, &err), GV_OK);
    T_EQ_INT(json_integer_value(json_object_get(sum, "id")), 4);
    T_EQ_STR(gv_json_path_str(doc, "created"), "2026-01-04T00:00:00Z");
    json_decref(sum);
    json_decref(doc);
    T_EQ_INT(gv_history_integrity(h, &err), GV_OK);
    gv_history_close(h);
}

static void test_no_libpq(void)
{
    setenv("GPUVET_LIBPQ", "/nonexistent/libpq.so.5", 1);
    struct gv_history *h = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_history_open("postgresql://u:pw@h/db", 1, &h, &err), GV_E_LIB);
    T_CHECK(strstr(err.msg, "postgresql://u@h/db") != NULL);
    T_CHECK(strstr(err.msg, "pw@") == NULL);
    T_CHECK(strstr(err.msg, "libpq") != NULL);
    unsetenv("GPUVET_LIBPQ");
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/test_history",
             getenv("GV_TEST_TMP") ? getenv("GV_TEST_TMP") : "/tmp");
    gv_mkdirs(tmpdir, 0755);
    T_RUN(test_redact);
    T_RUN(test_extract);
    T_RUN(test_sqlite_matrix);
    T_RUN(test_no_libpq);
    return t_done();
}
