/* gpuvet compare's judgement: the noise thresholds case by case, and likely
 * causes from hand-made snapshots (environment, libraries, driver, device). */
#include <math.h>

#include "check/compare.h"
#include "t.h"

#define D(c) "\"" c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c \
    c c c c c c c c c c c c c c c c c c c c c c c c "\""

/* One measured case. */
static void add_case(char *buf, size_t n, const char *id, const char *verdict, const char *in,
                     const char *out, double bits, double eob, int nan)
{
    size_t l = strlen(buf);
    snprintf(buf + l, n - l,
             "%s{\"id\":\"%s\",\"op\":\"gemm\",\"in_dtype\":\"f32\",\"compute_dtype\":\"f32\","
             "\"out_dtype\":\"f32\",\"input_digest\":%s,\"output_digest\":%s,\"verdict\":\"%s\","
             "\"metrics\":{\"err_over_bound\":%.17g,\"effective_bits\":%.17g,"
             "\"mean_signed_error\":0,\"max_abs\":0,\"max_rel\":0,\"normwise\":0,\"count\":4,"
             "\"nan_count\":%d,\"inf_count\":0}}",
             buf[l - 1] == '[' ? "" : ",", id, in, out, verdict, eob, bits, nan);
}

static void add_error(char *buf, size_t n, const char *id)
{
    size_t l = strlen(buf);
    snprintf(buf + l, n - l,
             "%s{\"id\":\"%s\",\"op\":\"gemm\",\"in_dtype\":\"f32\",\"compute_dtype\":\"f32\","
             "\"out_dtype\":\"f32\",\"input_digest\":" D("a") ",\"verdict\":\"error\","
             "\"error\":\"device fault\"}",
             buf[l - 1] == '[' ? "" : ",", id);
}

static const char *head(const char *snapshot, const char *device)
{
    static char h[4096];
    snprintf(h, sizeof h,
             "{\"schema\":\"gpuvet.results\",\"schema_version\":1,\"suite\":\"quick\","
             "\"created\":\"x\",\"device\":{\"description\":%s},\"snapshot\":%s,\"cases\":[",
             device, snapshot);
    return h;
}

static int parse(const char *text, struct gv_results *r)
{
    struct gv_err err = {0};
    int rc = gv_results_parse(text, strlen(text), "t", r, &err);
    if (rc)
        fprintf(stderr, "parse: %s\n", err.msg);
    return rc;
}

static const struct gv_cmp_case *find(const struct gv_compare *c, const char *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->cases[i].id, id))
            return &c->cases[i];
    return NULL;
}

