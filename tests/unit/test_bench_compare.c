/* The bench comparison's rules (bench/compare.h) on hand-made documents: the
 * noise floor and the measured spreads, ranges that overlap, lower is better,
 * status changes, parameters that differ, ids on one side, and the ranking of
 * causes from conditions, collectives and snapshots. */
#include "bench/compare.h"
#include "t.h"

/* A document of results given as JSON text, with optional extra top-level members. */
static json_t *doc(const char *results, const char *extra)
{
    char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"schema\":\"gpuvet.bench\",\"schema_version\":1,\"mode\":\"quick\","
             "\"device\":{\"backend\":\"cuda\",\"name\":\"H200\"},\"results\":[%s]%s%s}",
             results, extra ? "," : "", extra ? extra : "");
    json_t *d = NULL;
    struct gv_err err = {0};
    if (gv_bench_parse(buf, strlen(buf), "t.json", &d, &err)) {
        fprintf(stderr, "doc: %s\n", err.msg);
        return NULL;
    }
    return d;
}

/* An ok result: value v, range [lo, hi], spread sp. */
static const char *ok(char *out, size_t n, const char *id, const char *group, const char *better,
                      double v, double lo, double hi, double sp)
{
    snprintf(out, n,
             "{\"id\":\"%s\",\"group\":\"%s\",\"unit\":\"GB/s\",\"better\":\"%s\",\"status\":\"ok\","
             "\"value\":%.17g,\"min\":%.17g,\"max\":%.17g,\"spread\":%.17g,\"params\":{\"bytes\":1},"
             "\"impl\":\"cublasLtMatmul\"}",
             id, group, better, v, lo, hi, sp);
    return out;
}

static enum gv_bcmp_change judge1(double va, double la, double ha, double sa, double vb, double lb,
                                  double hb, double sb, const char *better, double *ratio)
{
    char x[512], y[512];
    json_t *a = doc(ok(x, sizeof x, "r", "memory", better, va, la, ha, sa), NULL);
    json_t *b = doc(ok(y, sizeof y, "r", "memory", better, vb, lb, hb, sb), NULL);
    struct gv_bench_compare c;
    struct gv_err err = {0};
    enum gv_bcmp_change ch = GV_BC_COUNT;
    if (a && b && gv_bench_compare_docs(a, b, &c, &err) == 0) {
        ch = c.cases[0].change;
        if (ratio)
            *ratio = c.cases[0].ratio;
        gv_bench_compare_free(&c);
    }
    json_decref(a);
    json_decref(b);
    return ch;
}

/* One result judged under an id and group of its own (the floors by kind). */
static enum gv_bcmp_change judge_as(const char *id, const char *group, const char *better,
                                    double va, double vb, double *noise)
{
    char x[512], y[512];
    /* tight samples (0.3%) and ranges apart, as the H200's quick runs had them */
    json_t *a = doc(ok(x, sizeof x, id, group, better, va, va * 0.9985, va * 1.0015, 0.003), NULL);
    json_t *b = doc(ok(y, sizeof y, id, group, better, vb, vb * 0.9985, vb * 1.0015, 0.003), NULL);
    struct gv_bench_compare c;
    struct gv_err err = {0};
    enum gv_bcmp_change ch = GV_BC_COUNT;
    if (a && b && gv_bench_compare_docs(a, b, &c, &err) == 0) {
        ch = c.cases[0].change;
        *noise = c.cases[0].noise;
        gv_bench_compare_free(&c);
    }
    json_decref(a);
    json_decref(b);
    return ch;
}

