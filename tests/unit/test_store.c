/* Result files, safetensors and JUnit: round trips, and hand-made bad inputs
 * that must be refused with a message naming what is wrong. */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "store/junit.h"
#include "check/results.h"
#include "store/safetensors.h"
#include "t.h"

static char tmpdir[256];

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

/* ---------- results ---------- */

static void test_results_round_trip(void)
{
    const struct gv_catalog_entry *e1 = gv_catalog_find("gemm.f32.256x256x256.normal.s1");
    const struct gv_catalog_entry *e2 = gv_catalog_find("exp.f32.65536.normal.s1");
    T_CHECK(e1 && e2);
    if (!e1 || !e2)
        return;
    static struct gv_case_result r[2];
    r[0].entry = e1;
    r[0].verdict = GV_FAIL;
    r[0].measured = 1;
    memset(r[0].input_digest, 'a', 64);
    memset(r[0].m.out_digest, 'b', 64);
    r[0].m.err_over_bound = INFINITY;
    r[0].m.eff_bits = 11.5;
    r[0].m.mean_signed = -3e-5;
    r[0].m.max_rel = NAN;
    r[0].m.nan_count = 7;
    r[0].det_checked = 1;
    r[1].entry = e2;
    r[1].verdict = GV_ERROR;
    r[1].status = GV_E_DEVICE;
    snprintf(r[1].error, sizeof r[1].error, "kernel <fault> & \"stop\"");
    memset(r[1].input_digest, 'c', 64);
    json_t *dev = json_pack("{s:s}", "backend", "cpu");
    struct gv_results_meta meta = {"quick", "gemm*", "cpu", "", dev, NULL, NULL, NULL};
    json_t *doc = gv_results_build(&meta, r, 2);
    char p[512];
    path_of(p, sizeof p, "r.json");
    struct gv_err err = {0};
    T_EQ_INT(gv_json_write_file(p, doc, &err), 0);
    struct gv_results res;
    T_EQ_INT(gv_results_load(p, &res, &err), 0);
    T_EQ_INT(res.n, 2);
    if (res.n == 2) {
        const struct gv_result_case *a = gv_results_find(&res, e1->id);
        T_CHECK(a && a->verdict == GV_FAIL && a->has_metrics);
        T_CHECK(a && isinf(a->err_over_bound) && a->eff_bits == 11.5 && isnan(a->max_rel));
        T_CHECK(a && a->nan_count == 7 && a->det_checked && !a->det_identical);
        T_EQ_STR(a ? a->in_dtype : NULL, "f32");
        const struct gv_result_case *b = gv_results_find(&res, e2->id);
        T_CHECK(b && b->verdict == GV_ERROR && !b->has_metrics && !b->output_digest[0]);
        T_EQ_STR(b ? b->error : NULL, "kernel <fault> & \"stop\"");
        T_EQ_STR(res.suite, "quick");
    }
    /* inf is written as a string: the file is valid JSON for any reader */
    json_t *c0 = json_array_get(json_object_get(doc, "cases"), 0);
    T_EQ_STR(json_string_value(json_object_get(json_object_get(c0, "metrics"), "err_over_bound")),
             "inf");
    gv_results_free(&res);
    json_decref(doc);
    json_decref(dev);
}

static void expect_parse_error(const char *text, const char *want)
{
    struct gv_results res;
    struct gv_err err = {0};
    int rc = gv_results_parse(text, strlen(text), "X.json", &res, &err);
    T_CHECK(rc != 0);
    if (rc == 0) {
        gv_results_free(&res);
        return;
    }
    if (!strstr(err.msg, want) || !strstr(err.msg, "X.json"))
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", err.msg, want);
    T_CHECK(strstr(err.msg, want) != NULL && strstr(err.msg, "X.json") != NULL);
}

#define HEAD                                                                                 \
    "{\"schema\":\"gpuvet.results\",\"schema_version\":1,\"suite\":\"quick\","           \
    "\"created\":\"2026-01-01T00:00:00Z\",\"device\":{\"description\":{}},\"snapshot\":{},"
#define D64 "\"0000000000000000000000000000000000000000000000000000000000000000\""