static void test_rules(void)
{
    static char a[16384], b[16384];
    const char *snap = "{\"collected\":false,\"reason\":\"t\"}", *dev = "{\"name\":\"x\"}";
    snprintf(a, sizeof a, "%s", head(snap, dev));
    snprintf(b, sizeof b, "%s", head(snap, dev));
    /* id, before (verdict, digest, bits, eob), after */
    add_case(a, sizeof a, "same", "pass", D("a"), D("1"), 20, 0.3, 0);
    add_case(b, sizeof b, "same", "pass", D("a"), D("1"), 20, 0.3, 0);
    add_case(a, sizeof a, "bits09", "pass", D("a"), D("1"), 20, 0.3, 0);
    add_case(b, sizeof b, "bits09", "pass", D("a"), D("2"), 19.1, 0.3, 0);
    add_case(a, sizeof a, "bits11", "pass", D("a"), D("1"), 20, 0.3, 0);
    add_case(b, sizeof b, "bits11", "pass", D("a"), D("2"), 18.9, 0.3, 0);
    add_case(a, sizeof a, "eob_small", "pass", D("a"), D("1"), 20, 0.3, 0); /* +0.2 */
    add_case(b, sizeof b, "eob_small", "pass", D("a"), D("2"), 20, 0.5, 0);
    add_case(a, sizeof a, "eob_big", "pass", D("a"), D("1"), 20, 0.3, 0);   /* +0.4, x2.3 */
    add_case(b, sizeof b, "eob_big", "pass", D("a"), D("2"), 20, 0.7, 0);
    add_case(a, sizeof a, "eob_not2x", "pass", D("a"), D("1"), 20, 0.5, 0); /* +0.4, x1.8 */
    add_case(b, sizeof b, "eob_not2x", "pass", D("a"), D("2"), 20, 0.9, 0);
    add_case(a, sizeof a, "better", "pass", D("a"), D("1"), 12, 0.8, 0);
    add_case(b, sizeof b, "better", "pass", D("a"), D("2"), 20, 0.1, 0);
    add_case(a, sizeof a, "nan", "fail", D("a"), D("1"), 20, 0.3, 0);
    add_case(b, sizeof b, "nan", "fail", D("a"), D("2"), 20, 0.3, 3);
    add_case(a, sizeof a, "newfail", "pass", D("a"), D("1"), 20, 0.9, 0);
    add_case(b, sizeof b, "newfail", "fail", D("a"), D("2"), 20, 1.1, 0);
    add_case(a, sizeof a, "newpass", "fail", D("a"), D("1"), 20, 1.1, 0);
    add_case(b, sizeof b, "newpass", "pass", D("a"), D("2"), 20, 0.9, 0);
    add_case(a, sizeof a, "stillfail", "fail", D("a"), D("1"), 20, 2.0, 0);
    add_case(b, sizeof b, "stillfail", "fail", D("a"), D("2"), 20, 2.1, 0);
    add_case(a, sizeof a, "broke", "pass", D("a"), D("1"), 20, 0.3, 0);
    add_error(b, sizeof b, "broke");
    add_case(a, sizeof a, "inputs", "pass", D("a"), D("1"), 20, 0.3, 0);
    add_case(b, sizeof b, "inputs", "pass", D("b"), D("1"), 20, 0.3, 0);
    add_case(a, sizeof a, "only_a", "pass", D("a"), D("1"), 20, 0.3, 0);
    add_case(b, sizeof b, "only_b", "pass", D("a"), D("1"), 20, 0.3, 0);
    strcat(a, "]}");
    strcat(b, "]}");
    struct gv_results ra, rb;
    T_EQ_INT(parse(a, &ra), 0);
    T_EQ_INT(parse(b, &rb), 0);
    struct gv_compare c;
    struct gv_err err = {0};
    T_EQ_INT(gv_compare_results(&ra, &rb, NULL, NULL, &c, &err), 0);
    static const struct {
        const char *id;
        enum gv_change want;
    } exp[] = {
        {"same", GV_CH_IDENTICAL},         {"bits09", GV_CH_NOISE},
        {"bits11", GV_CH_DEGRADED},        {"eob_small", GV_CH_NOISE},
        {"eob_big", GV_CH_DEGRADED},       {"eob_not2x", GV_CH_NOISE},
        {"better", GV_CH_IMPROVED},        {"nan", GV_CH_DEGRADED},
        {"newfail", GV_CH_NEWLY_FAILING},  {"newpass", GV_CH_NEWLY_PASSING},
        {"stillfail", GV_CH_STILL_FAILING}, {"broke", GV_CH_NEWLY_FAILING},
        {"inputs", GV_CH_INPUTS_DIFFER},   {"only_a", GV_CH_MISSING_AFTER},
        {"only_b", GV_CH_MISSING_BEFORE},
    };
    for (size_t i = 0; i < sizeof exp / sizeof exp[0]; i++) {
        const struct gv_cmp_case *x = find(&c, exp[i].id);
        T_CHECK(x != NULL);
        if (x && x->status != exp[i].want)
            fprintf(stderr, "  %s: %s, expected %s\n", exp[i].id, gv_change_name(x->status),
                    gv_change_name(exp[i].want));
        T_CHECK(x && x->status == exp[i].want);
    }
    T_NEAR(find(&c, "bits11")->dbits, -1.1, 1e-9);
    T_CHECK(c.flagged);
    T_EQ_INT(c.mismatches, 1);
    T_EQ_INT(c.count[GV_CH_DEGRADED], 3);
    T_EQ_INT(c.ncauses, 0); /* nothing differs outside the cases */
    gv_compare_free(&c);
    gv_results_free(&ra);
    gv_results_free(&rb);
}

static const struct gv_cmp_cause *cause(const struct gv_compare *c, const char *kind,
                                        const char *name)
{
    for (size_t i = 0; i < c->ncauses; i++)
        if (!strcmp(c->causes[i].kind, kind) && !strcmp(c->causes[i].name, name))
            return &c->causes[i];
    return NULL;
}