static void test_floors_by_kind(void)
{
    double n = 0;
    /* the H200's unchanged-stack pair: back-to-back launches 1.305 -> 1.371 us */
    T_EQ_INT(judge_as("latency.launch.back_to_back", "latency", "lower", 1.305, 1.371, &n),
             GV_BC_WITHIN_NOISE);
    T_NEAR(n, GV_BCMP_NOISE_LATENCY, 1e-12);
    /* a launch that got 30% dearer is still a regression */
    T_EQ_INT(judge_as("latency.launch.back_to_back", "latency", "lower", 1.305, 1.70, &n),
             GV_BC_REGRESSED);
    /* pageable copies 34% apart: within noise; halved: regressed */
    T_EQ_INT(judge_as("transfer.d2h.pageable.67108864B", "transfer", "higher", 6.5, 8.7, &n),
             GV_BC_WITHIN_NOISE);
    T_NEAR(n, GV_BCMP_NOISE_PAGEABLE, 1e-12);
    T_EQ_INT(judge_as("transfer.d2h.pageable.67108864B", "transfer", "higher", 6.5, 3.2, &n),
             GV_BC_REGRESSED);
    /* pinned copies and device memory keep the 2% floor: 5% slower is a regression */
    T_EQ_INT(judge_as("transfer.d2h.pinned.67108864B", "transfer", "higher", 55.0, 52.2, &n),
             GV_BC_REGRESSED);
    T_NEAR(n, GV_BCMP_NOISE_FLOOR, 1e-12);
    T_EQ_INT(judge_as("memory.triad.268435456B", "memory", "higher", 4000, 3800, &n),
             GV_BC_REGRESSED);
}

static void test_rules(void)
{
    double r = 0;
    /* 3% slower, tight samples, ranges apart: beyond the 2% floor */
    T_EQ_INT(judge1(100, 99.9, 100.1, 0.002, 97, 96.9, 97.1, 0.002, "higher", &r), GV_BC_REGRESSED);
    T_NEAR(r, 0.97, 1e-12);
    /* 1.5% slower: inside the floor however tight */
    T_EQ_INT(judge1(100, 99.9, 100.1, 0.002, 98.5, 98.4, 98.6, 0.002, "higher", NULL),
             GV_BC_WITHIN_NOISE);
    /* 10% slower but A's spread is 12%: within noise */
    T_EQ_INT(judge1(100, 94, 106, 0.12, 90, 89, 91, 0.02, "higher", NULL), GV_BC_WITHIN_NOISE);
    /* 30% slower beyond the noise, but B's range reaches into A's */
    T_EQ_INT(judge1(100, 95, 105, 0.1, 70, 60, 96, 0.05, "higher", NULL), GV_BC_WITHIN_NOISE);
    /* faster */
    T_EQ_INT(judge1(100, 99, 101, 0.02, 150, 149, 151, 0.013, "higher", &r), GV_BC_IMPROVED);
    T_NEAR(r, 1.5, 1e-12);
    /* lower is better: the larger latency is the regression, ratio A/B */
    T_EQ_INT(judge1(5, 4.9, 5.1, 0.04, 10, 9.9, 10.1, 0.02, "lower", &r), GV_BC_REGRESSED);
    T_NEAR(r, 0.5, 1e-12);
    T_EQ_INT(judge1(10, 9.9, 10.1, 0.02, 5, 4.9, 5.1, 0.04, "lower", NULL), GV_BC_IMPROVED);
    /* a zero value has no ratio */
    T_EQ_INT(judge1(0, 0, 0, 0, 5, 4.9, 5.1, 0.04, "higher", NULL), GV_BC_NOT_COMPARABLE);
}