static void test_results_errors(void)
{
    expect_parse_error("", "empty");
    expect_parse_error("{\"schema\":", "not valid JSON");
    expect_parse_error("[1,2]", "not a JSON object");
    expect_parse_error("{\"schema\":\"gpuvet.snapshot\",\"schema_version\":1}", "gpuvet.snapshot");
    expect_parse_error("{\"schema\":\"gpuvet.results\",\"schema_version\":9}", "newer");
    expect_parse_error(HEAD "\"cases\":{}}", "\"cases\"");
    expect_parse_error(HEAD "\"cases\":[3]}", "case 0 is not an object");
    expect_parse_error(HEAD "\"cases\":[{\"id\":\"a\"}]}", "case 0 (a): field \"op\"");
    expect_parse_error(HEAD "\"cases\":[{\"id\":\"a\",\"op\":\"gemm\",\"in_dtype\":\"f32\","
                            "\"compute_dtype\":\"f32\",\"out_dtype\":\"f32\",\"input_digest\":"
                            D64 ",\"output_digest\":" D64 ",\"verdict\":\"pass\"}]}",
                       "field \"metrics\"");
    expect_parse_error(HEAD "\"cases\":[{\"id\":\"a\",\"op\":\"gemm\",\"in_dtype\":\"f32\","
                            "\"compute_dtype\":\"f32\",\"out_dtype\":\"f32\",\"input_digest\":"
                            D64 ",\"verdict\":\"error\"}]}",
                       "field \"error\"");
    expect_parse_error(HEAD "\"device\":1,\"cases\":[]}", "duplicate"); /* jansson rejects */
    expect_parse_error("{\"schema\":\"gpuvet.results\",\"schema_version\":1,\"suite\":\"q\","
                       "\"created\":\"x\",\"snapshot\":{},\"cases\":[]}",
                       "device.description");
    /* a valid minimal file parses */
    struct gv_results res;
    struct gv_err err = {0};
    const char *ok = HEAD "\"cases\":[]}";
    T_EQ_INT(gv_results_parse(ok, strlen(ok), "ok", &res, &err), 0);
    gv_results_free(&res);
}

/* ---------- safetensors ---------- */

static void test_safetensors_round_trip(void)
{
    uint16_t h[3] = {0x3c00, 0x4000, 0x7bff};
    float f[2] = {1.5f, -2.25f};
    double d[1] = {3.125};
    struct gv_st_tensor t[3] = {
        {"half.odd", GV_F16, 1, {3}, h, sizeof h},
        {"float", GV_F32, 2, {1, 2}, f, sizeof f},
        {"double", GV_F64, 1, {1}, d, sizeof d},
    };
    json_t *meta = json_pack("{s:s}", "case.input_digest", "abc");
    char p[512];
    path_of(p, sizeof p, "t.safetensors");
    struct gv_err err = {0};
    T_EQ_INT(gv_safetensors_write(p, t, 3, meta, &err), 0);
    json_decref(meta);
    /* the layout, read by hand: u64 LE header length, aligned data, f64 first */
    char *raw;
    size_t len;
    T_EQ_INT(gv_read_file(p, 1 << 20, &raw, &len, &err), 0);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = hl << 8 | (unsigned char)raw[i];
    T_EQ_INT((8 + hl) % 8, 0);
    T_EQ_INT(len, 8 + hl + 8 + 8 + 6);
    T_CHECK(raw[8] == '{');
    double d0;
    memcpy(&d0, raw + 8 + hl, 8);
    T_CHECK(d0 == 3.125);
    T_CHECK(strstr(raw + 8, "\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[16,22]") != NULL);
    free(raw);
    struct gv_st_file fl;
    T_EQ_INT(gv_safetensors_read(p, 1 << 20, &fl, &err), 0);
    T_EQ_INT(fl.n, 3);
    const struct gv_st_tensor *x = gv_safetensors_find(&fl, "half.odd");
    T_CHECK(x && x->dtype == GV_F16 && x->ndim == 1 && x->dims[0] == 3 && x->nbytes == 6 &&
            !memcmp(x->data, h, 6));
    x = gv_safetensors_find(&fl, "float");
    T_CHECK(x && x->ndim == 2 && x->dims[1] == 2 && !memcmp(x->data, f, 8));
    T_EQ_STR(json_string_value(json_object_get(fl.metadata, "case.input_digest")), "abc");
    gv_safetensors_free(&fl);
}