static void test_causes(void)
{
    const char *sa =
        "{\"environment\":{\"collected\":true,\"variables\":{\"HSA_OVERRIDE_GFX_VERSION\":\"10.3.0\","
        "\"ROCBLAS_INTERNAL_FP16_ALT_IMPL\":\"0\",\"PATH\":\"/usr/bin\"}},"
        "\"libraries\":{\"collected\":true,\"items\":[{\"name\":\"rocblas\",\"version\":\"5.7.1\","
        "\"path\":\"/opt/rocm-5.7.1/lib/librocblas.so.3.1\"},{\"name\":\"hip-runtime\",\"version\":"
        "\"5.7.31921\",\"path\":\"/opt/rocm-5.7.1/lib/libamdhip64.so.5\"}]},"
        "\"drivers\":{\"collected\":true,\"modules\":{\"amdgpu\":{\"loaded\":true,\"version\":\"6.2.4\"}}}}";
    const char *sb =
        "{\"environment\":{\"collected\":true,\"variables\":{\"HSA_OVERRIDE_GFX_VERSION\":\"10.3.0\","
        "\"ROCBLAS_INTERNAL_FP16_ALT_IMPL\":\"1\",\"NVIDIA_TF32_OVERRIDE\":\"0\"}},"
        "\"libraries\":{\"collected\":true,\"items\":[{\"name\":\"rocblas\",\"version\":\"6.0.0\","
        "\"path\":\"/opt/rocm-6.0.0/lib/librocblas.so.4.0\"},{\"name\":\"hip-runtime\",\"version\":"
        "\"5.7.31921\",\"path\":\"/opt/rocm-5.7.1/lib/libamdhip64.so.5\"},{\"name\":\"hipblaslt\","
        "\"version\":\"0.6.0\",\"path\":\"/opt/rocm-6.0.0/lib/libhipblaslt.so.0\"}]},"
        "\"drivers\":{\"collected\":true,\"modules\":{\"amdgpu\":{\"loaded\":true,\"version\":\"6.3.6\"}}}}";
    static char a[8192], b[8192];
    /* the device records two variables too: one says what the environment says (listed
     * once, as the environment's), one does not (kept) */
    snprintf(a, sizeof a, "%s]}", head(sa, "{\"name\":\"MI210\",\"arch\":\"gfx90a\",\"env\":"
                                          "{\"NVIDIA_TF32_OVERRIDE\":null,"
                                          "\"ROCBLAS_INTERNAL_FP16_ALT_IMPL\":null}}"));
    snprintf(b, sizeof b, "%s]}", head(sb, "{\"name\":\"MI210\",\"arch\":\"gfx90a\",\"runtime\":\"6.0\","
                                          "\"env\":{\"NVIDIA_TF32_OVERRIDE\":\"0\","
                                          "\"ROCBLAS_INTERNAL_FP16_ALT_IMPL\":\"1\"}}"));
    struct gv_results ra, rb;
    T_EQ_INT(parse(a, &ra), 0);
    T_EQ_INT(parse(b, &rb), 0);
    struct gv_compare c;
    struct gv_err err = {0};
    T_EQ_INT(gv_compare_results(&ra, &rb, NULL, NULL, &c, &err), 0);
    const struct gv_cmp_cause *x = cause(&c, "environment", "ROCBLAS_INTERNAL_FP16_ALT_IMPL");
    T_CHECK(x && !strcmp(x->before, "0") && !strcmp(x->after, "1") && strstr(x->note, "bf16"));
    x = cause(&c, "environment", "NVIDIA_TF32_OVERRIDE");
    T_CHECK(x && !x->before[0] && !strcmp(x->after, "0") && strstr(x->note, "TF32"));
    x = cause(&c, "environment", "PATH");
    T_CHECK(x && !strcmp(x->before, "/usr/bin") && !x->after[0]);
    T_CHECK(cause(&c, "environment", "HSA_OVERRIDE_GFX_VERSION") == NULL);
    x = cause(&c, "library", "rocblas");
    T_CHECK(x && strstr(x->before, "5.7.1") && strstr(x->after, "6.0.0"));
    x = cause(&c, "library", "hipblaslt");
    T_CHECK(x && !x->before[0] && strstr(x->after, "libhipblaslt"));
    T_CHECK(cause(&c, "library", "hip-runtime") == NULL);
    x = cause(&c, "driver", "amdgpu.version");
    T_CHECK(x && strstr(x->before, "6.2.4") && strstr(x->after, "6.3.6"));
    x = cause(&c, "device", "runtime");
    T_CHECK(x && !x->before[0] && strstr(x->after, "6.0"));
    T_CHECK(cause(&c, "device", "arch") == NULL);
    T_CHECK(cause(&c, "device", "env.NVIDIA_TF32_OVERRIDE") == NULL);
    x = cause(&c, "device", "env.ROCBLAS_INTERNAL_FP16_ALT_IMPL");
    T_CHECK(x && !strcmp(x->before, "null") && !strcmp(x->after, "1"));
    T_EQ_INT(c.ncauses, 8);
    gv_compare_free(&c);
    gv_results_free(&ra);
    gv_results_free(&rb);
}

int main(void)
{
    T_RUN(test_rules);
    T_RUN(test_causes);
    return t_done();
}