static void test_status_and_ids(void)
{
    char x[512], y[512], z[512];
    char ra[2048], rb[2048];
    snprintf(ra, sizeof ra, "%s,%s,%s", ok(x, sizeof x, "a", "gemm", "higher", 1, 1, 1, 0),
             ok(y, sizeof y, "b", "gemm", "higher", 1, 1, 1, 0),
             ok(z, sizeof z, "c", "gemm", "higher", 1, 1, 1, 0));
    snprintf(rb, sizeof rb,
             "{\"id\":\"a\",\"group\":\"gemm\",\"unit\":\"GB/s\",\"better\":\"higher\","
             "\"status\":\"failed\",\"reason\":\"3 wrong\",\"params\":{\"bytes\":1}},"
             "{\"id\":\"b\",\"group\":\"gemm\",\"unit\":\"GB/s\",\"better\":\"higher\","
             "\"status\":\"ok\",\"value\":1,\"min\":1,\"max\":1,\"spread\":0,\"params\":{\"bytes\":2}},"
             "{\"id\":\"d\",\"group\":\"gemm\",\"unit\":\"GB/s\",\"better\":\"higher\","
             "\"status\":\"unsupported\",\"reason\":\"no\"}");
    json_t *a = doc(ra, NULL), *b = doc(rb, NULL);
    struct gv_bench_compare c;
    struct gv_err err = {0};
    T_CHECK(a && b && gv_bench_compare_docs(a, b, &c, &err) == 0);
    if (!a || !b)
        return;
    T_EQ_INT(c.n, 4);
    T_EQ_STR(c.cases[0].id, "a");
    T_EQ_INT(c.cases[0].change, GV_BC_NEWLY_FAILING);
    T_EQ_STR(c.cases[0].why, "B's result is wrong: 3 wrong");
    T_EQ_INT(c.cases[1].change, GV_BC_NOT_COMPARABLE); /* params differ */
    T_CHECK(strstr(c.cases[1].why, "params.bytes") != NULL);
    T_EQ_INT(c.cases[2].change, GV_BC_ONLY_A);
    T_EQ_STR(c.cases[3].id, "d");
    T_EQ_INT(c.cases[3].change, GV_BC_ONLY_B);
    T_EQ_INT(c.flagged, 1);
    T_EQ_INT(c.count[GV_BC_NEWLY_FAILING], 1);
    gv_bench_compare_free(&c);
    json_decref(a);
    json_decref(b);
}

static void test_causes(void)
{
    char x[512], y[512], ra[2048], rb[2048];
    snprintf(ra, sizeof ra, "%s,%s", ok(x, sizeof x, "gemm.lt", "gemm", "higher", 100, 99, 101, 0.02),
             ok(y, sizeof y, "coll.ar", "collective", "higher", 100, 99, 101, 0.02));
    snprintf(rb, sizeof rb, "%s,%s", ok(x, sizeof x, "gemm.lt", "gemm", "higher", 50, 49, 51, 0.04),
             ok(y, sizeof y, "coll.ar", "collective", "higher", 100, 99, 101, 0.02));
    json_t *a = doc(ra, "\"conditions\":{\"before\":{\"sm_clock_mhz\":1980,\"power_limit_w\":700}},"
                        "\"collectives\":{\"version\":\"2.28.9\",\"library\":{\"name\":\"nccl\","
                        "\"path\":\"/a/libnccl.so.2\"}},"
                        "\"snapshot\":{\"environment\":{\"variables\":{\"FOO\":\"1\"}},"
                        "\"libraries\":{\"items\":[{\"name\":\"cublaslt\",\"path\":\"/l\","
                        "\"version\":\"13.1\"},{\"name\":\"cublas\",\"path\":\"/c\","
                        "\"version\":\"13.1\"}]}}");
    json_t *b = doc(rb, "\"conditions\":{\"before\":{\"sm_clock_mhz\":1400,\"power_limit_w\":700}},"
                        "\"collectives\":{\"version\":\"2.27.3\",\"library\":{\"name\":\"nccl\","
                        "\"path\":\"/b/libnccl.so.2\"}},"
                        "\"snapshot\":{\"environment\":{\"variables\":{\"FOO\":\"2\","
                        "\"NCCL_ALGO\":\"Tree\"}},"
                        "\"libraries\":{\"items\":[{\"name\":\"cublaslt\",\"path\":\"/l\","
                        "\"version\":\"13.2\"},{\"name\":\"cublas\",\"path\":\"/c\","
                        "\"version\":\"13.2\"}]}}");
    struct gv_bench_compare c;
    struct gv_err err = {0};
    T_CHECK(a && b && gv_bench_compare_docs(a, b, &c, &err) == 0);
    if (!a || !b)
        return;
    T_EQ_INT(c.cases[0].change, GV_BC_REGRESSED);
    T_EQ_INT(c.cases[1].change, GV_BC_WITHIN_NOISE);
    /* rank 0 first: the clock and cuBLASLt touch the one regressed GEMM */
    T_CHECK(c.ncauses >= 5);
    int clock = -1, lt = -1, nccl = -1, algo = -1, foo = -1, cublas = -1;
    for (size_t i = 0; i < c.ncauses; i++) {
        const char *n = c.causes[i].name;
        if (!strcmp(n, "sm_clock_mhz")) clock = (int)i;
        if (!strcmp(n, "cublaslt")) lt = (int)i;
        if (!strcmp(n, "nccl")) nccl = (int)i;
        if (!strcmp(n, "NCCL_ALGO")) algo = (int)i;
        if (!strcmp(n, "FOO")) foo = (int)i;
        if (!strcmp(n, "cublas")) cublas = (int)i;
        T_CHECK(strcmp(n, "power_limit_w") != 0); /* the same on both sides */
    }
    T_CHECK(clock >= 0 && lt >= 0 && nccl >= 0 && algo >= 0 && foo >= 0);
    if (clock < 0 || lt < 0 || nccl < 0 || algo < 0 || foo < 0)
        return;
    T_EQ_INT(c.causes[clock].rank, 0);
    T_EQ_STR(c.causes[clock].touches, "gemm.lt");
    T_EQ_INT(c.causes[lt].rank, 0);
    T_EQ_INT(c.causes[nccl].rank, 3); /* no collective regressed */
    T_EQ_INT(c.causes[algo].rank, 2); /* a known effect, on none of them */
    T_EQ_INT(c.causes[foo].rank, 3);
    T_CHECK(cublas >= 0 && c.causes[cublas].rank == 3); /* cuBLAS did not run cublasLtMatmul */
    T_CHECK(clock < nccl && lt < algo && algo < foo);
    gv_bench_compare_free(&c);
    json_decref(a);
    json_decref(b);
}