/* Builds a file from a header text and n data bytes, parses it. */
static int parse_st(const char *hdr, size_t ndata, struct gv_err *err)
{
    size_t hl = strlen(hdr), len = 8 + hl + ndata;
    uint8_t *buf = calloc(1, len);
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, hdr, hl);
    struct gv_st_file f;
    int rc = gv_safetensors_parse(buf, len, "S.st", &f, err);
    if (rc == 0)
        gv_safetensors_free(&f);
    return rc;
}

static void expect_st_error(const char *hdr, size_t ndata, const char *want)
{
    struct gv_err err = {0};
    int rc = parse_st(hdr, ndata, &err);
    T_CHECK(rc != 0);
    if (rc && !strstr(err.msg, want))
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", err.msg, want);
    T_CHECK(rc == 0 || (strstr(err.msg, want) && strstr(err.msg, "S.st")));
}

static void test_safetensors_errors(void)
{
    struct gv_err err = {0};
    T_EQ_INT(parse_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, &err), 0);
    T_EQ_INT(parse_st("{}", 0, &err), 0);
    expect_st_error("{\"a\"", 0, "not a JSON object");
    expect_st_error("[1]", 0, "does not start with");
    expect_st_error(" {}", 0, "does not start with '{'");
    expect_st_error("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "\"a\"");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "needs 12");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,16]}}", 8,
                    "data_offsets");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8,
                    "data_offsets");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,8]}}", 8, "shape");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1099511627776,1099511627776],"
                    "\"data_offsets\":[0,8]}}", 8, "shape");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                    "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "overlap");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "hole");
    expect_st_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "cover");
    expect_st_error("{\"__metadata__\":{\"k\":1}}", 0, "__metadata__");
    /* header length beyond the file */
    uint8_t *b = calloc(1, 16);
    b[0] = 200;
    struct gv_st_file f;
    T_CHECK(gv_safetensors_parse(b, 16, "S.st", &f, &err) != 0 && strstr(err.msg, "truncated"));
    b = calloc(1, 4);
    T_CHECK(gv_safetensors_parse(b, 4, "S.st", &f, &err) != 0 && strstr(err.msg, "too short"));
}

/* ---------- JUnit ---------- */

static void test_junit(void)
{
    struct gv_junit_case c[3] = {
        {"gpuvet.check.gemm", "a<b>&\"c\"'", 0.5, GV_JUNIT_PASS, NULL, NULL},
        {"gpuvet.check.gemm", "bad", 1.0, GV_JUNIT_FAILURE, "err \x01 > bound", "x\xff\xfey"},
        {"gpuvet.check.sdpa", "err", 0, GV_JUNIT_ERROR, "device fault", NULL},
    };
    char p[512];
    path_of(p, sizeof p, "j.xml");
    struct gv_err err = {0};
    T_EQ_INT(gv_junit_write(p, "gpuvet check", c, 3, &err), 0);
    char *x;
    size_t len;
    T_EQ_INT(gv_read_file(p, 1 << 20, &x, &len, &err), 0);
    T_CHECK(strstr(x, "tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\"") != NULL);
    T_CHECK(strstr(x, "name=\"a&lt;b&gt;&amp;&quot;c&quot;&apos;\"") != NULL);
    T_CHECK(strstr(x, "<failure message=\"err ? &gt; bound\" type=\"failure\">x\xef\xbf\xbd\xef\xbf\xbdy</failure>") != NULL);
    T_CHECK(strstr(x, "<error message=\"device fault\" type=\"error\"/>") != NULL);
    T_CHECK(strchr(x, '\x01') == NULL);
    free(x);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/test_store", getenv("GV_TEST_TMP") ? getenv("GV_TEST_TMP") : "/tmp");
    gv_mkdirs(tmpdir, 0755);
    T_RUN(test_results_round_trip);
    T_RUN(test_results_errors);
    T_RUN(test_safetensors_round_trip);
    T_RUN(test_safetensors_errors);
    T_RUN(test_junit);
    return t_done();
}