/* A cuBLASLt GEMM result whose trial chose the heuristic's rank-th algorithm. */
static const char *lt_gemm(char *out, size_t n, double v, int rank, double t1, double t2)
{
    snprintf(out, n,
             "{\"id\":\"gemm.lt\",\"group\":\"gemm\",\"unit\":\"TFLOP/s\",\"better\":\"higher\","
             "\"status\":\"ok\",\"value\":%.17g,\"min\":%.17g,\"max\":%.17g,\"spread\":0.01,"
             "\"params\":{\"route\":\"cublaslt\",\"m\":8192,\"algorithm\":{\"heuristic_rank\":%d,"
             "\"tried\":2,\"trial_tflops\":[%.17g,%.17g]}},\"impl\":\"cublasLtMatmul its #%d\"}",
             v, v * 0.995, v * 1.005, rank, t1, t2, rank);
    return out;
}

/* The algorithm a GEMM's trial chose is not a parameter (results stay comparable);
 * a different choice is a route cause, or, between near-equals, a known effect
 * that touches no result. */
static void test_algorithm_choice(void)
{
    char x[1024], y[1024];
    static const struct { double a1, a2, b1, b2; const char *kind; int rank; } t[] = {
        {780, 770, 700, 705, "algorithm", 2}, /* each trial has the other's pick within 3% */
        {780, 600, 500, 705, "route", 0},     /* A's trial found B's pick much slower */
    };
    for (int i = 0; i < 2; i++) {
        json_t *a = doc(lt_gemm(x, sizeof x, 780, 1, t[i].a1, t[i].a2), NULL);
        json_t *b = doc(lt_gemm(y, sizeof y, 700, 2, t[i].b1, t[i].b2), NULL);
        struct gv_bench_compare c;
        struct gv_err err = {0};
        T_CHECK(a && b && gv_bench_compare_docs(a, b, &c, &err) == 0);
        if (a && b) {
            T_EQ_INT(c.cases[0].change, GV_BC_REGRESSED);
            int found = 0;
            for (size_t k = 0; k < c.ncauses; k++)
                if (!strcmp(c.causes[k].name, "gemm.lt")) {
                    found = 1;
                    T_EQ_STR(c.causes[k].kind, t[i].kind);
                    T_EQ_INT(c.causes[k].rank, t[i].rank);
                    if (i == 0)
                        T_CHECK(strstr(c.causes[k].note, "near-tie") != NULL);
                }
            T_CHECK(found);
            gv_bench_compare_free(&c);
        }
        json_decref(a);
        json_decref(b);
    }
}

/* A collective's timings and rates (also of its batch) and whether a sample
 * fitted its gate are measurements: two runs stay comparable. */
static void test_collective_measurements(void)
{
    static const char fmt[] =
        "{\"id\":\"coll.ar\",\"group\":\"collective\",\"unit\":\"GB/s\",\"better\":\"higher\","
        "\"status\":\"ok\",\"value\":%g,\"min\":%g,\"max\":%g,\"spread\":0.01,"
        "\"params\":{\"op\":\"all_reduce\",\"bytes\":%d,\"gated\":%s,\"time_us\":%g,"
        "\"algbw_gbps\":%g,\"batch_time_us\":%g,\"batch_algbw_gbps\":%g}}";
    char x[1024], y[1024], z[1024];
    snprintf(x, sizeof x, fmt, 100.0, 99.0, 101.0, 8, "true", 3.9, 100.0, 5.2, 80.0);
    snprintf(y, sizeof y, fmt, 100.5, 99.5, 101.5, 8, "false", 3.7, 100.5, 4.9, 82.0);
    snprintf(z, sizeof z, fmt, 100.5, 99.5, 101.5, 16, "true", 3.7, 100.5, 4.9, 82.0);
    json_t *a = doc(x, NULL), *b = doc(y, NULL), *c2 = doc(z, NULL);
    struct gv_bench_compare c;
    struct gv_err err = {0};
    T_CHECK(a && b && c2 && gv_bench_compare_docs(a, b, &c, &err) == 0);
    if (a && b && c2) {
        T_EQ_INT(c.cases[0].change, GV_BC_WITHIN_NOISE);
        gv_bench_compare_free(&c);
        T_CHECK(gv_bench_compare_docs(a, c2, &c, &err) == 0);
        T_EQ_INT(c.cases[0].change, GV_BC_NOT_COMPARABLE); /* bytes is a parameter */
        T_CHECK(strstr(c.cases[0].why, "params.bytes") != NULL);
        gv_bench_compare_free(&c);
    }
    json_decref(a);
    json_decref(b);
    json_decref(c2);
}

static void test_bad(void)
{
    static const char *const bad[] = {
        "{\"schema\":\"gpuvet.bench\",\"schema_version\":1,\"results\":{}}",
        "{\"schema\":\"gpuvet.bench\",\"schema_version\":2,\"results\":[]}",
        "{\"schema\":\"gpuvet.results\",\"schema_version\":1,\"results\":[]}",
        "{\"schema\":\"gpuvet.bench\",\"schema_version\":1,\"results\":[{\"id\":\"a\","
        "\"status\":\"ok\",\"better\":\"higher\",\"value\":1,\"samples\":[1,\"x\"]}]}",
        "{\"schema\":\"gpuvet.bench\",\"schema_version\":1,\"results\":[{\"id\":\"a\","
        "\"status\":\"ok\",\"better\":\"higher\",\"value\":1,\"min\":\"inf\"}]}",
        "{\"schema\":\"gpuvet.bench\",\"schema_version\":1,\"results\":[",
        "[1]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *d = NULL;
        struct gv_err err = {0};
        T_CHECK(gv_bench_parse(bad[i], strlen(bad[i]), "bad.json", &d, &err) != 0);
        T_CHECK(d == NULL && strstr(err.msg, "bad.json") != NULL);
    }
}

int main(void)
{
    T_RUN(test_rules);
    T_RUN(test_floors_by_kind);
    T_RUN(test_status_and_ids);
    T_RUN(test_causes);
    T_RUN(test_algorithm_choice);
    T_RUN(test_collective_measurements);
    T_RUN(test_bad);
    return t_done();
}
